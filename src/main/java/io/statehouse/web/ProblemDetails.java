package io.statehouse.web;

import java.io.IOException;
import java.nio.charset.StandardCharsets;

import jakarta.servlet.http.HttpServletResponse;

/** Writes a problem ({@code application/problem+json}) where Spring MVC is not involved yet. */
final class ProblemDetails {

	private ProblemDetails() {
	}

	static void write(HttpServletResponse response, int status, String title, String kind, String detail)
			throws IOException {
		byte[] body = ("{\"type\":\"" + ApiExceptionHandler.TYPE_PREFIX + kind + "\",\"title\":\"" + title
				+ "\",\"status\":" + status + ",\"detail\":\"" + detail + "\"}")
			.getBytes(StandardCharsets.UTF_8);
		response.setStatus(status);
		response.setContentType("application/problem+json");
		response.setContentLength(body.length);
		response.getOutputStream().write(body);
	}

}
