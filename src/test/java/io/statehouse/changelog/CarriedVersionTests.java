package io.statehouse.changelog;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;

import io.statehouse.changelog.ChangelogRepository.Verdict;
import io.statehouse.claims.ClaimArbiter;
import io.statehouse.support.EventStream;
import io.statehouse.support.EventStream.Event;
import io.statehouse.support.StatehouseClient;
import io.statehouse.support.StatehouseClient.Response;
import io.statehouse.support.StatehouseTest;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.context.annotation.Import;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A version carried over by an import ({@link Change#carrying}) skips numbers but competes for the
 * slot after the version it replaces, as every write does: raced by an ordinary write that read
 * the same version, exactly one of them wins the slot, the lineage goes through the winner, and
 * no acknowledged write is hidden behind the numbers skipped. The rival is made as another
 * instance's writer would make it: its row appended, then its claim settled by the arbiter.
 */
@StatehouseTest
@Import(InterleavingRepository.Seams.class)
class CarriedVersionTests {

	@Autowired
	InterleavingRepository repository;

	@Autowired
	ClaimArbiter arbiter;

	@Autowired
	StateStore store;

	@Autowired
	ChangelogMaterializer materializer;

	@Autowired
	StatehouseClient client;

	@BeforeEach
	void reset() {
		this.repository.reset();
	}

	@Test
	void aCarriedVersionThatLostItsSlotToAnOrdinaryWriteIsWrittenAfterItAndHidesNothing() throws Exception {
		String id = "carried:second-" + UUID.randomUUID();
		this.client.put("/states/" + id, "{\"v\":1}");
		AtomicBoolean interfered = new AtomicBoolean();
		this.repository.beforeAppend = (claims) -> {
			VersionClaim carried = claims.get(0);
			if (carried.version() == 42 && interfered.compareAndSet(false, true)) {
				// An ordinary write read version 1 too, and its claim of slot 2 is decided first.
				assertThat(rival(carried, "{\"ordinary\":2}").outcome()).isEqualTo(Verdict.Outcome.WON);
			}
		};
		Committed written = this.store.write(id, (current) -> Change.put("{\"carried\":42}", 0, "import").carrying(42),
				null, 14);
		this.repository.reset();
		assertThat(interfered).isTrue();
		assertThat(written.state().version()).as("decided again after the ordinary write, still carried").isEqualTo(42);
		assertThat(this.client.versions(id)).as("the ordinary write stays in the lineage").containsExactly(1L, 2L, 42L);
		assertThat(this.client.get("/states/" + id + "?version=2").body()).isEqualTo("{\"ordinary\":2}");
		assertThat(this.client.get("/states/" + id + "?version=3").status()).as("skipped: never written").isEqualTo(404);
		assertThat(changes(id, 3)).containsExactly("1 put", "2 put", "42 put");
		Response next = this.client.put("/states/" + id, "{\"v\":43}", "If-Match", "\"42\"");
		assertThat(next.status()).isEqualTo(200);
		assertThat(next.version()).isEqualTo(43);
	}

	@Test
	void aCarriedVersionThatLostItsSlotAfterTheWinnerWasMaterializedIsNeverMaterialized() throws Exception {
		String id = "carried:folded-" + UUID.randomUUID();
		this.client.put("/states/" + id, "{\"v\":1}");
		AtomicBoolean interfered = new AtomicBoolean();
		this.repository.beforeAppend = (claims) -> {
			VersionClaim carried = claims.get(0);
			if (carried.version() == 42 && interfered.compareAndSet(false, true)) {
				// The ordinary write wins slot 2 and is materialized before the import's claim commits.
				assertThat(rival(carried, "{\"ordinary\":2}").outcome()).isEqualTo(Verdict.Outcome.WON);
				this.materializer.run();
			}
		};
		// As an import does: decided again against the ordinary write, it is refused (newer).
		assertThatThrownBy(() -> this.store.write(id, (current) -> {
			if (current != null && current.version() > 1) {
				throw new IllegalStateException("changed after the export");
			}
			return Change.put("{\"carried\":42}", 0, "import").carrying(42);
		}, null, 14)).hasMessageContaining("changed after the export");
		this.repository.reset();
		// The losing claim of slot 2 is in the next cut, with a version above the materialized one.
		this.materializer.run();
		assertThat(this.client.get("/states/" + id).body()).isEqualTo("{\"ordinary\":2}");
		assertThat(this.client.get("/states/" + id).version()).isEqualTo(2);
		assertThat(this.client.versions(id)).containsExactly(1L, 2L);
		assertThat(this.client.put("/states/" + id, "{\"v\":3}").version()).isEqualTo(3);
	}

	@Test
	void aCarriedVersionThatWonItsSlotLeavesTheOrdinaryRivalUnseenAndTheNextWriteFollowsIt() throws Exception {
		String id = "carried:first-" + UUID.randomUUID();
		this.client.put("/states/" + id, "{\"v\":1}");
		AtomicBoolean carriedSeen = new AtomicBoolean();
		VersionClaim[] carried = new VersionClaim[1];
		this.repository.beforeAppend = (claims) -> {
			if (claims.get(0).version() == 42 && carriedSeen.compareAndSet(false, true)) {
				carried[0] = claims.get(0);
			}
		};
		Committed written = this.store.write(id, (current) -> Change.put("{\"carried\":42}", 0, "import").carrying(42),
				null, 14);
		this.repository.reset();
		assertThat(written.state().version()).isEqualTo(42);
		// A slower ordinary write that read version 1 too: its claim of slot 2 comes second.
		assertThat(rival(carried[0], "{\"ordinary\":2}").outcome()).isIn(Verdict.Outcome.LOST);
		assertThat(this.client.get("/states/" + id).body()).isEqualTo("{\"carried\":42}");
		assertThat(this.client.versions(id)).containsExactly(1L, 42L);
		assertThat(this.client.get("/states/" + id + "?version=2").status()).as("its rival lost").isEqualTo(404);
		assertThat(changes(id, 2)).containsExactly("1 put", "42 put");
		assertThat(this.client.get("/states?prefix=" + StatehouseClient.segment(id)).json().get("items").get(0)
			.get("version").asLong()).isEqualTo(42);
		Response next = this.client.put("/states/" + id, "{\"v\":43}");
		assertThat(next.version()).isEqualTo(43);
		assertThat(this.client.versions(id)).containsExactly(1L, 42L, 43L);
		this.materializer.run();
		assertThat(this.client.get("/states/" + id).version()).isEqualTo(43);
		assertThat(this.client.versions(id)).containsExactly(1L, 42L, 43L);
		assertThat(this.client.put("/states/" + id, "{\"v\":44}").version()).isEqualTo(44);
	}

	/**
	 * An ordinary claim of a carried claim's slot, made as a writer that read the same version makes
	 * it: its row appended, then settled by the arbiter.
	 */
	Verdict rival(VersionClaim carried, String document) {
		VersionClaim rival = new VersionClaim(carried.id(), carried.slot(), carried.slot(),
				Change.put(document, 0, "test"), UUID.randomUUID(), carried.parent(), null, false);
		this.repository.appendDirectly(List.of(rival));
		Map<VersionClaim, Verdict> verdicts = this.arbiter.settle(
				new StateClaimSpace(this.repository, 0, Duration.ofSeconds(5)), List.of(rival), System.nanoTime());
		return verdicts.get(rival);
	}

	/**
	 * An id's retained changes as the feed tells them (version and operation): as many as expected,
	 * then none for a second (by an arbiter of record, the feed tells a change a claim window after it).
	 */
	private List<String> changes(String id, int expected) throws InterruptedException {
		try (EventStream all = this.client.stream("/changes?from=oldest&id=" + StatehouseClient.segment(id))) {
			List<String> changes = new ArrayList<>();
			for (Event event : all.changes(expected, Duration.ofSeconds(20))) {
				changes.add(event.json().get("version").asLong() + " " + event.json().get("operation").asString());
			}
			Event more;
			while ((more = all.next(Duration.ofSeconds(1))) != null) {
				if (more.isChange()) {
					changes.add(more.json().get("version").asLong() + " " + more.json().get("operation").asString());
				}
			}
			return changes;
		}
	}

}
