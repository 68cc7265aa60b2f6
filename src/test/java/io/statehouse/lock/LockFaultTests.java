package io.statehouse.lock;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReference;

import io.statehouse.claims.ReadBack;
import io.statehouse.clickhouse.ClickHouseSchema;
import io.statehouse.support.EngineProcess;
import io.statehouse.support.StatehouseClient;
import io.statehouse.support.StatehouseClient.Response;
import io.statehouse.support.StatehouseClientConfiguration;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.context.annotation.Primary;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A lock change that the engine's death interrupts — {@code kill -9} of the engine process, for
 * real, right before or right after the claim's INSERT — is still decided once the engine is
 * back: a grant that was written is answered as granted, one that was not is answered 503, and
 * neither leaves behind a lease nobody knows the token of.
 */
// A grant's outcome is read back until its request's deadline: long enough here for a restart of
// the engine on a busy machine.
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "statehouse.clickhouse.database=lock_faults", "statehouse.clickhouse.outcome-patience=30s",
				"statehouse.lock.change-timeout=30s" })
@Import(StatehouseClientConfiguration.class)
class LockFaultTests {

	private static final AtomicReference<Fault> fault = new AtomicReference<>(Fault.NONE);

	private static @Nullable Path directory;

	private static @Nullable EngineProcess engine;

	private static CompletableFuture<EngineProcess> restarted = CompletableFuture.completedFuture(null);

	@Autowired
	StatehouseClient client;

	@DynamicPropertySource
	static void clickHouse(DynamicPropertyRegistry registry) {
		registry.add("statehouse.clickhouse.url", () -> engine().jdbcUrl("default"));
		registry.add("statehouse.clickhouse.password", () -> EngineProcess.PASSWORD);
	}

	static synchronized EngineProcess engine() {
		if (engine == null) {
			try {
				directory = Files.createTempDirectory("lock-faults");
				engine = EngineProcess.start(directory.resolve("clickhouse"), 0);
			}
			catch (Exception ex) {
				throw new IllegalStateException(ex);
			}
		}
		return engine;
	}

	/** Kills the engine ({@code kill -9}) and starts it again on its port and data, in the background. */
	static synchronized void killEngine() {
		EngineProcess killed = engine();
		try {
			killed.kill();
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
		restarted = CompletableFuture.supplyAsync(() -> {
			try {
				EngineProcess started = EngineProcess.start(directory.resolve("clickhouse"), killed.port());
				synchronized (LockFaultTests.class) {
					engine = started;
				}
				return started;
			}
			catch (Exception ex) {
				throw new IllegalStateException(ex);
			}
		});
	}

	@AfterAll
	static void stop() throws Exception {
		restarted.join();
		if (engine != null) {
			engine.close();
		}
	}

	@Test
	void aGrantWrittenJustBeforeTheEngineDiedIsAnsweredAsGranted() {
		fault.set(Fault.KILL_AFTER_INSERT);
		Response granted = this.client.acquire("fault:after-insert", "run-1", 600, 0);
		restarted.join();
		assertThat(granted.status()).as("%s", granted).isEqualTo(201);
		assertThat(this.client.get("/locks/fault:after-insert").json().get("owner").asString()).isEqualTo("run-1");
		assertThat(this.client.delete("/locks/fault:after-insert", "Lock-Token", granted.json().get("token").asString())
			.status()).isEqualTo(204);
	}

	@Test
	void aGrantTheEngineNeverWroteIsAnswered503AndLeavesTheLockFree() {
		fault.set(Fault.KILL_BEFORE_INSERT);
		Response refused = this.client.acquire("fault:before-insert", "run-1", 600, 0);
		restarted.join();
		assertThat(refused.status()).as("%s", refused).isEqualTo(503);
		assertThat(this.client.get("/locks/fault:before-insert").status()).isEqualTo(404);
		assertThat(this.client.acquire("fault:before-insert", "run-2", 600, 0).status()).isEqualTo(201);
	}

	enum Fault {

		NONE, KILL_BEFORE_INSERT, KILL_AFTER_INSERT

	}

	/** The real repository, with the engine killed around the next claim's INSERT when asked. */
	@TestConfiguration(proxyBeanMethods = false)
	static class EngineKiller {

		@Bean
		@Primary
		LockTables engineKillingLockTables(JdbcClient jdbc, ClickHouseSchema schema, ReadBack readBack) {
			return new ClickHouseLockRepository(jdbc, schema, readBack) {

				@Override
				void append(SlotClaim claim) {
					Fault next = fault.getAndSet(Fault.NONE);
					if (next == Fault.KILL_BEFORE_INSERT) {
						killEngine();
					}
					super.append(claim);
					if (next == Fault.KILL_AFTER_INSERT) {
						killEngine();
					}
				}

			};
		}

	}

}
