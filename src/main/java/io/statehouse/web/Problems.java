package io.statehouse.web;

import java.io.IOException;
import java.net.URI;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import java.util.stream.Stream;

import io.statehouse.shared.ProblemException;
import jakarta.servlet.http.HttpServletResponse;
import org.jspecify.annotations.Nullable;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.http.HttpStatusCode;
import org.springframework.http.ProblemDetail;

/** Problems with their stable type, {@code urn:statehouse:problem:<kind>}: built, or written raw. */
public final class Problems {

	/** ClickHouse does not answer: 503 with {@code Retry-After}. */
	static final String STORAGE_UNAVAILABLE = "storage-unavailable";

	private static final JsonMapper json = JsonMapper.builder().build();

	private Problems() {
	}

	static ProblemDetail of(HttpStatusCode status, String kind, @Nullable String detail) {
		ProblemDetail problem = ProblemDetail.forStatusAndDetail(status, detail);
		problem.setType(type(kind));
		return problem;
	}

	/**
	 * The kind of a problem known only by its status (Spring MVC's, Tomcat's): every other 4xx is
	 * a request this service cannot take, every other 5xx a failure.
	 */
	static String kind(int status) {
		return switch (status) {
			case 404 -> "not-found";
			case 405 -> "method-not-allowed";
			case 406 -> "not-acceptable";
			case 409 -> "conflict";
			case 413 -> "document-too-large";
			case 415 -> "unsupported-media-type";
			case 503 -> "unavailable";
			default -> (status >= 500) ? "internal-error" : "invalid-request";
		};
	}

	/**
	 * The kinds of problem this module answers with itself, knowing no feature: every kind
	 * {@link #kind(int) an error status} maps to, and {@link #STORAGE_UNAVAILABLE}.
	 */
	static Set<String> kinds() {
		return Stream.concat(IntStream.rangeClosed(400, 599).mapToObj(Problems::kind), Stream.of(STORAGE_UNAVAILABLE))
			.collect(Collectors.toSet());
	}

	static URI type(String kind) {
		return URI.create(ProblemException.TYPE_PREFIX + kind);
	}

	/** Writes a problem where Spring MVC is not involved yet (a filter, Tomcat's error report). */
	public static void write(HttpServletResponse response, int status, String title, String kind, String detail)
			throws IOException {
		Map<String, Object> problem = new LinkedHashMap<>();
		problem.put("type", type(kind).toString());
		problem.put("title", title);
		problem.put("status", status);
		problem.put("detail", detail);
		byte[] body = json.writeValueAsBytes(problem);
		response.setStatus(status);
		response.setContentType("application/problem+json");
		response.setContentLength(body.length);
		response.getOutputStream().write(body);
	}

}
