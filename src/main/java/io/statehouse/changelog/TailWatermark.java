package io.statehouse.changelog;

/**
 * The segment from which a read must look at the changelog: every change committed after the
 * newest materialization cut lies in that cut's segment or later, and everything before is in
 * the state table. Reads start one segment earlier, so that a server clock stepping back by less
 * than a segment cannot hide a change. Zero (read everything) until a cut is known.
 */
final class TailWatermark {

	private volatile long segment;

	long fromSegment() {
		return Math.max(0, this.segment - 1);
	}

	/** Moves forward only: an older cut learned late changes nothing. */
	synchronized void advance(long segment) {
		if (segment > this.segment) {
			this.segment = segment;
		}
	}

}
