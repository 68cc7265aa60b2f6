package io.statehouse.state;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

import io.statehouse.changelog.Change.Operation;
import io.statehouse.changelog.VersionInfo;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.assertj.core.api.Assertions.assertThat;

/** Which retained version was the newest at a time, one row per case. */
@Tag("fast")
class PointInTimeTests {

	/**
	 * @param history the retained versions, oldest first: {@code version:operation:second written[:first]}
	 * @param at the second asked about
	 * @param then the version it had then (0: none)
	 */
	@ParameterizedTest(name = "{0} at {1}: version {2}, gone {3}, existed {4}")
	@CsvSource(delimiter = '|', textBlock = """
			1:PUT:10                      | 5  | 0 | false | false
			1:PUT:10                      | 10 | 1 | false | true
			1:PUT:10 2:PUT:20             | 15 | 1 | false | true
			1:PUT:10 2:PUT:20             | 25 | 2 | false | true
			1:PUT:10 2:DELETE:20          | 25 | 2 | false | false
			1:PUT:10 2:DELETE:20 3:PUT:30 | 25 | 2 | false | false
			1:PUT:10 2:DELETE:20 3:PUT:30 | 30 | 3 | false | true
			4:PUT:40 5:PATCH:50           | 30 | 0 | true  | false
			4:PUT:40 5:PATCH:50           | 45 | 4 | false | true
			4:RESTORE:40                  | 99 | 4 | false | true
			1:PUT:10 2:PUT:30 3:PUT:20    | 25 | 1 | false | true
			1:PUT:10 2:PUT:30 3:PUT:20    | 30 | 3 | false | true
			1:PUT:10 2:FENCE:20           | 20 | 2 | false | true
			42:PUT:10:first 43:PUT:20     | 5  | 0 | false | false
			42:PUT:10 43:PUT:20           | 5  | 0 | true  | false
			""")
	void theNewestVersionWrittenByThenWithEveryVersionBeforeIt(String history, long at, long then, boolean gone,
			boolean existed) {
		List<VersionInfo> versions = new ArrayList<>();
		for (String entry : history.split(" ")) {
			String[] parts = entry.split(":");
			// A first version: 1, or one an import carried over (marked "first").
			long version = Long.parseLong(parts[0]);
			versions.add(new VersionInfo(version, Operation.valueOf(parts[1]),
					Instant.ofEpochSecond(Long.parseLong(parts[2])), 1, "ci", null,
					version == 1 || (parts.length > 3 && parts[3].equals("first"))));
		}
		PointInTime pointInTime = PointInTime.of(versions, Instant.ofEpochSecond(at));
		assertThat((pointInTime.then() != null) ? pointInTime.then().version() : 0).isEqualTo(then);
		assertThat(pointInTime.gone()).isEqualTo(gone);
		assertThat(pointInTime.existed()).isEqualTo(existed);
		assertThat(pointInTime.oldest()).isEqualTo(versions.get(0));
	}

}
