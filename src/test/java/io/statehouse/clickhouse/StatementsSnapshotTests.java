package io.statehouse.clickhouse;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import io.statehouse.support.KeeperCoordination;
import io.statehouse.support.StatehouseTest;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every statement the service sends, as ClickHouse receives it but for its named parameters'
 * values, in both coordination modes, against the snapshots committed in
 * {@code src/test/resources/statements/}: what the engine runs can be read in one place, and a
 * change of it shows in review as a diff of those files. After a change of SQL, rewrite them with
 * {@code -Dstatehouse.statements.update=true}, and read the diff.
 */
class StatementsSnapshotTests {

	private static final boolean UPDATE = Boolean.getBoolean("statehouse.statements.update");

	@Nested
	@StatehouseTest
	class CommitOrder {

		@Test
		void statementsAreTheSnapshots(@Autowired ClickHouseSchema schema) throws IOException {
			compare(schema, "commit-order.sql");
		}

	}

	@Nested
	@StatehouseTest
	@KeeperCoordination
	class Keeper {

		@Test
		void statementsAreTheSnapshots(@Autowired ClickHouseSchema schema) throws IOException {
			compare(schema, "keeper.sql");
		}

	}

	private static void compare(ClickHouseSchema schema, String name) throws IOException {
		// Tests sharing the application render statements of their own: those are not the service's.
		schema.sql("SELECT 'a statement of a test' FROM {state}");
		Path snapshot = Path.of("src/test/resources/statements", name);
		StringBuilder rendered = new StringBuilder();
		rendered.append("-- Every statement the service sends, in ")
			.append(name.replace(".sql", ""))
			.append(" coordination, sorted; written by StatementsSnapshotTests.\n\n");
		// Each test runs in a database of its own: the snapshot names it as a deployment would.
		schema.statements()
			.forEach((statement) -> rendered.append(statement.replace(schema.database(), "statehouse")).append(";\n\n"));
		if (UPDATE) {
			Files.writeString(snapshot, rendered);
		}
		assertThat(rendered.toString())
			.as("the statements sent differ from %s: if the change is meant, rewrite it with "
					+ "-Dstatehouse.statements.update=true and read its diff", snapshot)
			.isEqualTo(Files.readString(snapshot));
	}

}
