package io.statehouse.changelog;

import java.time.Duration;
import java.util.List;

import io.statehouse.claims.ClaimKey;

import org.jspecify.annotations.Nullable;

import org.springframework.dao.DataAccessResourceFailureException;

/**
 * The materializer's real repository with seams between its statements: a write committing
 * between truncation's check and its drop, a meta table that does not answer, and a crash
 * (the run aborts there, as a {@code kill -9} would stop it) at every step of a run.
 */
class InterleavingMaterializerRepository implements MaterializerRepository {

	/** The steps of a run a crash can follow (or, for a drop, precede). */
	enum Step {

		STATE_WRITTEN, WATERMARK_RECORDED, FLOOR_RECORDED, BEFORE_DROP, AFTER_DROP

	}

	private final MaterializerRepository delegate;

	volatile @Nullable Runnable beforeDropPart;

	volatile boolean failWatermark;

	private volatile @Nullable Step crashAt;

	private volatile boolean crashEveryRun;

	private volatile boolean crashed;

	InterleavingMaterializerRepository(MaterializerRepository delegate) {
		this.delegate = delegate;
	}

	void reset() {
		this.beforeDropPart = null;
		this.failWatermark = false;
		this.crashAt = null;
	}

	/** Crashes the next run (or every run) at a step. */
	void crashAt(Step step, boolean everyRun) {
		this.crashed = false;
		this.crashEveryRun = everyRun;
		this.crashAt = step;
	}

	/** Whether a crash happened since {@link #crashAt}. */
	boolean crashed() {
		return this.crashed;
	}

	private void passed(Step step) {
		if (step == this.crashAt) {
			if (!this.crashEveryRun) {
				this.crashAt = null;
			}
			this.crashed = true;
			throw new IllegalStateException("injected crash at " + step);
		}
	}

	@Override
	public long cut(long fromPosition, Duration decidedAfter) {
		return this.delegate.cut(fromPosition, decidedAfter);
	}

	@Override
	public List<ClaimKey> claimed(long fromPosition, long toPosition) {
		return this.delegate.claimed(fromPosition, toPosition);
	}

	@Override
	public void recordForgotten(long block) {
		this.delegate.recordForgotten(block);
	}

	@Override
	public long materialize(long fromPosition, long toPosition) {
		long rows = this.delegate.materialize(fromPosition, toPosition);
		passed(Step.STATE_WRITTEN);
		return rows;
	}

	@Override
	public Watermark watermark(Duration grace) {
		if (this.failWatermark) {
			throw new DataAccessResourceFailureException("injected: SELECT max(value) FROM meta failed");
		}
		return this.delegate.watermark(grace);
	}

	@Override
	public void recordCut(long block) {
		this.delegate.recordCut(block);
		passed(Step.WATERMARK_RECORDED);
	}

	@Override
	public void recordFloor(long block) {
		this.delegate.recordFloor(block);
		passed(Step.FLOOR_RECORDED);
	}

	@Override
	public List<Part> parts(Duration retention) {
		return this.delegate.parts(retention);
	}

	@Override
	public boolean dropPart(String name) {
		Runnable before = this.beforeDropPart;
		if (before != null) {
			before.run();
		}
		passed(Step.BEFORE_DROP);
		boolean dropped = this.delegate.dropPart(name);
		passed(Step.AFTER_DROP);
		return dropped;
	}

	@Override
	public long tailRows(long block) {
		return this.delegate.tailRows(block);
	}

}
