package io.statehouse.web;

import io.statehouse.shared.InvalidRequestException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import org.springframework.core.MethodParameter;
import org.springframework.stereotype.Component;
import org.springframework.util.StringUtils;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.method.HandlerMethod;
import org.springframework.web.servlet.HandlerInterceptor;
import org.springframework.web.servlet.config.annotation.InterceptorRegistry;
import org.springframework.web.servlet.config.annotation.WebMvcConfigurer;

/**
 * Refuses an empty value of a query parameter that is not text ({@code ?version=},
 * {@code ?limit=}, {@code ?force=}): no number or boolean, so a 400, where Spring MVC would read
 * it as absent (the newest version, the default page size, no force).
 */
@Component
class EmptyParameterInterceptor implements HandlerInterceptor, WebMvcConfigurer {

	@Override
	public void addInterceptors(InterceptorRegistry registry) {
		registry.addInterceptor(this);
	}

	@Override
	public boolean preHandle(HttpServletRequest request, HttpServletResponse response, Object handler) {
		if (handler instanceof HandlerMethod method) {
			for (MethodParameter parameter : method.getMethodParameters()) {
				RequestParam param = parameter.getParameterAnnotation(RequestParam.class);
				if (param == null || CharSequence.class.isAssignableFrom(parameter.getNestedParameterType())) {
					continue;
				}
				String name = StringUtils.hasText(param.name()) ? param.name() : parameter.getParameterName();
				String[] values = (name != null) ? request.getParameterValues(name) : null;
				if (values != null) {
					for (String value : values) {
						if (value.isEmpty()) {
							throw new InvalidRequestException(name + " must not be empty.");
						}
					}
				}
			}
		}
		return true;
	}

}
