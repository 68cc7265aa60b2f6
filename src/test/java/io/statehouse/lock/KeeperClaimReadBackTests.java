package io.statehouse.lock;

import io.statehouse.support.KeeperCoordination;

/** Grants whose read-back does not find them, with locks kept in a real ZooKeeper. */
@KeeperCoordination
class KeeperClaimReadBackTests extends ClaimReadBackTests {

}
