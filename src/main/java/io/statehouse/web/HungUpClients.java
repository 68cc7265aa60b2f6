package io.statehouse.web;

import java.io.IOException;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Stream;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.statehouse.shared.ClientConnection;
import jakarta.servlet.http.HttpServletRequest;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.DisposableBean;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.core.MethodParameter;
import org.springframework.stereotype.Component;
import org.springframework.web.bind.support.WebDataBinderFactory;
import org.springframework.web.context.request.NativeWebRequest;
import org.springframework.web.method.support.HandlerMethodArgumentResolver;
import org.springframework.web.method.support.ModelAndViewContainer;
import org.springframework.web.servlet.config.annotation.WebMvcConfigurer;

/**
 * Notices clients that hang up on a request that waits. An HTTP/1.1 server learns that its client
 * closed the connection only when it reads or writes it, and Tomcat does neither for a parked
 * (asynchronous) request. The kernel knows: the server's end of a connection whose client sent
 * its FIN is in CLOSE_WAIT, and one its client reset is no longer listed, in Linux's
 * {@code /proc/net/tcp} and {@code tcp6}; they are read every {@link #INTERVAL} while some request
 * is watched, and a connection once listed open that is closed or gone is a hang-up. (Go's HTTP
 * server takes a client's FIN for a hang-up the same way.) Where there are no such tables (not
 * Linux), or the request's addresses are not its socket's (forward headers rewrote them), nothing
 * is noticed, as before.
 */
@Component
class HungUpClients implements HandlerMethodArgumentResolver, WebMvcConfigurer, DisposableBean {

	static final Duration INTERVAL = Duration.ofMillis(250);

	private static final Log logger = LogFactory.getLog(HungUpClients.class);

	private static final List<Path> TABLES = List.of(Path.of("/proc/net/tcp"), Path.of("/proc/net/tcp6"));

	/** The kernel's TCP states of a connection its peer closed (CLOSE_WAIT after a FIN); a reset unlists it. */
	private static final List<String> CLOSED_BY_PEER = List.of("08", "07");

	private static final Runnable NOT_WATCHED = () -> {
	};

	private final Map<Endpoints, Watch> watched = new ConcurrentHashMap<>();

	private final boolean tablesReadable = Files.isReadable(TABLES.get(0));

	private final ScheduledExecutorService looker = Executors.newSingleThreadScheduledExecutor(daemon("hung-up-clients"));

	/** Runs what hang-ups set off, each on a thread of its own: one that waits holds up no look. */
	private final ExecutorService actions = Executors.newCachedThreadPool(daemon("hung-up-actions"));

	private final Counter noticed;

	private final AtomicBoolean lookRequested = new AtomicBoolean();

	HungUpClients(ObjectProvider<MeterRegistry> meters) {
		// A slice of the web layer has no registry: its count goes nowhere.
		this.noticed = Counter.builder("statehouse.http.hang.ups")
			.description("Waiting requests whose client closed the connection before they were answered")
			.register(meters.getIfAvailable(SimpleMeterRegistry::new));
		if (this.tablesReadable) {
			this.looker.scheduleWithFixedDelay(this::look, INTERVAL.toMillis(), INTERVAL.toMillis(),
					TimeUnit.MILLISECONDS);
		}
		else {
			logger.info("No /proc/net/tcp: a client that hangs up on a waiting request is noticed when its wait ends");
		}
	}

	@Override
	public void addArgumentResolvers(List<HandlerMethodArgumentResolver> resolvers) {
		resolvers.add(this);
	}

	@Override
	public boolean supportsParameter(MethodParameter parameter) {
		return parameter.getParameterType() == ClientConnection.class;
	}

	@Override
	public ClientConnection resolveArgument(MethodParameter parameter, @Nullable ModelAndViewContainer mavContainer,
			NativeWebRequest webRequest, @Nullable WebDataBinderFactory binderFactory) {
		HttpServletRequest request = webRequest.getNativeRequest(HttpServletRequest.class);
		Endpoints endpoints = (request != null && this.tablesReadable) ? Endpoints.of(request) : null;
		return (action) -> (endpoints != null) ? watch(endpoints, action) : NOT_WATCHED;
	}

	private Runnable watch(Endpoints endpoints, Runnable action) {
		Watch watch = new Watch(action);
		this.watched.put(endpoints, watch);
		// Seen open at once, so that a reset soon after is noticed too; arrivals share one look.
		if (this.lookRequested.compareAndSet(false, true)) {
			try {
				this.looker.execute(this::look);
			}
			catch (RejectedExecutionException ex) {
				// Stopping.
			}
		}
		return () -> this.watched.remove(endpoints, watch);
	}

	private void look() {
		this.lookRequested.set(false);
		if (this.watched.isEmpty()) {
			return;
		}
		try {
			Set<Integer> ports = new HashSet<>();
			this.watched.keySet().forEach((endpoints) -> ports.add(endpoints.localPort()));
			Set<Endpoints> open = new HashSet<>();
			Set<Endpoints> closed = new HashSet<>();
			for (Path table : TABLES) {
				try (Stream<String> lines = Files.lines(table)) {
					lines.skip(1).map((line) -> Listed.of(line, ports)).filter(Objects::nonNull).forEach((listed) ->
							(listed.closedByPeer() ? closed : open).add(listed.endpoints()));
				}
				catch (NoSuchFileException ex) {
					// No IPv6.
				}
			}
			this.watched.forEach((endpoints, watch) -> {
				// A reset takes the connection out of the tables at once: gone, once it was seen there.
				if (closed.contains(endpoints) || (watch.seen && !open.contains(endpoints))) {
					if (this.watched.remove(endpoints, watch)) {
						this.noticed.increment();
						this.actions.execute(watch.action);
					}
				}
				else if (open.contains(endpoints)) {
					watch.seen = true;
				}
			});
		}
		catch (Throwable ex) {
			logger.warn("Could not look for clients that hung up: " + ex);
		}
	}

	@Override
	public void destroy() {
		this.looker.shutdownNow();
		this.actions.shutdownNow();
	}

	private static ThreadFactory daemon(String name) {
		return (task) -> {
			Thread thread = new Thread(task, name);
			thread.setDaemon(true);
			return thread;
		};
	}

	/** A request waiting for its client's hang-up; {@code seen} once its connection was listed open. */
	private static final class Watch {

		final Runnable action;

		volatile boolean seen;

		Watch(Runnable action) {
			this.action = action;
		}

	}

	/** A connection as the server sees it: its own address and port, its client's. */
	record Endpoints(InetAddress local, int localPort, InetAddress remote, int remotePort) {

		static @Nullable Endpoints of(HttpServletRequest request) {
			try {
				InetAddress local = literal(request.getLocalAddr());
				InetAddress remote = literal(request.getRemoteAddr());
				return (local != null && remote != null)
						? new Endpoints(local, request.getLocalPort(), remote, request.getRemotePort()) : null;
			}
			catch (UnknownHostException ex) {
				return null;
			}
		}

		/** A literal address is never looked up; anything else (a name, a scope) is not the socket's. */
		private static @Nullable InetAddress literal(@Nullable String address) throws UnknownHostException {
			return (address != null && address.matches("[0-9a-fA-F.:]+")) ? InetAddress.getByName(address) : null;
		}

	}

	/**
	 * A line of {@code /proc/net/tcp} or {@code tcp6} ({@code sl local_address rem_address st …},
	 * addresses as hex words in the kernel's byte order, ports as hex).
	 */
	record Listed(Endpoints endpoints, boolean closedByPeer) {

		/** The line's connection if its local port is one of {@code ports}; most lines are not parsed further. */
		static @Nullable Listed of(String line, Set<Integer> ports) {
			String[] fields = new String[4];
			int at = 0;
			for (int field = 0; field < fields.length; field++) {
				while (at < line.length() && line.charAt(at) == ' ') {
					at++;
				}
				int end = line.indexOf(' ', at);
				if (at == line.length() || end < 0) {
					return null;
				}
				fields[field] = line.substring(at, end);
				at = end;
			}
			try {
				String[] local = fields[1].split(":");
				int localPort = Integer.parseInt(local[1], 16);
				if (!ports.contains(localPort)) {
					return null;
				}
				String[] remote = fields[2].split(":");
				// An IPv4 end of an IPv6 socket (::ffff:a.b.c.d) comes back as its IPv4 address.
				Endpoints endpoints = new Endpoints(InetAddress.getByAddress(address(local[0])), localPort,
						InetAddress.getByAddress(address(remote[0])), Integer.parseInt(remote[1], 16));
				return new Listed(endpoints, CLOSED_BY_PEER.contains(fields[3]));
			}
			catch (UnknownHostException | RuntimeException ex) {
				return null;
			}
		}

		/** Each 32-bit word is printed as the little-endian machine read it. */
		private static byte[] address(String hex) {
			byte[] bytes = HexFormat.of().parseHex(hex);
			for (int word = 0; word < bytes.length; word += 4) {
				for (int i = 0; i < 2; i++) {
					byte swapped = bytes[word + i];
					bytes[word + i] = bytes[word + 3 - i];
					bytes[word + 3 - i] = swapped;
				}
			}
			return bytes;
		}

	}

}
