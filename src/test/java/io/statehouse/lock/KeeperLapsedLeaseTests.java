package io.statehouse.lock;

import io.statehouse.support.KeeperCoordination;

/** Lapsed leases with locks kept in a real ZooKeeper: a void renewal or release takes no slot there either. */
@KeeperCoordination
class KeeperLapsedLeaseTests extends LapsedLeaseTests {

}
