package io.statehouse.changelog;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.context.SmartLifecycle;

/**
 * The one write path, its mechanism: group commit. Requests hand their writes to the writer and
 * wait. A dispatcher thread forms batches of what is queued — distinct ids only, and no id that
 * is in a batch still in flight, so that a later write of an id is decided after the earlier one
 * is durable — and up to {@code concurrency} batches run at once, each a {@link ClaimRound}.
 * Writes that lost their version go first into the next batches.
 *
 * <p>A write that arrives while the writer is idle goes out at once; under load a batch lingers
 * briefly to fill. Memory is bounded: writes accepted but not yet durable may hold at most
 * {@code max-in-flight} bytes; beyond that a write is refused at once (503, Retry-After) rather
 * than queued. A write whose caller stopped waiting for it ({@code timeout}) before it was appended
 * is dropped, never written behind its caller's back. A stopped writer (a paused application
 * context) can start again.
 */
class ChangelogWriter implements SmartLifecycle {

	private static final Log logger = LogFactory.getLog(ChangelogWriter.class);

	/** Accounted per write on top of its document, for keys, headers and bookkeeping. */
	private static final int OVERHEAD_BYTES = 512;

	/** The prerequisite of a write that has none: met. */
	private static final CompletableFuture<Void> NO_PREREQUISITE = CompletableFuture.completedFuture(null);

	private final ChangelogProperties.Writer properties;

	private final ReentrantLock lock = new ReentrantLock();

	/** Signalled when a write is queued or a batch finishes. */
	private final Condition changed = this.lock.newCondition();

	/** Guarded by {@link #lock}. */
	private final ArrayDeque<PendingWrite> queue = new ArrayDeque<>();

	/** Ids of the batches in flight. Guarded by {@link #lock}. */
	private final Set<String> inFlightIds = new HashSet<>();

	/** Guarded by {@link #lock}. */
	private int batchesInFlight;

	/** Writes a round set aside until their prerequisite completes. Guarded by {@link #lock}. */
	private int waitingForPrerequisites;

	/** Guarded by {@link #lock}. */
	private int lastBatchSize;

	private final Semaphore inFlightBytes;

	private final int maxInFlightBytes;

	/** Started with the writer, shut down when it stops: a stopped writer can start again. */
	private volatile ExecutorService workers;

	private volatile boolean running;

	private @Nullable Thread dispatcher;

	private final ClaimRound round;

	ChangelogWriter(ClaimRound round, ChangelogProperties.Writer properties, MeterRegistry meters) {
		this.round = round;
		this.properties = properties;
		this.maxInFlightBytes = (int) Math.min(Integer.MAX_VALUE, properties.maxInFlight().toBytes());
		this.inFlightBytes = new Semaphore(this.maxInFlightBytes);
		this.workers = newWorkers();
		Gauge.builder("statehouse.changelog.writer.in.flight.bytes", this,
				(writer) -> writer.maxInFlightBytes - writer.inFlightBytes.availablePermits())
			.description("Document bytes accepted but not durable yet; writes beyond max-in-flight answer 503")
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
		return submit(id, mutation, idempotency, sizeBytes, NO_PREREQUISITE);
	}

	/**
	 * Hands a write to the writer without waiting, to be decided only once {@code prerequisite}
	 * completes (its lease's check, which the caller runs meanwhile): its round reads the newest
	 * version while the prerequisite is found out. A write whose prerequisite is still under way
	 * when its round decides leaves that round without holding it up, and joins the first round
	 * after the prerequisite completes; a prerequisite that fails refuses the write.
	 * @throws WriteUnavailableException when the writer is saturated or stopping
	 */
	public CompletableFuture<Committed> submit(String id, StateMutation mutation, @Nullable Idempotency idempotency,
			int sizeBytes, CompletableFuture<?> prerequisite) {
		int bytes = (int) Math.min((long) sizeBytes + OVERHEAD_BYTES, this.maxInFlightBytes);
		if (!this.running) {
			throw WriteUnavailableException.stopping();
		}
		if (!this.inFlightBytes.tryAcquire(bytes)) {
			throw WriteUnavailableException.saturated();
		}
		PendingWrite pending = new PendingWrite(id, mutation, idempotency, prerequisite, bytes,
				System.nanoTime() + this.properties.timeout().toNanos());
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

	/** How long a write may take to be durable before its caller is answered 503. */
	Duration timeout() {
		return this.properties.timeout();
	}

	/** The most writes one batch (a claim round, one INSERT) takes. */
	int maxBatchWrites() {
		return this.properties.maxBatchWrites();
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
			while (this.running || !this.queue.isEmpty() || this.batchesInFlight > 0
					|| this.waitingForPrerequisites > 0) {
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
	 * flight, within the batch limits; drops those whose caller gave up. Call with the lock held.
	 */
	private void takeEligible(List<PendingWrite> batch, Set<String> ids) {
		long bytes = batch.stream().mapToLong((pending) -> pending.bytes).sum();
		Set<String> passed = new HashSet<>();
		Iterator<PendingWrite> queued = this.queue.iterator();
		while (queued.hasNext() && batch.size() < this.properties.maxBatchWrites()
				&& bytes < this.properties.maxBatchSize().toBytes()) {
			PendingWrite pending = queued.next();
			if (pending.abandoned()) {
				// Its caller gave up on it (503): written now, it would land behind its back — a
				// lock's fence after its grant was withdrawn, under the next holder.
				queued.remove();
				pending.result.completeExceptionally(WriteUnavailableException.notTakenInTime());
				continue;
			}
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
			retries = this.round.run(batch);
		}
		catch (Throwable ex) {
			// Out of memory, a bug: answer every write (its outcome is unknown) so that none
			// waits for its timeout and the in-flight budget it holds is given back.
			logger.error("A changelog batch failed unexpectedly", ex);
			batch.forEach((pending) -> pending.result.completeExceptionally(WriteUnavailableException.outcomeUnknown()));
		}
		finally {
			this.lock.lock();
			try {
				// Lost claims go first, before later writes of their ids are decided; writes set
				// aside go first once their prerequisite completes.
				for (int i = retries.size() - 1; i >= 0; i--) {
					PendingWrite retry = retries.get(i);
					if (retry.prerequisite.isDone()) {
						this.queue.addFirst(retry);
					}
					else {
						this.waitingForPrerequisites++;
						retry.prerequisite.whenComplete((result, failure) -> requeue(retry));
					}
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

	/** Puts back a write whose prerequisite completed after its round set it aside. */
	private void requeue(PendingWrite pending) {
		this.lock.lock();
		try {
			this.waitingForPrerequisites--;
			this.queue.addFirst(pending);
			this.changed.signalAll();
		}
		finally {
			this.lock.unlock();
		}
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
		this.round.start();
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
		this.round.stop();
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

}
