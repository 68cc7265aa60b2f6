package io.statehouse.clickhouse;

import java.nio.file.Files;
import java.nio.file.Path;

import io.statehouse.support.EngineProcess;

/**
 * The conformance suite on the embedded engine, run as its own process so that a restart is a
 * real {@code kill -9} and a start on the same data directory.
 */
class EmbeddedEngineConformanceTests extends ClickHouseConformanceTests {

	@Override
	protected ClickHouseTarget startTarget() throws Exception {
		Path dataDirectory = Files.createTempDirectory("statehouse-conformance").resolve("clickhouse");
		return new ClickHouseTarget() {

			private EngineProcess engine = EngineProcess.start(dataDirectory, 0);

			@Override
			public String jdbcUrl(String database) {
				return this.engine.jdbcUrl(database);
			}

			@Override
			public String httpUrl() {
				return "http://127.0.0.1:" + this.engine.port();
			}

			@Override
			public String username() {
				return "default";
			}

			@Override
			public String password() {
				return "";
			}

			@Override
			public void restart() throws Exception {
				int port = this.engine.port();
				this.engine.kill();
				this.engine = EngineProcess.start(dataDirectory, port);
			}

			@Override
			public void close() throws Exception {
				this.engine.close();
			}

		};
	}

}
