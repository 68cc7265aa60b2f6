package io.statehouse.changelog;

import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingDeque;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.statehouse.changelog.ChangelogRepository.IdempotencyKey;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.context.SmartLifecycle;

/**
 * The one write path: group commit of changelog claims.
 *
 * <p>Requests hand their writes to a single flusher thread and wait. The flusher takes what is
 * queued (distinct ids only; a second write of an id waits for the next batch) and for the
 * whole batch runs three statements: read the newest version of every id, append one claim per
 * write in one INSERT, and read back which claims won their version. A write that lost to a
 * concurrent writer (another thread or service instance) is decided again against the new
 * newest version in the next batch, so conditions and merges never act on a stale state and no
 * write is lost. A request is answered only after its INSERT was acknowledged, with
 * {@code async_insert=0} and {@code fsync_after_insert=1}: a 2xx means durable.
 *
 * <p>Memory is bounded: writes accepted but not yet durable may hold at most
 * {@code max-in-flight} bytes; beyond that a write is refused at once (503, Retry-After) rather
 * than queued.
 */
public class ChangelogWriter implements SmartLifecycle {

	private static final Log logger = LogFactory.getLog(ChangelogWriter.class);

	/** Accounted per write on top of its document, for keys, headers and bookkeeping. */
	private static final int OVERHEAD_BYTES = 512;

	private final ChangelogRepository repository;

	private final ChangelogProperties.Writer properties;

	private final LinkedBlockingDeque<PendingWrite> queue = new LinkedBlockingDeque<>();

	private final Semaphore inFlightBytes;

	private final int maxInFlightBytes;

	private final Counter inserts;

	private final DistributionSummary batchSizes;

	private final Timer batchDurations;

	private final Counter retries;

	private volatile boolean running;

	private @Nullable Thread flusher;

	private int lastBatchSize;

	ChangelogWriter(ChangelogRepository repository, ChangelogProperties.Writer properties, MeterRegistry meters) {
		this.repository = repository;
		this.properties = properties;
		this.maxInFlightBytes = (int) Math.min(Integer.MAX_VALUE, properties.maxInFlight().toBytes());
		this.inFlightBytes = new Semaphore(this.maxInFlightBytes);
		this.inserts = Counter.builder("statehouse.changelog.inserts")
			.description("INSERT statements into the changelog")
			.register(meters);
		this.batchSizes = DistributionSummary.builder("statehouse.changelog.batch.writes")
			.description("Writes per changelog INSERT")
			.register(meters);
		this.batchDurations = Timer.builder("statehouse.changelog.batch.duration")
			.description("Time to make one batch of writes durable (read, insert, read back)")
			.register(meters);
		this.retries = Counter.builder("statehouse.changelog.claims.lost")
			.description("Writes that lost their version to a concurrent writer and were decided again")
			.register(meters);
		meters.gauge("statehouse.changelog.writer.in.flight.bytes", this,
				(writer) -> writer.maxInFlightBytes - writer.inFlightBytes.availablePermits());
	}

	/**
	 * Writes a new version of a state and waits until it is durable.
	 * @param id the state id
	 * @param mutation decides the change against the newest version
	 * @param idempotencyKey the client's key: an earlier write of this id with the same key
	 * answers instead of writing again
	 * @param sizeBytes the size of the request body, for memory accounting
	 * @return the durable write
	 * @throws WriteUnavailableException when the write was not taken, or did not finish in time
	 * @throws RuntimeException whatever the mutation threw to refuse the write
	 */
	public Committed write(String id, StateMutation mutation, @Nullable String idempotencyKey, int sizeBytes) {
		return await(submit(id, mutation, idempotencyKey, sizeBytes));
	}

	/**
	 * Hands a write to the flusher without waiting.
	 * @throws WriteUnavailableException when the writer is saturated or stopping
	 */
	public CompletableFuture<Committed> submit(String id, StateMutation mutation, @Nullable String idempotencyKey,
			int sizeBytes) {
		int bytes = (int) Math.min((long) sizeBytes + OVERHEAD_BYTES, this.maxInFlightBytes);
		if (!this.running) {
			throw WriteUnavailableException.stopping();
		}
		if (!this.inFlightBytes.tryAcquire(bytes)) {
			throw WriteUnavailableException.saturated();
		}
		PendingWrite pending = new PendingWrite(id, mutation, idempotencyKey, bytes);
		pending.result.whenComplete((committed, failure) -> this.inFlightBytes.release(bytes));
		this.queue.add(pending);
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

	private void flushUntilStopped() {
		while (this.running || !this.queue.isEmpty()) {
			try {
				PendingWrite first = this.queue.poll(100, TimeUnit.MILLISECONDS);
				if (first != null) {
					flush(collectBatch(first));
				}
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				return;
			}
			catch (RuntimeException ex) {
				logger.error("Changelog flusher failed; it keeps running", ex);
			}
		}
	}

	/**
	 * Takes what is queued behind {@code first}; while writes keep coming (the last batch was
	 * not alone) it also lingers to fill the batch. A second write of an id goes back to the
	 * queue's head: it must be decided after the first is durable.
	 */
	private List<PendingWrite> collectBatch(PendingWrite first) throws InterruptedException {
		List<PendingWrite> batch = new ArrayList<>();
		List<PendingWrite> later = new ArrayList<>();
		Set<String> ids = new HashSet<>();
		batch.add(first);
		ids.add(first.id);
		long documentBytes = first.bytes;
		long lingerUntil = System.nanoTime() + ((this.lastBatchSize > 1) ? this.properties.linger().toNanos() : 0);
		while (batch.size() < this.properties.maxBatchWrites()
				&& documentBytes < this.properties.maxBatchSize().toBytes()) {
			long wait = lingerUntil - System.nanoTime();
			PendingWrite next = (wait > 0) ? this.queue.poll(wait, TimeUnit.NANOSECONDS) : this.queue.poll();
			if (next == null) {
				break;
			}
			if (ids.add(next.id)) {
				batch.add(next);
				documentBytes += next.bytes;
			}
			else {
				later.add(next);
			}
		}
		for (int i = later.size() - 1; i >= 0; i--) {
			this.queue.addFirst(later.get(i));
		}
		this.lastBatchSize = batch.size();
		return batch;
	}

	private void flush(List<PendingWrite> batch) {
		Timer.Sample sample = Timer.start();
		try {
			List<PendingClaim> claims = decide(batch);
			if (claims.isEmpty()) {
				return;
			}
			List<Claim> rows = claims.stream().map(PendingClaim::claim).toList();
			this.repository.append(rows);
			this.inserts.increment();
			this.batchSizes.record(rows.size());
			Map<Claim, Instant> winners = this.repository.winners(rows);
			for (PendingClaim claim : claims) {
				PendingWrite pending = claim.pending();
				Instant writtenAt = winners.get(claim.claim());
				if (writtenAt != null) {
					Change change = claim.claim().change();
					StoredState state = new StoredState(pending.id, claim.claim().version(),
							change.operation() == Change.Operation.DELETE, change.document(), change.fencing(),
							writtenAt);
					pending.result.complete(new Committed(state, claim.claim().created(), false));
				}
				else {
					this.retries.increment();
					retry(pending);
				}
			}
		}
		catch (RuntimeException ex) {
			// ClickHouse failed (outage, timeout): nobody in this batch gets a 2xx.
			batch.forEach((pending) -> pending.result.completeExceptionally(ex));
		}
		finally {
			sample.stop(this.batchDurations);
		}
	}

	/** Decides every write of the batch against the newest versions, read in one query. */
	private List<PendingClaim> decide(List<PendingWrite> batch) {
		Set<String> ids = new LinkedHashSet<>();
		Set<IdempotencyKey> keys = new LinkedHashSet<>();
		for (PendingWrite pending : batch) {
			ids.add(pending.id);
			if (pending.idempotencyKey != null) {
				keys.add(new IdempotencyKey(pending.id, pending.idempotencyKey));
			}
		}
		Map<String, StoredState> newest = this.repository.newest(ids);
		Map<IdempotencyKey, Committed> replays = keys.isEmpty() ? Map.of() : this.repository.replays(keys);
		List<PendingClaim> claims = new ArrayList<>();
		for (PendingWrite pending : batch) {
			if (pending.idempotencyKey != null) {
				Committed replay = replays.get(new IdempotencyKey(pending.id, pending.idempotencyKey));
				if (replay != null) {
					pending.result.complete(replay);
					continue;
				}
			}
			StoredState current = newest.get(pending.id);
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
			claims.add(new PendingClaim(pending,
					new Claim(pending.id, version, new Change(change.operation(), change.document(), fencing),
							pending.requestId, pending.idempotencyKey, !StoredState.isLive(current))));
		}
		return claims;
	}

	private void retry(PendingWrite pending) {
		pending.attempts++;
		if (pending.attempts >= this.properties.maxAttempts()) {
			pending.result.completeExceptionally(WriteUnavailableException.contended(pending.id, pending.attempts));
		}
		else {
			this.queue.addFirst(pending);
		}
	}

	@Override
	public void start() {
		this.running = true;
		Thread thread = new Thread(this::flushUntilStopped, "changelog-writer");
		thread.setDaemon(true);
		this.flusher = thread;
		thread.start();
	}

	/** Stops taking writes, finishes those already taken. */
	@Override
	public void stop() {
		this.running = false;
		Thread thread = this.flusher;
		if (thread != null) {
			try {
				thread.join(this.properties.timeout().toMillis());
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
		}
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

		final @Nullable String idempotencyKey;

		final int bytes;

		final UUID requestId = UUID.randomUUID();

		final CompletableFuture<Committed> result = new CompletableFuture<>();

		int attempts;

		PendingWrite(String id, StateMutation mutation, @Nullable String idempotencyKey, int bytes) {
			this.id = id;
			this.mutation = mutation;
			this.idempotencyKey = idempotencyKey;
			this.bytes = bytes;
		}

	}

	private record PendingClaim(PendingWrite pending, Claim claim) {
	}

}
