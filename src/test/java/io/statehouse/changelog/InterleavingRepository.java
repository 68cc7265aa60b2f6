package io.statehouse.changelog;

import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.Supplier;

import io.statehouse.claims.ClaimKey;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Primary;
import org.springframework.dao.DataAccessResourceFailureException;

/**
 * The writer's real repository with seams between its statements, so that a test can make a
 * dangerous interleaving happen deterministically: run the materializer between a batch's
 * INSERT and its read-back, append a competing claim, lose an answer.
 */
class InterleavingRepository implements ChangelogRepository {

	private final ChangelogRepository delegate;

	volatile @Nullable Consumer<List<VersionClaim>> beforeAppend;

	volatile @Nullable Consumer<List<VersionClaim>> afterAppend;

	/** Told the ids of every read of the newest versions, before it is read. */
	volatile @Nullable Consumer<Collection<String>> beforeNewest;

	/** Told the ids of every read of the newest versions, once it is read. */
	volatile @Nullable Consumer<Collection<String>> afterNewest;

	/** Told the keys of every read of idempotency keys' rows, before it is read. */
	volatile @Nullable Consumer<Collection<IdempotencyKey>> beforeReplays;

	/** Told the keys of every read of idempotency keys' rows once the rows are read, before the heads are asked for. */
	volatile @Nullable Consumer<Collection<IdempotencyKey>> afterReplayRows;

	/** Appends, then fails as if the answer was lost on the way back. */
	volatile boolean loseAppendAnswer;

	/** The next read-backs fail as if ClickHouse did not answer. */
	final AtomicInteger failingVerdicts = new AtomicInteger();

	InterleavingRepository(ChangelogRepository delegate) {
		this.delegate = delegate;
	}

	void reset() {
		this.beforeAppend = null;
		this.afterAppend = null;
		this.beforeNewest = null;
		this.afterNewest = null;
		this.beforeReplays = null;
		this.afterReplayRows = null;
		this.loseAppendAnswer = false;
		this.failingVerdicts.set(0);
	}

	/** Appends claims past the hooks, as another writer would. */
	void appendDirectly(List<VersionClaim> claims) {
		this.delegate.append(claims);
	}

	@Override
	public Set<VersionClaim> written(List<VersionClaim> claims) {
		return this.delegate.written(claims);
	}

	@Override
	public Map<String, Head> newest(Collection<String> ids, long fromPosition) {
		Consumer<Collection<String>> before = this.beforeNewest;
		if (before != null) {
			before.accept(ids);
		}
		Map<String, Head> newest = this.delegate.newest(ids, fromPosition);
		Consumer<Collection<String>> after = this.afterNewest;
		if (after != null) {
			after.accept(ids);
		}
		return newest;
	}

	@Override
	public Map<IdempotencyKey, Replay> replays(Collection<IdempotencyKey> keys, Supplier<Map<String, Head>> heads) {
		Consumer<Collection<IdempotencyKey>> before = this.beforeReplays;
		if (before != null) {
			before.accept(keys);
		}
		return this.delegate.replays(keys, () -> {
			Consumer<Collection<IdempotencyKey>> after = this.afterReplayRows;
			if (after != null) {
				after.accept(keys);
			}
			return heads.get();
		});
	}

	@Override
	public void append(List<VersionClaim> claims) {
		Consumer<List<VersionClaim>> before = this.beforeAppend;
		if (before != null) {
			before.accept(claims);
		}
		this.delegate.append(claims);
		Consumer<List<VersionClaim>> after = this.afterAppend;
		if (after != null) {
			after.accept(claims);
		}
		if (this.loseAppendAnswer) {
			throw new DataAccessResourceFailureException("injected: the INSERT's answer was lost",
					new java.io.IOException("connection reset"));
		}
	}

	@Override
	public Map<VersionClaim, Verdict> verdicts(List<VersionClaim> claims, long fromPosition) {
		if (this.failingVerdicts.getAndUpdate((n) -> Math.max(0, n - 1)) > 0) {
			throw new DataAccessResourceFailureException("injected: ClickHouse does not answer",
					new java.net.ConnectException("connection refused"));
		}
		return this.delegate.verdicts(claims, fromPosition);
	}

	@Override
	public Map<VersionClaim, Verdict> verdictsByHolders(List<VersionClaim> claims,
			Map<ClaimKey, @Nullable UUID> holders) {
		return this.delegate.verdictsByHolders(claims, holders);
	}

	@Override
	public List<StateSummary> list(String prefix, String likePattern, List<String> visible, @Nullable String after,
			int limit, long fromPosition) {
		return this.delegate.list(prefix, likePattern, visible, after, limit, fromPosition);
	}

	@Override
	public List<StateSummary> listWithDeleted(String prefix, String likePattern, List<String> visible,
			@Nullable String after, int limit, long fromPosition) {
		return this.delegate.listWithDeleted(prefix, likePattern, visible, after, limit, fromPosition);
	}

	@Override
	public Optional<StoredState> version(String id, long version) {
		return this.delegate.version(id, version);
	}

	@Override
	public boolean skipped(String id, long version) {
		return this.delegate.skipped(id, version);
	}

	@Override
	public List<VersionInfo> history(String id) {
		return this.delegate.history(id);
	}

	@Override
	public Map<String, List<VersionInfo>> histories(Collection<String> ids) {
		return this.delegate.histories(ids);
	}

	@Override
	public Map<String, Map<Long, StoredState>> versions(Map<String, ? extends Collection<Long>> wanted) {
		return this.delegate.versions(wanted);
	}

	@Override
	public List<FeedRow> changes(FeedCursor after, int limit) {
		return this.delegate.changes(after, limit);
	}

	@Override
	public long floor() {
		return this.delegate.floor();
	}

	@Override
	public Set<UUID> won(Collection<FeedRow> rows) {
		return this.delegate.won(rows);
	}

	/** Puts the seams in front of the application's repositories. */
	@TestConfiguration(proxyBeanMethods = false)
	static class Seams {

		@Bean
		@Primary
		InterleavingRepository interleavingRepository(ClickHouseChangelogRepository repository) {
			return new InterleavingRepository(repository);
		}

		@Bean
		@Primary
		InterleavingMaterializerRepository interleavingMaterializerRepository(
				ClickHouseMaterializerRepository repository) {
			return new InterleavingMaterializerRepository(repository);
		}

	}

}
