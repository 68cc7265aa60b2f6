package io.statehouse.watch;

import java.io.IOException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;

import io.statehouse.changelog.Change;
import io.statehouse.changelog.ChangeEvent;
import io.statehouse.changelog.FeedCursor;
import io.statehouse.changelog.StoredState;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import org.springframework.dao.DataAccessResourceFailureException;
import org.springframework.web.servlet.mvc.method.annotation.SseEmitter;

import static org.assertj.core.api.Assertions.assertThat;

/** What a stream queues and what its last event says, with a sender that runs only when told. */
@Tag("fast")
class ChangeStreamTests {

	private final List<String> sent = new ArrayList<>();

	private final List<Runnable> senders = new ArrayList<>();

	private final SseEmitter emitter = new SseEmitter(0L) {

		@Override
		public void send(SseEventBuilder event) throws IOException {
			ChangeStreamTests.this.sent.add(event.build()
				.stream()
				.map((part) -> part.getData().toString())
				.collect(Collectors.joining())
				.trim());
		}

	};

	private final Executor sender = this.senders::add;

	private int closed;

	private int overflowed;

	private ChangeStream stream(int maxQueued) {
		return stream(maxQueued, null);
	}

	private ChangeStream stream(int maxQueued, @Nullable EventDocuments documents) {
		return new ChangeStream(this.emitter, null, (id) -> id.startsWith("a"), FeedCursor.after(10), maxQueued,
				this.sender, () -> {
				}, () -> this.overflowed++, () -> this.closed++, documents);
	}

	private static ChangeEvent change(long position, String id) {
		return new ChangeEvent(new FeedCursor(position, position, 0), id, 1, Change.Operation.PUT, "ci",
				Instant.parse("2026-12-01T00:00:00Z"), 2);
	}

	private void send() {
		List<Runnable> tasks = new ArrayList<>(this.senders);
		this.senders.clear();
		tasks.forEach(Runnable::run);
	}

	@Test
	void changesAtOrBeforeItsCursorAreNotSentAgain() {
		ChangeStream stream = stream(10);
		assertThat(stream.offer(change(10, "a1"))).isTrue();
		assertThat(stream.offer(change(11, "a2"))).isTrue();
		assertThat(stream.offer(change(11, "a2"))).isTrue();
		send();
		assertThat(this.sent).hasSize(1).allSatisfy((event) -> assertThat(event).contains("id:11.11.0", "id=a2"));
	}

	@Test
	void changesNotWantedMoveTheCursorABookmarkNames() {
		ChangeStream stream = stream(10);
		stream.offer(change(12, "b"));
		stream.reached(FeedCursor.after(15));
		stream.bookmark();
		send();
		assertThat(this.sent).singleElement().asString().contains("event:bookmark", "id:15").doesNotContain("id=b");
	}

	@Test
	void aBurstThatFillsTheQueueSendsTheStreamBackToAReaderFromTheChangeItCouldNotTake() {
		ChangeStream stream = stream(2);
		stream.joined();
		assertThat(stream.offer(change(11, "a1"))).isTrue();
		assertThat(stream.offer(change(12, "a2"))).isTrue();
		assertThat(stream.offer(change(13, "a3"))).as("no room: it leaves the tail").isFalse();
		assertThat(stream.offer(change(14, "a4"))).isFalse();
		assertThat(this.overflowed).as("one reader, told once").isEqualTo(1);
		assertThat(stream.isOver()).isFalse();
		assertThat(stream.last()).as("the reader starts after what was queued").isEqualTo(new FeedCursor(12, 12, 0));
	}

	@Test
	void aClientThatTakesNothingForAWhileIsCutOffWithTheCursorBeforeTheChangeItCouldNotTake() throws Exception {
		ChangeStream stream = stream(2);
		assertThat(stream.offerWhenRoom(change(11, "a1"), 50)).isTrue();
		assertThat(stream.offerWhenRoom(change(12, "a2"), 50)).isTrue();
		assertThat(stream.offerWhenRoom(change(13, "a3"), 50)).isFalse();
		assertThat(stream.isOver()).isTrue();
		assertThat(this.overflowed).as("not in the tail: nothing to hand back").isZero();
		send();
		assertThat(this.sent).hasSize(3);
		assertThat(this.sent.get(2)).contains("event:end", "id:12.12.0", "reason=slow-consumer", "cursor=12.12.0");
		assertThat(this.closed).as("over once its end is sent").isEqualTo(1);
	}

	@Test
	void aDocumentThatCannotBeReadEndsTheStreamAtTheLastChangeSent() {
		AtomicInteger reads = new AtomicInteger();
		ChangeStream stream = stream(10, new EventDocuments((id, version) -> {
			if (reads.incrementAndGet() > 1) {
				throw new DataAccessResourceFailureException("the engine went away");
			}
			return Optional.of(new StoredState(id, version, false, "{\"n\":1}", 0, Instant.EPOCH));
		}));
		stream.offer(change(11, "a1"));
		stream.offer(change(12, "a2"));
		stream.offer(change(13, "a3"));
		send();
		assertThat(this.sent).hasSize(2);
		assertThat(this.sent.get(0)).contains("id=a1", "document={\"n\":1}");
		assertThat(this.sent.get(1)).contains("event:end", "reason=unavailable", "id:11.11.0", "cursor=11.11.0");
		assertThat(stream.isOver()).isTrue();
		assertThat(this.closed).isEqualTo(1);
		assertThat(stream.offer(change(14, "a4"))).isFalse();
	}

	@Test
	void aStoppingServiceEndsItsStreamsAfterWhatIsQueued() {
		ChangeStream stream = stream(10);
		stream.offer(change(11, "a1"));
		stream.stopped();
		assertThat(stream.offer(change(12, "a2"))).isFalse();
		send();
		assertThat(this.sent).hasSize(2);
		assertThat(this.sent.get(1)).contains("event:end", "reason=shutdown", "id:11.11.0");
	}

}
