package io.statehouse.state;

import io.statehouse.support.KeeperCoordination;

/** Any id, with claims decided by a real ZooKeeper (an id is part of each claim's Keeper key). */
@KeeperCoordination
class KeeperAnyIdTests extends AnyIdTests {

}
