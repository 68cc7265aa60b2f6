package io.statehouse.shared;

/**
 * Who makes a request: the name of the token it presented, recorded as the writer of what it
 * changes, and the ids that token may touch.
 *
 * @param name the token's name ({@code open} when the service runs without tokens)
 * @param ids the ids it may touch
 */
public record Caller(String name, IdScope ids) {

	/** Every caller of a service that runs without tokens. */
	public static final Caller OPEN = new Caller("open", IdScope.ANY);

}
