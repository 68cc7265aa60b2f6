package io.statehouse.support;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

import org.springframework.test.context.DynamicPropertyRegistry;

/** API tokens for a test's application, configured as an operator configures them. */
public final class TestTokens {

	private TestTokens() {
	}

	/**
	 * Registers {@code statehouse.security.tokens[index]}: its name, the SHA-256 of its secret, its
	 * scopes and the globs of the ids it may touch (both comma-separated).
	 */
	public static void register(DynamicPropertyRegistry registry, int index, String name, String secret, String scopes,
			String ids) {
		String prefix = "statehouse.security.tokens[" + index + "].";
		registry.add(prefix + "name", () -> name);
		registry.add(prefix + "sha256", () -> sha256(secret));
		registry.add(prefix + "scopes", () -> scopes);
		registry.add(prefix + "ids", () -> ids);
	}

	private static String sha256(String secret) {
		try {
			return HexFormat.of()
				.formatHex(MessageDigest.getInstance("SHA-256").digest(secret.getBytes(StandardCharsets.UTF_8)));
		}
		catch (NoSuchAlgorithmException ex) {
			throw new IllegalStateException(ex);
		}
	}

}
