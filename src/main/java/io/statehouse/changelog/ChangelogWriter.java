package io.statehouse.changelog;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.statehouse.changelog.ChangelogRepository.IdempotencyKey;
import io.statehouse.changelog.ChangelogRepository.Replay;
import io.statehouse.changelog.ChangelogRepository.Verdict;
import io.statehouse.clickhouse.ClickHouseErrors;
import io.statehouse.clickhouse.ReadBack;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.context.SmartLifecycle;

/**
 * The one write path: group commit of changelog claims.
 *
 * <p>Requests hand their writes to the writer and wait. A dispatcher thread forms batches of
 * what is queued — distinct ids only, and no id that is in a batch still in flight, so that a
 * later write of an id is decided after the earlier one is durable — and up to
 * {@code concurrency} batches run at once (one batch's INSERT overlaps the next one's read).
 * For the whole batch a worker runs three statements: read the newest version of every id,
 * append one claim per write in one INSERT, and read back which claims won their version. A
 * write that lost to a concurrent writer (another thread or service instance) is decided again
 * against the new newest version in a later batch, so conditions and merges never act on a
 * stale state and no write is lost. A request is answered only after its INSERT was
 * acknowledged, with {@code async_insert=0} and {@code fsync_after_insert=1}, and read back as
 * the winner: a 2xx means durable. An INSERT whose answer was lost may have been written, so
 * the read-back is retried while ClickHouse does not answer; a write whose outcome still cannot
 * be learned says so ({@link WriteUnavailableException#isOutcomeUnknown()}).
 *
 * <p>A write that arrives while the writer is idle goes out at once; under load a batch lingers
 * briefly to fill. Memory is bounded: writes accepted but not yet durable may hold at most
 * {@code max-in-flight} bytes; beyond that a write is refused at once (503, Retry-After) rather
 * than queued.
 */
public class ChangelogWriter implements SmartLifecycle {

	private static final Log logger = LogFactory.getLog(ChangelogWriter.class);

	/** Accounted per write on top of its document, for keys, headers and bookkeeping. */
	private static final int OVERHEAD_BYTES = 512;

	/** How long the outcome of a batch is sought while ClickHouse does not answer. */
	private static final Duration READ_BACK_PATIENCE = Duration.ofSeconds(10);

	private final ChangelogRepository repository;

	private final TailWatermark tail;

	private final ChangelogProperties.Writer properties;

	private final Duration readBackPatience;

	private final ReentrantLock lock = new ReentrantLock();

	/** Signalled when a write is queued or a batch finishes. */
	private final Condition changed = this.lock.newCondition();

	/** Guarded by {@link #lock}. */
	private final ArrayDeque<PendingWrite> queue = new ArrayDeque<>();

	/** Ids of the batches in flight. Guarded by {@link #lock}. */
	private final Set<String> inFlightIds = new HashSet<>();

	/** Guarded by {@link #lock}. */
	private int batchesInFlight;

	/** Guarded by {@link #lock}. */
	private int lastBatchSize;

	private final Semaphore inFlightBytes;

	private final int maxInFlightBytes;

	/** Started with the writer, shut down when it stops: a stopped writer can start again. */
	private volatile ExecutorService workers;

	private final Counter inserts;

	private final DistributionSummary batchSizes;

	private final Timer readDurations;

	private final Timer insertDurations;

	private final Timer confirmDurations;

	private final Counter lostClaims;

	private volatile boolean running;

	private @Nullable Thread dispatcher;

	ChangelogWriter(ChangelogRepository repository, TailWatermark tail, ChangelogProperties.Writer properties,
			MeterRegistry meters) {
		this.repository = repository;
		this.tail = tail;
		this.properties = properties;
		this.readBackPatience = (properties.timeout().compareTo(READ_BACK_PATIENCE) < 0) ? properties.timeout()
				: READ_BACK_PATIENCE;
		this.maxInFlightBytes = (int) Math.min(Integer.MAX_VALUE, properties.maxInFlight().toBytes());
		this.inFlightBytes = new Semaphore(this.maxInFlightBytes);
		this.workers = newWorkers();
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
		meters.gauge("statehouse.changelog.writer.in.flight.bytes", this,
				(writer) -> writer.maxInFlightBytes - writer.inFlightBytes.availablePermits());
	}

	private static Timer phaseTimer(MeterRegistry meters, String phase) {
		return Timer.builder("statehouse.changelog.batch.duration")
			.description("Time of each phase of a batch: read the newest versions, insert the claims, "
					+ "confirm which won")
			.tag("phase", phase)
			.register(meters);
	}

	/**
	 * Writes a new version of a state and waits until it is durable.
	 * @param id the state id
	 * @param mutation decides the change against the newest version
	 * @param idempotency the client's key and its request's fingerprint: an earlier write of
	 * this id with the same key answers instead of writing again (if the request was the same)
	 * @param sizeBytes the size of the request body, for memory accounting
	 * @return the durable write
	 * @throws WriteUnavailableException when the write was not taken, or did not finish in time
	 * @throws RuntimeException whatever the mutation threw to refuse the write
	 */
	public Committed write(String id, StateMutation mutation, @Nullable Idempotency idempotency, int sizeBytes) {
		return await(submit(id, mutation, idempotency, sizeBytes));
	}

	/**
	 * Hands a write to the writer without waiting.
	 * @throws WriteUnavailableException when the writer is saturated or stopping
	 */
	public CompletableFuture<Committed> submit(String id, StateMutation mutation, @Nullable Idempotency idempotency,
			int sizeBytes) {
		int bytes = (int) Math.min((long) sizeBytes + OVERHEAD_BYTES, this.maxInFlightBytes);
		if (!this.running) {
			throw WriteUnavailableException.stopping();
		}
		if (!this.inFlightBytes.tryAcquire(bytes)) {
			throw WriteUnavailableException.saturated();
		}
		PendingWrite pending = new PendingWrite(id, mutation, idempotency, bytes);
		pending.result.whenComplete((committed, failure) -> this.inFlightBytes.release(bytes));
		this.lock.lock();
		try {
			this.queue.addLast(pending);
			this.changed.signalAll();
		}
		finally {
			this.lock.unlock();
		}
		return pending.result;
	}

	/**
	 * Waits for a submitted write, at most the configured timeout.
	 * @throws WriteUnavailableException when it did not finish in time: its outcome is unknown
	 * @throws RuntimeException whatever refused or failed the write
	 */
	public Committed await(CompletableFuture<Committed> write) {
		try {
			return write.get(this.properties.timeout().toMillis(), TimeUnit.MILLISECONDS);
		}
		catch (TimeoutException ex) {
			throw WriteUnavailableException.outcomeUnknown();
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw WriteUnavailableException.outcomeUnknown();
		}
		catch (ExecutionException ex) {
			if (ex.getCause() instanceof RuntimeException failure) {
				throw failure;
			}
			throw new IllegalStateException(ex.getCause());
		}
	}

	/** Forms batches and hands them to the workers until stopped and drained. */
	private void dispatch() {
		this.lock.lock();
		try {
			while (this.running || !this.queue.isEmpty() || this.batchesInFlight > 0) {
				if (this.batchesInFlight >= this.properties.concurrency()) {
					this.changed.await(100, TimeUnit.MILLISECONDS);
					continue;
				}
				List<PendingWrite> batch = new ArrayList<>();
				Set<String> ids = new HashSet<>();
				takeEligible(batch, ids);
				if (batch.isEmpty()) {
					this.changed.await(100, TimeUnit.MILLISECONDS);
					continue;
				}
				if (this.lastBatchSize > 1) {
					linger(batch, ids);
				}
				this.lastBatchSize = batch.size();
				this.batchesInFlight++;
				this.inFlightIds.addAll(ids);
				try {
					this.workers.execute(() -> flushAndRelease(batch, ids));
				}
				catch (RuntimeException ex) {
					// The workers are gone (shutdown): nobody will make these durable.
					this.batchesInFlight--;
					this.inFlightIds.removeAll(ids);
					batch.forEach((pending) -> pending.result.completeExceptionally(WriteUnavailableException.stopping()));
				}
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
		finally {
			this.lock.unlock();
		}
	}

	/**
	 * Moves queued writes into the batch, in queue order: one per id, none whose id is in
	 * flight, within the batch limits. Call with the lock held.
	 */
	private void takeEligible(List<PendingWrite> batch, Set<String> ids) {
		long bytes = batch.stream().mapToLong((pending) -> pending.bytes).sum();
		Set<String> passed = new HashSet<>();
		Iterator<PendingWrite> queued = this.queue.iterator();
		while (queued.hasNext() && batch.size() < this.properties.maxBatchWrites()
				&& bytes < this.properties.maxBatchSize().toBytes()) {
			PendingWrite pending = queued.next();
			// A write whose id is busy keeps its place, and so do later writes of that id.
			if (passed.contains(pending.id) || this.inFlightIds.contains(pending.id) || !ids.add(pending.id)) {
				passed.add(pending.id);
				continue;
			}
			queued.remove();
			batch.add(pending);
			bytes += pending.bytes;
		}
	}

	/** Under load, waits briefly for more writes to share the INSERT. Call with the lock held. */
	private void linger(List<PendingWrite> batch, Set<String> ids) throws InterruptedException {
		long remaining = this.properties.linger().toNanos();
		while (remaining > 0 && batch.size() < this.properties.maxBatchWrites()) {
			remaining = this.changed.awaitNanos(remaining);
			takeEligible(batch, ids);
		}
	}

	private void flushAndRelease(List<PendingWrite> batch, Set<String> ids) {
		List<PendingWrite> retries = List.of();
		try {
			retries = flush(batch);
		}
		catch (RuntimeException ex) {
			logger.error("A changelog batch failed unexpectedly", ex);
			batch.forEach((pending) -> pending.result.completeExceptionally(ex));
		}
		finally {
			this.lock.lock();
			try {
				// Lost claims go first, before later writes of their ids are decided.
				for (int i = retries.size() - 1; i >= 0; i--) {
					this.queue.addFirst(retries.get(i));
				}
				this.inFlightIds.removeAll(ids);
				this.batchesInFlight--;
				this.changed.signalAll();
			}
			finally {
				this.lock.unlock();
			}
		}
	}

	/** Makes a batch durable; returns the writes that lost their version and go again. */
	private List<PendingWrite> flush(List<PendingWrite> batch) {
		long fromBlock = this.tail.block();
		List<PendingClaim> claims;
		try {
			claims = this.readDurations.record(() -> decide(batch, fromBlock));
		}
		catch (RuntimeException ex) {
			// Nothing was written: nobody in this batch gets a 2xx.
			batch.forEach((pending) -> pending.result.completeExceptionally(ex));
			return List.of();
		}
		if (claims.isEmpty()) {
			return List.of();
		}
		List<Claim> rows = claims.stream().map(PendingClaim::claim).toList();
		RuntimeException insertFailure = null;
		try {
			this.insertDurations.record(() -> this.repository.append(rows));
			this.inserts.increment();
			this.batchSizes.record(rows.size());
		}
		catch (RuntimeException ex) {
			// Maybe written, maybe not, maybe still to be: the read-back tells.
			insertFailure = ex;
		}
		Map<Claim, Verdict> verdicts;
		try {
			verdicts = this.confirmDurations.record(() -> ReadBack.withPatience(
					() -> this.repository.verdicts(rows, fromBlock), this.readBackPatience));
		}
		catch (RuntimeException ex) {
			RuntimeException answer = (insertFailure != null && ClickHouseErrors.certainlyNotApplied(insertFailure))
					? insertFailure : WriteUnavailableException.outcomeUnknown();
			claims.forEach((claim) -> claim.pending().result.completeExceptionally(answer));
			return List.of();
		}
		List<PendingWrite> retries = new ArrayList<>();
		for (PendingClaim claim : claims) {
			PendingWrite pending = claim.pending();
			Verdict verdict = verdicts.get(claim.claim());
			switch (verdict.outcome()) {
				case WON -> pending.result.complete(committed(claim.claim(), verdict));
				case LOST -> {
					if (++pending.attempts >= this.properties.maxAttempts()) {
						pending.result
							.completeExceptionally(WriteUnavailableException.contended(pending.id, pending.attempts));
					}
					else {
						this.lostClaims.increment();
						retries.add(pending);
					}
				}
				case ABSENT -> pending.result.completeExceptionally(
						(insertFailure != null && ClickHouseErrors.certainlyNotApplied(insertFailure)) ? insertFailure
								: WriteUnavailableException.outcomeUnknown());
				case UNKNOWN -> pending.result.completeExceptionally(WriteUnavailableException.outcomeUnknown());
			}
		}
		return retries;
	}

	private static Committed committed(Claim claim, Verdict verdict) {
		Change change = claim.change();
		StoredState state = new StoredState(claim.id(), claim.version(), change.deleted(), change.document(),
				change.fencing(), Objects.requireNonNull(verdict.writtenAt()));
		return new Committed(state, claim.created(), false);
	}

	/** Decides every write of the batch against the newest versions, read in one query. */
	private List<PendingClaim> decide(List<PendingWrite> batch, long fromBlock) {
		Set<String> ids = new LinkedHashSet<>();
		Set<IdempotencyKey> keys = new LinkedHashSet<>();
		for (PendingWrite pending : batch) {
			ids.add(pending.id);
			if (pending.idempotency != null) {
				keys.add(new IdempotencyKey(pending.id, pending.idempotency.key()));
			}
		}
		Map<String, Head> newest = this.repository.newest(ids, fromBlock);
		Map<IdempotencyKey, Replay> replays = keys.isEmpty() ? Map.of() : this.repository.replays(keys, newest);
		List<PendingClaim> claims = new ArrayList<>();
		for (PendingWrite pending : batch) {
			if (pending.idempotency != null) {
				Replay replay = replays.get(new IdempotencyKey(pending.id, pending.idempotency.key()));
				if (replay != null) {
					if (replay.fingerprint().equals(pending.idempotency.fingerprint())) {
						pending.result.complete(replay.answer());
					}
					else {
						pending.result.completeExceptionally(
								new IdempotencyKeyReusedException(pending.id, pending.idempotency.key()));
					}
					continue;
				}
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
			long version = (current != null) ? current.version() + 1 : 1;
			long fencing = Math.max(change.fencing(), (current != null) ? current.fencing() : 0);
			Change claimed = new Change(change.operation(), change.document(), change.deleted(), fencing);
			claims.add(new PendingClaim(pending, new Claim(pending.id, version, claimed, UUID.randomUUID(),
					(head != null) ? head.claimId() : Claim.NONE, pending.idempotency,
					!StoredState.isLive(current) && !change.deleted())));
		}
		return claims;
	}

	private ExecutorService newWorkers() {
		return Executors.newFixedThreadPool(this.properties.concurrency(), (task) -> {
			Thread thread = new Thread(task, "changelog-writer");
			thread.setDaemon(true);
			return thread;
		});
	}

	@Override
	public void start() {
		if (this.workers.isShutdown()) {
			this.workers = newWorkers();
		}
		this.running = true;
		Thread thread = new Thread(this::dispatch, "changelog-dispatcher");
		thread.setDaemon(true);
		this.dispatcher = thread;
		thread.start();
	}

	/** Stops taking writes, finishes those already taken. */
	@Override
	public void stop() {
		this.running = false;
		this.lock.lock();
		try {
			this.changed.signalAll();
		}
		finally {
			this.lock.unlock();
		}
		Thread thread = this.dispatcher;
		if (thread != null) {
			try {
				thread.join(this.properties.timeout().toMillis());
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
		}
		this.workers.shutdown();
	}

	@Override
	public boolean isRunning() {
		return this.running;
	}

	/** Stops after the web server stopped taking requests, starts before it. */
	@Override
	public int getPhase() {
		return SmartLifecycle.DEFAULT_PHASE - 4096;
	}

	private static final class PendingWrite {

		final String id;

		final StateMutation mutation;

		final @Nullable Idempotency idempotency;

		final int bytes;

		final CompletableFuture<Committed> result = new CompletableFuture<>();

		int attempts;

		PendingWrite(String id, StateMutation mutation, @Nullable Idempotency idempotency, int bytes) {
			this.id = id;
			this.mutation = mutation;
			this.idempotency = idempotency;
			this.bytes = bytes;
		}

	}

	private record PendingClaim(PendingWrite pending, Claim claim) {
	}

}
