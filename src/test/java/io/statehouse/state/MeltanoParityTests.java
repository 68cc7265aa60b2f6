package io.statehouse.state;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import io.statehouse.support.StatehouseClient;
import io.statehouse.support.StatehouseClient.Response;
import io.statehouse.support.StatehouseTest;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.beans.factory.annotation.Autowired;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What Meltano's state backends do ({@code meltano-state-backend-clickhouse}'s test suite and
 * Meltano's {@code StateStoreManager} contract), replayed over HTTP through a backend adapter as
 * thin as a Meltano plugin for Statehouse would be.
 */
@StatehouseTest
class MeltanoParityTests {

	private static final JsonMapper JSON = JsonMapper.builder().build();

	@Autowired
	StatehouseClient client;

	MeltanoBackend meltano;

	@BeforeEach
	void connect() {
		this.meltano = new MeltanoBackend(this.client);
		this.meltano.clearAll();
	}

	@Test
	void setGetOverwrite() {
		this.meltano.set("dev:tap-to-target", "{\"completed\":{\"v\":1},\"partial\":{}}");
		assertThat(this.meltano.get("dev:tap-to-target")).hasValue("{\"completed\":{\"v\":1},\"partial\":{}}");
		this.meltano.set("dev:tap-to-target", "{\"completed\":{\"v\":2},\"partial\":{}}");
		assertThat(this.meltano.get("dev:tap-to-target")).hasValue("{\"completed\":{\"v\":2},\"partial\":{}}");
	}

	@Test
	void getMissingReturnsNothing() {
		assertThat(this.meltano.get("does-not-exist")).isEmpty();
	}

	@Test
	void stateIdsAndPattern() {
		this.meltano.set("dev:a", "{\"completed\":{\"v\":1}}");
		this.meltano.set("prod:b", "{\"completed\":{\"v\":1}}");
		assertThat(this.meltano.stateIds("*")).containsExactlyInAnyOrder("dev:a", "prod:b");
		assertThat(this.meltano.stateIds("dev:*")).containsExactly("dev:a");
	}

	@Test
	void deleteAndClearAll() {
		this.meltano.set("dev:a", "{\"completed\":{\"v\":1}}");
		this.meltano.delete("dev:a");
		assertThat(this.meltano.get("dev:a")).isEmpty();
		this.meltano.set("dev:b", "{\"completed\":{\"v\":1}}");
		assertThat(this.meltano.clearAll()).isEqualTo(1);
		assertThat(this.meltano.stateIds("*")).isEmpty();
	}

	@Test
	void updateWithACompleteStateReplacesIt() {
		this.meltano.set("dev:update", "{\"completed\":{\"v\":1},\"partial\":{\"stream\":{\"at\":5}}}");
		this.meltano.update("dev:update", "{\"completed\":{\"v\":9},\"partial\":{}}");
		assertThat(this.meltano.get("dev:update")).hasValue("{\"completed\":{\"v\":9},\"partial\":{}}");
	}

	@Test
	void updateWithAnIncompleteStateMergesItsPartialAndKeepsCompleted() {
		this.meltano.set("dev:merge", "{\"completed\":{\"singer_state\":{\"bookmarks\":{\"a\":1}}},"
				+ "\"partial\":{\"singer_state\":{\"bookmarks\":{\"b\":1}}}}");
		this.meltano.update("dev:merge", "{\"completed\":{},\"partial\":{\"singer_state\":{\"bookmarks\":{\"c\":2}}}}");
		JsonNode merged = JSON.readTree(this.meltano.get("dev:merge").orElseThrow());
		assertThat(merged.at("/completed/singer_state/bookmarks/a").asInt()).isEqualTo(1);
		assertThat(merged.at("/partial/singer_state/bookmarks/b").asInt()).isEqualTo(1);
		assertThat(merged.at("/partial/singer_state/bookmarks/c").asInt()).isEqualTo(2);
	}

	@Test
	void updateOfAnAbsentStateWithAnIncompleteStateCreatesIt() {
		this.meltano.update("dev:fresh", "{\"completed\":{},\"partial\":{\"singer_state\":{\"x\":1}}}");
		assertThat(this.meltano.get("dev:fresh")).hasValue("{\"partial\":{\"singer_state\":{\"x\":1}}}");
	}

	@Test
	void emptyStatesRoundTrip() {
		this.meltano.set("dev:empty", "{}");
		assertThat(this.meltano.get("dev:empty")).hasValue("{}");
		this.meltano.set("dev:empty-parts", "{\"completed\":{},\"partial\":{}}");
		assertThat(this.meltano.get("dev:empty-parts")).hasValue("{\"completed\":{},\"partial\":{}}");
	}

	/** A Meltano {@code StateStoreManager} over Statehouse's HTTP API. */
	static final class MeltanoBackend {

		private final StatehouseClient client;

		MeltanoBackend(StatehouseClient client) {
			this.client = client;
		}

		void set(String id, String state) {
			assertThat(this.client.put("/states/" + id, state).status()).isIn(200, 201);
		}

		Optional<String> get(String id) {
			Response response = this.client.get("/states/" + id);
			return (response.status() == 404) ? Optional.empty() : Optional.of(response.body());
		}

		void delete(String id) {
			assertThat(this.client.delete("/states/" + id).status()).isIn(204, 404);
		}

		int clearAll() {
			return this.client.delete("/states?match=*").json().get("deleted").asInt();
		}

		List<String> stateIds(String pattern) {
			List<String> ids = new ArrayList<>();
			this.client.get("/states?match=" + pattern + "&limit=1000").json().get("items")
				.forEach((item) -> ids.add(item.get("id").asString()));
			return ids;
		}

		/**
		 * Meltano's {@code update()}: a complete state replaces; an incomplete one merges its
		 * {@code partial} into the stored one and keeps {@code completed}. The merge runs on the
		 * server (a merge patch), so it needs no lock and no read-modify-write by the client.
		 */
		void update(String id, String state) {
			JsonNode node = JSON.readTree(state);
			boolean complete = node.has("completed") && !node.get("completed").isEmpty();
			if (complete) {
				set(id, state);
			}
			else {
				String patch = "{\"partial\":" + node.get("partial").toString() + "}";
				assertThat(this.client.patch("/states/" + id, patch).status()).isIn(200, 201);
			}
		}

	}

}
