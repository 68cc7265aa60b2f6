package io.statehouse.changelog;

import java.util.Set;

import io.statehouse.shared.ProblemKinds;

import org.springframework.stereotype.Component;

/** The kinds of problem a write answers with when the changelog does not take it, or not as sent. */
@Component
class ChangelogProblemKinds implements ProblemKinds {

	@Override
	public Set<String> kinds() {
		return Set.of(IdempotencyKeyReusedException.KIND, FeedCursorGoneException.KIND, WriteUnavailableException.KIND,
				WriteUnavailableException.OUTCOME_UNKNOWN_KIND);
	}

}
