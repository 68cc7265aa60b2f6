package io.statehouse.importer;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import io.statehouse.support.OddIds;
import io.statehouse.support.ServiceProcess;
import io.statehouse.support.SharedEngine;
import io.statehouse.support.StatehouseClient;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.DeserializationFeature;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code java -jar statehouse.jar export|import} end to end: states of every kind of id, with
 * several versions, deletions and exact numbers, exported from a service on the embedded default,
 * imported into a second service on a stand-alone engine in Keeper mode, and exported again.
 */
class TransferCommandTests {

	/** Documents are compared as Statehouse keeps them: numbers exactly. */
	private static final JsonMapper JSON = JsonMapper.builder()
		.enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS)
		.build();

	@TempDir
	Path directory;

	@Test
	void anExportImportedIntoKeeperModeExportsTheSameStatesAndASecondImportWritesNothing() throws Exception {
		Path first = this.directory.resolve("first.jsonl");
		Path second = this.directory.resolve("second.jsonl");
		try (ServiceProcess embedded = ServiceProcess.start(Files.createDirectories(this.directory.resolve("embedded")))) {
			StatehouseClient source = StatehouseClient.forPort(embedded.port());
			for (int i = 0; i < OddIds.IDS.size(); i++) {
				String id = StatehouseClient.segment("any-id:" + OddIds.IDS.get(i));
				source.put("/states/" + id, "{\"bookmark\":" + i + ",\"exact\":1.10,\"nested\":{\"a\":[null,true]}}");
				if (i % 3 == 0) {
					source.patch("/states/" + id, "{\"bookmark\":" + (i + 100) + "}");
				}
			}
			source.put("/states/gone", "{}");
			source.delete("/states/gone");
			Run export = run("export", "--statehouse-url=" + url(embedded), "--output=" + first);
			assertThat(export.status()).as(export.err()).isZero();
		}
		List<String> exported = states(first);
		assertThat(exported).hasSize(OddIds.IDS.size()).noneMatch((line) -> line.contains("\"gone\""));

		try (SharedEngine keeper = SharedEngine.startWithKeeper(this.directory.resolve("keeper"), "transfer")) {
			ServiceProcess service = keeper.startService();
			Run imported = run("import", "--statehouse-url=" + url(service), "--part-size=7", first.toString());
			assertThat(imported.status()).as(imported.err()).isZero();
			assertThat(imported.out()).endsWith(OddIds.IDS.size() + " created, 0 replaced, 0 deleted, 0 unchanged, 0 refused\n");

			assertThat(run("export", "--statehouse-url=" + url(service), "--output=" + second).status()).isZero();
			// The same states: ids, versions (carried over: two for the patched ones), documents byte
			// for byte; only the times are the second service's own.
			assertThat(states(second)).map(TransferCommandTests::withoutTime)
				.containsExactlyElementsOf(exported.stream().map(TransferCommandTests::withoutTime).toList());
			assertThat(states(second)).anyMatch((line) -> JSON.readTree(line).get("version").asLong() == 2);

			Run again = run("import", "--statehouse-url=" + url(service), first.toString());
			assertThat(again.out()).endsWith("0 created, 0 replaced, 0 deleted, " + OddIds.IDS.size() + " unchanged, 0 refused\n");
			assertThat(again.status()).isZero();

			StatehouseClient target = StatehouseClient.forPort(service.port());
			String changed = "any-id:" + OddIds.IDS.get(4);
			target.put("/states/" + StatehouseClient.segment(changed), "{\"changed\":\"after the export\"}");
			Run refused = run("import", "--statehouse-url=" + url(service), first.toString());
			assertThat(refused.status()).isEqualTo(1);
			assertThat(refused.out()).contains("refused \"any-id:with space\" NEWER (version 2 written at ")
				.endsWith("0 created, 0 replaced, 0 deleted, " + (OddIds.IDS.size() - 1) + " unchanged, 1 refused\n");
			assertThat(target.get("/states/" + StatehouseClient.segment(changed)).body())
				.isEqualTo("{\"changed\":\"after the export\"}");

			Path cut = this.directory.resolve("cut.jsonl");
			List<String> all = Files.readAllLines(first);
			Files.write(cut, all.subList(0, all.size() - 1));
			Run cutShort = run("import", "--statehouse-url=" + url(service), cut.toString());
			assertThat(cutShort.status()).isEqualTo(2);
			assertThat(cutShort.err()).contains("without the end line").contains("Nothing was imported.");

			// A line the service refuses, in a later part: every part is checked (a dry run) before any is written.
			String header = all.get(0);
			String line = "{\"id\":\"late:%s\",\"version\":%d,\"updatedAt\":\"2026-12-01T00:00:00Z\",\"document\":{}}";
			Path bad = Files.write(this.directory.resolve("bad.jsonl"), List.of("", header, line.formatted("a", 1),
					line.formatted("b", 0), "{\"end\":true,\"lines\":2}"));
			Run refusedLine = run("import", "--statehouse-url=" + url(service), "--part-size=1", bad.toString());
			assertThat(refusedLine.status()).isEqualTo(2);
			assertThat(refusedLine.err()).contains("line 4 of the file: version").contains("Nothing was imported.");
			assertThat(target.get("/states/late:a").status()).isEqualTo(404);
		}
	}

	@Test
	void optionsThatDoNotBelongAreRefusedWithTheUsage() {
		Run wrong = run("export", "--overwrite-newer");
		assertThat(wrong.status()).isEqualTo(2);
		assertThat(wrong.err()).startsWith("--overwrite-newer is not an option of this command")
			.contains("usage: java -jar statehouse.jar export");
		assertThat(run("import").err()).startsWith("import needs the file to import");
		assertThat(run("import", "--part-size=0", "x").err()).startsWith("--part-size must be a whole number");
		assertThat(run("export", "--history=yes").err()).startsWith("--history takes no value");
	}

	@Test
	void aFileThatIsNotAWholeExportIsRefusedBeforeAnythingIsSent() throws Exception {
		String header = "{\"statehouse\":\"states\",\"format\":1,\"exportedAt\":\"2026-12-01T00:00:00Z\"}";
		String a = "{\"id\":\"a\",\"version\":1,\"updatedAt\":\"2026-12-01T00:00:00Z\",\"document\":{}}";
		String b = a.replace("\"a\"", "\"b\"");
		Map<String, String> files = Map.of("lines lost or added?", header + "\n" + a + "\n{\"end\":true,\"lines\":2}\n",
				"follows the end line", header + "\n" + a + "\n{\"end\":true,\"lines\":1}\n" + b + "\n",
				"is not JSON", header + "\n" + a + "\n" + b.substring(0, 20),
				"out of order", header + "\n" + b + "\n" + a + "\n{\"end\":true,\"lines\":2}\n",
				"without the end line", header + "\n" + a + "\n");
		for (Map.Entry<String, String> file : files.entrySet()) {
			Path path = Files.writeString(this.directory.resolve("bad.jsonl"), file.getValue());
			// Port 1: nothing answers there, so a part sent would fail otherwise.
			Run run = run("import", "--statehouse-url=http://127.0.0.1:1", path.toString());
			assertThat(run.status()).isEqualTo(2);
			assertThat(run.err()).contains(file.getKey()).contains("Nothing was imported.");
		}
	}

	@Test
	void aStatehouseThatCannotBeReachedIsNamed() throws Exception {
		String export = "{\"statehouse\":\"states\",\"format\":1,\"exportedAt\":\"2026-12-01T00:00:00Z\"}\n"
				+ "{\"id\":\"a\",\"version\":1,\"updatedAt\":\"2026-12-01T00:00:00Z\",\"document\":{}}\n"
				+ "{\"end\":true,\"lines\":1}\n";
		Path path = Files.writeString(this.directory.resolve("whole.jsonl"), export);
		Run imported = run("import", "--statehouse-url=http://127.0.0.1:1", path.toString());
		Run exported = run("export", "--statehouse-url=http://127.0.0.1:1",
				"--output=" + this.directory.resolve("out.jsonl"));
		for (Run run : List.of(imported, exported)) {
			assertThat(run.status()).isEqualTo(2);
			assertThat(run.err()).contains("Stopped: Statehouse at http://127.0.0.1:1 could not be reached")
				.doesNotContain("null");
		}
		assertThat(imported.err()).contains("Nothing was imported.");
	}

	private static String url(ServiceProcess service) {
		return "http://127.0.0.1:" + service.port();
	}

	/** The lines of states: all but the header and the end line. */
	private static List<String> states(Path export) throws Exception {
		List<String> lines = Files.readAllLines(export);
		assertThat(lines.get(lines.size() - 1)).isEqualTo("{\"end\":true,\"lines\":" + (lines.size() - 2) + "}");
		return lines.subList(1, lines.size() - 1);
	}

	private static String withoutTime(String line) {
		JsonNode state = JSON.readTree(line);
		return state.get("id").asString() + " " + state.get("version").asLong() + " "
				+ line.substring(line.indexOf(",\"document\":"));
	}

	private static Run run(String... args) {
		ByteArrayOutputStream out = new ByteArrayOutputStream();
		ByteArrayOutputStream err = new ByteArrayOutputStream();
		int status = TransferCommand.run(args, Map.of(), new PrintStream(out, true, StandardCharsets.UTF_8),
				new PrintStream(err, true, StandardCharsets.UTF_8), false);
		return new Run(status, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
	}

	private record Run(int status, String out, String err) {
	}

}
