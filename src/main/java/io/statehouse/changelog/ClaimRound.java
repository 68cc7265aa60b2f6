package io.statehouse.changelog;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.statehouse.changelog.ChangelogRepository.IdempotencyKey;
import io.statehouse.changelog.ChangelogRepository.Replay;
import io.statehouse.changelog.ChangelogRepository.Verdict;
import io.statehouse.claims.ClaimArbiter;
import io.statehouse.claims.ReadBack;
import io.statehouse.clickhouse.ClickHouseErrors;
import org.jspecify.annotations.Nullable;

/**
 * The one write path, its protocol: how a batch of writes is decided. Three statements for the
 * whole batch: read the newest version of every id (and earlier writes with the batch's
 * idempotency keys), append one claim per write in one INSERT, and settle the claims with the
 * {@link ClaimArbiter} (by commit order: read back which was first). A claim that lost its
 * version to a concurrent writer (another thread or service instance) goes back to the writer to
 * be decided again against the new newest version, so conditions and merges never act on a stale
 * state and no write is lost. A write is answered only once its claim was read back as the
 * winner: a 2xx means durable. An INSERT whose answer was lost may have been written, so the
 * read-back is retried while ClickHouse does not answer; a write whose outcome still cannot be
 * learned says so.
 */
class ClaimRound {

	private final ChangelogRepository repository;

	private final ClaimArbiter arbiter;

	private final TailWatermark tail;

	private final int maxAttempts;

	private final long maxInsertBytes;

	private final Duration readBackPatience;

	private final Counter inserts;

	private final DistributionSummary batchSizes;

	private final Timer readDurations;

	private final Timer insertDurations;

	private final Timer confirmDurations;

	private final Counter lostClaims;

	private final Consumer<Map<VersionClaim, Verdict>> decided;

	/** Runs a round's second read beside its first; started and stopped with the writer. */
	private volatile ExecutorService reads = newReaders();

	/** @param decided told of each batch's verdicts before they are answered */
	ClaimRound(ChangelogRepository repository, ClaimArbiter arbiter, TailWatermark tail,
			ChangelogProperties.Writer properties, ReadBack readBack, Consumer<Map<VersionClaim, Verdict>> decided,
			MeterRegistry meters) {
		this.repository = repository;
		this.arbiter = arbiter;
		this.tail = tail;
		this.decided = decided;
		this.maxAttempts = properties.maxAttempts();
		this.maxInsertBytes = properties.maxBatchSize().toBytes();
		// The outcome of a batch is sought no longer than its writes wait for their answers.
		this.readBackPatience = (properties.timeout().compareTo(readBack.patience()) < 0) ? properties.timeout()
				: readBack.patience();
		this.inserts = Counter.builder("statehouse.changelog.inserts")
			.description("INSERT statements into the changelog")
			.register(meters);
		this.batchSizes = DistributionSummary.builder("statehouse.changelog.batch.writes")
			.description("Writes per changelog INSERT")
			.register(meters);
		this.readDurations = phaseTimer(meters, "read");
		this.insertDurations = phaseTimer(meters, "insert");
		this.confirmDurations = phaseTimer(meters, "confirm");
		this.lostClaims = Counter.builder("statehouse.changelog.claims.lost")
			.description("Writes that lost their version to a concurrent writer and were decided again")
			.register(meters);
	}

	private static Timer phaseTimer(MeterRegistry meters, String phase) {
		return Timer.builder("statehouse.changelog.batch.duration")
			.description("Time of each phase of a batch: read the newest versions (and wait for fenced writes' "
					+ "lease checks, at most as long again), insert the claims, confirm which won")
			.tag("phase", phase)
			.register(meters);
	}

	/**
	 * Makes a batch durable and answers its writes.
	 * @return the writes that go again: those that lost their version, and those set aside
	 * because their prerequisite was still under way
	 */
	List<PendingWrite> run(List<PendingWrite> batch) {
		long fromPosition = this.tail.position();
		long decidedAt = System.nanoTime();
		List<PendingWrite> setAside = new ArrayList<>();
		List<PendingClaim> decided;
		try {
			decided = this.readDurations.record(() -> decide(batch, fromPosition, setAside));
		}
		catch (RuntimeException ex) {
			// Nothing was written: nobody in this batch gets a 2xx.
			batch.forEach((pending) -> pending.result.completeExceptionally(ex));
			return List.of();
		}
		// A write whose caller gave up while it was decided is not appended behind its back.
		List<PendingClaim> appended = decided.stream().filter((claim) -> !abandoned(claim.pending())).toList();
		List<PendingWrite> retries = new ArrayList<>(setAside);
		if (appended.isEmpty()) {
			return retries;
		}
		Map<VersionClaim, RuntimeException> insertFailures = append(
				appended.stream().map(PendingClaim::claim).toList());
		List<PendingClaim> claims = insertFailures.isEmpty() ? appended : withoutUnwritten(appended, insertFailures);
		if (claims.isEmpty()) {
			return retries;
		}
		List<VersionClaim> rows = claims.stream().map(PendingClaim::claim).toList();
		Map<VersionClaim, Verdict> verdicts;
		try {
			StateClaimSpace space = new StateClaimSpace(this.repository, fromPosition, patience(claims));
			verdicts = this.confirmDurations.record(() -> this.arbiter.settle(space, rows, decidedAt));
		}
		catch (RuntimeException ex) {
			claims.forEach((claim) -> claim.pending().result
				.completeExceptionally(unwritten(insertFailures.get(claim.claim()))));
			return retries;
		}
		this.decided.accept(verdicts);
		for (PendingClaim claim : claims) {
			PendingWrite pending = claim.pending();
			Verdict verdict = verdicts.get(claim.claim());
			switch (verdict.outcome()) {
				case WON -> pending.result.complete(committed(claim.claim(), verdict));
				case LOST -> {
					if (abandoned(pending)) {
						continue;
					}
					if (++pending.attempts >= this.maxAttempts) {
						pending.result
							.completeExceptionally(WriteUnavailableException.contended(pending.id, pending.attempts));
					}
					else {
						this.lostClaims.increment();
						retries.add(pending);
					}
				}
				case ABSENT -> pending.result.completeExceptionally(unwritten(insertFailures.get(claim.claim())));
				case UNKNOWN -> pending.result.completeExceptionally(WriteUnavailableException.outcomeUnknown());
			}
		}
		return retries;
	}

	/**
	 * The claims without those whose INSERT failed and whose rows are not in the changelog: those are
	 * answered now, and not settled. An arbiter of record would otherwise hold their version for a
	 * row that never comes (with Keeper, for good: every later write of the id would wait for it);
	 * unsettled, such a row never wins should it land after all. When whether they were written
	 * cannot be read, none of the failed claims is settled.
	 */
	private List<PendingClaim> withoutUnwritten(List<PendingClaim> claims,
			Map<VersionClaim, RuntimeException> insertFailures) {
		Set<VersionClaim> written;
		try {
			written = this.repository.written(List.copyOf(insertFailures.keySet()));
		}
		catch (RuntimeException ex) {
			written = Set.of();
		}
		List<PendingClaim> kept = new ArrayList<>(claims.size());
		for (PendingClaim claim : claims) {
			RuntimeException failure = insertFailures.get(claim.claim());
			if (failure == null || written.contains(claim.claim())) {
				kept.add(claim);
			}
			else {
				claim.pending().result.completeExceptionally(unwritten(failure));
			}
		}
		return kept;
	}

	/** Whether the write's caller gave up on it: then it is answered so, and neither appended nor decided again. */
	private static boolean abandoned(PendingWrite pending) {
		if (!pending.abandoned()) {
			return false;
		}
		pending.result.completeExceptionally(WriteUnavailableException.notTakenInTime());
		return true;
	}

	/** How long the batch's outcome is sought: no longer than its last caller waits for it. */
	private Duration patience(List<PendingClaim> claims) {
		long deadline = claims.stream().mapToLong((claim) -> claim.pending().deadline).max().orElse(System.nanoTime());
		Duration remaining = Duration.ofNanos(Math.max(0, deadline - System.nanoTime()));
		return (remaining.compareTo(this.readBackPatience) < 0) ? remaining : this.readBackPatience;
	}

	/**
	 * Appends the claims in INSERTs of at most {@code max-batch-size} of documents each: a batch
	 * is formed by the size of its requests, and a small patch of a large document carries the
	 * whole document. An INSERT that fails may have been written, or may still be: the read-back
	 * tells.
	 * @return the claims whose INSERT failed, with the failure
	 */
	private Map<VersionClaim, RuntimeException> append(List<VersionClaim> claims) {
		Map<VersionClaim, RuntimeException> failures = new HashMap<>();
		int from = 0;
		while (from < claims.size()) {
			long bytes = claims.get(from).change().document().length();
			int to = from + 1;
			while (to < claims.size() && bytes + claims.get(to).change().document().length() <= this.maxInsertBytes) {
				bytes += claims.get(to).change().document().length();
				to++;
			}
			List<VersionClaim> chunk = claims.subList(from, to);
			try {
				this.insertDurations.record(() -> this.repository.append(chunk));
				this.inserts.increment();
				this.batchSizes.record(chunk.size());
			}
			catch (RuntimeException ex) {
				chunk.forEach((claim) -> failures.put(claim, ex));
			}
			from = to;
		}
		return failures;
	}

	/**
	 * The answer to a write whose claim is not known to be written: the INSERT's own failure when
	 * ClickHouse certainly wrote nothing, else "outcome unknown".
	 */
	private static RuntimeException unwritten(@Nullable RuntimeException insertFailure) {
		return (insertFailure != null && ClickHouseErrors.certainlyNotApplied(insertFailure)) ? insertFailure
				: WriteUnavailableException.outcomeUnknown();
	}

	private static Committed committed(VersionClaim claim, Verdict verdict) {
		Change change = claim.change();
		StoredState state = new StoredState(claim.id(), claim.version(), change.deleted(), change.document(),
				change.fencing(), Objects.requireNonNull(verdict.writtenAt()));
		return new Committed(state, claim.created(), false);
	}

	/**
	 * Decides every write of the batch against the newest versions, read in one query; sets aside
	 * those whose prerequisite is still under way.
	 */
	private List<PendingClaim> decide(List<PendingWrite> batch, long fromPosition, List<PendingWrite> setAside) {
		Set<String> ids = new LinkedHashSet<>();
		Set<IdempotencyKey> keys = new LinkedHashSet<>();
		for (PendingWrite pending : batch) {
			ids.add(pending.id);
			if (pending.idempotency != null) {
				keys.add(IdempotencyKey.of(pending.id, pending.idempotency));
			}
		}
		long readFrom = System.nanoTime();
		Map<String, Head> newest;
		Map<IdempotencyKey, Replay> replays;
		if (keys.isEmpty()) {
			newest = this.repository.newest(ids, fromPosition);
			replays = Map.of();
		}
		else {
			// The newest versions are read while the keys' rows are.
			CompletableFuture<Map<String, Head>> heads = CompletableFuture
				.supplyAsync(() -> this.repository.newest(ids, fromPosition), this.reads);
			replays = this.repository.replays(keys, () -> joined(heads));
			newest = joined(heads);
		}
		awaitPrerequisites(batch, System.nanoTime() - readFrom);
		List<PendingClaim> claims = new ArrayList<>();
		for (PendingWrite pending : batch) {
			if (pending.idempotency != null) {
				Replay replay = replays.get(IdempotencyKey.of(pending.id, pending.idempotency));
				if (replay != null) {
					try {
						pending.result.complete(replay.answerTo(pending.id, pending.idempotency));
					}
					catch (IdempotencyKeyReusedException ex) {
						pending.result.completeExceptionally(ex);
					}
					continue;
				}
			}
			if (!pending.prerequisite.isDone()) {
				setAside.add(pending);
				continue;
			}
			try {
				joined(pending.prerequisite);
			}
			catch (RuntimeException unmet) {
				pending.result.completeExceptionally(unmet);
				continue;
			}
			Head head = newest.get(pending.id);
			StoredState current = (head != null) ? head.state() : null;
			Change change;
			try {
				change = pending.mutation.decide(current);
			}
			catch (RuntimeException refused) {
				pending.result.completeExceptionally(refused);
				continue;
			}
			long slot = (current != null) ? current.version() + 1 : 1;
			long version = Math.max(slot, change.carriedVersion());
			long fencing = Math.max(change.fencing(), (current != null) ? current.fencing() : 0);
			Change claimed = change.withFencing(fencing);
			claims.add(new PendingClaim(pending, new VersionClaim(pending.id, version, slot, claimed, UUID.randomUUID(),
					(head != null) ? head.claimId() : VersionClaim.NONE, pending.idempotency,
					!StoredState.isLive(current) && !change.deleted())));
		}
		return claims;
	}

	/** Makes the readers ready again after {@link #stop()}. */
	void start() {
		if (this.reads.isShutdown()) {
			this.reads = newReaders();
		}
	}

	/** Lets the readers go once the rounds in flight are done (the writer stops after them). */
	void stop() {
		this.reads.shutdown();
	}

	private static ExecutorService newReaders() {
		return Executors.newCachedThreadPool((task) -> {
			Thread thread = new Thread(task, "changelog-reader");
			thread.setDaemon(true);
			return thread;
		});
	}

	/** The result of work done beside the round (a read, a lease's check), or its failure as it was thrown. */
	private static <T> T joined(CompletableFuture<T> read) {
		try {
			return read.join();
		}
		catch (CompletionException ex) {
			if (ex.getCause() instanceof RuntimeException failure) {
				throw failure;
			}
			if (ex.getCause() instanceof Error error) {
				throw error;
			}
			throw ex;
		}
	}

	/**
	 * Gives the writes' prerequisites, found out while the round read, as long again as the read
	 * took to complete: one just behind the read is waited for rather than set aside (and read
	 * again), and a slow one holds the round up no longer than that.
	 */
	private static void awaitPrerequisites(List<PendingWrite> batch, long nanos) {
		CompletableFuture<?>[] underWay = batch.stream()
			.map((pending) -> pending.prerequisite)
			.filter((prerequisite) -> !prerequisite.isDone())
			.toArray(CompletableFuture[]::new);
		if (underWay.length == 0) {
			return;
		}
		try {
			CompletableFuture.allOf(underWay).get(nanos, TimeUnit.NANOSECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
		catch (ExecutionException | TimeoutException ex) {
			// Each write is decided, refused or set aside by its own prerequisite.
		}
	}

	private record PendingClaim(PendingWrite pending, VersionClaim claim) {
	}

}
