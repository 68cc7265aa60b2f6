package io.statehouse.state;

import java.time.Instant;
import java.util.List;
import java.util.Map;

import io.statehouse.changelog.VersionInfo;
import io.statehouse.shared.ProblemException;
import org.jspecify.annotations.Nullable;

import org.springframework.http.HttpStatus;

/** A version that existed but is no longer retained (the changelog was truncated past it): 410. */
class VersionGoneException extends ProblemException {

	/** The kind of this problem, as {@link StateProblemKinds} declares it. */
	static final String KIND = "version-gone";

	/** The states of a restore whose versions then are gone, the first hundred of them; empty otherwise. */
	private final List<String> gone;

	VersionGoneException(String id, long version) {
		this("Version " + version + " of state '" + id + "' is no longer retained.", List.of());
	}

	private VersionGoneException(String detail, List<String> gone) {
		super(HttpStatus.GONE, KIND, detail);
		this.gone = gone.subList(0, Math.min(100, gone.size()));
	}

	/** States matching a restore whose versions at {@code asOf} are gone. */
	static VersionGoneException asOf(Instant asOf, List<String> ids) {
		return new VersionGoneException(ids.size() + " of the states matching this restore "
				+ ((ids.size() == 1) ? "is" : "are") + " no longer retained as of " + asOf + " (" + MatchingRestore.some(ids)
				+ "): their history starts after that time. Nothing was restored.", ids);
	}

	/** A time before the oldest version retained, whose own version is gone. */
	static VersionGoneException asOf(String id, Instant asOf, VersionInfo oldest) {
		return new VersionGoneException("State '" + id + "' as of " + asOf + " is no longer retained: its history starts "
				+ "at version " + oldest.version() + ", written at " + oldest.updatedAt() + ".", List.of());
	}

	/** For a restore of many states: {@code gone}, the ids whose versions then are no longer retained. */
	@Override
	public Map<String, @Nullable Object> properties() {
		return this.gone.isEmpty() ? Map.of() : Map.of("gone", this.gone);
	}

}
