package io.statehouse.changelog;

import java.time.Instant;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.function.Supplier;

import io.statehouse.claims.ClaimKey;
import org.jspecify.annotations.Nullable;

/**
 * The changelog as its writer and readers use it (the materializer's is
 * {@link MaterializerRepository}).
 *
 * <p>Commit order is the changelog's block order: a block number is taken when a part is
 * committed, under the table's lock. {@code fromPosition} arguments bound where a reader looks for
 * the tail: every change committed after a recorded materialization cut has a higher block, and
 * everything up to it is in the state table.
 */
interface ChangelogRepository {

	/**
	 * The newest version of each id: the materialized state, or a newer version in the tail
	 * (committed after {@code fromPosition}), decided by commit order. Ids never written are absent.
	 */
	Map<String, Head> newest(Collection<String> ids, long fromPosition);

	/**
	 * Earlier writes by the keys' callers that carried these idempotency keys and won their version.
	 * @param heads the newest version of every id the keys belong to, asked for once the keys' rows
	 * are read (so that they may be read meanwhile)
	 */
	Map<IdempotencyKey, Replay> replays(Collection<IdempotencyKey> keys, Supplier<Map<String, Head>> heads);

	/** Appends claims, all in one INSERT. */
	void append(List<VersionClaim> claims);

	/** Of these claims, those whose rows are in the changelog: an INSERT that failed may have been written all the same. */
	Set<VersionClaim> written(List<VersionClaim> claims);

	/**
	 * Whether each claim won its version.
	 * @param fromPosition the tail the claims were decided against: every competing claim
	 * committed after it
	 */
	Map<VersionClaim, Verdict> verdicts(List<VersionClaim> claims, long fromPosition);

	/**
	 * The verdict on each claim once an arbiter of record named the holder of its version: won
	 * (with the time ClickHouse wrote it), lost, or not written.
	 */
	Map<VersionClaim, Verdict> verdictsByHolders(List<VersionClaim> claims, Map<ClaimKey, @Nullable UUID> holders);

	/**
	 * Live states in id order.
	 * @param prefix ids start with this
	 * @param likePattern and match this SQL LIKE pattern
	 * @param after and sort after this id (the cursor)
	 * @param limit at most this many
	 * @param fromPosition the tail to look at
	 */
	List<StateSummary> list(String prefix, String likePattern, List<String> visible, @Nullable String after, int limit,
			long fromPosition);

	/**
	 * As {@link #list}, with the ids whose newest version deletes them (as far as the changelog
	 * and the state table still know them).
	 */
	List<StateSummary> listWithDeleted(String prefix, String likePattern, List<String> visible, @Nullable String after,
			int limit, long fromPosition);

	/**
	 * Every claim committed after a cursor, winners and losers alike, in feed order (by write
	 * time, only those written a claim window ago: decided).
	 * @param limit at most this many
	 */
	List<FeedRow> changes(FeedCursor after, int limit);

	/** The truncation floor: changes at or below it may be gone. */
	long floor();

	/**
	 * The claims among these rows' that won their slots, as far as they can be told
	 * ({@link Verdicts#won}).
	 */
	Set<UUID> won(Collection<FeedRow> rows);

	/** A version of an id, as long as the changelog retains it or it is the newest. */
	Optional<StoredState> version(String id, long version);

	/** Whether a version of an id was skipped by one carried over, as far as retained rows tell. */
	boolean skipped(String id, long version);

	/** Every retained version of an id (its winners) and the newest, oldest first. */
	List<VersionInfo> history(String id);

	/** As {@link #history}, for many ids in one read: each known id's versions, oldest first. */
	Map<String, List<VersionInfo>> histories(Collection<String> ids);

	/**
	 * Given versions of many ids, in one read: of each id those still retained (or the newest),
	 * by version.
	 */
	Map<String, Map<Long, StoredState>> versions(Map<String, ? extends Collection<Long>> wanted);

	/**
	 * What became of a claim.
	 * @param outcome won, lost, not written, or not known
	 * @param writtenAt when ClickHouse wrote it, for a winner
	 */
	record Verdict(Outcome outcome, @Nullable Instant writtenAt) {

		static final Verdict LOST = new Verdict(Outcome.LOST, null);

		static final Verdict ABSENT = new Verdict(Outcome.ABSENT, null);

		static final Verdict UNKNOWN = new Verdict(Outcome.UNKNOWN, null);

		static Verdict won(Instant writtenAt) {
			return new Verdict(Outcome.WON, writtenAt);
		}

		enum Outcome {

			WON, LOST,

			/** Not in the changelog: its INSERT did not write it. */
			ABSENT,

			/** Its version was decided and truncated beyond telling (a batch older than the retention). */
			UNKNOWN

		}

	}

	/**
	 * A changelog row as the feed reads it.
	 * @param event what it is, should it have won
	 * @param claimId its claim
	 */
	record FeedRow(ChangeEvent event, UUID claimId, long slot) {

		ClaimKey key() {
			return new ClaimKey(this.event.id(), this.slot);
		}

		FeedRow at(FeedCursor cursor) {
			ChangeEvent moved = new ChangeEvent(cursor, this.event.id(), this.event.version(), this.event.operation(),
					this.event.writtenBy(), this.event.updatedAt(), this.event.sizeBytes());
			return new FeedRow(moved, this.claimId, this.slot);
		}

	}

	/**
	 * An earlier write a retry answers with.
	 * @param answer the write, as it was answered
	 * @param fingerprint the fingerprint of its request
	 */
	record Replay(Committed answer, String fingerprint) {

		/**
		 * The answer to a retry of this write.
		 * @throws IdempotencyKeyReusedException when the key came with a different request
		 */
		Committed answerTo(String id, Idempotency idempotency) {
			if (!this.fingerprint.equals(idempotency.fingerprint())) {
				throw new IdempotencyKeyReusedException(id, idempotency.key());
			}
			return this.answer;
		}

	}

	/**
	 * A client's key for retrying a write of one id.
	 * @param id the state id
	 * @param caller who sent it: the writer the change records
	 * @param key the {@code Idempotency-Key}
	 */
	record IdempotencyKey(String id, String caller, String key) {

		static IdempotencyKey of(String id, Idempotency idempotency) {
			return new IdempotencyKey(id, idempotency.caller(), idempotency.key());
		}

	}

}
