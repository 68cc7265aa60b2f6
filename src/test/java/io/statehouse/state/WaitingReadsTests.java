package io.statehouse.state;

import java.time.Duration;
import java.util.stream.Stream;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.params.provider.Arguments.argumentSet;

/** How long a {@code Prefer} header asks a read to wait (RFC 7240), at most five minutes here. */
@Tag("fast")
class WaitingReadsTests {

	private static final Duration MAX = Duration.ofMinutes(5);

	static Stream<Arguments> requestedWait() {
		return Stream.of(argumentSet("no header", null, 0), argumentSet("seconds", "wait=30", 30),
				argumentSet("among other preferences, any case", "return=minimal, Wait=7; x=y", 7),
				argumentSet("quoted", "wait=\"12\"", 12), argumentSet("beyond the longest honoured", "wait=86400", 300),
				argumentSet("malformed: ignored", "wait=soon", 0), argumentSet("negative: ignored", "wait=-5", 0),
				argumentSet("longer than any: the longest", "wait=99999999999", 300),
				argumentSet("another preference only", "respond-async", 0), argumentSet("zero", "wait=0", 0));
	}

	@ParameterizedTest
	@MethodSource
	void requestedWait(@Nullable String prefer, long seconds) {
		assertThat(WaitingReads.requestedWait(prefer, MAX)).isEqualTo(Duration.ofSeconds(seconds));
	}

}
