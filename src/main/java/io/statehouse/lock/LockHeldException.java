package io.statehouse.lock;

import java.util.LinkedHashMap;
import java.util.Map;

import io.statehouse.shared.ProblemException;
import org.jspecify.annotations.Nullable;

import org.springframework.http.HttpStatus;

/**
 * The lock is held by someone else, or acquisitions that asked first wait for it (and the wait,
 * if any, ran out): 423 with the holder and how many wait ahead.
 */
class LockHeldException extends ProblemException {

	/** The kind of this problem, as {@link LockProblemKinds} declares it. */
	static final String KIND = "lock-held";

	private final @Nullable Lease holder;

	private final int waiting;

	private final int ahead;

	/**
	 * @param holder who holds the lock; {@code null} if nobody does, but others asked first
	 * @param waiting how many acquisitions wait for it, on every instance
	 * @param ahead how many of them asked before this one
	 */
	LockHeldException(String id, @Nullable Lease holder, int waiting, int ahead) {
		super(HttpStatus.LOCKED, KIND, message(id, holder, ahead));
		this.holder = holder;
		this.waiting = waiting;
		this.ahead = ahead;
	}

	private static String message(String id, @Nullable Lease holder, int ahead) {
		String waiters = (ahead == 1) ? "1 acquisition that asked first waits" : ahead + " acquisitions that asked first wait";
		if (holder == null) {
			return "Lock '" + id + "' is free, but " + waiters + " for it.";
		}
		String held = "Lock '" + id + "' is held by '" + holder.owner() + "' until " + holder.expiresAt() + ".";
		return (ahead > 0) ? held + " " + waiters + " for it." : held;
	}

	/** Who holds it and until when (never the holder's token), and how many wait ahead. */
	@Override
	public Map<String, @Nullable Object> properties() {
		Map<String, @Nullable Object> properties = new LinkedHashMap<>();
		if (this.holder != null) {
			properties.put("holder", LockController.LockView.of(this.holder, this.waiting));
		}
		properties.put("waitingAhead", this.ahead);
		return properties;
	}

}
