package io.statehouse.lock;

import io.statehouse.support.KeeperCoordination;

/** The lock API suite with claims decided by a real ZooKeeper. */
@KeeperCoordination
class KeeperLockApiTests extends LockApiTests {

}
