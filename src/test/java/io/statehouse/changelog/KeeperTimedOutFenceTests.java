package io.statehouse.changelog;

import io.statehouse.support.KeeperCoordination;
import io.statehouse.support.ServiceProcess;

/** Fences that timed out, with locks and claims kept in a real ZooKeeper. */
@KeeperCoordination
class KeeperTimedOutFenceTests extends TimedOutFenceTests {

	@Override
	ServiceProcess otherInstance(String... properties) throws Exception {
		return super.otherInstance("--statehouse.clickhouse.coordination=keeper",
				"--statehouse.clickhouse.claim-window=" + KeeperCoordination.CLAIM_WINDOW);
	}

}
