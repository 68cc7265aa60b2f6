package io.statehouse.shared;

import java.util.List;

/**
 * The ids a caller may touch: those matching any of its globs.
 *
 * @param globs at least one
 */
public record IdScope(List<Glob> globs) {

	/** Every id. */
	public static final IdScope ANY = new IdScope(List.of(Glob.ANY));

	public IdScope {
		if (globs.isEmpty()) {
			throw new IllegalArgumentException("An id scope has at least one glob");
		}
		globs = List.copyOf(globs);
	}

	/** The scope of globs given as text. */
	public static IdScope of(List<String> globs) {
		return new IdScope(globs.stream().map(Glob::new).toList());
	}

	/** Whether the caller may touch the id: never one that is not an id. */
	public boolean permits(String id) {
		return Ids.isValid(id) && this.globs.stream().anyMatch((glob) -> glob.matches(id));
	}

	/** The globs as SQL {@code LIKE} patterns: an id is in scope if it is like any of them. */
	public List<String> toLike() {
		return this.globs.stream().map(Glob::toLike).toList();
	}

}
