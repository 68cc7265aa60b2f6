package io.statehouse.security;

import java.util.Arrays;
import java.util.List;

import io.statehouse.shared.Caller;
import io.statehouse.shared.Ids;
import io.statehouse.web.Problems;
import jakarta.servlet.http.HttpServletRequest;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.HttpMethod;
import org.springframework.security.authentication.AuthenticationManager;
import org.springframework.security.authentication.UsernamePasswordAuthenticationToken;
import org.springframework.security.authorization.AuthorizationDecision;
import org.springframework.security.authorization.AuthorizationManager;
import org.springframework.security.authorization.AuthorizationManagers;
import org.springframework.security.authorization.AuthorityAuthorizationManager;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.config.annotation.web.configurers.AbstractHttpConfigurer;
import org.springframework.security.config.annotation.web.configurers.AuthorizeHttpRequestsConfigurer;
import org.springframework.security.config.http.SessionCreationPolicy;
import org.springframework.security.core.Authentication;
import org.springframework.security.oauth2.core.OAuth2AuthenticatedPrincipal;
import org.springframework.security.oauth2.core.OAuth2AuthenticationException;
import org.springframework.security.oauth2.server.resource.BearerTokenErrors;
import org.springframework.security.oauth2.server.resource.web.DefaultBearerTokenResolver;
import org.springframework.security.oauth2.server.resource.web.BearerTokenAuthenticationEntryPoint;
import org.springframework.security.oauth2.server.resource.web.access.BearerTokenAccessDeniedHandler;
import org.springframework.security.web.AuthenticationEntryPoint;
import org.springframework.security.web.SecurityFilterChain;
import org.springframework.security.web.access.AccessDeniedHandler;
import org.springframework.security.web.access.intercept.AuthorizationFilter;
import org.springframework.security.web.access.intercept.RequestAuthorizationContext;
import org.springframework.security.web.authentication.AuthenticationFilter;
import org.springframework.security.web.firewall.HttpFirewall;
import org.springframework.security.web.firewall.RequestRejectedHandler;
import org.springframework.security.web.firewall.StrictHttpFirewall;
import org.springframework.security.web.util.matcher.RequestMatcher;
import org.springframework.web.method.support.HandlerMethodArgumentResolver;
import org.springframework.web.servlet.config.annotation.WebMvcConfigurer;

import static org.springframework.security.web.servlet.util.matcher.PathPatternRequestMatcher.pathPattern;

/**
 * Who may call what. Each request to a state or a lock needs its scope and an id inside the
 * token's globs; listings and glob deletes are narrowed to those ids by the features themselves
 * ({@link Caller}). Probes, the API description and Swagger UI stay open. Refusals are problems:
 * 401 ({@code urn:statehouse:problem:unauthenticated}, with {@code WWW-Authenticate: Bearer}) and
 * 403 ({@code urn:statehouse:problem:forbidden}), decided before the request reaches a
 * controller, so a refused request changes nothing.
 */
@Configuration(proxyBeanMethods = false)
@EnableConfigurationProperties(SecurityProperties.class)
class SecurityConfiguration implements WebMvcConfigurer {

	private static final Log logger = LogFactory.getLog(SecurityConfiguration.class);

	private static final DefaultBearerTokenResolver BEARER_TOKENS = new DefaultBearerTokenResolver();

	private static final String[] OPEN_PATHS = { "/actuator/health", "/actuator/health/**", "/v3/api-docs",
			"/v3/api-docs.yaml", "/v3/api-docs/**", "/swagger-ui.html", "/swagger-ui/**" };

	@Bean
	SecurityFilterChain securityFilterChain(HttpSecurity http, SecurityProperties properties) throws Exception {
		http.csrf(AbstractHttpConfigurer::disable)
			.sessionManagement((sessions) -> sessions.sessionCreationPolicy(SessionCreationPolicy.STATELESS))
			.requestCache(AbstractHttpConfigurer::disable)
			.exceptionHandling((exceptions) -> exceptions.authenticationEntryPoint(unauthenticated())
				.accessDeniedHandler(forbidden()));
		if (properties.isOpen()) {
			logger.warn("No token is configured (statehouse.security.tokens): the service runs open, and anyone "
					+ "who can reach it can read, change and delete every state and lock");
			return http.addFilterBefore(openAccess(), AuthorizationFilter.class)
				.authorizeHttpRequests((requests) -> requests.anyRequest().permitAll())
				.build();
		}
		return http
			.oauth2ResourceServer((server) -> server
				.opaqueToken((opaque) -> opaque.introspector(new ConfiguredTokens(properties.tokens())))
				.bearerTokenResolver(SecurityConfiguration::bearerToken)
				.authenticationEntryPoint(unauthenticated())
				.accessDeniedHandler(forbidden())
				// RFC 9728's /.well-known/oauth-protected-resource, which WWW-Authenticate points at.
				.protectedResourceMetadata((metadata) -> metadata.protectedResourceMetadataCustomizer(
						(resource) -> resource.resourceName("Statehouse")
							.scopes((scopes) -> Arrays.stream(Scope.values()).map(Scope::scopeName).forEach(scopes::add))
							.tlsClientCertificateBoundAccessTokens(false))))
			.authorizeHttpRequests(SecurityConfiguration::rules)
			.build();
	}

	/**
	 * An id is any text, so a path segment may carry any character percent-encoded ({@code %2F},
	 * {@code %25}, {@code %3B}, {@code %5C}, {@code %2F%2F}): Spring MVC and these rules both decode
	 * it per segment, to the same id. Refused still: what the servlet container would read
	 * differently from Spring (a raw {@code ;} — MalformedRequestFilter —, an encoded {@code .}, a
	 * dot segment), and control characters.
	 */
	@Bean
	HttpFirewall httpFirewall() {
		StrictHttpFirewall firewall = new StrictHttpFirewall();
		firewall.setAllowUrlEncodedSlash(true);
		firewall.setAllowUrlEncodedDoubleSlash(true);
		firewall.setAllowUrlEncodedPercent(true);
		firewall.setAllowBackSlash(true);
		firewall.setAllowSemicolon(true);
		// A method the API does not serve (QUERY, PROPFIND, ...) is not malformed input: Spring
		// MVC answers it 405 with the resource's Allow. Safe here because every handler is mapped
		// to its own methods and a method no rule names falls to anyRequest().authenticated().
		firewall.setUnsafeAllowAnyHttpMethod(true);
		return firewall;
	}

	/** Requests the firewall refuses before anything reads them: a problem like every other bad input. */
	@Bean
	RequestRejectedHandler requestRejectedHandler() {
		return (request, response, ex) -> Problems.write(response, 400, "Bad Request", "invalid-request",
				"The request's path or headers hold characters no request to this service has (such as a control "
						+ "character, an encoded '.' or a '..' segment).");
	}

	@Override
	public void addArgumentResolvers(List<HandlerMethodArgumentResolver> resolvers) {
		resolvers.add(new CallerArgumentResolver());
	}

	private static void rules(
			AuthorizeHttpRequestsConfigurer<HttpSecurity>.AuthorizationManagerRequestMatcherRegistry requests) {
		for (HttpMethod read : new HttpMethod[] { HttpMethod.GET, HttpMethod.HEAD }) {
			requests.requestMatchers(pathPattern(read, "/states"), pathPattern(read, "/locks"), pathPattern(read, "/changes"))
				.access(scope(Scope.READ))
				.requestMatchers(pathPattern(read, "/states/{id}"), pathPattern(read, "/states/{id}/versions"),
						pathPattern(read, "/locks/{id}"))
				.access(onId(Scope.READ));
		}
		requests.requestMatchers(OPEN_PATHS)
			.permitAll()
			.requestMatchers("/actuator/prometheus", "/actuator/metrics", "/actuator/metrics/**")
			.access(scope(Scope.METRICS))
			.requestMatchers(pathPattern(HttpMethod.DELETE, "/states"), pathPattern(HttpMethod.POST, "/states:restore"),
					pathPattern(HttpMethod.GET, "/states:export"), pathPattern(HttpMethod.HEAD, "/states:export"),
					pathPattern(HttpMethod.POST, "/states:import"))
			.access(scope(Scope.ADMIN))
			.requestMatchers(forced(pathPattern(HttpMethod.DELETE, "/locks/{id}")))
			.access(onId(Scope.ADMIN))
			// A restore answers an earlier document: it writes, and reads history.
			.requestMatchers(pathPattern(HttpMethod.POST, "/states/{id}/restore"))
			.access(AuthorizationManagers.allOf(onId(Scope.WRITE), scope(Scope.READ)))
			.requestMatchers(pathPattern(HttpMethod.PUT, "/states/{id}"), pathPattern(HttpMethod.PATCH, "/states/{id}"),
					pathPattern(HttpMethod.DELETE, "/states/{id}"), pathPattern(HttpMethod.POST, "/locks/{id}"),
					pathPattern(HttpMethod.PUT, "/locks/{id}"), pathPattern(HttpMethod.DELETE, "/locks/{id}"))
			.access(onId(Scope.WRITE))
			.anyRequest()
			.authenticated();
	}

	private static AuthorizationManager<RequestAuthorizationContext> scope(Scope scope) {
		return AuthorityAuthorizationManager.hasAuthority(scope.authority());
	}

	/**
	 * The scope, on an id inside the token's globs. Text that is not an id names nothing a token
	 * could be refused: it passes here and is refused as invalid (400) before anything is read.
	 */
	private static AuthorizationManager<RequestAuthorizationContext> onId(Scope scope) {
		AuthorizationManager<RequestAuthorizationContext> inScope = (authentication, context) -> {
			Caller caller = ConfiguredTokens.caller(authentication.get());
			String id = context.getVariables().get("id");
			return new AuthorizationDecision(
					caller != null && id != null && (!Ids.isValid(id) || caller.ids().permits(id)));
		};
		return AuthorizationManagers.allOf(scope(scope), inScope);
	}

	/**
	 * A force release: any {@code force} other than {@code false} counts, as Spring MVC reads
	 * {@code 1}, {@code on} and {@code yes} as true too.
	 */
	private static RequestMatcher forced(RequestMatcher release) {
		return new RequestMatcher() {

			@Override
			public boolean matches(HttpServletRequest request) {
				return release.matches(request) && isForced(request);
			}

			@Override
			public MatchResult matcher(HttpServletRequest request) {
				// The id, for the check of the token's globs.
				return matches(request) ? release.matcher(request) : MatchResult.notMatch();
			}

		};
	}

	/** Whether a release is forced; one whose parameters cannot be read counts as forced. */
	private static boolean isForced(HttpServletRequest request) {
		String[] values;
		try {
			values = request.getParameterValues("force");
		}
		catch (RuntimeException malformed) {
			return true;
		}
		return values != null && !Arrays.stream(values).allMatch("false"::equals);
	}

	/** The bearer token, refusing a request that carries more than one {@code Authorization}. */
	private static @Nullable String bearerToken(HttpServletRequest request) {
		java.util.Enumeration<String> headers = request.getHeaders("Authorization");
		if (headers.hasMoreElements()) {
			headers.nextElement();
			if (headers.hasMoreElements()) {
				throw new OAuth2AuthenticationException(BearerTokenErrors.invalidRequest("Found several Authorization headers"));
			}
		}
		return BEARER_TOKENS.resolve(request);
	}

	private static AuthenticationEntryPoint unauthenticated() {
		BearerTokenAuthenticationEntryPoint bearer = new BearerTokenAuthenticationEntryPoint();
		return (request, response, ex) -> {
			bearer.commence(request, response, ex);
			boolean presented = request.getHeader("Authorization") != null;
			Problems.write(response, 401, "Unauthorized", SecurityProblemKinds.UNAUTHENTICATED,
					presented ? "The token is not known, or not a bearer token."
							: "This request needs a token: Authorization: Bearer <secret>.");
		};
	}

	private static AccessDeniedHandler forbidden() {
		BearerTokenAccessDeniedHandler bearer = new BearerTokenAccessDeniedHandler();
		return (request, response, ex) -> {
			bearer.handle(request, response, ex);
			Problems.write(response, 403, "Forbidden", SecurityProblemKinds.FORBIDDEN,
					"The token's scopes or ids do not allow this request.");
		};
	}

	/** Every request of a service that runs open is the {@code open} caller's, with every scope. */
	private static AuthenticationFilter openAccess() {
		OAuth2AuthenticatedPrincipal open = ConfiguredTokens.open();
		Authentication authentication = UsernamePasswordAuthenticationToken.authenticated(open, null,
				open.getAuthorities());
		AuthenticationManager asPresented = (presented) -> presented;
		AuthenticationFilter filter = new AuthenticationFilter(asPresented, (request) -> authentication);
		filter.setSuccessHandler((request, response, result) -> {
		});
		return filter;
	}

}
