package io.statehouse;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.statehouse.support.JavaProcess;
import io.statehouse.support.ServiceProcess;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The service as a newcomer starts it: no ClickHouse configured, so it runs its embedded
 * engine, keeps data under its working directory and reports healthy — and open, as no token is
 * configured.
 */
class EmbeddedDefaultEndToEndTests {

	@TempDir
	Path workingDirectory;

	@Test
	void startsOnTheEmbeddedEngineAndReportsHealthy() throws Exception {
		try (ServiceProcess service = ServiceProcess.start(this.workingDirectory)) {
			HttpResponse<String> health = HttpClient.newHttpClient()
				.send(HttpRequest.newBuilder(service.uri("/actuator/health")).build(),
						HttpResponse.BodyHandlers.ofString());
			assertThat(health.statusCode()).isEqualTo(200);
			assertThat(health.body()).contains("\"status\":\"UP\"")
				.contains("\"mode\":\"embedded\"")
				.contains("\"version\":\"26.")
				.contains("\"security\":{\"details\":{\"mode\":\"open\"}");
			// The engine's door: only the service knows the password it made up.
			Matcher port = Pattern.compile("\"port\":(\\d+)").matcher(health.body());
			assertThat(port.find()).isTrue();
			HttpResponse<String> intruder = HttpClient.newHttpClient()
				.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port.group(1) + "/"))
					.POST(HttpRequest.BodyPublishers.ofString("DROP DATABASE statehouse"))
					.build(), HttpResponse.BodyHandlers.ofString());
			assertThat(intruder.headers().firstValue("X-ClickHouse-Exception-Code")).hasValue("516");
			assertThat(HttpClient.newHttpClient()
				.send(HttpRequest.newBuilder(service.uri("/actuator/health")).build(), HttpResponse.BodyHandlers.ofString())
				.body()).contains("\"database\":\"statehouse\"").contains("\"status\":\"UP\"");
		}
		assertThat(Files.isDirectory(this.workingDirectory.resolve("data/clickhouse/metadata"))).isTrue();
	}

	@Test
	void helpSaysWhatTheJarRunsAndStartsNothing() throws Exception {
		try (JavaProcess help = JavaProcess.start(this.workingDirectory, StatehouseApplication.class, List.of(),
				List.of("--help"))) {
			assertThat(help.waitFor(Duration.ofSeconds(60))).isZero();
			assertThat(help.output()).startsWith("usage: java -jar statehouse.jar [--<property>=<value> ...]")
				.contains("token --name=", "export|import", "import-clickhouse")
				.doesNotContain("Spring Boot");
		}
		assertThat(this.workingDirectory.resolve("data")).doesNotExist();
	}

}
