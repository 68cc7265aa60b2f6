package io.statehouse.watch;

import java.time.Duration;

import jakarta.validation.constraints.Max;
import jakarta.validation.constraints.Min;
import org.hibernate.validator.constraints.time.DurationMax;
import org.hibernate.validator.constraints.time.DurationMin;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.validation.annotation.Validated;

/**
 * Watching: how the feed is followed and how much a watcher may hold.
 *
 * @param pollInterval how often this instance's tail reader looks for changes made through other
 * instances (this instance's own commits wake it at once)
 * @param heartbeat how often an idle stream is sent a heartbeat carrying its cursor
 * @param maxStreams streams open on this instance at once; beyond it, 503
 * @param maxQueued changes a stream may have waiting to be sent; a client that reads slower is cut
 * off with its cursor
 * @param maxWait the longest {@code Prefer: wait} honoured
 * @param recent changes the tail keeps in memory, so that a watcher that joins a little behind it
 * needs no read of its own
 */
@ConfigurationProperties("statehouse.watch")
@Validated
record WatchProperties(@DefaultValue("100ms") @DurationMin(millis = 10) Duration pollInterval,
		@DefaultValue("15s") @DurationMin(millis = 100) Duration heartbeat,
		@DefaultValue("1000") @Min(1) int maxStreams,
		@DefaultValue("256") @Min(1) @Max(100_000) int maxQueued,
		@DefaultValue("5m") @DurationMin(seconds = 1) @DurationMax(hours = 1) Duration maxWait,
		@DefaultValue("4096") @Min(1) int recent) {

	/**
	 * Rows of the changelog one read of the feed takes: each read sorts what follows its cursor,
	 * so a stream catching up from the oldest change does better with fewer, larger reads (60,000
	 * changes: 5.0 s at 2,000, 8.5 s at 500). Memory holds one read per watch worker (4) and the tail's.
	 */
	static final int PAGE_SIZE = 2000;

}
