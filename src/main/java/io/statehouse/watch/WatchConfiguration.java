package io.statehouse.watch;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadFactory;

import io.micrometer.core.instrument.MeterRegistry;
import io.statehouse.changelog.ChangeFeed;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** The tail reader, streams and waits, and the few threads they share. */
@Configuration(proxyBeanMethods = false)
class WatchConfiguration {

	/** Waits open on one instance at once. */
	private static final int MAX_WAITS = 10_000;

	@Bean
	ChangeTail changeTail(ChangeFeed feed, WatchProperties properties, MeterRegistry meters) {
		return new ChangeTail(feed, properties, meters);
	}

	@Bean(destroyMethod = "shutdownNow")
	ScheduledExecutorService watchTimers() {
		return Executors.newScheduledThreadPool(1, daemon("watch-timers"));
	}

	@Bean(destroyMethod = "shutdownNow")
	ExecutorService watchWorkers() {
		return Executors.newFixedThreadPool(4, daemon("watch-workers"));
	}

	@Bean(destroyMethod = "shutdownNow")
	ExecutorService watchSenders() {
		return Executors.newFixedThreadPool(8, daemon("watch-senders"));
	}

	@Bean
	ChangeWatch changeWatch(ChangeFeed feed, ChangeTail tail, WatchProperties properties,
			ExecutorService watchWorkers, ExecutorService watchSenders, ScheduledExecutorService watchTimers,
			MeterRegistry meters) {
		return new ChangeWatch(feed, tail, properties, watchWorkers, watchSenders, watchTimers, meters);
	}

	@Bean
	StateWaits stateWaits(ChangeTail tail, WatchProperties properties, ExecutorService watchWorkers,
			ScheduledExecutorService watchTimers, MeterRegistry meters) {
		return new StateWaits(tail, properties, watchWorkers, watchTimers, MAX_WAITS, meters);
	}

	private static ThreadFactory daemon(String name) {
		return (task) -> {
			Thread thread = new Thread(task, name);
			thread.setDaemon(true);
			return thread;
		};
	}

}
