package io.statehouse.security;

import java.util.Set;

import io.statehouse.shared.ProblemKinds;

import org.springframework.stereotype.Component;

/** The kinds of problem security answers with, before a request reaches a controller. */
@Component
class SecurityProblemKinds implements ProblemKinds {

	/** No token, or an unknown one: 401. */
	static final String UNAUTHENTICATED = "unauthenticated";

	/** A token whose scopes or ids do not allow the request: 403. */
	static final String FORBIDDEN = "forbidden";

	@Override
	public Set<String> kinds() {
		return Set.of(UNAUTHENTICATED, FORBIDDEN);
	}

}
