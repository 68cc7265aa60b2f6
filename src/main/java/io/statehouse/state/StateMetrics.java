package io.statehouse.state;

import java.nio.charset.StandardCharsets;
import java.util.Locale;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.statehouse.changelog.Committed;
import io.statehouse.changelog.StoredState;
import io.statehouse.shared.ProblemException;

import org.springframework.stereotype.Component;

/**
 * What the state API writes: writes by operation and outcome (written, replayed, or the kind of
 * problem that refused it), and the size of the documents written. No id or caller is a tag.
 */
@Component
class StateMetrics {

	/** The operations a write is counted under. */
	enum Write {

		PUT, PATCH, DELETE, RESTORE, CLEAR, RESTORE_MATCHING, IMPORT;

		final String tag = name().toLowerCase(Locale.ROOT);

	}

	private final Meter.MeterProvider<Counter> writes;

	private final DistributionSummary documentSizes;

	StateMetrics(MeterRegistry meters) {
		this.writes = Counter.builder("statehouse.state.writes")
			.description("State writes by operation (put, patch, delete, restore, clear: a glob delete, restore_matching: a glob restored to a point in time, import: an import of an export) and outcome: "
					+ "written, replayed (an idempotent retry), or the problem that refused it")
			.withRegistry(meters);
		this.documentSizes = DistributionSummary.builder("statehouse.state.document.size")
			.description("Size of the documents PUT, PATCH and restore wrote (a PATCH's: the merged document), UTF-8")
			.baseUnit("bytes")
			.register(meters);
	}

	/** A write as the service runs it (reading a request's body may fail: {@code E}). */
	@FunctionalInterface
	interface WriteCall<T, E extends Exception> {

		T run() throws E;

	}

	/** Runs a write and counts its outcome; the size of the document it wrote, if it wrote one. */
	<E extends Exception> Committed write(Write operation, WriteCall<Committed, E> write) throws E {
		Committed committed = counted(operation, write);
		StoredState state = committed.state();
		if (!committed.replayed() && !state.deleted()) {
			this.documentSizes.record(state.document().getBytes(StandardCharsets.UTF_8).length);
		}
		return committed;
	}

	/** Runs a write and counts its outcome. */
	<T, E extends Exception> T counted(Write operation, WriteCall<T, E> write) throws E {
		T result;
		try {
			result = write.run();
		}
		catch (ProblemException ex) {
			count(operation, ex.kind());
			throw ex;
		}
		catch (Exception ex) {
			count(operation, "error");
			throw ex;
		}
		count(operation, (result instanceof Committed committed && committed.replayed()) ? "replayed" : "written");
		return result;
	}

	private void count(Write operation, String outcome) {
		this.writes.withTags("operation", operation.tag, "outcome", outcome).increment();
	}

}
