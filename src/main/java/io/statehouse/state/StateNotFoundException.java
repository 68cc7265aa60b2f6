package io.statehouse.state;

/** No live state with that id (never written, or deleted). */
public class StateNotFoundException extends RuntimeException {

	private StateNotFoundException(String message) {
		super(message);
	}

	public static StateNotFoundException forId(String id) {
		return new StateNotFoundException("No state '" + id + "'.");
	}

	public static StateNotFoundException forVersion(String id, long version) {
		return new StateNotFoundException("State '" + id + "' has no version " + version + ".");
	}

	public static StateNotFoundException forDeletion(String id, long version) {
		return new StateNotFoundException("Version " + version + " of state '" + id + "' is a deletion.");
	}

}
