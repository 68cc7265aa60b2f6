package io.statehouse.clickhouse.embedded;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpDecoderConfig;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.handler.codec.http.QueryStringDecoder;
import io.netty.handler.codec.http.TooLongHttpHeaderException;
import io.netty.handler.codec.http.TooLongHttpLineException;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.netty.util.concurrent.ScheduledFuture;
import org.jspecify.annotations.Nullable;

/**
 * An HTTP/1.1 server on a loopback port that gives a connection nothing until one of its
 * requests is admitted, so that whoever can reach the port cannot hold the door shut for those
 * who hold the key.
 *
 * <p>Request heads are read without a thread of their own (Netty's event loop, non-blocking), so
 * a connection that sends half a head, or a byte at a time, costs a socket and a few bytes, never
 * a worker. Each head is judged ({@link Application#admit}) before any of its body is read: a
 * request that is not admitted is answered and its connection closed, its body unread. Only an
 * admitted request's body is read, and only admitted requests reach the workers that serve them.
 *
 * <p>A connection that has not had a request admitted is <em>anonymous</em>, and gets little
 * ({@link Limits}): a few seconds to deliver each head, however slowly its bytes come; and a
 * bounded number of anonymous connections, holding a bounded number of bytes of unfinished heads
 * between them, beyond which the oldest is closed — so that any number of connections from others
 * on the host leaves room for a new one, which sends its head at once and is judged by it. A
 * connection that had a request admitted is kept alive between requests, as a client's pool
 * expects.
 *
 * <p>Not served: TLS, HTTP/2, upgrades, trailers, request lines or headers over 1 MB each
 * (ClickHouse's own limit on a URI), bodies over 2 GB (one array).
 */
final class GuardedHttpServer implements AutoCloseable {

	/**
	 * What the server gives connections.
	 * @param headTimeout how long an anonymous connection has to deliver a whole request head
	 * (from when it opened, or was last answered)
	 * @param idleTimeout how long a connection that had a request admitted may wait for its next
	 * @param bodyTimeout how long an admitted request's body may pause
	 * @param linger how long a connection is still read after its last answer (what arrives is
	 * dropped), so that the client reads the answer before the close rather than a reset
	 * @param maxAnonymousConnections anonymous connections kept at most: one more closes the oldest
	 * @param maxAnonymousHeadBytes bytes of unfinished heads that anonymous connections may hold
	 * between them: beyond, the oldest closes
	 */
	record Limits(Duration headTimeout, Duration idleTimeout, Duration bodyTimeout, Duration linger,
			int maxAnonymousConnections, long maxAnonymousHeadBytes) {

		/**
		 * A head arrives in one packet from any client and from the service's pool; an idle
		 * connection of that pool lives as long as with a ClickHouse server; a thousand strangers
		 * and a few MB of their heads are all the room they get.
		 */
		static final Limits DEFAULT = new Limits(Duration.ofSeconds(10), Duration.ofSeconds(30), Duration.ofSeconds(30),
				Duration.ofSeconds(1), 1024, 8L << 20);

	}

	/** The longest request line (ClickHouse's {@code http_max_uri_size}). */
	static final int MAX_REQUEST_LINE = 1 << 20;

	/** The most header bytes in one request. */
	static final int MAX_HEADER_BYTES = 1 << 20;

	/** The most a connection is read after its last answer (longer bodies are cut off with a reset). */
	static final int MAX_LINGER_BYTES = 1 << 20;

	/** The largest body: one array. */
	static final long MAX_BODY_BYTES = Integer.MAX_VALUE - 8;

	/** What the server asks of the application it serves. */
	interface Application {

		/**
		 * Judges a request by its head, before any of its body is read. Runs on an I/O thread:
		 * must not block.
		 * @return the answer to send at once, or {@code null} to admit the request: its body is
		 * read and it is {@link #serve served}, and its connection is no longer anonymous
		 */
		@Nullable Answer admit(Head head);

		/** Serves an admitted request, on a worker thread. */
		Answer serve(Head head, byte[] body) throws InterruptedException;

	}

	/**
	 * A request's head.
	 * @param method the method
	 * @param path the decoded path
	 * @param rawQuery the query string as sent, {@code null} if there is none
	 * @param headers its headers (names are case-insensitive)
	 */
	record Head(String method, String path, @Nullable String rawQuery, HttpHeaders headers) {

		/** The first value of a header, {@code null} if absent. */
		@Nullable String header(String name) {
			return this.headers.get(name);
		}

		static Head of(HttpRequest request) {
			String uri = request.uri();
			int fragment = uri.indexOf('#');
			uri = (fragment < 0) ? uri : uri.substring(0, fragment);
			int question = uri.indexOf('?');
			String path = new QueryStringDecoder((question < 0) ? uri : uri.substring(0, question)).path();
			return new Head(request.method().name(), path, (question < 0) ? null : uri.substring(question + 1),
					request.headers());
		}

	}

	/**
	 * An answer.
	 * @param status the HTTP status
	 * @param headers response headers ({@code Content-Length} and {@code Connection} are the server's)
	 * @param body the body
	 */
	record Answer(int status, Map<String, String> headers, byte[] body) {

		static Answer plain(int status, String text) {
			return new Answer(status, Map.of("Content-Type", "text/plain; charset=UTF-8"),
					text.getBytes(StandardCharsets.UTF_8));
		}

	}

	private final Application application;

	private final Limits limits;

	private final ExecutorService workers;

	private final EventLoopGroup loops;

	private final Anonymous anonymous = new Anonymous();

	private @Nullable Channel listener;

	private GuardedHttpServer(Application application, Limits limits, ExecutorService workers, EventLoopGroup loops) {
		this.application = application;
		this.limits = limits;
		this.workers = workers;
		this.loops = loops;
	}

	/**
	 * Serves an application on {@code 127.0.0.1:port}.
	 * @param application what answers the requests
	 * @param port the port, 0 for any free port
	 * @param limits what connections get
	 * @param workers the threads that serve admitted requests (the server shuts them down)
	 */
	static GuardedHttpServer start(Application application, int port, Limits limits, ExecutorService workers)
			throws IOException {
		// Moving bytes is all the event loops do; loopback needs no more of them.
		int ioThreads = Math.min(2, Runtime.getRuntime().availableProcessors());
		EventLoopGroup loops = new MultiThreadIoEventLoopGroup(ioThreads,
				new DefaultThreadFactory("clickhouse-http-io", true), NioIoHandler.newFactory());
		GuardedHttpServer server = new GuardedHttpServer(application, limits, workers, loops);
		ChannelFuture bound = new ServerBootstrap().group(loops)
			.channel(NioServerSocketChannel.class)
			.option(ChannelOption.SO_BACKLOG, 1024)
			.option(ChannelOption.SO_REUSEADDR, true)
			.childOption(ChannelOption.TCP_NODELAY, true)
			.childHandler(new ChannelInitializer<SocketChannel>() {

				@Override
				protected void initChannel(SocketChannel channel) {
					Exchange exchange = server.new Exchange();
					channel.pipeline()
						.addLast("raw-bytes", exchange.rawBytes())
						.addLast("http", new HttpServerCodec(new HttpDecoderConfig().setMaxInitialLineLength(MAX_REQUEST_LINE)
							.setMaxHeaderSize(MAX_HEADER_BYTES)
							.setMaxChunkSize(64 * 1024)))
						.addLast("exchange", exchange);
				}

			})
			.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port))
			.awaitUninterruptibly();
		if (!bound.isSuccess()) {
			server.close();
			throw new IOException("Cannot listen on 127.0.0.1:" + port, bound.cause());
		}
		server.listener = bound.channel();
		return server;
	}

	/** The port it listens on. */
	int port() {
		return ((InetSocketAddress) this.listener.localAddress()).getPort();
	}

	/** Stops listening, closes every connection, and waits a while for admitted requests being served. */
	@Override
	public void close() {
		if (this.listener != null) {
			this.listener.close().awaitUninterruptibly();
		}
		this.loops.shutdownGracefully(0, 2, TimeUnit.SECONDS).awaitUninterruptibly();
		this.workers.shutdown();
		try {
			this.workers.awaitTermination(5, TimeUnit.SECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	/**
	 * The anonymous connections, oldest first, with the bytes of unfinished heads each has sent;
	 * shared by the event loops.
	 */
	private final class Anonymous {

		private final LinkedHashMap<Channel, long[]> connections = new LinkedHashMap<>();

		private long headBytes;

		void arrived(Channel channel) {
			List<Channel> evicted;
			synchronized (this) {
				this.connections.put(channel, new long[1]);
				evicted = overLimits();
			}
			evicted.forEach(Channel::close);
		}

		void received(Channel channel, int bytes) {
			List<Channel> evicted;
			synchronized (this) {
				long[] held = this.connections.get(channel);
				if (held == null) {
					return;
				}
				held[0] += bytes;
				this.headBytes += bytes;
				evicted = overLimits();
			}
			evicted.forEach(Channel::close);
		}

		/** A head is complete: its bytes are no longer held. */
		synchronized void headRead(Channel channel) {
			long[] held = this.connections.get(channel);
			if (held != null) {
				this.headBytes -= held[0];
				held[0] = 0;
			}
		}

		/** Admitted, or closed. */
		synchronized void left(Channel channel) {
			long[] held = this.connections.remove(channel);
			if (held != null) {
				this.headBytes -= held[0];
			}
		}

		private List<Channel> overLimits() {
			List<Channel> evicted = new ArrayList<>();
			Iterator<Map.Entry<Channel, long[]>> oldestFirst = this.connections.entrySet().iterator();
			Limits limits = GuardedHttpServer.this.limits;
			while ((this.connections.size() > limits.maxAnonymousConnections()
					|| this.headBytes > limits.maxAnonymousHeadBytes())
					&& oldestFirst.hasNext()) {
				Map.Entry<Channel, long[]> oldest = oldestFirst.next();
				oldestFirst.remove();
				this.headBytes -= oldest.getValue()[0];
				evicted.add(oldest.getKey());
			}
			return evicted;
		}

	}

	/** One connection's requests, one at a time, on its event loop. */
	private final class Exchange extends ChannelInboundHandlerAdapter {

		private enum Phase {

			/** Waiting for a request head. */
			HEAD,

			/** Reading an admitted request's body. */
			BODY,

			/** Dropping what is left of a request answered from its head (it had no body). */
			SKIP,

			/** A worker serves the request; what arrives meanwhile waits its turn. */
			SERVING,

			/** Answered for the last time: what arrives is dropped until the connection closes. */
			CLOSING

		}

		private Phase phase = Phase.HEAD;

		private boolean admittedBefore;

		private boolean keepAlive;

		private boolean http10;

		private @Nullable Head head;

		private @Nullable Body body;

		private @Nullable ScheduledFuture<?> deadline;

		private final ArrayDeque<Object> waiting = new ArrayDeque<>();

		/**
		 * Counts the bytes of an anonymous connection's unfinished head, and of what arrives after
		 * the last answer, before the codec sees them.
		 */
		ChannelInboundHandlerAdapter rawBytes() {
			return new ChannelInboundHandlerAdapter() {

				private long afterLastAnswer;

				@Override
				public void channelRead(ChannelHandlerContext ctx, Object message) {
					if (message instanceof ByteBuf bytes) {
						if (Exchange.this.phase == Phase.CLOSING) {
							this.afterLastAnswer += bytes.readableBytes();
							if (this.afterLastAnswer > MAX_LINGER_BYTES) {
								bytes.release();
								ctx.close();
								return;
							}
						}
						else if (Exchange.this.phase == Phase.HEAD && !Exchange.this.admittedBefore) {
							GuardedHttpServer.this.anonymous.received(ctx.channel(), bytes.readableBytes());
						}
					}
					ctx.fireChannelRead(message);
				}

			};
		}

		@Override
		public void channelActive(ChannelHandlerContext ctx) {
			GuardedHttpServer.this.anonymous.arrived(ctx.channel());
			awaitHead(ctx);
			ctx.fireChannelActive();
		}

		@Override
		public void channelInactive(ChannelHandlerContext ctx) {
			GuardedHttpServer.this.anonymous.left(ctx.channel());
			cancelDeadline();
			this.body = null;
			this.waiting.forEach(ReferenceCountUtil::release);
			this.waiting.clear();
			ctx.fireChannelInactive();
		}

		@Override
		public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
			// A reset, a malformed chunk: nothing to answer on a connection in that state.
			ctx.close();
		}

		@Override
		public void channelRead(ChannelHandlerContext ctx, Object message) {
			if (this.phase == Phase.SERVING) {
				this.waiting.add(message);
				return;
			}
			try {
				read(ctx, message);
			}
			finally {
				ReferenceCountUtil.release(message);
			}
		}

		private void read(ChannelHandlerContext ctx, Object message) {
			switch (this.phase) {
				case HEAD -> {
					if (message instanceof HttpRequest request) {
						head(ctx, request);
					}
				}
				case BODY -> {
					if (message instanceof HttpContent content) {
						body(ctx, content);
					}
				}
				case SKIP -> {
					if (message instanceof LastHttpContent) {
						awaitHead(ctx);
					}
				}
				case SERVING, CLOSING -> {
					// Dropped.
				}
			}
		}

		private void head(ChannelHandlerContext ctx, HttpRequest request) {
			cancelDeadline();
			GuardedHttpServer.this.anonymous.headRead(ctx.channel());
			this.http10 = request.protocolVersion().equals(HttpVersion.HTTP_1_0);
			if (request.decoderResult().isFailure()) {
				Throwable cause = request.decoderResult().cause();
				answer(ctx, (cause instanceof TooLongHttpLineException) ? Answer.plain(414, "Request line too long\n")
						: (cause instanceof TooLongHttpHeaderException) ? Answer.plain(431, "Request headers too long\n")
								: Answer.plain(400, "Malformed request\n"), true);
				return;
			}
			Head head;
			try {
				head = Head.of(request);
			}
			catch (IllegalArgumentException ex) {
				answer(ctx, Answer.plain(400, "Bad request: malformed path\n"), true);
				return;
			}
			boolean hasBody = HttpUtil.isTransferEncodingChunked(request) || HttpUtil.getContentLength(request, 0L) > 0;
			this.keepAlive = HttpUtil.isKeepAlive(request);
			Answer early;
			try {
				early = GuardedHttpServer.this.application.admit(head);
			}
			catch (RuntimeException ex) {
				early = Answer.plain(500, "Internal error\n");
			}
			if (early != null) {
				// A body after an answer is not read: the connection closes instead.
				boolean close = hasBody || !this.keepAlive;
				answer(ctx, early, close);
				if (!close) {
					this.phase = Phase.SKIP;
				}
				return;
			}
			this.admittedBefore = true;
			GuardedHttpServer.this.anonymous.left(ctx.channel());
			long length = HttpUtil.getContentLength(request, -1L);
			if (length > MAX_BODY_BYTES) {
				answer(ctx, Answer.plain(413, "Request body too large\n"), true);
				return;
			}
			if (HttpUtil.is100ContinueExpected(request)) {
				ctx.writeAndFlush(new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.CONTINUE));
			}
			this.head = head;
			this.body = new Body(length);
			this.phase = Phase.BODY;
			schedule(ctx, GuardedHttpServer.this.limits.bodyTimeout());
		}

		private void body(ChannelHandlerContext ctx, HttpContent content) {
			if (content.decoderResult().isFailure()) {
				answer(ctx, Answer.plain(400, "Bad request: malformed body\n"), true);
				return;
			}
			if (!this.body.append(content.content())) {
				answer(ctx, Answer.plain(413, "Request body too large\n"), true);
				return;
			}
			if (!(content instanceof LastHttpContent)) {
				schedule(ctx, GuardedHttpServer.this.limits.bodyTimeout());
				return;
			}
			cancelDeadline();
			this.phase = Phase.SERVING;
			ctx.channel().config().setAutoRead(false);
			Head admitted = this.head;
			byte[] bytes = this.body.bytes();
			this.head = null;
			this.body = null;
			try {
				GuardedHttpServer.this.workers.execute(() -> {
					try {
						Answer answer = GuardedHttpServer.this.application.serve(admitted, bytes);
						ctx.executor().execute(() -> served(ctx, answer));
					}
					catch (InterruptedException ex) {
						Thread.currentThread().interrupt();
						ctx.close();
					}
					catch (RuntimeException ex) {
						ctx.close();
					}
				});
			}
			catch (RejectedExecutionException ex) {
				// Stopping.
				ctx.close();
			}
		}

		private void served(ChannelHandlerContext ctx, Answer answer) {
			if (!ctx.channel().isActive()) {
				return;
			}
			answer(ctx, answer, !this.keepAlive);
			if (this.phase == Phase.CLOSING) {
				return;
			}
			awaitHead(ctx);
			ctx.channel().config().setAutoRead(true);
			Object next;
			while (this.phase != Phase.SERVING && this.phase != Phase.CLOSING && (next = this.waiting.poll()) != null) {
				try {
					read(ctx, next);
				}
				finally {
					ReferenceCountUtil.release(next);
				}
			}
		}

		/** Sends an answer; the last one ({@code close}) is followed by a lingering close. */
		private void answer(ChannelHandlerContext ctx, Answer answer, boolean close) {
			FullHttpResponse response = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1,
					HttpResponseStatus.valueOf(answer.status()), Unpooled.wrappedBuffer(answer.body()));
			answer.headers().forEach(response.headers()::set);
			HttpUtil.setContentLength(response, answer.body().length);
			if (close) {
				response.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
			}
			else if (this.http10) {
				response.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.KEEP_ALIVE);
			}
			ChannelFuture written = ctx.writeAndFlush(response);
			if (!close) {
				return;
			}
			this.phase = Phase.CLOSING;
			cancelDeadline();
			this.waiting.forEach(ReferenceCountUtil::release);
			this.waiting.clear();
			ctx.channel().config().setAutoRead(true);
			written.addListener((done) -> {
				if (done.isSuccess() && ctx.channel() instanceof SocketChannel socket && socket.isActive()) {
					// Half-close: the client reads the answer, then the end; its unread bytes are dropped here.
					socket.shutdownOutput();
					schedule(ctx, GuardedHttpServer.this.limits.linger());
				}
				else {
					ctx.close();
				}
			});
		}

		private void awaitHead(ChannelHandlerContext ctx) {
			this.phase = Phase.HEAD;
			Limits limits = GuardedHttpServer.this.limits;
			schedule(ctx, this.admittedBefore ? limits.idleTimeout() : limits.headTimeout());
		}

		private void schedule(ChannelHandlerContext ctx, Duration timeout) {
			cancelDeadline();
			this.deadline = ctx.executor().schedule(() -> {
				ctx.close();
			}, timeout.toNanos(), TimeUnit.NANOSECONDS);
		}

		private void cancelDeadline() {
			if (this.deadline != null) {
				this.deadline.cancel(false);
				this.deadline = null;
			}
		}

	}

	/** An admitted request's body, gathered into one array. */
	private static final class Body {

		/** A declared length is trusted this far ahead of the bytes. */
		private static final int MAX_PREALLOCATION = 64 << 20;

		private byte[] bytes;

		private int size;

		Body(long declaredLength) {
			this.bytes = new byte[(int) Math.max(0, Math.min(declaredLength, MAX_PREALLOCATION))];
		}

		/** Appends a piece; {@code false} if the body grew too large. */
		boolean append(ByteBuf piece) {
			int length = piece.readableBytes();
			long needed = (long) this.size + length;
			if (needed > MAX_BODY_BYTES) {
				return false;
			}
			if (needed > this.bytes.length) {
				this.bytes = Arrays.copyOf(this.bytes, (int) Math.min(MAX_BODY_BYTES, Math.max(needed, 2L * this.bytes.length)));
			}
			piece.readBytes(this.bytes, this.size, length);
			this.size += length;
			return true;
		}

		byte[] bytes() {
			return (this.size == this.bytes.length) ? this.bytes : Arrays.copyOf(this.bytes, this.size);
		}

	}

}
