package io.statehouse.changelog;

/**
 * Where a read must look at the changelog: every change committed after the newest recorded
 * materialization cut has a higher position (a block number or a write time in ms, as
 * {@link ChangelogTables.Tail} orders the changelog), and everything up to it is in the state
 * table. Zero (read everything) until a cut is known.
 */
final class TailWatermark {

	private volatile long position;

	long position() {
		return this.position;
	}

	/** Moves forward only: an older cut learned late changes nothing. */
	synchronized void advance(long cut) {
		if (cut > this.position) {
			this.position = cut;
		}
	}

}
