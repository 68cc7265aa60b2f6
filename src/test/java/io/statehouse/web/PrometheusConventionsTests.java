package io.statehouse.web;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import io.statehouse.support.Installed;
import io.statehouse.support.ServiceProcess;
import io.statehouse.support.StatehouseClient;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * A real scrape of a running service, after traffic of every kind, as Prometheus's own linter
 * judges it: {@code promtool check metrics} (Debian's {@code prometheus} package; CI installs it,
 * elsewhere the test is skipped when it is missing) finds nothing, Spring Boot's meters included.
 */
class PrometheusConventionsTests {

	@TempDir
	Path directory;

	@Test
	void promtoolFindsNothingInAScrape() throws Exception {
		assumeTrue(Installed.onPath("promtool").isPresent(), "promtool is not installed (Debian: apt-get install prometheus)");
		try (ServiceProcess service = ServiceProcess.start(this.directory)) {
			StatehouseClient client = StatehouseClient.forPort(service.port());
			client.put("/states/metrics:a", "{\"v\":1}");
			client.patch("/states/metrics:a", "{\"w\":2}");
			client.get("/states/metrics:a");
			client.get("/states/metrics:missing");
			client.put("/states/metrics:a", "not json");
			client.delete("/states/metrics:a");
			String token = client.acquire("metrics:lock", "scrape", 30, 0).token();
			client.acquire("metrics:lock", "other", 30, 0);
			client.delete("/locks/metrics:lock", "Lock-Token", token);
			String scrape = client.get("/actuator/prometheus").body();
			assertThat(scrape).contains("statehouse_changelog_inserts_total", "http_server_requests_seconds",
					"statehouse_state_writes_total", "statehouse_state_document_size_bytes_count",
					"statehouse_clickhouse_statements_seconds_count", "statehouse_locks_acquisitions_total",
					"hikaricp_connections_active");

			Process promtool = new ProcessBuilder("promtool", "check", "metrics").redirectErrorStream(true).start();
			promtool.getOutputStream().write(scrape.getBytes(StandardCharsets.UTF_8));
			promtool.getOutputStream().close();
			String findings = new String(promtool.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
			assertThat(promtool.waitFor(60, TimeUnit.SECONDS)).isTrue();
			assertThat(findings).isEmpty();
			assertThat(promtool.exitValue()).isZero();
		}
	}

}
