package io.statehouse.state;

import java.util.Set;

import io.statehouse.shared.ProblemKinds;

import org.springframework.stereotype.Component;

/** The kinds of problem {@code /states} answers with. */
@Component
class StateProblemKinds implements ProblemKinds {

	@Override
	public Set<String> kinds() {
		return Set.of(InvalidDocumentException.KIND, DocumentTooLargeException.KIND, StateNotFoundException.KIND,
				VersionGoneException.KIND, PreconditionFailedException.KIND, LeasesHeldException.KIND);
	}

}
