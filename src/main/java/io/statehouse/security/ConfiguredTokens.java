package io.statehouse.security;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;

import io.statehouse.security.SecurityProperties.Token;
import io.statehouse.shared.Caller;
import io.statehouse.shared.IdScope;
import io.statehouse.shared.InvalidRequestException;
import org.jspecify.annotations.Nullable;

import org.springframework.security.core.Authentication;
import org.springframework.security.core.GrantedAuthority;
import org.springframework.security.core.authority.SimpleGrantedAuthority;
import org.springframework.security.oauth2.core.DefaultOAuth2AuthenticatedPrincipal;
import org.springframework.security.oauth2.core.OAuth2AuthenticatedPrincipal;
import org.springframework.security.oauth2.server.resource.introspection.BadOpaqueTokenException;
import org.springframework.security.oauth2.server.resource.introspection.OpaqueTokenIntrospector;

/**
 * The configured tokens, found by the SHA-256 of the secret a request presents. Every configured
 * hash is compared, in constant time, whichever matches: how long a lookup takes says nothing
 * about how close a guess came. A fast hash is enough: secrets are random and at least 256 bits
 * long ({@link TokenCommand}), so there is nothing to brute-force.
 */
class ConfiguredTokens implements OpaqueTokenIntrospector {

	/** The principal's attribute that holds the ids a caller may touch. */
	private static final String IDS = "ids";

	private final List<Configured> tokens = new ArrayList<>();

	/**
	 * @param tokens the configured tokens; two may share a name — one caller with two secrets while
	 * clients change over from one to the other — if they grant the same scopes on the same ids
	 */
	ConfiguredTokens(List<Token> tokens) {
		Map<String, Token> names = new HashMap<>();
		Set<String> hashes = new HashSet<>();
		for (Token token : tokens) {
			String hash = token.sha256().toLowerCase(java.util.Locale.ROOT);
			Token named = names.putIfAbsent(token.name(), token);
			if (token.name().equals(Caller.OPEN.name()) || (named != null
					&& !(named.scopes().equals(token.scopes()) && named.ids().equals(token.ids())))) {
				throw new IllegalArgumentException("statehouse.security.tokens: the name '" + token.name()
						+ "' is taken; a token needs a name of its own, other than 'open' (it is recorded as the writer), "
						+ "or the same scopes and ids as the other token of that name (a change-over to a new secret)");
			}
			if (!hashes.add(hash)) {
				throw new IllegalArgumentException("statehouse.security.tokens: token '" + token.name()
						+ "' has the sha256 of another token; mint a secret per token");
			}
			this.tokens.add(new Configured(HexFormat.of().parseHex(hash), principal(token.name(), scopes(token), ids(token))));
		}
	}

	@Override
	public OAuth2AuthenticatedPrincipal introspect(String secret) {
		byte[] presented = sha256(secret);
		OAuth2AuthenticatedPrincipal found = null;
		for (Configured token : this.tokens) {
			if (MessageDigest.isEqual(token.sha256(), presented)) {
				found = token.principal();
			}
		}
		if (found == null) {
			throw new BadOpaqueTokenException("The token is not known.");
		}
		return found;
	}

	/** The principal of every request to a service that runs open: every scope, every id. */
	static OAuth2AuthenticatedPrincipal open() {
		return principal(Caller.OPEN.name(), EnumSet.allOf(Scope.class), IdScope.ANY);
	}

	/** The caller an authentication stands for, {@code null} if it is not one of ours. */
	static @Nullable Caller caller(@Nullable Authentication authentication) {
		if (authentication != null && authentication.getPrincipal() instanceof OAuth2AuthenticatedPrincipal principal
				&& principal.getAttribute(IDS) instanceof IdScope ids) {
			return new Caller(principal.getName(), ids);
		}
		return null;
	}

	static byte[] sha256(String secret) {
		try {
			return MessageDigest.getInstance("SHA-256").digest(secret.getBytes(StandardCharsets.UTF_8));
		}
		catch (NoSuchAlgorithmException ex) {
			throw new IllegalStateException("Every Java runtime has SHA-256", ex);
		}
	}

	private static OAuth2AuthenticatedPrincipal principal(String name, Set<Scope> scopes, IdScope ids) {
		Collection<GrantedAuthority> authorities = scopes.stream()
			.<GrantedAuthority>map((scope) -> new SimpleGrantedAuthority(scope.authority()))
			.toList();
		return new DefaultOAuth2AuthenticatedPrincipal(name, Map.of(IDS, ids), authorities);
	}

	private static Set<Scope> scopes(Token token) {
		Set<Scope> scopes = EnumSet.noneOf(Scope.class);
		token.scopes().forEach((scope) -> scopes.addAll(scope.implied()));
		return scopes;
	}

	private static IdScope ids(Token token) {
		try {
			return IdScope.of(token.ids());
		}
		catch (InvalidRequestException ex) {
			throw new IllegalArgumentException("statehouse.security.tokens: token '" + token.name() + "' has ids "
					+ token.ids() + "; " + ex.getMessage());
		}
	}

	private record Configured(byte[] sha256, OAuth2AuthenticatedPrincipal principal) {
	}

}
