package io.statehouse.changelog;

import org.springframework.dao.TransientDataAccessResourceException;

/**
 * This replica lacks versions that the arbiter recorded as decided: their rows were acknowledged
 * by a quorum of other replicas and have not been fetched here yet. A retry (on this replica, or
 * another) will see them.
 */
class ReplicaBehindException extends TransientDataAccessResourceException {

	ReplicaBehindException(int versions) {
		super("This ClickHouse replica lacks " + versions + " decided version(s) that other replicas have");
	}

}
