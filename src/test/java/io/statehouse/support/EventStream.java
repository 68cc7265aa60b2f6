package io.statehouse.support;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.stream.Stream;

import org.jspecify.annotations.Nullable;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/** A stream of Server-Sent Events as a client reads it: events parsed on a thread of their own. */
public final class EventStream implements AutoCloseable {

	private static final JsonMapper JSON = JsonMapper.builder().build();

	private final Stream<String> lines;

	private final BlockingQueue<Event> events = new LinkedBlockingQueue<>();

	private final Thread reader;

	private volatile boolean ended;

	EventStream(Stream<String> lines) {
		this.lines = lines;
		this.reader = new Thread(this::read, "event-stream");
		this.reader.setDaemon(true);
		this.reader.start();
	}

	private void read() {
		String name = "message";
		String id = null;
		StringBuilder data = new StringBuilder();
		try {
			for (String line : (Iterable<String>) this.lines::iterator) {
				if (line.isEmpty()) {
					if (!data.isEmpty()) {
						this.events.add(new Event(name, id, data.toString()));
					}
					name = "message";
					id = null;
					data.setLength(0);
				}
				else if (line.startsWith("event:")) {
					name = line.substring(6).trim();
				}
				else if (line.startsWith("id:")) {
					id = line.substring(3).trim();
				}
				else if (line.startsWith("data:")) {
					data.append(line.substring(5).trim());
				}
			}
		}
		catch (RuntimeException ex) {
			// Closed by the test, or by the server.
		}
		finally {
			this.ended = true;
		}
	}

	/** The next event, within {@code timeout}; {@code null} if none came. */
	public @Nullable Event next(Duration timeout) throws InterruptedException {
		return this.events.poll(timeout.toMillis(), TimeUnit.MILLISECONDS);
	}

	/** The next event that matches, skipping others. */
	public Event next(Predicate<Event> wanted, Duration timeout) throws InterruptedException {
		long until = System.nanoTime() + timeout.toNanos();
		while (true) {
			Event event = next(Duration.ofNanos(Math.max(0, until - System.nanoTime())));
			if (event == null) {
				throw new AssertionError("No event as wanted within " + timeout);
			}
			if (wanted.test(event)) {
				return event;
			}
		}
	}

	/** The next {@code count} changes (unnamed events), skipping bookmarks; fails at once if the stream ends first. */
	public List<Event> changes(int count, Duration timeout) throws InterruptedException {
		List<Event> changes = new ArrayList<>();
		while (changes.size() < count) {
			Event event = next((candidate) -> candidate.isChange() || candidate.isEnd(), timeout);
			if (event.isEnd()) {
				throw new AssertionError("Stream ended after " + changes.size() + " of " + count + " changes: " + event);
			}
			changes.add(event);
		}
		return changes;
	}

	/** Whether the server ended the stream. */
	public boolean ended() {
		return this.ended;
	}

	@Override
	public void close() {
		this.lines.close();
		this.reader.interrupt();
	}

	/** A stream the server did not open: its answer. */
	public static final class Refused extends AssertionError {

		private final int status;

		private final java.net.http.HttpHeaders headers;

		private final String body;

		Refused(int status, java.net.http.HttpHeaders headers, String body) {
			super("Stream not opened: " + status + " " + body);
			this.status = status;
			this.headers = headers;
			this.body = body;
		}

		public int status() {
			return this.status;
		}

		public java.net.http.HttpHeaders headers() {
			return this.headers;
		}

		public JsonNode json() {
			return JSON.readTree(this.body);
		}

	}

	/** An event: its name ({@code message} when unnamed), id and data. */
	public record Event(String name, @Nullable String id, String data) {

		public boolean isChange() {
			return this.name.equals("message");
		}

		/** The server's last event on a stream: it says why the stream ended and where it stood. */
		public boolean isEnd() {
			return this.name.equals("end");
		}

		public JsonNode json() {
			return JSON.readTree(this.data);
		}

		@Override
		public String toString() {
			return this.name + " " + this.id + " " + this.data;
		}

	}

}
