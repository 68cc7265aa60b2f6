package io.statehouse.lock;

import java.time.Duration;

import jakarta.validation.constraints.Min;
import org.hibernate.validator.constraints.time.DurationMin;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.validation.annotation.Validated;

/**
 * Locks: how long a change may take, how many acquisitions may wait, and how they wait in line.
 *
 * @param changeTimeout how long deciding a change of a lock may take — claims that keep losing
 * their slot, reads that stay behind, read-backs of a claim whose answer was lost — before the
 * request answers 503: a renewal, a release, the admission of a fenced write; an acquisition
 * gets this or its {@code waitSeconds}, whichever is longer
 * @param maxWaitersPerCaller acquisitions of one caller (the name of its token) that may wait for
 * held locks on this instance at once; beyond it, 429
 * @param maxWaiters acquisitions of all callers that may wait on this instance at once; beyond it, 429
 * @param placeLifetime how long the place of a waiting acquisition in its lock's line counts after
 * its instance last kept it alive (a third of it apart): how long an instance that died holds up
 * the waiters behind its own
 * @param pollInterval how often an instance with waiting acquisitions looks whether their locks
 * changed on any instance: how late a release on another instance may be seen
 */
@ConfigurationProperties("statehouse.lock")
@Validated
record LockProperties(@DefaultValue("10s") @DurationMin(millis = 100) Duration changeTimeout,
		@DefaultValue("64") @Min(1) int maxWaitersPerCaller, @DefaultValue("1024") @Min(1) int maxWaiters,
		@DefaultValue("3s") @DurationMin(millis = 300) Duration placeLifetime,
		@DefaultValue("25ms") @DurationMin(millis = 5) Duration pollInterval) {
}
