package io.statehouse.shared;

import java.util.Set;

/**
 * The kinds of problem a module answers with (the {@code <kind>} of
 * {@code urn:statehouse:problem:<kind>}). Each module declares its own as a bean; the API
 * description lists every declared kind without knowing the modules.
 */
@FunctionalInterface
public interface ProblemKinds {

	/** The kinds, each the last part of a problem's type. */
	Set<String> kinds();

}
