package io.statehouse.changelog;

import java.util.List;
import java.util.UUID;

import io.statehouse.support.KeeperCoordination;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** {@link CarriedVersionTests} with claims decided by a real ZooKeeper. */
@KeeperCoordination
class KeeperCarriedVersionTests extends CarriedVersionTests {

	@Test
	void aClaimInFlightAfterACarriedVersionHidesItFromNoReader() {
		String id = "carried:in-flight-" + UUID.randomUUID();
		this.client.put("/states/" + id, "{\"v\":1}");
		Committed carried = this.store.write(id, (current) -> Change.put("{\"carried\":42}", 0, "import").carrying(42),
				null, 14);
		assertThat(carried.state().version()).isEqualTo(42);
		// A writer that read version 42 has appended its claim of slot 43 and not yet claimed its key:
		// the newest winner's slot (2) is not the one below the newest slot claimed.
		this.repository.appendDirectly(List.of(new VersionClaim(id, 43, 43, Change.put("{\"v\":43}", 0, "test"),
				UUID.randomUUID(), UUID.randomUUID(), null, false)));
		// Listing and history first: a read that finds the slot after its answer recorded folds it.
		assertThat(this.client.get("/states?prefix=" + id).json().get("items").get(0).get("version").asLong())
			.isEqualTo(42);
		assertThat(this.client.versions(id)).containsExactly(1L, 42L);
		assertThat(this.client.get("/states/" + id).body()).isEqualTo("{\"carried\":42}");
	}

}
