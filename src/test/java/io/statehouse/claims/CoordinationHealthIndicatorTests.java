package io.statehouse.claims;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import com.clickhouse.jdbc.Driver;
import io.statehouse.clickhouse.ClickHouseSchema;
import io.statehouse.clickhouse.TestSchemas;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.SimpleDriverDataSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The {@code coordination} health is what the arbiter says of itself. Keeper's, down while
 * ClickHouse has no Keeper session and up again once it has, is shown with a real ZooKeeper
 * killed ({@code KeeperFaultTests}).
 */
@Tag("fast")
class CoordinationHealthIndicatorTests {

	@Test
	void commitOrderIsUpAndSaysWhoDecides() {
		Health health = new CoordinationHealthIndicator(new CommitOrderArbiter()).health();
		assertThat(health.getStatus()).isEqualTo(Status.UP);
		assertThat(health.getDetails()).containsExactly(Map.entry("arbiter", "commit-order"));
	}

	@Test
	void keeperThatCannotBeAskedIsDownAndSaysWhy() {
		// Nothing listens on port 1: ClickHouse, and so its Keeper, cannot be asked.
		SimpleDriverDataSource nowhere = new SimpleDriverDataSource(new Driver(), "jdbc:clickhouse://127.0.0.1:1");
		ClickHouseSchema schema = TestSchemas.keeperNotCreated(nowhere, "statehouse", Duration.ofSeconds(30),
				List.of(KeeperArbiter.claimsTable()));
		KeeperArbiter keeper = new KeeperArbiter(new JdbcTemplate(nowhere), schema, Duration.ofSeconds(30),
				Duration.ofSeconds(5));
		Health health = new CoordinationHealthIndicator(keeper).health();
		assertThat(health.getStatus()).isEqualTo(Status.DOWN);
		assertThat(health.getDetails()).containsEntry("arbiter", "keeper")
			.containsEntry("error", "ClickHouse is not reachable");
	}

}
