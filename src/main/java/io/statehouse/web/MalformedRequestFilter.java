package io.statehouse.web;

import java.io.IOException;
import java.util.Locale;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.actuate.endpoint.web.PathMappedEndpoints;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.http.InvalidMediaTypeException;
import org.springframework.http.MediaType;
import org.springframework.stereotype.Component;
import org.springframework.web.filter.OncePerRequestFilter;

/**
 * Refuses requests that the servlet container and Spring MVC would read in a way their sender did
 * not mean, before anything reads them:
 * <ul>
 * <li>path parameters ({@code /states/a;b}): both would strip {@code ;b} and act on
 * {@code /states/a}, so a write meant for one id would land on another. An id that contains
 * {@code ;} travels percent-encoded ({@code %3B}), as every reserved character;</li>
 * <li>an encoded {@code /} or {@code \} under an Actuator endpoint ({@code /actuator/health/x%2Fy}):
 * they reach the application for the sake of ids, but no endpoint has a name with one, and the
 * health endpoint fails on them instead of answering 404;</li>
 * <li>a {@code Content-Type} that is no concrete media type ({@code application/*}, or not one
 * at all), which Spring MVC cannot even represent.</li>
 * </ul>
 */
@Component
@Order(Ordered.HIGHEST_PRECEDENCE + 1)
class MalformedRequestFilter extends OncePerRequestFilter {

	private final ObjectProvider<PathMappedEndpoints> actuatorEndpoints;

	MalformedRequestFilter(ObjectProvider<PathMappedEndpoints> actuatorEndpoints) {
		this.actuatorEndpoints = actuatorEndpoints;
	}

	@Override
	protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
			throws ServletException, IOException {
		if (request.getRequestURI().indexOf(';') >= 0) {
			Problems.write(response, 400, "Bad Request", "invalid-request",
					"Path parameters (';') are not allowed: percent-encode a ';' in an id as %3B.");
			return;
		}
		if (hasEncodedSlash(request.getRequestURI()) && isUnderActuatorEndpoint(request)) {
			Problems.write(response, 404, "Not Found", "not-found",
					"No Actuator endpoint has a path with an encoded '/' or '\\' in it.");
			return;
		}
		String contentType = request.getContentType();
		if (contentType != null && !isConcrete(contentType)) {
			Problems.write(response, 415, "Unsupported Media Type", "unsupported-media-type",
					"Content-Type '" + contentType.strip() + "' is not a media type this service reads.");
			return;
		}
		chain.doFilter(request, response);
	}

	private static boolean hasEncodedSlash(String uri) {
		String upper = uri.toUpperCase(Locale.ROOT);
		return upper.contains("%2F") || upper.contains("%5C");
	}

	private boolean isUnderActuatorEndpoint(HttpServletRequest request) {
		PathMappedEndpoints endpoints = this.actuatorEndpoints.getIfAvailable();
		if (endpoints == null) {
			return false;
		}
		String path = request.getRequestURI().substring(request.getContextPath().length());
		return endpoints.getAllPaths().stream().anyMatch((endpoint) -> path.startsWith(endpoint + "/"));
	}

	private static boolean isConcrete(String contentType) {
		try {
			return MediaType.parseMediaType(contentType).isConcrete();
		}
		catch (InvalidMediaTypeException ex) {
			return false;
		}
	}

}
