package io.statehouse.state;

import java.util.List;

import io.statehouse.lock.LockToken;
import org.jspecify.annotations.Nullable;

import org.springframework.core.MethodParameter;
import org.springframework.http.HttpHeaders;
import org.springframework.stereotype.Component;
import org.springframework.web.bind.support.WebDataBinderFactory;
import org.springframework.web.context.request.NativeWebRequest;
import org.springframework.web.method.support.HandlerMethodArgumentResolver;
import org.springframework.web.method.support.ModelAndViewContainer;
import org.springframework.web.servlet.config.annotation.WebMvcConfigurer;

/**
 * Gives a write method its {@link WriteHeaders}, each header read as
 * {@code @RequestHeader(required = false) String} reads it: absent is {@code null}, a header
 * sent several times is its values joined by commas.
 */
@Component
class WriteHeadersArgumentResolver implements HandlerMethodArgumentResolver, WebMvcConfigurer {

	@Override
	public void addArgumentResolvers(List<HandlerMethodArgumentResolver> resolvers) {
		resolvers.add(this);
	}

	@Override
	public boolean supportsParameter(MethodParameter parameter) {
		return parameter.getParameterType() == WriteHeaders.class;
	}

	@Override
	public WriteHeaders resolveArgument(MethodParameter parameter, @Nullable ModelAndViewContainer mavContainer,
			NativeWebRequest webRequest, @Nullable WebDataBinderFactory binderFactory) {
		boolean ifNoneMatch = !parameter.hasParameterAnnotation(WriteHeaders.WithoutIfNoneMatch.class);
		return new WriteHeaders(header(webRequest, HttpHeaders.IF_MATCH),
				ifNoneMatch ? header(webRequest, HttpHeaders.IF_NONE_MATCH) : null,
				header(webRequest, WriteHeaders.IDEMPOTENCY_KEY), header(webRequest, LockToken.HEADER));
	}

	private static @Nullable String header(NativeWebRequest request, String name) {
		String[] values = request.getHeaderValues(name);
		return (values != null) ? String.join(",", values) : null;
	}

}
