package io.statehouse.claims;

import java.util.List;
import java.util.Map;
import java.util.UUID;

import org.jspecify.annotations.Nullable;

/**
 * A kind of claim, as its feature knows it: the key and identity of each claim, the verdicts its
 * table gives by commit order, and what a verdict is once an arbiter of record named each key's
 * holder.
 *
 * @param <C> the feature's claim
 * @param <V> the feature's verdict on a claim
 */
public interface ClaimSpace<C, V> {

	/** The name the arbiter files this kind of claim under. */
	String name();

	ClaimKey key(C claim);

	/** Tells this claim apart from every other claim of its key. */
	UUID id(C claim);

	/**
	 * The verdicts of the claims' own table: the first committed claim of each key wins (one read
	 * of the rows, which is all commit order needs).
	 */
	Map<C, V> byCommitOrder(List<C> claims);

	/**
	 * The verdicts once the holder of each key is known.
	 * @param holders key → the claim that holds it; a key missing from the map is held by no claim
	 * (this one was not recorded)
	 */
	Map<C, V> byHolders(List<C> claims, Map<ClaimKey, @Nullable UUID> holders);

}
