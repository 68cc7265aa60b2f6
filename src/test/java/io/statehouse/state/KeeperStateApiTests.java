package io.statehouse.state;

import io.statehouse.support.KeeperCoordination;

/** The state API suite with claims decided by a real ZooKeeper. */
@KeeperCoordination
class KeeperStateApiTests extends StateApiTests {

}
