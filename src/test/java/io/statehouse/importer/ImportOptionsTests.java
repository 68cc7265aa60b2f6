package io.statehouse.importer;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/** What import-clickhouse accepts on its command line. */
@Tag("fast")
class ImportOptionsTests {

	@Test
	void defaultsAreThoseOfTheBackendAndALocalStatehouse() {
		ImportOptions options = ImportOptions.parse(List.of("--clickhouse-url=jdbc:clickhouse://ch:8123"), Map.of());
		assertThat(options.schema()).isEqualTo("meltano");
		assertThat(options.table()).isEqualTo("state");
		assertThat(options.clickHouseUser()).isEqualTo("default");
		assertThat(options.clickHousePassword()).isEmpty();
		assertThat(options.statehouseUrl()).isEqualTo(URI.create("http://localhost:8080"));
		assertThat(options.token()).isNull();
		assertThat(options.idPrefix()).isEmpty();
		assertThat(options.overwriteNewer()).isFalse();
		assertThat(options.dryRun()).isFalse();
		assertThat(options.pageSize()).isEqualTo(100);
		assertThat(options.concurrency()).isEqualTo(4);
	}

	@Test
	void everyOptionIsRead() {
		ImportOptions options = ImportOptions.parse(List.of("--clickhouse-url=jdbc:clickhouse://ch:8123?ssl=true",
				"--clickhouse-user=meltano", "--clickhouse-password=p=w", "--table=team_a.pipeline_state",
				"--statehouse-url=https://statehouse.example/", "--token=sth_abc", "--id-prefix=prod:",
				"--overwrite-newer", "--dry-run", "--page-size=20", "--concurrency=8"), Map.of());
		assertThat(options.clickHouseUrl()).isEqualTo("jdbc:clickhouse://ch:8123?ssl=true");
		assertThat(options.clickHouseUser()).isEqualTo("meltano");
		assertThat(options.clickHousePassword()).isEqualTo("p=w");
		assertThat(options.schema()).isEqualTo("team_a");
		assertThat(options.table()).isEqualTo("pipeline_state");
		assertThat(options.statehouseUrl()).isEqualTo(URI.create("https://statehouse.example/"));
		assertThat(options.token()).isEqualTo("sth_abc");
		assertThat(options.idPrefix()).isEqualTo("prod:");
		assertThat(options.overwriteNewer()).isTrue();
		assertThat(options.dryRun()).isTrue();
		assertThat(options.pageSize()).isEqualTo(20);
		assertThat(options.concurrency()).isEqualTo(8);
	}

	@Test
	void secretsMayComeFromTheEnvironmentAndOptionsWin() {
		Map<String, String> environment = Map.of("CLICKHOUSE_PASSWORD", "from-env", "STATEHOUSE_TOKEN", "sth_env");
		ImportOptions fromEnvironment = ImportOptions.parse(List.of("--clickhouse-url=jdbc:clickhouse://ch:8123"),
				environment);
		assertThat(fromEnvironment.clickHousePassword()).isEqualTo("from-env");
		assertThat(fromEnvironment.token()).isEqualTo("sth_env");
		ImportOptions given = ImportOptions.parse(List.of("--clickhouse-url=jdbc:clickhouse://ch:8123",
				"--clickhouse-password=given", "--token=sth_given"), environment);
		assertThat(given.clickHousePassword()).isEqualTo("given");
		assertThat(given.token()).isEqualTo("sth_given");
		assertThat(given.toString()).doesNotContain("given", "from-env", "sth_");
	}

	@Test
	void whatIsNotAnOptionIsRefused() {
		assertThatIllegalArgumentException().isThrownBy(() -> parse()).withMessageContaining("--clickhouse-url");
		assertThatIllegalArgumentException().isThrownBy(() -> parse("--clickhouse-url=clickhouse://ch:8123"))
			.withMessageContaining("JDBC URL");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> parse("--clickhouse-url=jdbc:clickhouse://ch:8123", "--table=state"))
			.withMessageContaining("<schema>.<table>");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> parse("--clickhouse-url=jdbc:clickhouse://ch:8123", "--overwrite"))
			.withMessageContaining("Unknown option: --overwrite");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> parse("--clickhouse-url=jdbc:clickhouse://ch:8123", "--dry-run=no"))
			.withMessageContaining("takes no value");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> parse("--clickhouse-url=jdbc:clickhouse://ch:8123", "--page-size=0"))
			.withMessageContaining("--page-size is a number from 1 to 100000");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> parse("--clickhouse-url=jdbc:clickhouse://ch:8123", "--concurrency=many"))
			.withMessageContaining("--concurrency is a number from 1 to 64");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> parse("--clickhouse-url=jdbc:clickhouse://ch:8123", "--id-prefix=a\nb"))
			.withMessageContaining("--id-prefix");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> parse("--clickhouse-url=jdbc:clickhouse://ch:8123", "--statehouse-url=localhost:8080"))
			.withMessageContaining("--statehouse-url");
	}

	@Test
	void aCommandLineThatIsNotOneExitsWithTwoAndTheUsage() {
		ByteArrayOutputStream err = new ByteArrayOutputStream();
		int status = ImportCommand.run(new String[] { ImportCommand.NAME, "--table=meltano.state" }, Map.of(),
				new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8),
				new PrintStream(err, true, StandardCharsets.UTF_8));
		assertThat(status).isEqualTo(2);
		assertThat(err.toString(StandardCharsets.UTF_8)).contains("--clickhouse-url is required.")
			.contains("usage: java -jar statehouse.jar import-clickhouse");
	}

	private static ImportOptions parse(String... args) {
		return ImportOptions.parse(List.of(args), Map.of());
	}

}
