package io.statehouse.web;

import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import io.statehouse.support.Installed;
import io.statehouse.support.Ports;
import io.statehouse.support.ServiceProcess;
import io.statehouse.support.StatehouseClient;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The dashboard operators start from ({@code ops/grafana/statehouse.json}), judged by a real
 * Prometheus (Debian's {@code prometheus}; CI installs it, elsewhere the test is skipped when it is
 * missing) scraping a running Statehouse: every panel's query is accepted, and after some traffic
 * every panel shows data except those that show only trouble. The same Prometheus loads the alert
 * rules and evaluates each without error.
 */
class DashboardQueriesTests {

	private static final Path DASHBOARD = Path.of("ops", "grafana", "statehouse.json");

	private static final Path ALERTS = Path.of("ops", "prometheus", "alerts.yml");

	/** Panels that show only trouble: empty in a healthy run. */
	private static final Set<String> QUIET = Set.of("Statement errors by code");

	private static final JsonMapper json = JsonMapper.builder().build();

	private final HttpClient http = HttpClient.newHttpClient();

	@TempDir
	Path directory;

	@Test
	void everyPanelsQueryRunsAndShowsDataAfterTraffic() throws Exception {
		assumeTrue(Installed.onPath("prometheus").isPresent(),
				"prometheus is not installed (Debian: apt-get install prometheus)");
		Map<String, List<String>> queries = panelQueries(json.readTree(DASHBOARD.toFile()));
		try (ServiceProcess service = ServiceProcess.start(Files.createDirectories(this.directory.resolve("service")))) {
			int port = Ports.free();
			Process prometheus = startPrometheus(service.port(), port);
			try {
				URI api = URI.create("http://127.0.0.1:" + port + "/api/v1/");
				await().atMost(Duration.ofSeconds(60)).until(() -> ready(port));
				StatehouseClient client = StatehouseClient.forPort(service.port());
				Map<String, String> empty = new LinkedHashMap<>();
				await().atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofSeconds(3)).untilAsserted(() -> {
					traffic(client);
					empty.clear();
					for (Map.Entry<String, List<String>> panel : queries.entrySet()) {
						for (String expression : panel.getValue()) {
							JsonNode answer = get(api.resolve("query?query=" + encode(expression)));
							assertThat(answer.path("status").asString())
								.as(panel.getKey() + ": " + expression + " " + answer)
								.isEqualTo("success");
							if (answer.path("data").path("result").isEmpty()) {
								empty.put(panel.getKey(), expression);
							}
						}
					}
					assertThat(empty.keySet()).as("panels without data: " + empty).isSubsetOf(QUIET);
				});
				assertThat(get(api.resolve("label/job/values?match[]=statehouse_clickhouse_up")).path("data").toString())
					.contains("statehouse");
				JsonNode groups = get(api.resolve("rules")).path("data").path("groups");
				List<String> rules = new ArrayList<>();
				groups.forEach((group) -> group.path("rules").forEach((rule) -> {
					rules.add(rule.path("name").asString());
					assertThat(rule.path("health").asString()).as(rule.toString()).isEqualTo("ok");
				}));
				assertThat(rules).hasSize(9);
			}
			finally {
				prometheus.destroy();
				prometheus.waitFor(30, TimeUnit.SECONDS);
			}
		}
	}

	@Test
	void theDashboardIsWellFormed() throws Exception {
		JsonNode dashboard = json.readTree(DASHBOARD.toFile());
		Set<Integer> ids = new HashSet<>();
		for (JsonNode panel : dashboard.path("panels")) {
			assertThat(ids.add(panel.path("id").asInt())).as("unique id " + panel.path("id")).isTrue();
			JsonNode grid = panel.path("gridPos");
			assertThat(grid.path("x").asInt() + grid.path("w").asInt()).isLessThanOrEqualTo(24);
			if (!panel.path("type").asString().equals("row")) {
				assertThat(panel.path("datasource").path("uid").asString()).isEqualTo("${datasource}");
				assertThat(panel.path("targets")).isNotEmpty();
				assertThat(panel.path("description").asString()).isNotBlank();
			}
		}
		assertThat(panelQueries(dashboard)).hasSizeGreaterThanOrEqualTo(25);
	}

	/** Each panel's queries, with Grafana's variables as Grafana would fill them in for all instances. */
	private static Map<String, List<String>> panelQueries(JsonNode dashboard) {
		Map<String, List<String>> queries = new LinkedHashMap<>();
		for (JsonNode panel : dashboard.path("panels")) {
			for (JsonNode target : panel.path("targets")) {
				String expression = target.path("expr").asString()
					.replace("$__rate_interval", "1m")
					.replace("$job", ".+")
					.replace("$instance", ".+");
				queries.computeIfAbsent(panel.path("title").asString(), (title) -> new ArrayList<>()).add(expression);
			}
		}
		return queries;
	}

	private Process startPrometheus(int servicePort, int port) throws Exception {
		Path config = this.directory.resolve("prometheus.yml");
		Files.writeString(config, """
				global:
				  scrape_interval: 1s
				  evaluation_interval: 1s
				rule_files:
				  - %s
				scrape_configs:
				  - job_name: statehouse
				    metrics_path: /actuator/prometheus
				    static_configs:
				      - targets: ["127.0.0.1:%d"]
				""".formatted(ALERTS.toAbsolutePath(), servicePort));
		return new ProcessBuilder("prometheus", "--config.file=" + config,
				"--storage.tsdb.path=" + this.directory.resolve("data"), "--web.listen-address=127.0.0.1:" + port)
			.redirectErrorStream(true)
			.redirectOutput(this.directory.resolve("prometheus.log").toFile())
			.start();
	}

	/** A little of everything the dashboard shows: writes, refusals, a lock held, waited for, renewed and released. */
	private static void traffic(StatehouseClient client) throws InterruptedException {
		client.put("/states/dashboard:a", "{\"v\":1}");
		client.patch("/states/dashboard:a", "{\"w\":2}");
		client.get("/states/dashboard:a");
		client.put("/states/dashboard:a", "{}", "If-Match", "\"1\"");
		client.delete("/states/dashboard:a");
		String token = client.acquire("dashboard:lock", "holder", 1, 0).token();
		client.put("/locks/dashboard:lock", "{}", "Lock-Token", token);
		client.acquire("dashboard:lock", "waiter", 30, 0);
		client.delete("/locks/dashboard:lock", "Lock-Token", token);
		String waited = client.acquire("dashboard:lock", "waiter", 30, 0).token();
		Thread releaser = new Thread(() -> client.delete("/locks/dashboard:lock", "Lock-Token", waited));
		releaser.start();
		client.acquire("dashboard:lock", "next", 1, 5);
		releaser.join();
	}

	private boolean ready(int port) {
		try {
			return this.http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/-/ready")).build(),
					HttpResponse.BodyHandlers.discarding()).statusCode() == 200;
		}
		catch (Exception ex) {
			return false;
		}
	}

	private JsonNode get(URI uri) throws Exception {
		return json.readTree(this.http.send(HttpRequest.newBuilder(uri).build(), HttpResponse.BodyHandlers.ofString())
			.body());
	}

	private static String encode(String text) {
		return URLEncoder.encode(text, StandardCharsets.UTF_8);
	}

}
