package io.statehouse.clickhouse;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import org.springframework.dao.DataAccessResourceFailureException;
import org.springframework.dao.DataIntegrityViolationException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

@Tag("fast")
class OutageRetryTests {

	private final AtomicInteger tries = new AtomicInteger();

	@Test
	void anOutageIsWaitedOutUntilClickHouseAnswers() {
		OutageRetry retry = new OutageRetry(Duration.ofSeconds(10), Duration.ofMillis(1), Duration.ofMillis(4));
		String answer = retry.run(() -> {
			if (this.tries.incrementAndGet() < 5) {
				throw new DataAccessResourceFailureException("connection refused");
			}
			return "answered";
		});
		assertThat(answer).isEqualTo("answered");
		assertThat(this.tries).hasValue(5);
	}

	@Test
	void theLastOutageIsThrownOnceThePatienceIsSpent() {
		OutageRetry retry = new OutageRetry(Duration.ofMillis(300), Duration.ofMillis(10), Duration.ofMillis(40));
		long started = System.nanoTime();
		assertThatExceptionOfType(DataAccessResourceFailureException.class).isThrownBy(() -> retry.run(() -> {
			throw new DataAccessResourceFailureException("try " + this.tries.incrementAndGet());
		})).withMessage("try " + this.tries.get());
		assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(5));
		assertThat(this.tries.get()).isGreaterThan(2);
	}

	@Test
	void aFailureThatIsNoOutageIsThrownAtOnce() {
		OutageRetry retry = new OutageRetry(Duration.ofSeconds(10), Duration.ofMillis(1), Duration.ofMillis(4));
		assertThatExceptionOfType(DataIntegrityViolationException.class).isThrownBy(() -> retry.run(() -> {
			this.tries.incrementAndGet();
			throw new DataIntegrityViolationException("refused");
		}));
		assertThat(this.tries).hasValue(1);
	}

	@Test
	void withNoPatienceLeftTheWorkIsTriedOnce() {
		OutageRetry retry = new OutageRetry(Duration.ZERO, Duration.ofMillis(1), Duration.ofMillis(4));
		assertThatExceptionOfType(DataAccessResourceFailureException.class).isThrownBy(() -> retry.run(() -> {
			this.tries.incrementAndGet();
			throw new DataAccessResourceFailureException("down");
		}));
		assertThat(this.tries).hasValue(1);
	}

}
