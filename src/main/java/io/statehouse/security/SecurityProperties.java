package io.statehouse.security;

import java.util.List;
import java.util.Set;

import jakarta.validation.Valid;
import jakarta.validation.constraints.NotEmpty;
import jakarta.validation.constraints.NotNull;
import jakarta.validation.constraints.Pattern;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.validation.annotation.Validated;

/**
 * Who may call the API. With no token configured the service runs open.
 *
 * @param tokens the tokens clients present as {@code Authorization: Bearer <secret>}
 */
@ConfigurationProperties("statehouse.security")
@Validated
record SecurityProperties(@DefaultValue @Valid List<Token> tokens) {

	/** Whether the service runs open: no token configured. */
	boolean isOpen() {
		return this.tokens.isEmpty();
	}

	/**
	 * One token.
	 *
	 * @param name recorded as the writer of what the token changes; shown in audit and logs
	 * @param sha256 the hex SHA-256 of the secret (the secret itself is never configured)
	 * @param scopes what the token may do
	 * @param ids globs over the state and lock ids it may touch ({@code *} any run, {@code ?} one
	 * character)
	 */
	record Token(@NotNull @Pattern(regexp = Token.NAME,
			message = "is 1-64 of A-Z a-z 0-9 . _ : @ + -") String name,
			@NotNull @Pattern(regexp = "[0-9a-fA-F]{64}", message = "is the 64 hex digits of the secret's SHA-256") String sha256,
			@NotEmpty Set<Scope> scopes, @DefaultValue("*") @NotEmpty List<String> ids) {

		/** What a token's name may be. */
		static final String NAME = "[A-Za-z0-9._:@+-]{1,64}";

	}

}
