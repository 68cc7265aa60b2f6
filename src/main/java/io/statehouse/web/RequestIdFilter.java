package io.statehouse.web;

import java.io.IOException;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.jspecify.annotations.Nullable;
import org.slf4j.MDC;

import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.stereotype.Component;
import org.springframework.web.filter.OncePerRequestFilter;

/**
 * Gives every request an id, on every log line written while it is served ({@code requestId} in
 * the MDC: the console pattern shows it, JSON logs carry it) and in the response's
 * {@code X-Request-Id}: the caller's own {@code X-Request-Id}, else the trace id of a W3C
 * {@code traceparent}, else a new one. A caller's id is taken only if it is short and plain, so
 * that nothing a caller sends can forge a log line.
 */
@Component
@Order(Ordered.HIGHEST_PRECEDENCE)
class RequestIdFilter extends OncePerRequestFilter {

	static final String HEADER = "X-Request-Id";

	static final String MDC_KEY = "requestId";

	private static final Pattern PLAIN = Pattern.compile("[A-Za-z0-9._:@/+=-]{1,128}");

	private static final Pattern TRACEPARENT = Pattern.compile("[0-9a-f]{2}-([0-9a-f]{32})-[0-9a-f]{16}-[0-9a-f]{2}");

	/** The id of a request that an asynchronous dispatch (an answer given after waiting) continues. */
	private static final String ATTRIBUTE = RequestIdFilter.class.getName() + ".id";

	@Override
	protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
			throws ServletException, IOException {
		String id = (request.getAttribute(ATTRIBUTE) instanceof String known) ? known
				: requestId(request.getHeader(HEADER), request.getHeader("traceparent"));
		request.setAttribute(ATTRIBUTE, id);
		response.setHeader(HEADER, id);
		MDC.put(MDC_KEY, id);
		try {
			chain.doFilter(request, response);
		}
		finally {
			MDC.remove(MDC_KEY);
		}
	}

	/** The dispatch that writes an asynchronous answer logs too: with the request's id. */
	@Override
	protected boolean shouldNotFilterAsyncDispatch() {
		return false;
	}

	static String requestId(@Nullable String given, @Nullable String traceparent) {
		if (given != null && PLAIN.matcher(given).matches()) {
			return given;
		}
		if (traceparent != null) {
			Matcher trace = TRACEPARENT.matcher(traceparent.strip());
			if (trace.matches() && !trace.group(1).equals("0".repeat(32))) {
				return trace.group(1);
			}
		}
		return UUID.randomUUID().toString();
	}

}
