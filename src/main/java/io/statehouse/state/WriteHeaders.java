package io.statehouse.state;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import java.util.regex.Pattern;

import io.statehouse.lock.LockToken;
import io.statehouse.shared.InvalidRequestException;
import org.jspecify.annotations.Nullable;

/**
 * The headers that condition a write, as the client sent them: bound to a write's parameter of
 * this type by {@link WriteHeadersArgumentResolver}, described by
 * {@link WriteHeadersDocumentation}, parsed by {@link #conditions()}. They are parsed in the
 * controller's body, not while binding, so that a malformed id is still the one reported when a
 * header is malformed too (Spring MVC validates the id after binding every parameter).
 *
 * @param ifMatch {@code If-Match}, if sent
 * @param ifNoneMatch {@code If-None-Match}, if sent and the write takes it
 * @param idempotencyKey {@code Idempotency-Key}, if sent
 * @param lockToken {@code Lock-Token}, if sent
 */
record WriteHeaders(@Nullable String ifMatch, @Nullable String ifNoneMatch, @Nullable String idempotencyKey,
		@Nullable String lockToken) {

	/** The header of the client's key for retries. */
	static final String IDEMPOTENCY_KEY = "Idempotency-Key";

	/** What an {@code Idempotency-Key} may be, for the API description. */
	static final String IDEMPOTENCY_KEY_PATTERN = "^[\\x21-\\x7E]{1,255}$";

	private static final Pattern IDEMPOTENCY_KEY_SYNTAX = Pattern.compile(IDEMPOTENCY_KEY_PATTERN);

	/**
	 * The conditions these headers state.
	 * @throws InvalidRequestException when a header is malformed
	 */
	WriteConditions conditions() {
		if (this.idempotencyKey != null && !IDEMPOTENCY_KEY_SYNTAX.matcher(this.idempotencyKey).matches()) {
			throw new InvalidRequestException("Idempotency-Key must be 1-255 visible ASCII characters.");
		}
		return new WriteConditions(Preconditions.parse(this.ifMatch, this.ifNoneMatch),
				(this.lockToken != null) ? LockToken.parse(this.lockToken) : null, this.idempotencyKey);
	}

	/**
	 * On a write that cannot create (a delete): {@code If-None-Match} is neither read nor
	 * described.
	 */
	@Target(ElementType.PARAMETER)
	@Retention(RetentionPolicy.RUNTIME)
	@Documented
	@interface WithoutIfNoneMatch {

	}

}
