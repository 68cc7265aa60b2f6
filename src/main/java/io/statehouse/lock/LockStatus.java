package io.statehouse.lock;

/**
 * A live lease as anyone may see it, with its line.
 *
 * @param holder the live lease
 * @param waiting how many acquisitions wait for the lock, on every instance
 */
record LockStatus(Lease holder, int waiting) {
}
