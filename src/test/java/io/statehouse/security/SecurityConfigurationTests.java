package io.statehouse.security;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.statehouse.security.SecurityProperties.Token;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.core.env.SystemEnvironmentPropertySource;
import org.springframework.security.config.annotation.web.configuration.EnableWebSecurity;
import org.springframework.security.oauth2.core.OAuth2AuthenticatedPrincipal;
import org.springframework.security.oauth2.server.resource.introspection.BadOpaqueTokenException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/** How tokens are configured, minted and found, and what an open service says about itself. */
@Tag("fast")
@ExtendWith(OutputCaptureExtension.class)
class SecurityConfigurationTests {

	private static final String HASH = "a".repeat(64);

	private final WebApplicationContextRunner runner = new WebApplicationContextRunner()
		.withUserConfiguration(WebSecurity.class, SecurityConfiguration.class);

	@Test
	void withoutTokensTheServiceRunsOpenAndWarnsThatItDoes(CapturedOutput output) {
		this.runner.run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(output).contains("No token is configured (statehouse.security.tokens): the service runs open");
		});
	}

	@Test
	void aTokenThatIsNotConfigurableCorrectlyStopsTheStartWithTheSettingNamed() {
		assertStartRefused("statehouse.security.tokens[0].sha256=abc", "tokens[0].sha256");
		assertStartRefused("statehouse.security.tokens[0].name=a b", "tokens[0].name");
		assertStartRefused("statehouse.security.tokens[0].scopes=root", "tokens[0].scopes");
		assertStartRefused("statehouse.security.tokens[0].ids=" + "x".repeat(256), "token 't' has ids");
		assertStartRefused("statehouse.security.tokens[0].name=open", "'open' is taken");
		assertStartRefused("statehouse.security.tokens[1].name=t", "'t' is taken",
				"statehouse.security.tokens[1].sha256=" + "b".repeat(64), "statehouse.security.tokens[1].scopes=write");
		assertStartRefused("statehouse.security.tokens[1].sha256=" + HASH.toUpperCase(), "the sha256 of another token",
				"statehouse.security.tokens[1].name=u", "statehouse.security.tokens[1].scopes=read");
	}

	private void assertStartRefused(String property, String message, String... more) {
		this.runner.withPropertyValues("statehouse.security.tokens[0].name=t", "statehouse.security.tokens[0].sha256=" + HASH,
				"statehouse.security.tokens[0].scopes=read")
			.withPropertyValues(property)
			.withPropertyValues(more)
			.run((context) -> assertThat(context).getFailure().hasStackTraceContaining(message));
	}

	@Test
	void twoSecretsOfOneNameWithTheSameGrantsAreAChangeOverAndBothLetTheCallerIn() {
		String old = "sth_old-secret", current = "sth_new-secret";
		ConfiguredTokens tokens = new ConfiguredTokens(List.of(token("ingest", old), token("ingest", current)));
		assertThat(tokens.introspect(old).getName()).isEqualTo("ingest");
		assertThat(tokens.introspect(current).getName()).isEqualTo("ingest");
	}

	@Test
	void tokensAreReadFromTheEnvironmentUnderTheirDocumentedNames() {
		Map<String, Object> environment = Map.of("STATEHOUSE_SECURITY_TOKENS_0_NAME", "ingest-workers",
				"STATEHOUSE_SECURITY_TOKENS_0_SHA256", HASH, "STATEHOUSE_SECURITY_TOKENS_0_SCOPES", "read,write",
				"STATEHOUSE_SECURITY_TOKENS_0_IDS", "prod:*,shared:?");
		this.runner
			.withInitializer((context) -> context.getEnvironment()
				.getPropertySources()
				.replace(StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME,
						new SystemEnvironmentPropertySource(StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME, environment)))
			.run((context) -> {
				Token token = context.getBean(SecurityProperties.class).tokens().get(0);
				assertThat(token).isEqualTo(new Token("ingest-workers", HASH, java.util.Set.of(Scope.READ, Scope.WRITE),
						List.of("prod:*", "shared:?")));
			});
	}

	private static Token token(String name, String secret) {
		return new Token(name, HexFormat.of().formatHex(ConfiguredTokens.sha256(secret)), java.util.Set.of(Scope.READ),
				List.of("*"));
	}

	@Test
	void aMintedSecretIsLongRandomAndFoundByTheHashPrintedBesideIt() {
		ByteArrayOutputStream printed = new ByteArrayOutputStream();
		assertThat(TokenCommand.run(new String[] { "token", "--name=ingest" }, new PrintStream(printed, true),
				System.err)).isZero();
		String text = printed.toString(StandardCharsets.UTF_8);
		Matcher secret = Pattern.compile("sth_([A-Za-z0-9_-]{43})\\b").matcher(text);
		assertThat(secret.find()).as(text).isTrue();
		assertThat(java.util.Base64.getUrlDecoder().decode(secret.group(1))).hasSize(32);
		Matcher hash = Pattern.compile("sha256: \"([0-9a-f]{64})\"").matcher(text);
		assertThat(hash.find()).as(text).isTrue();
		assertThat(text).contains("- name: ingest");

		ConfiguredTokens tokens = new ConfiguredTokens(List.of(new Token("other", HASH, java.util.Set.of(Scope.READ),
				List.of("*")), new Token("ingest", hash.group(1), java.util.Set.of(Scope.ADMIN), List.of("prod:*"))));
		OAuth2AuthenticatedPrincipal found = tokens.introspect(secret.group());
		assertThat(found.getName()).isEqualTo("ingest");
		assertThat(found.getAuthorities()).extracting(Object::toString)
			.containsExactlyInAnyOrder("SCOPE_admin", "SCOPE_write");
		assertThat(ConfiguredTokens.caller(new org.springframework.security.authentication.TestingAuthenticationToken(
				found, null)).ids().permits("prod:x")).isTrue();
		assertThatExceptionOfType(BadOpaqueTokenException.class)
			.isThrownBy(() -> tokens.introspect(secret.group() + "x"));
		assertThatExceptionOfType(BadOpaqueTokenException.class).isThrownBy(() -> tokens.introspect(hash.group(1)));
		assertThat(HexFormat.of().formatHex(ConfiguredTokens.sha256(secret.group()))).isEqualTo(hash.group(1));
	}

	@Test
	void theCommandNeedsAName() {
		ByteArrayOutputStream errors = new ByteArrayOutputStream();
		assertThat(TokenCommand.run(new String[] { "token" }, System.out, new PrintStream(errors, true))).isEqualTo(2);
		assertThat(TokenCommand.run(new String[] { "token", "--name=a b" }, System.out, new PrintStream(errors, true)))
			.isEqualTo(2);
		assertThat(errors.toString(StandardCharsets.UTF_8)).contains("usage: java -jar statehouse.jar token --name=");
	}

	@Configuration(proxyBeanMethods = false)
	@EnableWebSecurity
	static class WebSecurity {

	}

}
