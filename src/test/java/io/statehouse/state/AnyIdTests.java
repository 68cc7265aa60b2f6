package io.statehouse.state;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import io.statehouse.support.OddIds;
import io.statehouse.support.StatehouseClient;
import io.statehouse.support.StatehouseTest;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;

import static io.statehouse.support.StatehouseClient.segment;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * An id is any text of 1-255 characters without control characters (Meltano keeps state ids as
 * free text): every operation works on such ids, percent-encoded in the path. (Text that is not
 * an id: StateValidationTests.)
 */
@StatehouseTest
class AnyIdTests {

	/** Odd ids, under the prefix any-id: (7 characters; the longest make 255). */
	private static final List<String> IDS = OddIds.IDS;

	@Autowired
	StatehouseClient client;

	@Test
	void everyOperationWorksOnAnyId() {
		List<String> ids = new ArrayList<>();
		for (String odd : IDS) {
			ids.add("any-id:" + odd);
		}
		for (String id : ids) {
			String path = "/states/" + segment(id);
			StatehouseClient.Response created = this.client.put(path, "{\"id\":" + json(id) + "}");
			assertThat(created.status()).as(id).isEqualTo(201);
			assertThat(URLDecoder.decode(created.header("Location").orElseThrow().replace("+", "%2B"),
					StandardCharsets.UTF_8))
				.as(id)
				.isEqualTo("/states/" + id);
			assertThat(this.client.patch(path, "{\"n\":2}").status()).as(id).isEqualTo(200);
			StatehouseClient.Response read = this.client.get(path);
			assertThat(read.json().get("id").asString()).as(id).isEqualTo(id);
			assertThat(read.json().get("n").asInt()).isEqualTo(2);
			assertThat(this.client.get(path + "/versions").json()).as(id).hasSize(2);
			assertThat(this.client.get(path + "?version=1").json().has("n")).isFalse();
			assertThat(this.client.put(path, "{}", "If-Match", "\"2\"").status()).as(id).isEqualTo(200);

			String lock = "/locks/" + segment(id);
			StatehouseClient.Response grant = this.client.send("POST", lock, "application/json",
					"{\"owner\":\"any-id\",\"ttlSeconds\":30}".getBytes(StandardCharsets.UTF_8));
			assertThat(grant.status()).as(id).isEqualTo(201);
			assertThat(grant.json().get("id").asString()).isEqualTo(id);
			assertThat(this.client.get(lock).json().get("id").asString()).isEqualTo(id);
			assertThat(this.client.put(path, "{\"locked\":true}", "Lock-Token", grant.token()).status()).isEqualTo(200);
			assertThat(this.client.put(lock, "{}", "Lock-Token", grant.token()).status()).isEqualTo(200);
			assertThat(this.client.delete(lock, "Lock-Token", grant.token()).status()).as(id).isEqualTo(204);
		}

		// A listing pages through every one of them, in id order, by cursor; a prefix finds each.
		List<String> listed = new ArrayList<>();
		String cursor = null;
		do {
			StatehouseClient.Response page = this.client.get("/states?prefix=any-id:&limit=7"
					+ ((cursor != null) ? "&cursor=" + cursor : ""));
			page.json().get("items").forEach((item) -> listed.add(item.get("id").asString()));
			cursor = page.json().get("nextCursor").isNull() ? null : page.json().get("nextCursor").asString();
		}
		while (cursor != null);
		assertThat(listed).containsExactlyInAnyOrderElementsOf(ids);
		assertThat(listed).isSortedAccordingTo((a, b) -> java.util.Arrays.compareUnsigned(a.getBytes(StandardCharsets.UTF_8),
				b.getBytes(StandardCharsets.UTF_8)));
		for (String id : ids) {
			StatehouseClient.Response found = this.client.get("/states?prefix=" + segment(id));
			assertThat(found.json().get("items").valueStream().map((item) -> item.get("id").asString()))
				.as(id)
				.contains(id);
		}

		// Globs: * and ? are the only wildcards; % and _ match themselves, ? one character (a code point).
		assertThat(matching("any-id:x%y")).containsExactly("any-id:x%y");
		assertThat(matching("any-id:a_b")).containsExactly("any-id:a_b");
		assertThat(matching("any-id:caf?")).containsExactly("any-id:café");
		assertThat(matching("any-id:emoji ? and ?")).containsExactly("any-id:emoji 😀 and 𝄞");
		assertThat(matching("any-id:*/*")).containsExactlyInAnyOrder("any-id:team/pipeline", "any-id:a//b",
				"any-id:ends/", "any-id:/starts");
		assertThat(this.client.delete("/states?match=" + segment("any-id:*/*")).json().get("deleted").asInt())
			.isEqualTo(4);
		assertThat(this.client.get("/states/" + segment("any-id:team/pipeline")).status()).isEqualTo(404);
		assertThat(this.client.get("/states/" + segment("any-id:x%y")).status()).isEqualTo(200);

		for (String id : ids) {
			if (!id.contains("/")) {
				assertThat(this.client.delete("/states/" + segment(id)).status()).as(id).isEqualTo(204);
			}
		}
	}

	private List<String> matching(String glob) {
		return this.client.get("/states?match=" + segment(glob))
			.json()
			.get("items")
			.valueStream()
			.map((item) -> item.get("id").asString())
			.toList();
	}

	private static String json(String text) {
		return tools.jackson.databind.json.JsonMapper.builder().build().writeValueAsString(text);
	}

}
