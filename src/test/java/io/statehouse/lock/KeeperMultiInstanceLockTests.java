package io.statehouse.lock;

import java.nio.file.Path;

import io.statehouse.support.SharedEngine;

/** The multi-instance lock suite with claims decided by a real ZooKeeper. */
class KeeperMultiInstanceLockTests extends MultiInstanceLockTests {

	@Override
	SharedEngine deploy(Path directory, String database) throws Exception {
		return SharedEngine.startWithKeeper(directory, database);
	}

}
