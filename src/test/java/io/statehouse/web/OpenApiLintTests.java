package io.statehouse.web;

import io.statehouse.support.NpmTools;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code openapi.yaml} as Redocly's linter judges it, with the committed {@code redocly.yaml}:
 * every recommended rule (security rules included), warnings as errors.
 */
@Tag("fast")
class OpenApiLintTests {

	@Test
	void redoclyFindsNothingInTheCommittedDescription() throws Exception {
		NpmTools.Result lint = NpmTools.run("redocly", "lint", "openapi.yaml", "--config", "redocly.yaml", "--format",
				"stylish");
		assertThat(lint.exitValue()).as(lint.output()).isZero();
		assertThat(lint.output()).as(lint.output()).contains("Your API description is valid");
	}

}
