package io.statehouse.changelog;

import java.util.Map;

import io.statehouse.shared.ProblemException;
import org.jspecify.annotations.Nullable;

import org.springframework.http.HttpStatus;

/**
 * A feed cursor below what the changelog retains: the changes right after it were truncated, so
 * following on from it would skip them (410, etcd's "required revision has been compacted").
 */
public class FeedCursorGoneException extends ProblemException {

	/** The kind of this problem, as {@link ChangelogProblemKinds} declares it. */
	static final String KIND = "cursor-gone";

	private final FeedCursor oldest;

	FeedCursorGoneException(FeedCursor cursor, FeedCursor oldest) {
		super(HttpStatus.GONE, KIND, "Changes after cursor " + cursor + " are no longer retained. Read the states "
				+ "again, then follow from the oldest cursor available, " + oldest + ", or from now.");
		this.oldest = oldest;
	}

	/** The oldest cursor the feed can follow from. */
	public FeedCursor oldest() {
		return this.oldest;
	}

	@Override
	public Map<String, @Nullable Object> properties() {
		return Map.of("oldestCursor", this.oldest.toString());
	}

}
