package io.statehouse.support;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/** A plain HTTP client for one Statehouse instance, as a pipeline worker would use it. */
public final class StatehouseClient {

	private static final JsonMapper JSON = JsonMapper.builder().build();

	private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

	private final String baseUrl;

	public StatehouseClient(String baseUrl) {
		this.baseUrl = baseUrl;
	}

	public static StatehouseClient forPort(int port) {
		return new StatehouseClient("http://127.0.0.1:" + port);
	}

	/** The port the instance listens on. */
	public int port() {
		return java.net.URI.create(this.baseUrl).getPort();
	}

	/** An id as one path segment: every character but the unreserved ones percent-encoded (UTF-8). */
	public static String segment(String id) {
		return java.net.URLEncoder.encode(id, java.nio.charset.StandardCharsets.UTF_8)
			.replace("+", "%20")
			.replace("*", "%2A");
	}

	public Response get(String path, String... headers) {
		return send(request(path, headers).GET());
	}

	public Response put(String path, String json, String... headers) {
		return send(request(path, headers).header("Content-Type", "application/json")
			.PUT(HttpRequest.BodyPublishers.ofString(json)));
	}

	public Response patch(String path, String mergePatch, String... headers) {
		return send(request(path, headers).header("Content-Type", "application/merge-patch+json")
			.method("PATCH", HttpRequest.BodyPublishers.ofString(mergePatch)));
	}

	public Response delete(String path, String... headers) {
		return send(request(path, headers).DELETE());
	}

	/** The versions {@code GET /states/{id}/versions} lists, oldest first. */
	public List<Long> versions(String id) {
		return get("/states/" + id + "/versions").json().valueStream().map((v) -> v.get("version").asLong()).toList();
	}

	/**
	 * The sum of the samples in {@code /actuator/prometheus} whose line starts with
	 * {@code sample} (a metric's name, and labels as far as given).
	 */
	public double metric(String sample) {
		return get("/actuator/prometheus").body()
			.lines()
			.filter((line) -> line.startsWith(sample))
			.mapToDouble((line) -> Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1)))
			.sum();
	}

	/** {@code POST /locks/{id}}: acquires a lease. */
	public Response acquire(String id, String owner, int ttlSeconds, int waitSeconds) {
		return send("POST", "/locks/" + id, "application/json", ("{\"owner\":\"" + owner + "\",\"ttlSeconds\":"
				+ ttlSeconds + ",\"waitSeconds\":" + waitSeconds + "}").getBytes());
	}

	/** {@code POST /locks/{id}} without holding a thread while it is answered: many waiters from few threads. */
	public CompletableFuture<Response> acquireAsync(String id, String owner, int ttlSeconds, int waitSeconds) {
		HttpRequest request = request("/locks/" + id).header("Content-Type", "application/json")
			.POST(HttpRequest.BodyPublishers.ofString("{\"owner\":\"" + owner + "\",\"ttlSeconds\":" + ttlSeconds
					+ ",\"waitSeconds\":" + waitSeconds + "}"))
			.build();
		return this.http.sendAsync(request, HttpResponse.BodyHandlers.ofString())
			.thenApply((response) -> new Response(response.statusCode(), response));
	}

	/**
	 * Acquires a lease as a pipeline worker does: waits for it a while, and asks again while
	 * another holds it (a wait of 20 s can end with others still ahead), or after the
	 * {@code Retry-After} of a 503 (a claim that took longer than the short test timings allow).
	 * @return the first answer that is neither 423 (held) nor 503
	 */
	public Response acquireWaiting(String id, String owner, int ttlSeconds) {
		while (true) {
			Response answer = acquire(id, owner, ttlSeconds, 20);
			if (answer.status() == 503) {
				sleep(Duration.ofSeconds(Long.parseLong(answer.header("Retry-After").orElseThrow())));
			}
			else if (answer.status() != 423) {
				return answer;
			}
		}
	}

	private static void sleep(Duration pause) {
		try {
			Thread.sleep(pause.toMillis());
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	/**
	 * Opens {@code GET path} as a stream of Server-Sent Events, read on a thread of its own.
	 * @throws EventStream.Refused if it is not answered 200
	 */
	public EventStream stream(String path, String... headers) {
		HttpRequest request = HttpRequest.newBuilder(URI.create(this.baseUrl + path))
			.version(HttpClient.Version.HTTP_1_1)
			.headers(headers.length == 0 ? new String[] { "Accept", "text/event-stream" } : headers)
			.GET()
			.build();
		HttpResponse<java.util.stream.Stream<String>> response;
		try {
			response = this.http.sendAsync(request, HttpResponse.BodyHandlers.ofLines()).get(30, TimeUnit.SECONDS);
		}
		catch (TimeoutException ex) {
			throw new AssertionError("No answer to GET " + path + " within 30 s", ex);
		}
		catch (ExecutionException ex) {
			throw new UncheckedIOException(new IOException(ex.getCause()));
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
		if (response.statusCode() != 200) {
			throw new EventStream.Refused(response.statusCode(), response.headers(),
					String.join("\n", response.body().toList()));
		}
		return new EventStream(response.body());
	}

	/** Any request, for hostile input: raw method, content type and body bytes. */
	public Response send(String method, String path, String contentType, byte[] body, String... headers) {
		HttpRequest.Builder request = request(path, headers).method(method, HttpRequest.BodyPublishers.ofByteArray(body));
		if (contentType != null) {
			request.header("Content-Type", contentType);
		}
		return send(request);
	}

	private HttpRequest.Builder request(String path, String... headers) {
		HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(this.baseUrl + path))
			.timeout(Duration.ofSeconds(60));
		for (int i = 0; i < headers.length; i += 2) {
			request.header(headers[i], headers[i + 1]);
		}
		return request;
	}

	private Response send(HttpRequest.Builder request) {
		try {
			HttpResponse<String> response = this.http.send(request.build(), HttpResponse.BodyHandlers.ofString());
			return new Response(response.statusCode(), response);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	/** A response: status, headers, body. */
	public record Response(int status, HttpResponse<String> raw) {

		public String body() {
			return this.raw.body();
		}

		public JsonNode json() {
			return JSON.readTree(this.raw.body());
		}

		public Optional<String> header(String name) {
			return this.raw.headers().firstValue(name);
		}

		/** The token of a granted lease. */
		public String token() {
			if (this.status != 201) {
				throw new AssertionError("Not granted: " + this);
			}
			return json().get("token").asString();
		}

		/** The version in the {@code ETag}. */
		public long version() {
			String etag = header("ETag").orElseThrow(() -> new AssertionError("No ETag in " + this));
			return Long.parseLong(etag.replace("\"", ""));
		}

		@Override
		public String toString() {
			return this.status + " " + this.raw.headers().map() + " " + this.raw.body();
		}

	}

}
