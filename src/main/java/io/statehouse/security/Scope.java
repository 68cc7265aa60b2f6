package io.statehouse.security;

import java.util.Set;

/** What a token may do. */
enum Scope {

	/** Read states, versions, listings and locks. */
	READ,

	/** Write and delete a state; acquire, renew and release a lock with its token. */
	WRITE,

	/** Clear states by glob, force-release a lock, and everything {@link #WRITE} may. */
	ADMIN,

	/** Scrape {@code /actuator/prometheus} and read {@code /actuator/metrics}. */
	METRICS;

	/** The scope's name in configuration and in the API description. */
	String scopeName() {
		return name().toLowerCase(java.util.Locale.ROOT);
	}

	/** The authority a token with this scope has, as Spring Security names scopes. */
	String authority() {
		return "SCOPE_" + scopeName();
	}

	/** The scopes a token granted this one has. */
	Set<Scope> implied() {
		return (this == ADMIN) ? Set.of(ADMIN, WRITE) : Set.of(this);
	}

}
