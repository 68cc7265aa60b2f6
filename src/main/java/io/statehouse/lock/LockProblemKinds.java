package io.statehouse.lock;

import java.util.Set;

import io.statehouse.shared.ProblemKinds;

import org.springframework.stereotype.Component;

/** The kinds of problem {@code /locks}, and a write under a lease, answer with. */
@Component
class LockProblemKinds implements ProblemKinds {

	@Override
	public Set<String> kinds() {
		return Set.of(LockConflictException.KIND, LockHeldException.KIND, LeaseLapsedException.KIND,
				TooManyWaitersException.KIND, LockNotFoundException.KIND, LockWaitersStoppedException.KIND);
	}

}
