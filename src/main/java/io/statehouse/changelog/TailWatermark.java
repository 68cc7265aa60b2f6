package io.statehouse.changelog;

/**
 * Where a read must look at the changelog: every change committed after the newest recorded
 * materialization cut has a higher block, and everything up to it is in the state table. Zero
 * (read everything) until a cut is known.
 */
final class TailWatermark {

	private volatile long block;

	long block() {
		return this.block;
	}

	/** Moves forward only: an older cut learned late changes nothing. */
	synchronized void advance(long block) {
		if (block > this.block) {
			this.block = block;
		}
	}

}
