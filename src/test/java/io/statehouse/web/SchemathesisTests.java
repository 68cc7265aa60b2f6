package io.statehouse.web;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import io.statehouse.support.PythonTools;
import io.statehouse.support.StatehouseTest;
import io.statehouse.support.TestTokens;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Schemathesis (installed by the build from PyPI: {@code src/tools/requirements.txt}) against the
 * committed {@code openapi.yaml} and the whole application on a random port: every operation
 * through its coverage, fuzzing and stateful phases (sequences along the contract's links: a PUT
 * to its GET and DELETE, a grant to its renewal and release with the grant's token), with all of
 * its checks (server errors, statuses, content types, response schemas and headers, valid input
 * accepted, invalid input refused, missing headers, undeclared methods, ...), and zero failures.
 * Once open, once with tokens. Seeded and bounded ({@code -Dstatehouse.schemathesis.seed=<n>},
 * {@code -Dstatehouse.schemathesis.examples=<n>} per operation); its settings and the reasons
 * for them are in {@code src/test/schemathesis/}.
 */
class SchemathesisTests {

	private static final long SEED = Long.getLong("statehouse.schemathesis.seed", 20261201L);

	private static final int EXAMPLES = Integer.getInteger("statehouse.schemathesis.examples", 10);

	/** A token with every scope the API's operations name, on every id. */
	private static final String SECRET = "sth_schemathesis-secret-0123456789abcdefghijklmnop";

	@Nested
	@StatehouseTest
	class Open {

		@LocalServerPort
		int port;

		@Test
		void openServiceConformsToTheContract() throws Exception {
			// No token is configured: the service runs open, as the contract's security scheme
			// says it may. No Authorization is generated, and ignored_auth (a request without one
			// must get a 401) does not apply.
			schemathesis(this.port, "--generation-with-security-parameters", "false", "--exclude-checks",
					"ignored_auth");
		}

	}

	@Nested
	@StatehouseTest
	class WithTokens {

		@LocalServerPort
		int port;

		@DynamicPropertySource
		static void token(DynamicPropertyRegistry registry) {
			TestTokens.register(registry, 0, "schemathesis", SECRET, "read,write,admin", "*");
		}

		@Test
		void serviceWithTokensConformsToTheContract() throws Exception {
			schemathesis(this.port, "--header", "Authorization: Bearer " + SECRET);
		}

	}

	private static void schemathesis(int port, String... options) throws Exception {
		// One worker: workers are threads, Hypothesis describes its strategies by parsing their
		// source with ast.parse, and CPython 3.11's AST constructor keeps its recursion depth per
		// interpreter, so two threads parsing at once can fail the run with "SystemError: AST
		// constructor recursion depth mismatch" (seen in CI; python/cpython#106905).
		List<String> args = new ArrayList<>(List.of("--config-file", "src/test/schemathesis/schemathesis.toml", "run",
				"openapi.yaml", "--url", "http://127.0.0.1:" + port, "--seed", Long.toString(SEED), "--max-examples",
				Integer.toString(EXAMPLES), "--workers", "1", "--no-color"));
		args.addAll(List.of(options));
		long started = System.nanoTime();
		PythonTools.Result run = PythonTools.run(Duration.ofMinutes(5), "schemathesis", args.toArray(String[]::new));
		System.out.println(run.output());
		System.out.printf("Schemathesis ran for %.1f s%n", (System.nanoTime() - started) / 1e9);
		assertThat(run.exitValue()).as("seed %d:%n%s", SEED, run.output()).isZero();
		int operations = OpenApiDocument.operations().size();
		// Every operation but the never-ending change stream (schemathesis.toml says why).
		int selected = operations - 1;
		assertThat(run.output()).as(run.output())
			.contains(selected + " selected / " + operations + " total", "Tested: " + selected, "✅ Coverage",
					"✅ Fuzzing", "✅ Stateful");
	}

}
