package io.statehouse.lock;

import java.nio.file.Path;

import io.statehouse.support.SharedEngine;

/** The fair lock queue with locks kept in a real ZooKeeper. */
class KeeperFairLockQueueTests extends FairLockQueueTests {

	@Override
	SharedEngine deploy(Path directory, String database) throws Exception {
		return SharedEngine.startWithKeeper(directory, database);
	}

}
