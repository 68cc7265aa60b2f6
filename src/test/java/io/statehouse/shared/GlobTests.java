package io.statehouse.shared;

import java.time.Duration;
import java.util.List;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

/** Globs over ids, matched here as ClickHouse matches their {@code LIKE} patterns. */
@Tag("fast")
class GlobTests {

	@ParameterizedTest
	@CsvSource({ "prod:*, prod:a, true", "prod:*, prod:, true", "prod:*, dev:a, false", "*, x, true",
			"a_b*, a_b2, true", "a_b*, aXb2, false", "a%b, a%b, true", "a%b, axxb, false", "c?d, c-d, true",
			"c?d, cd, false", "c?d, c--d, false", "*-*-prod, a-b-prod, true", "*-*-prod, a-prod, false",
			"*x*, x, true", "**, '', true", "a*b*c, abc, true", "a*b*c, acb, false", "?*, '', false" })
	void matchesAsTheLikePatternDoes(String glob, String id, boolean matches) {
		assertThat(new Glob(glob).matches(id)).isEqualTo(matches);
	}

	@Test
	void anIdMadeUpToDefeatBacktrackingIsMatchedInLinearTime() {
		Glob glob = new Glob("*-*-*-*-*-*-prod");
		String hostile = "-".repeat(200_000) + "x";
		// A backtracking regular expression would take longer than the universe has; this takes
		// milliseconds. The bound only catches a return to backtracking.
		assertTimeoutPreemptively(Duration.ofSeconds(30), () -> assertThat(glob.matches(hostile)).isFalse());
	}

	@Test
	void aScopePermitsOnlyIds() {
		IdScope scope = IdScope.of(List.of("*"));
		assertThat(scope.permits("prod:a")).isTrue();
		assertThat(scope.permits("x".repeat(256))).isFalse();
		assertThat(scope.permits("a b")).isTrue();
		assertThat(scope.permits("a\u0001b")).isFalse();
		assertThat(scope.permits("..")).isFalse();
		assertThat(scope.toLike()).containsExactly("%");
	}

	@Test
	void aGlobHasOnlyTheCharactersOfIds() {
		assertThatExceptionOfType(InvalidRequestException.class).isThrownBy(() -> new Glob("prod:\u0000"));
		assertThatExceptionOfType(InvalidRequestException.class).isThrownBy(() -> new Glob("x".repeat(256)));
		assertThatExceptionOfType(InvalidRequestException.class).isThrownBy(() -> new Glob(""));
		assertThat(new Glob("a_%*?").toLike()).isEqualTo("a\\_\\%%_");
	}

}
