package io.statehouse.watch;

import io.statehouse.changelog.ChangeEvent;
import io.statehouse.changelog.FeedCursor;
import io.statehouse.changelog.FeedCursorGoneException;
import org.jspecify.annotations.Nullable;

/** Someone the {@link ChangeTail} hands changes to: a stream or a wait. Called under the tail's lock: never blocks. */
interface Follower {

	/** The one id it follows, for an index; {@code null} for many. */
	@Nullable String id();

	/**
	 * A change committed after everything handed over before.
	 * @return whether it still follows
	 */
	boolean offer(ChangeEvent event);

	/** The tail took it on: from now on the tail hands it every change, until {@link #offer} says no. */
	default void joined() {
	}

	/** The tail has read everything up to {@code cursor}: a stream can tell its client so. */
	default void reached(FeedCursor cursor) {
	}

	/** The tail fell behind truncation: it carries on from the oldest cursor, and this follower cannot. */
	void gone(FeedCursorGoneException ex);

	/** The service is stopping. */
	void stopped();

}
