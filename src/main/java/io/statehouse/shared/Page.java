package io.statehouse.shared;

import java.util.List;
import java.util.function.Function;

import org.jspecify.annotations.Nullable;

/**
 * One page of a listing in id order. A page is read one row longer than asked: the extra row
 * says that there is a next page, which starts after this page's last id.
 *
 * @param items the page
 * @param nextCursor where the next page starts; {@code null} on the last
 */
public record Page<T>(List<T> items, @Nullable String nextCursor) {

	/** Page size when none is asked for. */
	public static final int DEFAULT_SIZE = 100;

	/** Largest page: the controllers refuse more (400). */
	public static final int MAX_SIZE = 1000;

	/** Where a page starts: after the id in the cursor, or at the beginning. */
	public static @Nullable String after(@Nullable String cursor) {
		return (cursor != null) ? Cursors.decode(cursor) : null;
	}

	/**
	 * @param rows up to {@code size + 1} rows in id order
	 * @param size the page size asked for
	 * @param id a row's id
	 */
	public static <T> Page<T> of(List<T> rows, int size, Function<T, String> id) {
		boolean more = rows.size() > size;
		List<T> items = List.copyOf(more ? rows.subList(0, size) : rows);
		return new Page<>(items, more ? Cursors.encode(id.apply(items.get(items.size() - 1))) : null);
	}

}
