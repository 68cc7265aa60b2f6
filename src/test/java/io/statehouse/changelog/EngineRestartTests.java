package io.statehouse.changelog;

import java.nio.file.Path;
import java.time.Duration;

import io.statehouse.support.ServiceProcess;
import io.statehouse.support.SharedEngine;
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
		String[] settings = { "--statehouse.changelog.segment-duration=1s", "--statehouse.changelog.retention=1s",
				"--statehouse.changelog.materializer.interval=300ms", "--statehouse.changelog.materializer.grace=300ms" };
		try (SharedEngine deployment = SharedEngine.start(this.directory, "restart")) {
			ServiceProcess service = deployment.startService(settings);
			StatehouseClient client = StatehouseClient.forPort(service.port());
			assertThat(client.put("/states/cor:a", "{\"v\":1}").status()).isEqualTo(201);
			Thread.sleep(3000);
			deployment.killEngine();
			deployment.restartEngine();
			await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
				Response written = client.put("/states/cor:a", "{\"v\":2}");
				assertThat(written.status()).isEqualTo(200);
				assertThat(written.version()).isEqualTo(2);
			});
			Thread.sleep(3000);
			assertThat(client.get("/states/cor:a").body()).isEqualTo("{\"v\":2}");
			service.close();
			StatehouseClient restarted = StatehouseClient.forPort(deployment.startService(settings).port());
			Thread.sleep(1000);
			assertThat(restarted.get("/states/cor:a").body()).isEqualTo("{\"v\":2}");
			assertThat(restarted.put("/states/cor:a", "{\"v\":3}").version()).isEqualTo(3);
		}
	}

}
