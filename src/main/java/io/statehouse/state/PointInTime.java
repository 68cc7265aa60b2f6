package io.statehouse.state;

import java.time.Instant;
import java.util.List;

import io.statehouse.changelog.Change.Operation;
import io.statehouse.changelog.VersionInfo;
import org.jspecify.annotations.Nullable;

/**
 * What an id's retained history says about one point in time: the version that was the newest
 * then. A version counts as existing at {@code asOf} only if it and every version before it had
 * been written by then (a clock that stepped back must not date a version before its parent).
 *
 * @param then the newest version at that time, or {@code null} when none the history holds was
 * @param oldest the oldest version the history holds
 */
record PointInTime(@Nullable VersionInfo then, VersionInfo oldest) {

	/**
	 * @param versions an id's retained versions, oldest first (never empty: the newest is always kept)
	 * @param asOf the point in time
	 */
	static PointInTime of(List<VersionInfo> versions, Instant asOf) {
		VersionInfo then = null;
		Instant latest = Instant.MIN;
		for (VersionInfo version : versions) {
			latest = version.updatedAt().isAfter(latest) ? version.updatedAt() : latest;
			if (latest.isAfter(asOf)) {
				break;
			}
			then = version;
		}
		return new PointInTime(then, versions.get(0));
	}

	/** The version it had then is no longer retained: history starts after it, and not at the first. */
	boolean gone() {
		return this.then == null && !this.oldest.first();
	}

	/** A document existed then: {@link #then} is neither absent nor a deletion. */
	boolean existed() {
		return this.then != null && isLive(this.then);
	}

	/**
	 * Whether a version holds a document: not a deletion, nor a fence of one (a fence keeps what the
	 * state held, and a deleted state holds no document: nothing, where a document is at least {@code {}}).
	 */
	static boolean isLive(VersionInfo version) {
		return version.operation() != Operation.DELETE && version.sizeBytes() > 0;
	}

}
