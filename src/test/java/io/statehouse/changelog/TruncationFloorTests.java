package io.statehouse.changelog;

import java.util.List;

import io.statehouse.changelog.MaterializerRepository.Part;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Tag;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The truncation floor, rule by rule (the materializer's javadoc states them): parts are given
 * as {@code min-max} block ranges, {@code *} marking one older than the retention.
 */
@Tag("fast")
class TruncationFloorTests {

	@ParameterizedTest(name = "{0}: settled cut {1}, forgotten {2}, parts {3} -> {4}")
	@CsvSource(delimiter = '|', textBlock = """
			all old, the cut is lowest                     |  50 | 100 | 1-40* 41-80* 81-120*   |  50
			keys forgotten below the cut bound it          | 100 |  60 | 1-40* 41-80* 81-120*   |  60
			a young part holds the floor below its rows    | 100 | 100 | 1-40* 41-80 81-120*    |  40
			the lowest young part wins                     | 100 | 100 | 1-40 41-80 81-120*     |   0
			the highest block's part always stays          | 500 | 500 | 1-40* 41-80* 81-120*   | 119
			one old part: it stays, below its last block   | 500 | 500 | 10-20*                 |  19
			nothing settled yet: nothing is truncated      |   0 | 500 | 1-40* 41-80*           |   0
			overlapping merged parts: young rows protected | 100 | 100 | 1-90* 30-60 91-120*    |  29
			""")
	void floorFollowsEveryRule(String rule, long settledCut, long forgotten, String parts, long floor) {
		assertThat(ChangelogMaterializer.truncationFloor(settledCut, forgotten, parse(parts))).as(rule)
			.isEqualTo(floor);
	}

	private static List<Part> parse(String parts) {
		return java.util.Arrays.stream(parts.trim().split("\\s+")).map((range) -> {
			boolean old = range.endsWith("*");
			String[] blocks = range.replace("*", "").split("-");
			return new Part("p" + range, Long.parseLong(blocks[0]), Long.parseLong(blocks[1]), old);
		}).toList();
	}

}
