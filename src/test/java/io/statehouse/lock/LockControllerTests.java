package io.statehouse.lock;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;

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
import static org.mockito.BDDMockito.given;
import static org.mockito.BDDMockito.then;
import static org.mockito.Mockito.never;

/**
 * The HTTP rules of {@code /locks} — statuses, the {@code Lock-Token} header, defaults and
 * limits of a request, problems — with the service mocked.
 */
@Tag("fast")
@WebMvcTest(LockController.class)
class LockControllerTests {

	private static final UUID TOKEN = UUID.randomUUID();

	private static final Lease LEASE = new Lease("job:1", TOKEN, 42, "run-1", "open", Instant.parse("2026-11-30T12:00:00Z"),
			Instant.parse("2026-11-30T12:01:00Z"));

	@Autowired
	MockMvcTester mvc;

	@MockitoBean
	LockService locks;

	@Test
	void aGrantIs201WithItsTokenInTheBodyAndTheHeaderAndTheDefaults() throws Exception {
		given(this.locks.acquire("job:1", "run-1", "open", Duration.ofSeconds(60), Duration.ZERO))
			.willReturn(CompletableFuture.completedFuture(LEASE));
		assertThat(this.mvc.post().uri("/locks/job:1").contentType(MediaType.APPLICATION_JSON).content("{\"owner\":\"run-1\"}"))
			.hasStatus(HttpStatus.CREATED)
			.hasHeader("Lock-Token", TOKEN.toString())
			.bodyJson()
			.hasPathSatisfying("$.token", (token) -> token.assertThat().isEqualTo(TOKEN.toString()))
			.hasPathSatisfying("$.fencingToken", (fencing) -> fencing.assertThat().isEqualTo(42));
	}

	@ParameterizedTest
	@ValueSource(strings = { "{}", "{\"owner\":\"\"}", "{\"owner\":\"x\",\"ttlSeconds\":0}",
			"{\"owner\":\"x\",\"ttlSeconds\":3601}", "{\"owner\":\"x\",\"waitSeconds\":61}", "[]",
			"{\"owner\":\"x\",\"ttlSeconds\":1.9}", "{\"owner\":\"x\",\"ttlSeconds\":\"7\"}",
			"{\"owner\":\"x\",\"ttl\":30}" })
	void aRequestOutsideItsLimitsIs400AndAsksNothing(String body) throws Exception {
		assertThat(this.mvc.post().uri("/locks/job:1").contentType(MediaType.APPLICATION_JSON).content(body))
			.hasStatus(HttpStatus.BAD_REQUEST)
			.hasContentType("application/problem+json");
		then(this.locks).shouldHaveNoInteractions();
	}

	@Test
	void aHeldLockIs423WithTheHolderButNotItsTokenAndHowManyWaitAhead() throws Exception {
		given(this.locks.acquire(any(), any(), any(), any(), any()))
			.willThrow(new LockHeldException("job:1", LEASE, 3, 2));
		assertThat(this.mvc.post().uri("/locks/job:1").contentType(MediaType.APPLICATION_JSON).content("{\"owner\":\"run-2\"}"))
			.hasStatus(HttpStatus.LOCKED)
			.bodyJson()
			.hasPathSatisfying("$.holder.owner", (owner) -> owner.assertThat().isEqualTo("run-1"))
			.hasPathSatisfying("$.holder.waiting", (waiting) -> waiting.assertThat().isEqualTo(3))
			.hasPathSatisfying("$.waitingAhead", (ahead) -> ahead.assertThat().isEqualTo(2))
			.doesNotHavePath("$.holder.token");
	}

	@Test
	void aFreeLockThatOthersAskedForFirstIs423WithoutAHolder() throws Exception {
		given(this.locks.acquire(any(), any(), any(), any(), any()))
			.willThrow(new LockHeldException("job:1", null, 1, 1));
		assertThat(this.mvc.post().uri("/locks/job:1").contentType(MediaType.APPLICATION_JSON).content("{\"owner\":\"run-2\"}"))
			.hasStatus(HttpStatus.LOCKED)
			.bodyJson()
			.hasPathSatisfying("$.waitingAhead", (ahead) -> ahead.assertThat().isEqualTo(1))
			.hasPathSatisfying("$.detail", (detail) -> detail.assertThat().asString().contains("is free"))
			.doesNotHavePath("$.holder");
	}

	@Test
	void aReleaseNeedsTheHoldersTokenOrForce() throws Exception {
		assertThat(this.mvc.delete().uri("/locks/job:1").header("Lock-Token", "not-a-token"))
			.hasStatus(HttpStatus.BAD_REQUEST);
		assertThat(this.mvc.delete().uri("/locks/job:1?force=true").header("Lock-Token", "not-a-token"))
			.hasStatus(HttpStatus.BAD_REQUEST);
		then(this.locks).shouldHaveNoInteractions();
		// Whoever shows no token does not hold the lock: 409, or 404 when nothing holds it.
		given(this.locks.get("job:1")).willReturn(new LockStatus(LEASE, 0));
		assertThat(this.mvc.delete().uri("/locks/job:1")).hasStatus(HttpStatus.CONFLICT);
		given(this.locks.get("job:2")).willThrow(LockNotFoundException.forId("job:2"));
		assertThat(this.mvc.delete().uri("/locks/job:2")).hasStatus(HttpStatus.NOT_FOUND);
		then(this.locks).should(never()).release(any(), any());
		then(this.locks).should(never()).forceRelease(any());
		assertThat(this.mvc.delete().uri("/locks/job:1").header("Lock-Token", TOKEN.toString()))
			.hasStatus(HttpStatus.NO_CONTENT);
		then(this.locks).should().release("job:1", new LockToken(TOKEN));
		assertThat(this.mvc.delete().uri("/locks/job:1?force=true")).hasStatus(HttpStatus.NO_CONTENT);
		then(this.locks).should().forceRelease("job:1");
	}

	@Test
	void aRenewalWithoutATtlKeepsTheLeasesOwnAndAConflictIs409() throws Exception {
		given(this.locks.renew("job:1", new LockToken(TOKEN), null)).willReturn(LEASE);
		assertThat(this.mvc.put().uri("/locks/job:1").header("Lock-Token", TOKEN.toString())).hasStatusOk();
		given(this.locks.renew("job:1", new LockToken(TOKEN), Duration.ofSeconds(5)))
			.willThrow(LockConflictException.notHolder("job:1"));
		assertThat(this.mvc.put()
			.uri("/locks/job:1")
			.header("Lock-Token", TOKEN.toString())
			.contentType(MediaType.APPLICATION_JSON)
			.content("{\"ttlSeconds\":5}")).hasStatus(HttpStatus.CONFLICT)
			.bodyJson()
			.extractingPath("$.type")
			.isEqualTo("urn:statehouse:problem:lock-conflict");
	}

	@Test
	void theListingPagesAndNeverShowsTokens() throws Exception {
		given(this.locks.live("job:", 2, null, IdScope.ANY)).willReturn(new Page<>(List.of(new LockStatus(LEASE, 0)), "am9iOjE"));
		assertThat(this.mvc.get().uri("/locks?prefix=job:&limit=2")).hasStatusOk()
			.bodyJson()
			.hasPathSatisfying("$.nextCursor", (cursor) -> cursor.assertThat().isEqualTo("am9iOjE"))
			.doesNotHavePath("$.items[0].token");
		assertThat(this.mvc.get().uri("/locks?limit=1001")).hasStatus(HttpStatus.BAD_REQUEST);
		then(this.locks).should().live(any(), anyInt(), any(), any());
	}

}
