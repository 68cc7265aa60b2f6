package io.statehouse.state;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** How restore, export and import cut their work into bounded batches. */
@Tag("fast")
class BatchesTests {

	private final List<List<Integer>> handed = new ArrayList<>();

	@Test
	void aBatchIsHandedOnOnceItHoldsTheMostItems() {
		Batches.of(List.of(1, 2, 3, 4, 5), 2, Long.MAX_VALUE, (item) -> 1, this.handed::add);
		assertThat(this.handed).containsExactly(List.of(1, 2), List.of(3, 4), List.of(5));
	}

	@Test
	void aBatchIsHandedOnOnceItReachesItsBytesAndALargeItemIsABatchOfItsOwn() {
		Batches.of(List.of(3, 4, 10, 1, 1), Integer.MAX_VALUE, 7, (item) -> item, this.handed::add);
		assertThat(this.handed).containsExactly(List.of(3, 4), List.of(10), List.of(1, 1));
	}

	@Test
	void nothingIsHandedOnForNoItems() {
		Batches.of(List.<Integer>of(), 2, 7, (item) -> item, this.handed::add);
		assertThat(this.handed).isEmpty();
	}

	@Test
	void eachBatchIsItsOwnList() {
		Batches<Integer> batches = new Batches<>(2, Long.MAX_VALUE, this.handed::add);
		for (int item = 1; item <= 4; item++) {
			batches.add(item, 0);
		}
		batches.finish();
		assertThat(this.handed).containsExactly(List.of(1, 2), List.of(3, 4));
	}

}
