package io.statehouse.changelog;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.statehouse.changelog.ChangelogRepository.FeedRow;
import io.statehouse.changelog.ChangelogRepository.Verdict;
import org.jspecify.annotations.Nullable;

/**
 * The changelog as a feed of committed changes, read from a {@link FeedCursor} on: only the
 * claims that won their versions, by the same rules as reads and history, in the changelog's
 * order — by commit, each change as soon as it is committed; by write time (Keeper), once it is
 * a claim window old and so decided. A cursor whose next changes were truncated is refused,
 * never answered with a gap. Whoever follows the feed on this instance also learns of this
 * instance's commits the moment they are made ({@link #onCommit}), and the feed does not ask
 * ClickHouse again which of this instance's recent claims won: their writer was told.
 */
public class ChangeFeed {

	/** Claims whose verdicts are kept: several seconds of writes at a thousand a second. */
	private static final int DECIDED_KEPT = 16_384;

	private final ChangelogRepository repository;

	private final MaterializerRepository materializer;

	private final TailWatermark tail;

	private final Duration claimWindow;

	private final List<Consumer<Map<String, Long>>> commitListeners = new CopyOnWriteArrayList<>();

	/**
	 * Whether each of this instance's recent claims won, as its writer was answered: a verdict
	 * is final, and the reader of the feed that a commit wakes reads it at once.
	 */
	private final Cache<UUID, Boolean> decided = Caffeine.newBuilder().maximumSize(DECIDED_KEPT).build();

	/** How long a truncation floor read serves the feed's reads: see {@link #requireRead}. */
	private final long floorTrustedNanos;

	/** The truncation floor as last read for the feed, and when that read was sent. */
	private volatile @Nullable FloorRead floorRead;

	/**
	 * @param grace how long a truncation floor is recorded before parts below it are dropped (the
	 * materializer's grace, the same on every instance)
	 */
	ChangeFeed(ChangelogRepository repository, MaterializerRepository materializer, TailWatermark tail,
			Duration claimWindow, Duration grace) {
		this.repository = repository;
		this.materializer = materializer;
		this.tail = tail;
		this.claimWindow = claimWindow;
		this.floorTrustedNanos = grace.toNanos() / 4;
	}

	/** After every change decided so far: where a feed that starts now begins. */
	public FeedCursor end() {
		return FeedCursor.after(this.materializer.cut(this.tail.position(), this.claimWindow));
	}

	/** The oldest cursor the feed can follow from. */
	public FeedCursor oldest() {
		return FeedCursor.after(this.repository.floor());
	}

	/**
	 * Checks that the feed can be followed from a cursor.
	 * @throws FeedCursorGoneException if changes after it were truncated
	 */
	public void requireRetained(FeedCursor cursor) {
		requireAfter(cursor, oldest());
	}

	private static void requireAfter(FeedCursor cursor, FeedCursor oldest) {
		if (cursor.compareTo(oldest) < 0) {
			throw new FeedCursorGoneException(cursor, oldest);
		}
	}

	/**
	 * The next changes after a cursor.
	 * @param limit read at most this many changelog rows (losers count)
	 * @throws FeedCursorGoneException if changes after the cursor were truncated
	 */
	public Changes read(FeedCursor after, int limit) {
		List<FeedRow> rows = settled(this.repository.changes(after, limit), limit);
		requireRead(after);
		if (rows.isEmpty()) {
			return new Changes(List.of(), after, false);
		}
		Map<UUID, Boolean> known = this.decided.getAllPresent(rows.stream().map(FeedRow::claimId).toList());
		List<FeedRow> unknown = rows.stream().filter((row) -> !known.containsKey(row.claimId())).toList();
		Set<UUID> won = unknown.isEmpty() ? Set.of() : this.repository.won(unknown);
		List<ChangeEvent> events = rows.stream()
			.filter((row) -> known.getOrDefault(row.claimId(), false) || won.contains(row.claimId()))
			.map(FeedRow::event)
			.toList();
		return new Changes(events, rows.get(rows.size() - 1).event().cursor(), rows.size() == limit);
	}

	/**
	 * Checks that no row after {@code after} was gone when the rows after it were just read. Parts
	 * are dropped only below a floor recorded a grace period earlier, so a floor at or below the
	 * cursor read after the rows, or read less than a quarter of the grace before them, means that
	 * nothing after the cursor was gone then: a floor recorded since drops nothing for a grace
	 * period. A follower's poll thus reads the floor once in a while, not each time.
	 * @throws FeedCursorGoneException if changes after the cursor may have been truncated
	 */
	private void requireRead(FeedCursor after) {
		long now = System.nanoTime();
		FloorRead known = this.floorRead;
		if (known == null || now - known.sentAt() > this.floorTrustedNanos) {
			known = new FloorRead(this.repository.floor(), now);
			this.floorRead = known;
		}
		requireAfter(after, FeedCursor.after(known.floor()));
	}

	/**
	 * The rows, each that is the last at its position standing after that whole position: a
	 * block commits whole, and by write time everything at a position already read is decided,
	 * so nothing can follow it there. A cursor that says so stays valid while the truncation
	 * floor reaches its position (a floor at a row's own position says that rows after it there
	 * may be gone).
	 * @param limit whether the page was full: then its last row may not be the last at its position
	 */
	static List<FeedRow> settled(List<FeedRow> rows, int limit) {
		List<FeedRow> settled = new ArrayList<>(rows.size());
		for (int i = 0; i < rows.size(); i++) {
			FeedRow row = rows.get(i);
			long position = row.event().cursor().position();
			boolean last = (i + 1 < rows.size()) ? rows.get(i + 1).event().cursor().position() > position
					: rows.size() < limit;
			settled.add(last ? row.at(FeedCursor.after(position)) : row);
		}
		return settled;
	}

	/**
	 * Has {@code listener} told, after every batch of writes this instance commits, the ids written
	 * and the newest version of each that won (acknowledged writes: never a claim that lost). It
	 * runs on the writer's thread, before the writes are answered: it must not block.
	 */
	public void onCommit(Consumer<Map<String, Long>> listener) {
		this.commitListeners.add(listener);
	}

	/**
	 * Told by this instance's writer of a batch's verdicts, before it answers them: remembers the
	 * final ones, then tells the listeners of the writes that won.
	 */
	void decided(Map<VersionClaim, Verdict> verdicts) {
		Map<String, Long> won = new HashMap<>();
		verdicts.forEach((claim, verdict) -> {
			switch (verdict.outcome()) {
				case WON -> {
					this.decided.put(claim.claimId(), true);
					won.merge(claim.id(), claim.version(), Math::max);
				}
				case LOST -> this.decided.put(claim.claimId(), false);
				case ABSENT, UNKNOWN -> {
					// Not decided here: the feed asks ClickHouse.
				}
			}
		});
		if (!won.isEmpty()) {
			this.commitListeners.forEach((listener) -> listener.accept(won));
		}
	}

	/** A truncation floor, and when the read that found it was sent ({@link System#nanoTime()}). */
	private record FloorRead(long floor, long sentAt) {
	}

	/**
	 * A page of the feed.
	 * @param events the changes that won, in feed order
	 * @param next the cursor after every row read (losers included)
	 * @param more whether more rows may follow at once
	 */
	public record Changes(List<ChangeEvent> events, FeedCursor next, boolean more) {
	}

}
