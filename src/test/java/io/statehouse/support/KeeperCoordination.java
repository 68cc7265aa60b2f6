package io.statehouse.support;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import org.springframework.test.context.TestPropertySource;

/**
 * Runs a {@link StatehouseTest} with its claims decided by Keeper: the tests' engine has a real
 * ZooKeeper ({@link TestClickHouse}). A suite runs in both modes by a subclass that carries this.
 * The claim window is the shortest allowed, so that materialization and forgetting happen within
 * a test's time.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Inherited
@TestPropertySource(properties = { "statehouse.clickhouse.coordination=keeper",
		"statehouse.clickhouse.claim-window=" + KeeperCoordination.CLAIM_WINDOW })
public @interface KeeperCoordination {

	/** The claim window of keeper-mode tests. */
	String CLAIM_WINDOW = "4s";

}
