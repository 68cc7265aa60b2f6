package io.statehouse.watch;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadFactory;

import io.micrometer.core.instrument.MeterRegistry;
import io.statehouse.changelog.ChangeFeed;
import io.statehouse.changelog.StateStore;

import org.springframework.beans.factory.DisposableBean;
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

	@Bean
	WatchThreads watchThreads() {
		return new WatchThreads();
	}

	@Bean
	ChangeWatch changeWatch(ChangeFeed feed, ChangeTail tail, StateStore states, WatchProperties properties,
			WatchThreads threads, MeterRegistry meters) {
		return new ChangeWatch(feed, tail, new EventDocuments(states::version), properties, threads.workers, threads.senders,
				threads.timers, meters);
	}

	@Bean
	StateWaits stateWaits(ChangeTail tail, ChangeFeed feed, WatchProperties properties, WatchThreads threads,
			MeterRegistry meters) {
		return new StateWaits(tail, feed, properties, threads.workers, threads.timers, MAX_WAITS, meters);
	}

	/**
	 * The few threads streams and waits share. Not beans of their own: a {@code
	 * ScheduledExecutorService} bean would become the application's scheduler, and the
	 * materializers would run on it.
	 */
	static final class WatchThreads implements DisposableBean {

		/** Timeouts of waits, heartbeats of streams. */
		final ScheduledExecutorService timers = Executors.newScheduledThreadPool(1, daemon("watch-timers"));

		/** Streams catching up from the feed, waits answered. */
		final ExecutorService workers = Executors.newFixedThreadPool(4, daemon("watch-workers"));

		/** Streams' writes to their clients. */
		final ExecutorService senders = Executors.newFixedThreadPool(8, daemon("watch-senders"));

		@Override
		public void destroy() {
			this.timers.shutdownNow();
			this.workers.shutdownNow();
			this.senders.shutdownNow();
		}

	}

	private static ThreadFactory daemon(String name) {
		return (task) -> {
			Thread thread = new Thread(task, name);
			thread.setDaemon(true);
			return thread;
		};
	}

}
