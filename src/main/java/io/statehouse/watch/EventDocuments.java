package io.statehouse.watch;

import java.time.Duration;
import java.util.Optional;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.statehouse.changelog.ChangeEvent;
import io.statehouse.changelog.StateStore;
import io.statehouse.changelog.StoredState;
import org.jspecify.annotations.Nullable;

/**
 * The documents of changes, for streams that asked for them: each version read once however many
 * streams send it (kept a minute, {@value #MAX_BYTES} bytes of documents at most), none read for
 * streams that did not ask.
 */
class EventDocuments {

	private static final long MAX_BYTES = 64L * 1024 * 1024;

	private final Versions states;

	private final Cache<Version, Optional<String>> recent = Caffeine.newBuilder()
		.maximumWeight(MAX_BYTES)
		.<Version, Optional<String>>weigher((version, document) -> 64 + document.map(String::length).orElse(0))
		.expireAfterWrite(Duration.ofMinutes(1))
		.build();

	/** @param states reads a version of a state ({@link StateStore#version}) */
	EventDocuments(Versions states) {
		this.states = states;
	}

	/**
	 * The document the change wrote: {@code null} for a delete, and for a version no longer retained.
	 * @throws org.springframework.dao.DataAccessException when it cannot be read
	 */
	@Nullable String of(ChangeEvent change) {
		return this.recent.get(new Version(change.id(), change.version()), this::read).orElse(null);
	}

	private Optional<String> read(Version version) {
		return this.states.version(version.id(), version.version())
			.filter((state) -> !state.deleted())
			.map(StoredState::document);
	}

	private record Version(String id, long version) {
	}

	/** Reads one version of a state. */
	@FunctionalInterface
	interface Versions {

		Optional<StoredState> version(String id, long version);

	}

}
