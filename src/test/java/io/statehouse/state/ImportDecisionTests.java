package io.statehouse.state;

import java.time.Instant;

import io.statehouse.changelog.StoredState;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.assertj.core.api.Assertions.assertThat;

/** What an import does with an id, by what the export says and what the id is now. */
@Tag("fast")
class ImportDecisionTests {

	private static final Instant EXPORTED = Instant.parse("2026-12-01T12:00:00Z");

	@ParameterizedTest(name = "export {0}, here {1} written {2}, overwrite {3}: {4}")
	@CsvSource(nullValues = "none", textBlock = """
			# export  | here     | written | overwrite | decision
			{"a":1}   | none     | none    | false     | CREATE
			{"a":1}   | deleted  | before  | false     | CREATE
			{"a":1}   | deleted  | after   | false     | NEWER
			{"a":1}   | deleted  | after   | true      | CREATE
			{"a":1}   | {"a":1}  | before  | false     | UNCHANGED
			{"a":1}   | {"a":1}  | after   | false     | UNCHANGED
			{"a":1}   | {"a":2}  | before  | false     | REPLACE
			{"a":1}   | {"a":2}  | at      | false     | REPLACE
			{"a":1}   | {"a":2}  | after   | false     | NEWER
			{"a":1}   | {"a":2}  | after   | true      | REPLACE
			none      | none     | none    | false     | UNCHANGED
			none      | deleted  | after   | false     | UNCHANGED
			none      | {"a":2}  | before  | false     | DELETE
			none      | {"a":2}  | after   | false     | NEWER
			none      | {"a":2}  | after   | true      | DELETE
			""", delimiter = '|')
	void decides(String wanted, String here, String written, boolean overwriteNewer, ImportDecision decision) {
		assertThat(ImportDecision.of(wanted, state(here, written), EXPORTED, overwriteNewer)).isEqualTo(decision);
	}

	private static StoredState state(String here, String written) {
		if (here == null) {
			return null;
		}
		Instant at = switch (written) {
			case "before" -> EXPORTED.minusMillis(1);
			case "at" -> EXPORTED;
			default -> EXPORTED.plusMillis(1);
		};
		boolean deleted = here.equals("deleted");
		return new StoredState("id", 3, deleted, deleted ? "" : here, 0, at);
	}

}
