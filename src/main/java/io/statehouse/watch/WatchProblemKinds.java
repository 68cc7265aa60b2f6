package io.statehouse.watch;

import java.util.Set;

import io.statehouse.shared.ProblemKinds;

import org.springframework.stereotype.Component;

/** The kinds of problem watching answers with. */
@Component
class WatchProblemKinds implements ProblemKinds {

	@Override
	public Set<String> kinds() {
		return Set.of(TooManyWatchersException.KIND);
	}

}
