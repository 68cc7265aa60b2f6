package io.statehouse.changelog;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import io.statehouse.changelog.Change.Operation;
import io.statehouse.clickhouse.ClickHouseSchema;
import io.statehouse.support.ServiceProcess;
import io.statehouse.support.StatehouseClient;
import io.statehouse.support.StatehouseClient.Response;
import io.statehouse.support.StatehouseTest;
import io.statehouse.support.TestClickHouse;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.context.annotation.Import;
import org.springframework.test.context.TestPropertySource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A grant's fence that its acquisition gave up on (the writer's timeout passed) while it was
 * still on its way: the grant is withdrawn and the next holder, granted on another instance,
 * fences and reads the state's ETag. When the old fence's chance to land comes, it must change
 * nothing — or the next holder's {@code If-Match} write would fail on an ETag moved under it.
 */
@StatehouseTest
@Import(InterleavingRepository.Seams.class)
@TestPropertySource(properties = "statehouse.changelog.writer.timeout=2s")
class TimedOutFenceTests {

	@Autowired
	InterleavingRepository repository;

	@Autowired
	ClickHouseSchema schema;

	@Autowired
	StatehouseClient client;

	@TempDir
	Path directory;

	@AfterEach
	void reset() {
		this.repository.reset();
	}

	/** The fence was decided and is held back in its INSERT past the acquisition's timeout. */
	@Test
	void aFenceHeldInItsInsertPastItsTimeoutChangesNothingForTheNextHolder() throws Exception {
		String id = "fence:timed-out-insert";
		aLeaseAdmittedWritesAndEnded(id);
		CountDownLatch nextHolderHasRead = new CountDownLatch(1);
		AtomicBoolean first = new AtomicBoolean(true);
		this.repository.beforeAppend = (claims) -> {
			if (claims.stream().anyMatch((claim) -> claim.change().operation() == Operation.FENCE)
					&& first.getAndSet(false)) {
				await(nextHolderHasRead);
			}
		};
		nextHolderWritesWithTheETagItRead(id, nextHolderHasRead);
	}

	/** The fence waits in the writer's queue behind a write of the same id past the acquisition's timeout. */
	@Test
	void aFenceQueuedPastItsTimeoutChangesNothingForTheNextHolder() throws Exception {
		String id = "fence:timed-out-queued";
		aLeaseAdmittedWritesAndEnded(id);
		CountDownLatch nextHolderHasRead = new CountDownLatch(1);
		// An unfenced write of the id, held between its INSERT and its read-back: the fence queues behind it.
		CountDownLatch aheadIsHeld = new CountDownLatch(1);
		this.repository.afterAppend = (claims) -> {
			if (claims.stream().anyMatch((claim) -> claim.change().document().equals("{\"n\":\"ahead\"}"))) {
				aheadIsHeld.countDown();
				await(nextHolderHasRead);
			}
		};
		Thread ahead = new Thread(() -> this.client.put("/states/" + id, "{\"n\":\"ahead\"}"));
		ahead.start();
		assertThat(aheadIsHeld.await(10, TimeUnit.SECONDS)).isTrue();
		nextHolderWritesWithTheETagItRead(id, nextHolderHasRead);
		ahead.join();
	}

	private void nextHolderWritesWithTheETagItRead(String id, CountDownLatch nextHolderHasRead) throws Exception {
		Response gaveUp = this.client.acquire(id, "gave-up", 600, 0);
		assertThat(gaveUp.status()).as("the fence timed out: %s", gaveUp).isEqualTo(503);
		try (ServiceProcess other = otherInstance()) {
			StatehouseClient second = StatehouseClient.forPort(other.port());
			Response next = second.acquire(id, "next", 60, 10);
			assertThat(next.status()).as("the grant that gave up was withdrawn: %s", next).isEqualTo(201);
			Response read = second.get("/states/" + id);
			nextHolderHasRead.countDown();
			// The old fence's chance to land passes: a later write through the same writer is answered.
			assertThat(this.client.put("/states/" + id + ":after", "{}").status()).isEqualTo(201);
			Response written = second.put("/states/" + id, "{\"n\":2}", "If-Match", read.header("ETag").orElseThrow(),
					"Lock-Token", next.token());
			assertThat(written.status()).as("%s after reading %s; history %s", written, read, second.get("/states/" + id
					+ "/versions").body()).isEqualTo(200);
		}
	}

	/** Creates the state, and has a lease admit a write to it and end: the next grant must fence. */
	private void aLeaseAdmittedWritesAndEnded(String id) {
		this.client.put("/states/" + id, "{\"n\":0}");
		String previous = this.client.acquire(id, "previous", 60, 0).token();
		assertThat(this.client.put("/states/" + id, "{\"n\":1}", "Lock-Token", previous).status()).isEqualTo(200);
		assertThat(this.client.delete("/locks/" + id, "Lock-Token", previous).status()).isEqualTo(204);
	}

	/** A second instance on the same engine and database. */
	ServiceProcess otherInstance(String... properties) throws Exception {
		List<String> arguments = new ArrayList<>(List.of("--statehouse.clickhouse.url=" + TestClickHouse.jdbcUrl(),
				"--statehouse.clickhouse.username=" + TestClickHouse.username(),
				"--statehouse.clickhouse.password=" + TestClickHouse.password(),
				"--statehouse.clickhouse.database=" + this.schema.database()));
		arguments.addAll(List.of(properties));
		return ServiceProcess.start(this.directory, arguments.toArray(String[]::new));
	}

	private static void await(CountDownLatch latch) {
		try {
			latch.await(60, TimeUnit.SECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

}
