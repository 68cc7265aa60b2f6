package io.statehouse.lock;

import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * Where the places of waiting acquisitions are kept, for every instance to see: a place says when
 * its acquisition asked, and counts while its instance keeps it alive and its acquisition waits.
 * Places decide nothing about who holds a lock — the slot claims do — only whose turn a grant is.
 */
interface LockQueue {

	/**
	 * Takes places in their lines, or keeps them alive: each for {@code alive} more. A place asked
	 * when it was first taken, by ClickHouse's clock.
	 */
	void keep(Collection<Place> places, Duration alive);

	/** Gives places up: they never count again. */
	void leave(Collection<Place> places);

	/**
	 * The live places of each id's line, in the order they asked (ids without one are absent).
	 */
	Map<String, List<UUID>> lines(Collection<String> ids);

	/** The live places of one id's line, in the order they asked. */
	default List<UUID> line(String id) {
		return lines(List.of(id)).getOrDefault(id, List.of());
	}

	/** A place in the line of a lock. */
	record Place(String id, UUID place) {
	}

}
