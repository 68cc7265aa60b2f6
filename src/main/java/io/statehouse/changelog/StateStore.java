package io.statehouse.changelog;

import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

import org.jspecify.annotations.Nullable;

/** What the state and lock features need from storage: reads of the newest version, and the writer. */
public class StateStore {

	private final ChangelogRepository repository;

	private final ChangelogWriter writer;

	private final TailWatermark tail;

	StateStore(ChangelogRepository repository, ChangelogWriter writer, TailWatermark tail) {
		this.repository = repository;
		this.writer = writer;
		this.tail = tail;
	}

	/** The newest version of an id (possibly a tombstone), if it was ever written. */
	public Optional<StoredState> newest(String id) {
		return Optional.ofNullable(this.repository.newest(List.of(id), this.tail.position()).get(id)).map(Head::state);
	}

	/** The newest versions of ids (possibly tombstones) that were ever written, in one read. */
	public Map<String, StoredState> newest(List<String> ids) {
		Map<String, StoredState> newest = new HashMap<>();
		this.repository.newest(ids, this.tail.position()).forEach((id, head) -> newest.put(id, head.state()));
		return newest;
	}

	/**
	 * A time before which every acknowledged write is visible to reads now: a version is dated when
	 * its claim is written, and a write not durable within the writer's timeout of that is never
	 * acknowledged. An export dated so holds every version acknowledged before its date.
	 */
	public Instant acknowledgedBefore() {
		return Instant.now().minus(this.writer.timeout()).truncatedTo(ChronoUnit.MILLIS);
	}

	/** The most writes that share one claim round: a bulk write submits this many at a time. */
	public int writesPerRound() {
		return this.writer.maxBatchWrites();
	}

	/** A given version of an id. */
	public Optional<StoredState> version(String id, long version) {
		return this.repository.version(id, version);
	}

	/** Whether a version of an id was never written: an import carried a later one over it. */
	public boolean skipped(String id, long version) {
		return this.repository.skipped(id, version);
	}

	/** The versions of an id that the changelog retains, and the newest, oldest first. */
	public List<VersionInfo> history(String id) {
		return this.repository.history(id);
	}

	/** As {@link #history}, for many ids in one read: each known id's versions, oldest first. */
	public Map<String, List<VersionInfo>> histories(Collection<String> ids) {
		return this.repository.histories(ids);
	}

	/**
	 * Given versions of many ids, in one read: of each id those still retained (or the newest), by
	 * version; a version truncated away, or never written, is absent.
	 */
	public Map<String, Map<Long, StoredState>> versions(Map<String, ? extends Collection<Long>> wanted) {
		return this.repository.versions(wanted);
	}

	/**
	 * Live states in id order, after {@code after}: ids with the prefix, like the pattern, and like
	 * one of the visible patterns.
	 */
	public List<StateSummary> list(String prefix, String likePattern, List<String> visible, @Nullable String after,
			int limit) {
		return this.repository.list(prefix, likePattern, visible, after, limit, this.tail.position());
	}

	/**
	 * As {@link #list}, whether an id's newest version is a document or a deletion.
	 */
	public List<StateSummary> listWithDeleted(String prefix, String likePattern, List<String> visible,
			@Nullable String after, int limit) {
		return this.repository.listWithDeleted(prefix, likePattern, visible, after, limit, this.tail.position());
	}

	/** See {@link ChangelogWriter#write}. */
	public Committed write(String id, StateMutation mutation, @Nullable Idempotency idempotency, int sizeBytes) {
		return this.writer.write(id, mutation, idempotency, sizeBytes);
	}

	/** See {@link ChangelogWriter#submit}. */
	public CompletableFuture<Committed> submit(String id, StateMutation mutation, int sizeBytes) {
		return this.writer.submit(id, mutation, null, sizeBytes);
	}

	/** See {@link ChangelogWriter#submit(String, StateMutation, Idempotency, int, CompletableFuture)}. */
	public CompletableFuture<Committed> submit(String id, StateMutation mutation, @Nullable Idempotency idempotency,
			int sizeBytes, CompletableFuture<?> prerequisite) {
		return this.writer.submit(id, mutation, idempotency, sizeBytes, prerequisite);
	}

	/** See {@link ChangelogWriter#await}. */
	public Committed await(CompletableFuture<Committed> write) {
		return this.writer.await(write);
	}

	/**
	 * The answer to an earlier write of this id by the same caller with the same idempotency key,
	 * if one won its version: for a retry that can no longer be decided anew (its lease has ended
	 * since).
	 * @throws RuntimeException a 422 problem when the key came with a different request
	 */
	public Optional<Committed> replay(String id, Idempotency idempotency) {
		Map<String, Head> heads = this.repository.newest(List.of(id), this.tail.position());
		ChangelogRepository.IdempotencyKey key = ChangelogRepository.IdempotencyKey.of(id, idempotency);
		ChangelogRepository.Replay replay = heads.isEmpty() ? null : this.repository.replays(List.of(key), () -> heads).get(key);
		return Optional.ofNullable(replay).map((earlier) -> earlier.answerTo(id, idempotency));
	}

	/**
	 * Raises the fencing token of an id to a new lease's: a new version with the same document
	 * (or none), written in the same commit order as every write of the id. Once it is durable,
	 * a write under an earlier lease is refused however late it commits, and every write that
	 * committed before it is visible to whoever reads after it. A state that a lease as new or
	 * newer has fenced or written already is left as it is: so a fence whose lease has been
	 * superseded — its grant gave up on it, and it was decided late — never moves the version
	 * under the newer holder.
	 * @return the fence version, or the newest version when nothing was left to fence
	 */
	public Committed fence(String id, long fencing, String writtenBy) {
		try {
			return this.writer.write(id, (current) -> Change.fence(current, fencing, writtenBy), null, 0);
		}
		catch (FencedAlreadyException ex) {
			return new Committed(ex.current(), false, false);
		}
	}

}
