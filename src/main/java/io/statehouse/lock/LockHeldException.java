package io.statehouse.lock;

import java.util.Map;

import io.statehouse.shared.ProblemException;
import org.jspecify.annotations.Nullable;

import org.springframework.http.HttpStatus;

/** The lock is held by someone else (and the wait, if any, ran out): 423 with the holder. */
class LockHeldException extends ProblemException {

	/** The kind of this problem, as {@link LockProblemKinds} declares it. */
	static final String KIND = "lock-held";

	private final Lease holder;

	LockHeldException(Lease holder) {
		super(HttpStatus.LOCKED, KIND,
				"Lock '" + holder.id() + "' is held by '" + holder.owner() + "' until " + holder.expiresAt() + ".");
		this.holder = holder;
	}

	/** Who holds it and until when; never the holder's token. */
	@Override
	public Map<String, @Nullable Object> properties() {
		return Map.of("holder", LockController.LockView.of(this.holder));
	}

}
