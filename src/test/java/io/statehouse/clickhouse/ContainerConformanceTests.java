package io.statehouse.clickhouse;

import com.github.dockerjava.api.model.ExposedPort;
import com.github.dockerjava.api.model.Ports;
import org.testcontainers.clickhouse.ClickHouseContainer;
import org.testcontainers.junit.jupiter.Testcontainers;

/** The conformance suite on a ClickHouse server in a container, where Docker runs. */
@Testcontainers(disabledWithoutDocker = true)
class ContainerConformanceTests extends ClickHouseConformanceTests {

	static final String IMAGE = "clickhouse/clickhouse-server:25.8";

	@Override
	protected ClickHouseTarget startTarget() {
		ClickHouseContainer container = new ClickHouseContainer(IMAGE);
		container.start();
		return new ClickHouseTarget() {

			private int port = container.getMappedPort(8123);

			@Override
			public String jdbcUrl(String database) {
				return "jdbc:clickhouse://" + container.getHost() + ":" + this.port + "/" + database;
			}

			@Override
			public String httpUrl() {
				return "http://" + container.getHost() + ":" + this.port;
			}

			@Override
			public String username() {
				return container.getUsername();
			}

			@Override
			public String password() {
				return container.getPassword();
			}

			@Override
			public void restart() throws Exception {
				container.getDockerClient().restartContainerCmd(container.getContainerId()).exec();
				// Docker may publish the port anew on restart.
				Ports.Binding[] bindings = container.getDockerClient()
					.inspectContainerCmd(container.getContainerId())
					.exec()
					.getNetworkSettings()
					.getPorts()
					.getBindings()
					.get(ExposedPort.tcp(8123));
				this.port = Integer.parseInt(bindings[0].getHostPortSpec());
				java.net.http.HttpClient http = java.net.http.HttpClient.newHttpClient();
				for (int attempt = 0; attempt < 120; attempt++) {
					try {
						if (http.send(java.net.http.HttpRequest.newBuilder(java.net.URI.create(httpUrl() + "/ping")).build(),
								java.net.http.HttpResponse.BodyHandlers.ofString()).statusCode() == 200) {
							return;
						}
					}
					catch (java.io.IOException ex) {
						// not up yet
					}
					Thread.sleep(500);
				}
				throw new IllegalStateException("ClickHouse did not come back after a restart");
			}

			@Override
			public void close() {
				container.stop();
			}

		};
	}

}
