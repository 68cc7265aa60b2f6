package io.statehouse;

import io.statehouse.support.NpmTools;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every compose file as {@code dclint} judges it: the Compose Specification's schema and its best
 * practices (ports bound to an interface, pinned images, ordered keys).
 */
@Tag("fast")
class ComposeFilesTests {

	@Test
	void dclintFindsNothingInAnyComposeFile() throws Exception {
		NpmTools.Result lint = NpmTools.run("dclint", "docker-compose.yml", "docker-compose.cluster.yml");
		assertThat(lint.exitValue()).as(lint.output()).isZero();
		assertThat(lint.output()).as(lint.output()).doesNotContain("warning").doesNotContain("error");
	}

}
