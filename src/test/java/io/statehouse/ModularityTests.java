package io.statehouse;

import org.junit.jupiter.api.Test;

import org.springframework.modulith.core.ApplicationModules;
import org.springframework.modulith.docs.Documenter;

/**
 * The module boundaries: the packages under {@code io.statehouse} are modules, a module uses
 * only another's top-level package (its API, never a sub-package), and no module depends on
 * itself through others. {@code web} knows no feature; features know {@code shared},
 * {@code clickhouse} and the changelog's {@code StateStore}.
 */
class ModularityTests {

	private final ApplicationModules modules = ApplicationModules.of(StatehouseApplication.class);

	@Test
	void modulesDependOnEachOtherOnlyThroughTheirApisAndWithoutCycles() {
		this.modules.verify();
	}

	@Test
	void documentsTheModules() {
		// target/spring-modulith-docs: a C4 component diagram and a canvas per module.
		new Documenter(this.modules).writeDocumentation();
	}

}
