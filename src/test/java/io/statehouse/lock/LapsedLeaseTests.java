package io.statehouse.lock;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;

import io.statehouse.support.StatehouseClient;
import io.statehouse.support.StatehouseClient.Response;
import io.statehouse.support.StatehouseTest;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.context.annotation.Primary;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A renewal or release that reaches ClickHouse once the lease has lapsed: held back until just
 * past {@code expiresAt}, as a slow request or a busy engine would hold it. It must not revive
 * the lease, nor report a release of a lease that had already ended.
 */
@StatehouseTest
@Import(LapsedLeaseTests.Seams.class)
class LapsedLeaseTests {

	@Autowired
	DelayingLockRepository repository;

	@Autowired
	StatehouseClient client;

	@AfterEach
	void reset() {
		this.repository.beforeAppend = null;
	}

	@Test
	void aRenewalWrittenJustAfterTheLeaseLapsedIsRefusedAndRevivesNothing() {
		Response granted = this.client.acquire("lapse:renew", "run-1", 1, 0);
		Instant expiresAt = Instant.parse(granted.json().get("expiresAt").asString());
		this.repository.beforeAppend = (claim) -> {
			if (claim.kind() == LockRecord.Kind.RENEW) {
				sleepUntil(expiresAt.plusMillis(30));
			}
		};
		Response renewed = this.client.send("PUT", "/locks/lapse:renew", "application/json", "{}".getBytes(),
				"Lock-Token", granted.token());
		assertThat(renewed.status()).as("%s", renewed).isEqualTo(409);
		assertThat(this.client.get("/locks/lapse:renew").status()).isEqualTo(404);
		assertThat(this.client.acquire("lapse:renew", "run-2", 30, 0).status()).isEqualTo(201);
	}

	@Test
	void aReleaseWrittenJustAfterTheLeaseLapsedAnswersThatNoLeaseWasLeft() {
		Response granted = this.client.acquire("lapse:release", "run-1", 1, 0);
		Instant expiresAt = Instant.parse(granted.json().get("expiresAt").asString());
		this.repository.beforeAppend = (claim) -> {
			if (claim.kind() == LockRecord.Kind.RELEASE) {
				sleepUntil(expiresAt.plusNanos(200_000));
			}
		};
		Response released = this.client.delete("/locks/lapse:release", "Lock-Token", granted.token());
		assertThat(released.status()).as("%s", released).isEqualTo(404);
		assertThat(this.client.get("/locks/lapse:release").status()).isEqualTo(404);
	}

	private static void sleepUntil(Instant instant) {
		long millis = Duration.between(Instant.now(), instant).toMillis();
		try {
			Thread.sleep(Math.max(0, millis) + 1);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	/** The real lock repository, with a seam before each claim is sent. */
	static class DelayingLockRepository implements LockRepository {

		private final LockRepository delegate;

		volatile @Nullable Consumer<SlotClaim> beforeAppend;

		DelayingLockRepository(LockRepository delegate) {
			this.delegate = delegate;
		}

		@Override
		public LockSnapshot read(String id) {
			return this.delegate.read(id);
		}

		@Override
		public @Nullable LockRecord claim(SlotClaim claim, long decidedAt, Deadline deadline) {
			Consumer<SlotClaim> before = this.beforeAppend;
			if (before != null) {
				before.accept(claim);
			}
			return this.delegate.claim(claim, decidedAt, deadline);
		}

		@Override
		public List<LockRecord> live(String prefix, List<String> visible, @Nullable String after, int limit) {
			return this.delegate.live(prefix, visible, after, limit);
		}

		@Override
		public Set<String> changedAfter(Map<String, Long> slots) {
			return this.delegate.changedAfter(slots);
		}

	}

	@TestConfiguration(proxyBeanMethods = false)
	static class Seams {

		@Bean
		@Primary
		DelayingLockRepository delayingLockRepository(LockTables repository) {
			return new DelayingLockRepository(repository);
		}

	}

}
