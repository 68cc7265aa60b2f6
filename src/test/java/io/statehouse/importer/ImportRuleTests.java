package io.statehouse.importer;

import java.time.Instant;

import io.statehouse.importer.ImportRule.Need;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Tag;
import tools.jackson.databind.DeserializationFeature;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;

/** The rule an import follows for one id, case by case. */
@Tag("fast")
class ImportRuleTests {

	private static final JsonMapper JSON = JsonMapper.builder()
		.enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS)
		.build();

	@ParameterizedTest(name = "{0} in Statehouse, {1} in the source: {2}")
	@CsvSource(delimiter = '|', textBlock = """
			                                          | {"completed":{},"partial":{}}             | CREATE
			{"completed":{},"partial":{}}             | {"completed":{},"partial":{}}             | NOTHING
			{"partial":{"a":1},"completed":{"b":[1,2]}} | {"completed":{"b":[1,2]},"partial":{"a":1}} | NOTHING
			{"completed":{"n":0.10},"partial":{}}     | {"completed":{"n":0.10},"partial":{}}     | NOTHING
			{"completed":{"n":12345678901234567890123},"partial":{}} | {"completed":{"n":12345678901234567890123},"partial":{}} | NOTHING
			{"completed":{"n":1.0000000000000000001},"partial":{}} | {"completed":{"n":1},"partial":{}} | REPLACE
			{"completed":{"b":[1,2]},"partial":{}}    | {"completed":{"b":[2,1]},"partial":{}}    | REPLACE
			{"completed":{},"partial":{}}             | {"completed":{},"partial":{"a":null}}     | REPLACE
			{"completed":{"a":"1"},"partial":{}}      | {"completed":{"a":1},"partial":{}}        | REPLACE
			{"completed":{},"partial":{},"x":1}       | {"completed":{},"partial":{}}             | REPLACE
			""")
	void needDependsOnWhetherTheDocumentsAreEqual(String current, String wanted, Need need) {
		assertThat(ImportRule.need(JSON.readTree(wanted), (current != null) ? JSON.readTree(current) : null))
			.isEqualTo(need);
	}

	@ParameterizedTest(name = "source {0}, Statehouse {1}, overwrite-newer {2}: {3}")
	@CsvSource(delimiter = '|', textBlock = """
			2024-01-01T00:00:00.001Z | 2024-01-01T00:00:00.000Z | false | true
			2024-01-01T00:00:00.000Z | 2024-01-01T00:00:00.000Z | false | true
			2024-01-01T00:00:00.000Z | 2024-01-01T00:00:00.001Z | false | false
			2024-01-01T00:00:00.000Z | 2030-01-01T00:00:00.000Z | false | false
			2024-01-01T00:00:00.000Z | 2024-01-01T00:00:00.001Z | true  | true
			2030-01-01T00:00:00.000Z | 2024-01-01T00:00:00.000Z | true  | true
			""")
	void aStateChangedAfterTheSourceRowIsReplacedOnlyWhenToldTo(Instant source, Instant statehouse,
			boolean overwriteNewer, boolean replaced) {
		assertThat(ImportRule.mayReplace(source, statehouse, overwriteNewer)).isEqualTo(replaced);
	}

	@ParameterizedTest(name = "{0}")
	@CsvSource(delimiter = '|', textBlock = """
			dev:tap-to-target | dev%3Atap-to-target
			a b               | a%20b
			x%y               | x%25y
			a_b.c-d~e         | a_b.c-d~e
			team/pipeline     | team%2Fpipeline
			*star?            | %2Astar%3F
			+;#&=             | %2B%3B%23%26%3D
			café 😀           | caf%C3%A9%20%F0%9F%98%80
			""")
	void anIdIsOnePathSegmentWithEveryReservedByteEncoded(String id, String encoded) {
		assertThat(StatehouseApi.encode(id)).isEqualTo(encoded);
	}

}
