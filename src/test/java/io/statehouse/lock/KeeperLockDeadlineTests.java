package io.statehouse.lock;

import io.statehouse.support.KeeperCoordination;

/** Lock requests answer by their deadlines with locks kept in a real ZooKeeper. */
@KeeperCoordination
class KeeperLockDeadlineTests extends LockDeadlineTests {

}
