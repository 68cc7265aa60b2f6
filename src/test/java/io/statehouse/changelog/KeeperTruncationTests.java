package io.statehouse.changelog;

import io.statehouse.support.KeeperCoordination;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThatNoException;

/**
 * Truncation and history with claims decided by Keeper: the tail ordered by write time, and
 * segments dropped whole ({@code DROP PARTITION}).
 */
@KeeperCoordination
class KeeperTruncationTests extends TruncationTests {

	/** A segment is dropped by its partition: one that is gone already is nothing to drop. */
	@Override
	@Test
	void aPartThatIsGoneMeanwhileIsNotDroppedAndNotAFailure() {
		assertThatNoException().isThrownBy(() -> this.repository.dropPart("999999999"));
	}

}
