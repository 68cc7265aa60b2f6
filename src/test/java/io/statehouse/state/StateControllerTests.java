package io.statehouse.state;

import java.io.InputStream;
import java.time.Instant;
import java.util.List;
import java.util.UUID;

import io.statehouse.changelog.Committed;
import io.statehouse.changelog.StateSummary;
import io.statehouse.changelog.StoredState;
import io.statehouse.lock.LockToken;
import io.statehouse.shared.IdScope;
import io.statehouse.shared.Page;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.webmvc.test.autoconfigure.WebMvcTest;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.test.context.bean.override.mockito.MockitoBean;
import org.springframework.test.web.servlet.assertj.MockMvcTester;

import static org.assertj.core.api.Assertions.assertThat;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.ArgumentMatchers.anyInt;
import static org.mockito.ArgumentMatchers.eq;
import static org.mockito.ArgumentMatchers.isNull;
import static org.mockito.BDDMockito.given;
import static org.mockito.BDDMockito.then;
import static org.mockito.Mockito.never;

/**
 * The HTTP rules of {@code /states} — statuses, headers, how conditions are read, problems —
 * with the service mocked: what the service decides is tested on a real engine elsewhere.
 */
@Tag("fast")
@WebMvcTest(StateController.class)
class StateControllerTests {

	private static final Instant UPDATED = Instant.parse("2026-11-30T12:00:00Z");

	@Autowired
	MockMvcTester mvc;

	@MockitoBean
	StateService states;

	@MockitoBean
	WaitingReads waitingReads;

	@Test
	void putThatCreatesAnswers201WithLocationAndEtag() throws Exception {
		given(this.states.put(eq("a:b"), any(InputStream.class), any(), eq("open"))).willReturn(committed(1, true, false));
		assertThat(this.mvc.put().uri("/states/a:b").contentType(MediaType.APPLICATION_JSON).content("{\"v\":1}"))
			.hasStatus(HttpStatus.CREATED)
			.hasHeader("ETag", "\"1\"")
			.hasHeader("Location", "/states/a:b")
			.doesNotContainHeader("Idempotent-Replayed")
			.bodyText()
			.isEqualTo("{\"v\":1}");
	}

	@Test
	void putThatReplacesAnswers200AndAReplaySaysSo() throws Exception {
		given(this.states.put(eq("a:b"), any(InputStream.class), any(), eq("open"))).willReturn(committed(4, false, true));
		assertThat(this.mvc.put().uri("/states/a:b").contentType(MediaType.APPLICATION_JSON).content("{\"v\":1}"))
			.hasStatusOk()
			.hasHeader("ETag", "\"4\"")
			.hasHeader("Idempotent-Replayed", "true")
			.doesNotContainHeader("Location");
	}

	@Test
	void conditionsAndTheLeaseAreReadFromTheHeaders() throws Exception {
		UUID token = UUID.randomUUID();
		given(this.states.put(eq("a:b"), any(InputStream.class), any(), eq("open"))).willReturn(committed(3, false, false));
		assertThat(this.mvc.put()
			.uri("/states/a:b")
			.contentType(MediaType.APPLICATION_JSON)
			.content("{}")
			.header("If-Match", "\"2\"")
			.header("Lock-Token", " " + token + " ")
			.header("Idempotency-Key", "run-7")).hasStatusOk();
		then(this.states).should()
			.put(eq("a:b"), any(InputStream.class), eq(new WriteConditions(new Preconditions(2L, false, false),
					new LockToken(token), "run-7")), eq("open"));
	}

	@ParameterizedTest
	@ValueSource(strings = { "If-Match:2", "If-Match:\"x\"", "If-None-Match:\"1\"", "Lock-Token:not-a-token",
			"Idempotency-Key:has space" })
	void aMalformedConditionIs400AndReachesNoService(String header) throws Exception {
		String[] nameAndValue = header.split(":", 2);
		assertThat(this.mvc.put()
			.uri("/states/a:b")
			.contentType(MediaType.APPLICATION_JSON)
			.content("{}")
			.header(nameAndValue[0], nameAndValue[1])).hasStatus(HttpStatus.BAD_REQUEST)
			.hasContentType("application/problem+json")
			.bodyJson()
			.extractingPath("$.type")
			.isEqualTo("urn:statehouse:problem:invalid-request");
		then(this.states).shouldHaveNoInteractions();
	}

	@Test
	void aMalformedIdIsReportedBeforeAMalformedCondition() throws Exception {
		assertThat(this.mvc.put()
			.uri("/states/" + "a".repeat(256))
			.contentType(MediaType.APPLICATION_JSON)
			.content("{}")
			.header("If-Match", "2")
			.header("Idempotency-Key", "has space")).hasStatus(HttpStatus.BAD_REQUEST)
			.bodyJson()
			.extractingPath("$.detail")
			.asString()
			.startsWith("id: ");
		then(this.states).shouldHaveNoInteractions();
	}

	@Test
	void aConditionSentTwiceIsReadAsAListAndRefused() throws Exception {
		assertThat(this.mvc.put()
			.uri("/states/a:b")
			.contentType(MediaType.APPLICATION_JSON)
			.content("{}")
			.header("If-None-Match", "*", "*")).hasStatus(HttpStatus.BAD_REQUEST)
			.bodyJson()
			.extractingPath("$.detail")
			.isEqualTo("If-None-Match on a write must be * (create only).");
		then(this.states).shouldHaveNoInteractions();
	}

	@Test
	void deleteReadsNoIfNoneMatch() throws Exception {
		given(this.states.delete(eq("a:b"), any(), eq("open"))).willReturn(committed(6, false, false));
		assertThat(this.mvc.delete().uri("/states/a:b").header("If-None-Match", "\"1\"").header("Idempotency-Key", "k-1"))
			.hasStatus(HttpStatus.NO_CONTENT);
		then(this.states).should()
			.delete(eq("a:b"), eq(new WriteConditions(new Preconditions(null, false, false), null, "k-1")), eq("open"));
	}

	@Test
	void aFailedPreconditionIs412WithTheCurrentVersion() throws Exception {
		given(this.states.delete(eq("a:b"), any(), eq("open")))
			.willThrow(new PreconditionFailedException("State 'a:b' is at version 5, not 2.", 5L));
		assertThat(this.mvc.delete().uri("/states/a:b").header("If-Match", "\"2\""))
			.hasStatus(HttpStatus.PRECONDITION_FAILED)
			.bodyJson()
			.hasPathSatisfying("$.type", (type) -> type.assertThat().isEqualTo("urn:statehouse:problem:precondition-failed"))
			.hasPathSatisfying("$.currentVersion", (version) -> version.assertThat().isEqualTo(5));
	}

	@Test
	void deleteAnswers204WithTheTombstonesEtag() throws Exception {
		given(this.states.delete(eq("a:b"), any(), eq("open"))).willReturn(committed(6, false, false));
		assertThat(this.mvc.delete().uri("/states/a:b")).hasStatus(HttpStatus.NO_CONTENT).hasHeader("ETag", "\"6\"");
	}

	@Test
	void getWithTheCurrentEtagIsNotModified() throws Exception {
		given(this.states.get("a:b")).willReturn(committed(3, false, false).state());
		assertThat(this.mvc.get().uri("/states/a:b").header("If-None-Match", "\"3\""))
			.hasStatus(HttpStatus.NOT_MODIFIED);
		assertThat(this.mvc.get().uri("/states/a:b").header("If-None-Match", "\"2\"")).hasStatusOk()
			.hasHeader("ETag", "\"3\"");
	}

	@Test
	void aPageSizeOutsideOneToAThousandIs400() throws Exception {
		given(this.states.list(isNull(), isNull(), anyInt(), isNull(), eq(IdScope.ANY))).willReturn(new Page<StateSummary>(
				List.of(new StateSummary("a:b", 1, UPDATED, 2)), "bmV4dA"));
		assertThat(this.mvc.get().uri("/states?limit=1001")).hasStatus(HttpStatus.BAD_REQUEST);
		assertThat(this.mvc.get().uri("/states?limit=0")).hasStatus(HttpStatus.BAD_REQUEST);
		then(this.states).should(never()).list(any(), any(), anyInt(), any(), any());
		assertThat(this.mvc.get().uri("/states")).hasStatusOk()
			.bodyJson()
			.extractingPath("$.nextCursor")
			.isEqualTo("bmV4dA");
		then(this.states).should().list(null, null, Page.DEFAULT_SIZE, null, IdScope.ANY);
	}

	private static Committed committed(long version, boolean created, boolean replayed) {
		return new Committed(new StoredState("a:b", version, false, "{\"v\":1}", 0, UPDATED), created, replayed);
	}

}
