package io.statehouse.state;

import java.io.File;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import io.statehouse.support.CriticalSections;
import io.statehouse.support.StatehouseClient;
import io.statehouse.support.StatehouseClient.Response;
import org.junit.jupiter.api.Test;
import org.testcontainers.containers.ComposeContainer;
import org.testcontainers.containers.wait.strategy.Wait;
import org.testcontainers.junit.jupiter.Testcontainers;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The writers' race suite on a real replicated cluster — {@code docker-compose.cluster.yml}:
 * three ClickHouse Keeper nodes, two ClickHouse replicas, a Statehouse instance on each replica,
 * claims decided by Keeper — and a lock raced from both replicas. Needs Docker: skipped where
 * there is none.
 */
@Testcontainers(disabledWithoutDocker = true)
class ClusterMultiInstanceWritersTests extends MultiInstanceWritersTests {

	private static final List<String> INSTANCES = List.of("statehouse1", "statehouse2");

	@Override
	List<StatehouseClient> startInstances(Path directory) {
		ComposeContainer cluster = new ComposeContainer(new File("docker-compose.cluster.yml")).withBuild(true)
			.withStartupTimeout(Duration.ofMinutes(15));
		for (String instance : INSTANCES) {
			cluster.withExposedService(instance, 8080,
					Wait.forHttp("/actuator/health/readiness").forStatusCode(200)
						.withStartupTimeout(Duration.ofMinutes(15)));
		}
		cluster.start();
		this.deployment = cluster::stop;
		return INSTANCES.stream()
			.map((instance) -> new StatehouseClient("http://" + cluster.getServiceHost(instance, 8080) + ":"
					+ cluster.getServicePort(instance, 8080)))
			.toList();
	}

	@Test
	void aWriteAcknowledgedOnOneReplicaIsReadOnTheOtherAtOnce() {
		for (int n = 1; n <= 50; n++) {
			Response written = this.clients.get(n % 2).put("/states/cluster:read-your-write", "{\"n\":" + n + "}");
			Response read = this.clients.get((n + 1) % 2).get("/states/cluster:read-your-write");
			assertThat(read.version()).isEqualTo(written.version());
			assertThat(read.body()).isEqualTo("{\"n\":" + n + "}");
		}
	}

	@Test
	void criticalSectionsOfSixteenWorkersOnTwoReplicasNeverOverlap() throws Exception {
		CriticalSections.neverOverlap(this.clients, "cluster:section", 16);
	}

}
