package io.statehouse.changelog;

import org.jspecify.annotations.Nullable;

/**
 * A write, decided against the state it will replace: the writer calls it with the newest
 * version at the moment of the attempt (again, if a concurrent writer claimed that version
 * first), so conditions and merges always see the state they replace.
 */
@FunctionalInterface
public interface StateMutation {

	/**
	 * @param current the newest version, or {@code null} if the id never existed
	 * @return the change to append
	 * @throws RuntimeException to refuse the write (a failed condition); nothing is appended
	 */
	Change decide(@Nullable StoredState current);

}
