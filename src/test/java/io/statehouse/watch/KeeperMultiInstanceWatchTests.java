package io.statehouse.watch;

import java.nio.file.Path;

import io.statehouse.support.SharedEngine;

/** The multi-instance watch suite with claims decided by a real ZooKeeper: changes come a claim window late. */
class KeeperMultiInstanceWatchTests extends MultiInstanceWatchTests {

	@Override
	SharedEngine startEngine(Path directory) throws Exception {
		return SharedEngine.startWithKeeper(directory, "multi_watch");
	}

}
