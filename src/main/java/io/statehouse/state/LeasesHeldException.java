package io.statehouse.state;

import java.util.List;
import java.util.Map;

import io.statehouse.shared.ProblemException;
import org.jspecify.annotations.Nullable;

import org.springframework.http.HttpStatus;

/** A restore of many states that would change states whose locks are held: 423, nothing written. */
class LeasesHeldException extends ProblemException {

	/** The kind of this problem, as {@link StateProblemKinds} declares it. */
	static final String KIND = "leases-held";

	private final List<String> held;

	LeasesHeldException(List<String> held) {
		super(HttpStatus.LOCKED, KIND, held.size() + " of the states this restore would change "
				+ ((held.size() == 1) ? "is" : "are") + " held by a lease (" + MatchingRestore.some(held)
				+ "): nothing was restored. Restore when their runs have ended, or force it.");
		this.held = held;
	}

	/** The ids held, the first hundred of them. */
	@Override
	public Map<String, @Nullable Object> properties() {
		return Map.of("held", this.held.subList(0, Math.min(100, this.held.size())));
	}

}
