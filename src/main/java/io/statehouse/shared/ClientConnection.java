package io.statehouse.shared;

/**
 * The connection a request came on, as a request that waits for its answer needs it: whether its
 * client hung up meanwhile. A controller method gets it as an argument.
 */
@FunctionalInterface
public interface ClientConnection {

	/**
	 * Runs {@code action} once, on a thread of its own, if the client closes the connection before
	 * the returned handle is run; where the server cannot tell, never.
	 * @return what stops the watch (run it once the request is answered)
	 */
	Runnable onHangUp(Runnable action);

}
