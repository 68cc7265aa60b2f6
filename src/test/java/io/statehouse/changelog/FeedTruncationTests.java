package io.statehouse.changelog;

import java.time.Duration;
import java.util.List;
import java.util.UUID;

import io.statehouse.support.EventStream;
import io.statehouse.support.EventStream.Event;
import io.statehouse.support.StatehouseClient;
import io.statehouse.support.StatehouseTest;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.test.context.TestPropertySource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * The change feed under truncation: a cursor whose next changes were truncated is refused with
 * 410 and the oldest cursor, and following from that one yields exactly the versions history
 * still retains. One-second segments and a two-second retention; materialization by hand.
 */
@StatehouseTest
@TestPropertySource(properties = { "statehouse.changelog.segment-duration=1s", "statehouse.changelog.retention=2s",
		"statehouse.changelog.materializer.grace=1s", "statehouse.changelog.materializer.interval=1h" })
class FeedTruncationTests {

	private static final Duration PATIENCE = Duration.ofSeconds(10);

	@Autowired
	ChangelogMaterializer materializer;

	@Autowired
	StatehouseClient client;

	@Test
	void aCursorBelowTheFloorIsGoneAndTheOldestCursorResumesWithWhatIsRetained() throws Exception {
		String id = "feed-trunc:" + UUID.randomUUID();
		String old;
		try (EventStream stream = this.client.stream("/changes?id=" + id)) {
			old = stream.next((event) -> event.name().equals("bookmark"), PATIENCE).id();
			this.client.put("/states/" + id, "{\"v\":1}");
			assertThat(stream.changes(1, PATIENCE).get(0).json().get("version").asLong()).isEqualTo(1);
		}
		Thread.sleep(1100);
		this.client.put("/states/" + id, "{\"v\":2}");
		Thread.sleep(1100);
		this.client.put("/states/" + id, "{\"v\":3}");
		EventStream.Refused gone = await().atMost(Duration.ofSeconds(30))
			.pollInterval(Duration.ofMillis(500))
			.until(() -> {
				this.materializer.run();
				try (EventStream unexpected = this.client.stream("/changes?id=" + id + "&cursor=" + old)) {
					return null;
				}
				catch (EventStream.Refused ex) {
					return ex;
				}
			}, (refused) -> refused != null);
		assertThat(gone.status()).isEqualTo(410);
		assertThat(gone.json().get("type").asString()).isEqualTo("urn:statehouse:problem:cursor-gone");
		String oldest = gone.json().get("oldestCursor").asString();
		assertThat(FeedCursor.parse(oldest)).isGreaterThan(FeedCursor.parse(old));

		List<Long> retained = this.client.versions(id);
		assertThat(retained).as("version 1 truncated").doesNotContain(1L).contains(3L);
		try (EventStream resumed = this.client.stream("/changes?id=" + id + "&cursor=" + oldest);
				EventStream fromOldest = this.client.stream("/changes?id=" + id + "&from=oldest")) {
			for (EventStream stream : List.of(resumed, fromOldest)) {
				assertThat(stream.changes(retained.size(), PATIENCE))
					.extracting((change) -> change.json().get("version").asLong())
					.containsExactlyElementsOf(retained);
				assertThatThrownBy(() -> stream.next(Event::isChange, Duration.ofMillis(500)))
					.as("nothing more").isInstanceOf(AssertionError.class);
			}
		}
	}

}
