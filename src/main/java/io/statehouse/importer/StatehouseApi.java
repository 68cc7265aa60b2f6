package io.statehouse.importer;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;

import org.jspecify.annotations.Nullable;
import tools.jackson.core.JacksonException;
import tools.jackson.core.JsonParser;
import tools.jackson.core.JsonToken;
import tools.jackson.databind.DeserializationFeature;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectReader;
import tools.jackson.databind.json.JsonMapper;

/**
 * Statehouse's public HTTP API, as much of it as an import needs: read a state, read when its
 * version (or the deletion of a state that is gone) was written, create it, replace a version of
 * it. Ids travel as one path segment with
 * every byte but the unreserved characters percent-encoded.
 */
final class StatehouseApi {

	private static final Duration TIMEOUT = Duration.ofSeconds(60);

	/** A part of an import is written before it is answered: thousands of writes. */
	private static final Duration IMPORT_TIMEOUT = Duration.ofMinutes(10);

	private final HttpClient http = HttpClient.newBuilder()
		.version(HttpClient.Version.HTTP_1_1)
		.connectTimeout(Duration.ofSeconds(10))
		.build();

	private final String baseUrl;

	private final @Nullable String token;

	private final JsonMapper json;

	/**
	 * @param baseUrl where Statehouse answers ({@code http://localhost:8080})
	 * @param token a bearer token with the {@code read} and {@code write} scopes; {@code null} for a
	 * service that runs open
	 * @param json reads documents as Statehouse does (numbers exactly)
	 */
	StatehouseApi(URI baseUrl, @Nullable String token, JsonMapper json) {
		String url = baseUrl.toString();
		this.baseUrl = url.endsWith("/") ? url.substring(0, url.length() - 1) : url;
		this.token = token;
		this.json = json;
	}

	/**
	 * Checks that the service answers and takes the token: a listing of one state.
	 * @throws Refusal when it does not
	 */
	void check() throws IOException, InterruptedException, Refusal {
		send(request("/states?limit=1").GET(), 200);
	}

	/**
	 * The newest version of a state.
	 * @return {@code null} if there is none (never written, or deleted)
	 */
	@Nullable Current read(String id) throws IOException, InterruptedException, Refusal {
		HttpResponse<String> response = send(request(path(id)).GET(), 200, 404);
		if (response.statusCode() == 404) {
			return null;
		}
		long version = version(response);
		return new Current(version, this.json.readTree(response.body()));
	}

	/**
	 * When a version of a state was written, from the listing (to the millisecond; a read's
	 * {@code Last-Modified} has whole seconds).
	 * @return {@code null} when the state's newest version is no longer that one
	 */
	@Nullable Instant updatedAt(String id, long version) throws IOException, InterruptedException, Refusal {
		// In id order, the id itself comes before every longer id it is a prefix of.
		HttpResponse<String> response = send(request("/states?limit=1&prefix=" + encode(id)).GET(), 200);
		JsonNode items = this.json.readTree(response.body()).path("items");
		if (items.isEmpty() || !items.get(0).path("id").asString("").equals(id)
				|| items.get(0).path("version").asLong(-1) != version) {
			return null;
		}
		return Instant.parse(items.get(0).path("updatedAt").asString());
	}

	/**
	 * When the newest version an id's history retains was written: the deletion of a state that
	 * is gone, or a lock's grant on it. Read as a stream: the history may be long.
	 * @return {@code null} if no history is retained
	 */
	@Nullable Instant lastChange(String id) throws IOException, InterruptedException, Refusal {
		HttpResponse<InputStream> response = this.http.send(request(path(id) + "/versions").GET().build(),
				HttpResponse.BodyHandlers.ofInputStream());
		try (InputStream body = response.body()) {
			if (response.statusCode() == 404) {
				return null;
			}
			if (response.statusCode() != 200) {
				throw new Refusal(response.statusCode(), detail(new String(body.readAllBytes(), StandardCharsets.UTF_8)));
			}
			JsonNode last = null;
			ObjectReader entry = this.json.readerFor(JsonNode.class)
				.without(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);
			try (JsonParser parser = this.json.createParser(body)) {
				if (parser.nextToken() == JsonToken.START_ARRAY) {
					while (parser.nextToken() == JsonToken.START_OBJECT) {
						last = entry.readValue(parser);
					}
				}
			}
			return (last != null) ? Instant.parse(last.path("updatedAt").asString()) : null;
		}
	}

	/** Creates a state that must not exist yet ({@code If-None-Match: *}). */
	void create(String id, JsonNode document) throws IOException, InterruptedException, Refusal {
		send(request(path(id)).header("If-None-Match", "*")
			.header("Content-Type", "application/json")
			.PUT(HttpRequest.BodyPublishers.ofByteArray(this.json.writeValueAsBytes(document))), 201);
	}

	/** Replaces a version of a state, unless another was written meanwhile ({@code If-Match}). */
	void replace(String id, long version, JsonNode document) throws IOException, InterruptedException, Refusal {
		send(request(path(id)).header("If-Match", "\"" + version + "\"")
			.header("Content-Type", "application/json")
			.PUT(HttpRequest.BodyPublishers.ofByteArray(this.json.writeValueAsBytes(document))), 200);
	}

	/**
	 * Streams an export ({@code GET /states:export}) into {@code out}.
	 * @param query the export's parameters, encoded
	 */
	void export(String query, OutputStream out) throws IOException, InterruptedException, Refusal {
		HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(this.baseUrl + "/states:export?" + query))
			.header("Accept", "application/x-ndjson");
		if (this.token != null) {
			request.header("Authorization", "Bearer " + this.token);
		}
		HttpResponse<InputStream> response = this.http.send(request.GET().build(),
				HttpResponse.BodyHandlers.ofInputStream());
		try (InputStream body = response.body()) {
			if (response.statusCode() != 200) {
				throw new Refusal(response.statusCode(), detail(new String(body.readAllBytes(), StandardCharsets.UTF_8)));
			}
			body.transferTo(out);
		}
	}

	/**
	 * Imports part of an export ({@code POST /states:import}).
	 * @param query the import's parameters, encoded
	 * @return its report
	 */
	JsonNode importPart(byte[] part, String query) throws IOException, InterruptedException, Refusal {
		HttpResponse<String> response = send(request("/states:import?" + query).timeout(IMPORT_TIMEOUT)
			.header("Content-Type", "application/x-ndjson")
			.POST(HttpRequest.BodyPublishers.ofByteArray(part)), 200);
		return this.json.readTree(response.body());
	}

	private HttpRequest.Builder request(String path) {
		HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(this.baseUrl + path))
			.timeout(TIMEOUT)
			.header("Accept", "application/json");
		if (this.token != null) {
			request.header("Authorization", "Bearer " + this.token);
		}
		return request;
	}

	private HttpResponse<String> send(HttpRequest.Builder request, int... expected)
			throws IOException, InterruptedException, Refusal {
		HttpResponse<String> response = this.http.send(request.build(),
				HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
		for (int status : expected) {
			if (response.statusCode() == status) {
				return response;
			}
		}
		throw new Refusal(response.statusCode(), detail(response.body()));
	}

	/** What a problem says (its detail, else its title), or the start of an answer that is not one. */
	private String detail(String body) {
		try {
			JsonNode problem = this.json.readTree(body);
			String detail = problem.path("detail").asString("");
			return detail.isEmpty() ? problem.path("title").asString("") : detail;
		}
		catch (JacksonException ex) {
			String text = body.strip();
			return (text.length() > 200) ? text.substring(0, 200) + "..." : text;
		}
	}

	private static long version(HttpResponse<String> response) throws Refusal {
		String etag = response.headers().firstValue("ETag").orElse("");
		try {
			return Long.parseLong(etag.replace("\"", ""));
		}
		catch (NumberFormatException ex) {
			throw new Refusal(response.statusCode(), "The answer has no version (ETag: " + etag + ").");
		}
	}

	private static String path(String id) {
		return "/states/" + encode(id);
	}

	/** Every byte of the UTF-8 text but the unreserved characters of RFC 3986, percent-encoded. */
	static String encode(String text) {
		StringBuilder encoded = new StringBuilder(text.length() * 3);
		for (byte b : text.getBytes(StandardCharsets.UTF_8)) {
			int c = b & 0xff;
			if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.'
					|| c == '_' || c == '~') {
				encoded.append((char) c);
			}
			else {
				encoded.append('%').append(Character.toUpperCase(Character.forDigit(c >> 4, 16)))
					.append(Character.toUpperCase(Character.forDigit(c & 0xf, 16)));
			}
		}
		return encoded.toString();
	}

	/**
	 * The newest version of a state.
	 *
	 * @param version its version
	 * @param document its document
	 */
	record Current(long version, JsonNode document) {
	}

	/** An answer other than the one asked for. */
	static final class Refusal extends Exception {

		private final int status;

		Refusal(int status, String detail) {
			super(detail, null, false, false);
			this.status = status;
		}

		/** The HTTP status. */
		int status() {
			return this.status;
		}

	}

}
