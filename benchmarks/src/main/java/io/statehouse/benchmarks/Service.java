package io.statehouse.benchmarks;

import java.io.IOException;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.statehouse.StatehouseApplication;
import org.apache.hc.client5.http.classic.methods.HttpGet;
import org.apache.hc.client5.http.impl.classic.CloseableHttpClient;
import org.apache.hc.client5.http.impl.classic.HttpClients;
import org.apache.hc.client5.http.impl.io.PoolingHttpClientConnectionManagerBuilder;
import org.apache.hc.core5.http.io.entity.EntityUtils;

import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * A Statehouse instance in this JVM on a free port, with a pooled HTTP client for it: the
 * embedded default on a fresh data directory unless the arguments say otherwise.
 */
final class Service implements AutoCloseable {

	final ConfigurableApplicationContext app;

	final CloseableHttpClient http;

	final String baseUrl;

	private Service(ConfigurableApplicationContext app, int connections) {
		this.app = app;
		this.http = HttpClients.custom()
			.setConnectionManager(PoolingHttpClientConnectionManagerBuilder.create()
				.setMaxConnTotal(connections)
				.setMaxConnPerRoute(connections)
				.build())
			// Every answer counts as it came: a 503 retried quietly would hide an error.
			.disableAutomaticRetries()
			.build();
		this.baseUrl = "http://127.0.0.1:" + ((WebServerApplicationContext) app).getWebServer().getPort();
	}

	/** Starts an instance; {@code args} are {@code --name=value} properties. */
	static Service start(int connections, String... args) throws IOException {
		List<String> arguments = new ArrayList<>(List.of("--server.port=0", "--logging.level.root=WARN",
				"--statehouse.clickhouse.embedded.data-directory="
						+ Files.createTempDirectory("statehouse-bench").resolve("clickhouse")));
		arguments.addAll(List.of(args));
		return new Service(new SpringApplicationBuilder(StatehouseApplication.class).run(arguments.toArray(String[]::new)),
				connections);
	}

	/** The instance's Prometheus scrape: each series' values by name, summed over their labels. */
	Map<String, Double> scrape() throws IOException {
		String text = this.http.execute(new HttpGet(this.baseUrl + "/actuator/prometheus"),
				(response) -> EntityUtils.toString(response.getEntity()));
		Map<String, Double> sums = new LinkedHashMap<>();
		for (String line : text.split("\n")) {
			if (!line.startsWith("#") && !line.isBlank()) {
				sums.merge(line.split("[{ ]", 2)[0], Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1)),
						Double::sum);
			}
		}
		return sums;
	}

	<T> T bean(Class<T> type) {
		return this.app.getBean(type);
	}

	@Override
	public void close() throws IOException {
		this.http.close();
		this.app.close();
	}

}
