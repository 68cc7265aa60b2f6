package io.statehouse.web;

import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.Map;

import jakarta.servlet.http.HttpServletResponse;
import tools.jackson.databind.json.JsonMapper;

/** Writes a problem ({@code application/problem+json}) where Spring MVC is not involved yet. */
final class ProblemDetails {

	private static final JsonMapper json = JsonMapper.builder().build();

	private ProblemDetails() {
	}

	static void write(HttpServletResponse response, int status, String title, String kind, String detail)
			throws IOException {
		Map<String, Object> problem = new LinkedHashMap<>();
		problem.put("type", ApiExceptionHandler.TYPE_PREFIX + kind);
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
