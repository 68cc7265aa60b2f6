package io.statehouse.clickhouse.embedded;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.Base64;

import org.jspecify.annotations.Nullable;

/**
 * The one user the embedded engine's HTTP interface lets in. Compared in constant time, by
 * digest, so that how long a refusal takes says nothing about how close a guess came.
 *
 * @param user the user name
 * @param password its password, never empty
 */
public record Credentials(String user, String password) {

	private static final SecureRandom random = new SecureRandom();

	public Credentials {
		if (password.isEmpty()) {
			throw new IllegalArgumentException("The embedded engine needs a password");
		}
	}

	/** A user with a new random password (256 bits). */
	public static Credentials random(String user) {
		byte[] bytes = new byte[32];
		random.nextBytes(bytes);
		return new Credentials(user, Base64.getUrlEncoder().withoutPadding().encodeToString(bytes));
	}

	/** Whether a request presented these credentials ({@code null}: none presented). */
	boolean match(@Nullable String user, @Nullable String password) {
		boolean userMatches = MessageDigest.isEqual(digest(this.user), digest((user != null) ? user : "default"));
		boolean passwordMatches = MessageDigest.isEqual(digest(this.password), digest((password != null) ? password : ""));
		return userMatches & passwordMatches;
	}

	private static byte[] digest(String text) {
		try {
			return MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8));
		}
		catch (NoSuchAlgorithmException ex) {
			throw new IllegalStateException("Every Java runtime has SHA-256", ex);
		}
	}

	@Override
	public String toString() {
		return "Credentials[user=" + this.user + ", password=(hidden)]";
	}

}
