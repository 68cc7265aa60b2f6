package io.statehouse;

import java.util.List;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import org.springframework.modulith.core.ApplicationModule;
import org.springframework.modulith.core.ApplicationModules;
import org.springframework.modulith.docs.Documenter;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The module boundaries: the packages under {@code io.statehouse} are modules, a module uses
 * only another's top-level package (its API, never a sub-package) and only the modules its
 * {@code package-info} allows, and no module depends on itself through others. {@code web} knows
 * no feature; features know {@code shared}, {@code clickhouse}, {@code claims} (who won a version
 * or a lock slot) and the changelog's {@code StateStore}; {@code claims} knows only
 * {@code clickhouse}, which knows no module.
 */
@Tag("fast")
class ModularityTests {

	private final ApplicationModules modules = ApplicationModules.of(StatehouseApplication.class);

	@Test
	void modulesDependOnEachOtherOnlyThroughTheirApisAndWithoutCycles() {
		this.modules.verify();
	}

	@Test
	void coordinationIsAModuleOfItsOwnBetweenTheFeaturesAndClickHouse() {
		assertThat(uses("claims")).containsExactly("clickhouse");
		assertThat(uses("changelog")).contains("claims", "clickhouse");
		assertThat(uses("lock")).contains("claims", "clickhouse", "changelog");
		assertThat(uses("clickhouse")).isEmpty();
	}

	@Test
	void documentsTheModules() {
		// target/spring-modulith-docs: a C4 component diagram and a canvas per module.
		new Documenter(this.modules).writeDocumentation();
	}

	/** The modules {@code name} uses directly, by name. */
	private List<String> uses(String name) {
		return this.modules.getModuleByName(name)
			.orElseThrow()
			.getDirectDependencies(this.modules)
			.uniqueModules()
			.map(ApplicationModule::getName)
			.toList();
	}

}
