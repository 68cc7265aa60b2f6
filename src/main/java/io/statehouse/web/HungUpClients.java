package io.statehouse.web;

import java.io.IOException;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
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
 * its FIN is in CLOSE_WAIT (CLOSE after a reset), as Linux lists in {@code /proc/net/tcp} and
 * {@code tcp6}; they are read every {@link #INTERVAL} while some request is watched. (Go's HTTP
 * server takes a client's FIN for a hang-up the same way.) Where there are no such tables (not
 * Linux), or the request's address is not its socket's (forward headers rewrote it), nothing is
 * noticed, as before.
 */
@Component
class HungUpClients implements HandlerMethodArgumentResolver, WebMvcConfigurer, DisposableBean {

	static final Duration INTERVAL = Duration.ofMillis(250);

	private static final Log logger = LogFactory.getLog(HungUpClients.class);

	private static final List<Path> TABLES = List.of(Path.of("/proc/net/tcp"), Path.of("/proc/net/tcp6"));

	/** The kernel's TCP states of a connection its peer closed: CLOSE_WAIT after a FIN, CLOSE after a reset. */
	private static final List<String> CLOSED_BY_PEER = List.of("08", "07");

	private static final Runnable NOT_WATCHED = () -> {
	};

	private final Map<Endpoints, Runnable> watched = new ConcurrentHashMap<>();

	private final boolean tablesReadable = Files.isReadable(TABLES.get(0));

	private final ScheduledExecutorService looker = Executors.newSingleThreadScheduledExecutor((task) -> {
		Thread thread = new Thread(task, "hung-up-clients");
		thread.setDaemon(true);
		return thread;
	});

	private final Counter noticed;

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
		this.watched.put(endpoints, action);
		return () -> this.watched.remove(endpoints, action);
	}

	private void look() {
		if (this.watched.isEmpty()) {
			return;
		}
		try {
			for (Path table : TABLES) {
				try (Stream<String> lines = Files.lines(table)) {
					lines.skip(1).forEach(this::hungUpIfWatched);
				}
				catch (NoSuchFileException ex) {
					// No IPv6.
				}
			}
		}
		catch (IOException | RuntimeException ex) {
			logger.warn("Could not look for clients that hung up: " + ex);
		}
	}

	private void hungUpIfWatched(String line) {
		Endpoints endpoints = Endpoints.closedByPeer(line);
		Runnable action = (endpoints != null) ? this.watched.remove(endpoints) : null;
		if (action != null) {
			this.noticed.increment();
			action.run();
		}
	}

	@Override
	public void destroy() {
		this.looker.shutdownNow();
	}

	/** A connection as the server sees it: its own port, its client's address and port. */
	record Endpoints(int localPort, InetAddress remote, int remotePort) {

		static @Nullable Endpoints of(HttpServletRequest request) {
			String address = request.getRemoteAddr();
			// A literal address is never looked up; anything else is not the socket's.
			if (address == null || !address.matches("[0-9a-fA-F.:]+")) {
				return null;
			}
			try {
				return new Endpoints(request.getLocalPort(), InetAddress.getByName(address), request.getRemotePort());
			}
			catch (UnknownHostException ex) {
				return null;
			}
		}

		/**
		 * The connection of a line of {@code /proc/net/tcp} or {@code tcp6} if its peer closed it
		 * ({@code sl local_address rem_address st …}, addresses as hex words in the kernel's byte
		 * order, ports as hex).
		 */
		static @Nullable Endpoints closedByPeer(String line) {
			// Most lines are connections nobody closed: their state is looked at before anything is parsed.
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
			if (!CLOSED_BY_PEER.contains(fields[3])) {
				return null;
			}
			try {
				int localPort = port(fields[1]);
				String[] remote = fields[2].split(":");
				// An IPv4 client of an IPv6 socket (::ffff:a.b.c.d) comes back as its IPv4 address.
				return new Endpoints(localPort, InetAddress.getByAddress(address(remote[0])),
						Integer.parseInt(remote[1], 16));
			}
			catch (UnknownHostException | RuntimeException ex) {
				return null;
			}
		}

		private static int port(String endpoint) {
			return Integer.parseInt(endpoint.substring(endpoint.indexOf(':') + 1), 16);
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
