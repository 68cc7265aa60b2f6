package io.statehouse.security;

import io.statehouse.shared.Caller;

import org.springframework.core.MethodParameter;
import org.springframework.security.core.context.SecurityContextHolder;
import org.springframework.web.bind.support.WebDataBinderFactory;
import org.springframework.web.context.request.NativeWebRequest;
import org.springframework.web.method.support.HandlerMethodArgumentResolver;
import org.springframework.web.method.support.ModelAndViewContainer;

/** Gives a controller method the {@link Caller} of its request. */
class CallerArgumentResolver implements HandlerMethodArgumentResolver {

	@Override
	public boolean supportsParameter(MethodParameter parameter) {
		return parameter.getParameterType() == Caller.class;
	}

	@Override
	public Caller resolveArgument(MethodParameter parameter, ModelAndViewContainer mavContainer,
			NativeWebRequest webRequest, WebDataBinderFactory binderFactory) {
		Caller caller = ConfiguredTokens.caller(SecurityContextHolder.getContext().getAuthentication());
		if (caller == null) {
			// Only a path security left open could get here: refuse rather than guess.
			throw new IllegalStateException("A request reached " + parameter.getExecutable() + " without a caller");
		}
		return caller;
	}

}
