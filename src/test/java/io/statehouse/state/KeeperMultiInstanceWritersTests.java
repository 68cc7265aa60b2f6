package io.statehouse.state;

import java.nio.file.Path;
import java.util.List;

import io.statehouse.support.SharedEngine;
import io.statehouse.support.StatehouseClient;

/** The multi-instance writers' race suite with claims decided by a real ZooKeeper. */
class KeeperMultiInstanceWritersTests extends MultiInstanceWritersTests {

	@Override
	List<StatehouseClient> startInstances(Path directory) throws Exception {
		SharedEngine engine = SharedEngine.startWithKeeper(directory, "multi_instance");
		this.deployment = engine;
		return engine.startServices(2);
	}

}
