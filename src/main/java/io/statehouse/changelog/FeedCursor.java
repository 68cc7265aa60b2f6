package io.statehouse.changelog;

import java.util.Comparator;
import java.util.regex.Pattern;

/**
 * A place in the change feed: every change after it has a greater cursor. Changes are ordered
 * by where the changelog's tail orders them ({@code position}: the commit's block, or the write
 * time in ms in Keeper mode), then by the row's block and offset, so that every row has a cursor
 * of its own. {@link #after(long)} stands after everything at a position. Clients treat the
 * text form as opaque.
 *
 * @param position the row's position in the tail's order
 * @param block the row's {@code _block_number}
 * @param offset the row's {@code _block_offset}
 */
public record FeedCursor(long position, long block, long offset) implements Comparable<FeedCursor> {

	/** The text form, as the API documents it. */
	public static final String PATTERN = "^[0-9]{1,18}(\\.[0-9]{1,18}\\.[0-9]{1,18})?$";

	private static final Pattern TEXT = Pattern.compile(PATTERN);

	private static final long ALL = Long.MAX_VALUE;

	private static final Comparator<FeedCursor> ORDER = Comparator.comparingLong(FeedCursor::position)
		.thenComparingLong(FeedCursor::block)
		.thenComparingLong(FeedCursor::offset);

	/** After every change at {@code position} and before. */
	public static FeedCursor after(long position) {
		return new FeedCursor(position, ALL, ALL);
	}

	/**
	 * A cursor from its text form.
	 * @throws IllegalArgumentException if it is not one
	 */
	public static FeedCursor parse(String text) {
		if (!TEXT.matcher(text).matches()) {
			throw new IllegalArgumentException("Not a feed cursor: '" + text + "'");
		}
		String[] parts = text.split("\\.");
		return (parts.length == 1) ? after(Long.parseLong(parts[0]))
				: new FeedCursor(Long.parseLong(parts[0]), Long.parseLong(parts[1]), Long.parseLong(parts[2]));
	}

	@Override
	public int compareTo(FeedCursor other) {
		return ORDER.compare(this, other);
	}

	@Override
	public String toString() {
		return (this.block == ALL && this.offset == ALL) ? Long.toString(this.position)
				: this.position + "." + this.block + "." + this.offset;
	}

}
