package io.statehouse.changelog;

import java.nio.file.Path;
import java.time.Duration;

import io.statehouse.support.EngineProcess;
import io.statehouse.support.ServiceProcess;
import io.statehouse.support.StatehouseClient;
import io.statehouse.support.StatehouseClient.Response;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Commit order across a restart of the engine after truncation. ClickHouse re-seeds a table's
 * block counter from the parts it finds when it starts; were every part of the changelog gone,
 * new writes would take blocks below the recorded cut, never be materialized, and be truncated
 * as covered. With one-second segments and retention, truncation catches up within seconds.
 */
class EngineRestartTests {

	@TempDir
	Path directory;

	@Test
	void writesAfterARestartOfTheEngineOnATruncatedChangelogAreKept() throws Exception {
		Path data = this.directory.resolve("clickhouse");
		EngineProcess engine = EngineProcess.start(data, 0);
		int port = engine.port();
		String[] args = { "--statehouse.clickhouse.url=" + engine.jdbcUrl("default"),
				"--statehouse.clickhouse.database=restart", "--statehouse.changelog.segment-duration=1s",
				"--statehouse.changelog.retention=1s", "--statehouse.changelog.materializer.interval=300ms",
				"--statehouse.changelog.materializer.grace=300ms" };
		try {
			try (ServiceProcess service = ServiceProcess.start(this.directory, args)) {
				StatehouseClient client = StatehouseClient.forPort(service.port());
				assertThat(client.put("/states/cor:a", "{\"v\":1}").status()).isEqualTo(201);
				Thread.sleep(3000);
				engine.kill();
				engine = EngineProcess.start(data, port);
				await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
					Response written = client.put("/states/cor:a", "{\"v\":2}");
					assertThat(written.status()).isEqualTo(200);
					assertThat(written.version()).isEqualTo(2);
				});
				Thread.sleep(3000);
				assertThat(client.get("/states/cor:a").body()).isEqualTo("{\"v\":2}");
			}
			try (ServiceProcess restarted = ServiceProcess.start(this.directory, args)) {
				StatehouseClient client = StatehouseClient.forPort(restarted.port());
				Thread.sleep(1000);
				assertThat(client.get("/states/cor:a").body()).isEqualTo("{\"v\":2}");
				assertThat(client.put("/states/cor:a", "{\"v\":3}").version()).isEqualTo(3);
			}
		}
		finally {
			engine.close();
		}
	}

}
