package io.statehouse.changelog;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

import org.jspecify.annotations.Nullable;

/**
 * A client's {@code Idempotency-Key}, scoped to the caller that sent it, with the fingerprint of
 * the request it came with, so that a retry is told apart from a different request that reuses
 * the key. Keys of different callers never meet: a caller that learns another's key can neither
 * have that caller's answer replayed to it nor block that caller's retries.
 *
 * @param caller who sent it (the name of its token): the writer its change records, where a
 * retry looks it up
 * @param key the key
 * @param fingerprint a digest of what the request asked for
 */
public record Idempotency(String caller, String key, String fingerprint) {

	/**
	 * @param caller who sends the request: the writer its change records
	 * @param key the key, {@code null} when the client sent none
	 * @param operation what the request does
	 * @param body what it sent
	 * @param conditions what it made the write depend on (preconditions, lease), in one canonical
	 * text: the same key with other conditions is another request
	 * @return the idempotency of the request, {@code null} without a key
	 */
	public static @Nullable Idempotency of(String caller, @Nullable String key, Change.Operation operation,
			String body, String conditions) {
		if (key == null) {
			return null;
		}
		try {
			MessageDigest digest = MessageDigest.getInstance("SHA-256");
			digest.update(operation.name().getBytes(StandardCharsets.US_ASCII));
			digest.update((byte) 0);
			digest.update(conditions.getBytes(StandardCharsets.UTF_8));
			digest.update((byte) 0);
			digest.update(body.getBytes(StandardCharsets.UTF_8));
			return new Idempotency(caller, key, HexFormat.of().formatHex(digest.digest(), 0, 16));
		}
		catch (NoSuchAlgorithmException ex) {
			throw new IllegalStateException("Every Java platform has SHA-256", ex);
		}
	}

}
