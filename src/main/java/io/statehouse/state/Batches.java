package io.statehouse.state;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.ToLongFunction;

/**
 * Cuts items, as they come, into batches of at most a count of items and about a number of bytes
 * (a batch is handed on once it reaches either, so one large item is a batch of its own), and
 * hands each batch on: how restore, export and import keep their reads and writes bounded.
 */
final class Batches<T> {

	private final int maxItems;

	private final long maxBytes;

	private final Consumer<List<T>> handler;

	private final List<T> batch = new ArrayList<>();

	private long bytes;

	Batches(int maxItems, long maxBytes, Consumer<List<T>> handler) {
		this.maxItems = maxItems;
		this.maxBytes = maxBytes;
		this.handler = handler;
	}

	/** Adds an item of about so many bytes; hands the batch on if this one filled it. */
	void add(T item, long itemBytes) {
		this.batch.add(item);
		this.bytes += itemBytes;
		if (this.batch.size() >= this.maxItems || this.bytes >= this.maxBytes) {
			handOn();
		}
	}

	/** Hands on what is left. */
	void finish() {
		if (!this.batch.isEmpty()) {
			handOn();
		}
	}

	/** Every item of a list, in batches. */
	static <T> void of(List<T> items, int maxItems, long maxBytes, ToLongFunction<T> itemBytes,
			Consumer<List<T>> handler) {
		Batches<T> batches = new Batches<>(maxItems, maxBytes, handler);
		items.forEach((item) -> batches.add(item, itemBytes.applyAsLong(item)));
		batches.finish();
	}

	private void handOn() {
		List<T> handed = List.copyOf(this.batch);
		this.batch.clear();
		this.bytes = 0;
		this.handler.accept(handed);
	}

}
