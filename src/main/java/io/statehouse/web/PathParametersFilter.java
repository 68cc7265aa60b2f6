package io.statehouse.web;

import java.io.IOException;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.stereotype.Component;
import org.springframework.web.filter.OncePerRequestFilter;

/**
 * Refuses path parameters ({@code /states/a;b}). The servlet container and Spring MVC would
 * strip {@code ;b} and act on {@code /states/a}: a write meant for one id would land on another.
 * An id that contains {@code ;} travels percent-encoded ({@code %3B}), as every reserved character.
 */
@Component
@Order(Ordered.HIGHEST_PRECEDENCE + 1)
class PathParametersFilter extends OncePerRequestFilter {

	@Override
	protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
			throws ServletException, IOException {
		if (request.getRequestURI().indexOf(';') >= 0) {
			Problems.write(response, 400, "Bad Request", "invalid-request",
					"Path parameters (';') are not allowed: percent-encode a ';' in an id as %3B.");
			return;
		}
		chain.doFilter(request, response);
	}

}
