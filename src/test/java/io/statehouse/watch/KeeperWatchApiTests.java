package io.statehouse.watch;

import java.time.Duration;

import io.statehouse.support.KeeperCoordination;

/** The watch suite with claims decided by a real ZooKeeper: changes reach watchers once decided. */
@KeeperCoordination
class KeeperWatchApiTests extends WatchApiTests {

	@Override
	Duration patience() {
		return Duration.ofSeconds(20);
	}

}
