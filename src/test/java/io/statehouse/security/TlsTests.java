package io.statehouse.security;

import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.util.List;
import java.util.concurrent.TimeUnit;

import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLHandshakeException;
import javax.net.ssl.TrustManagerFactory;

import io.statehouse.support.TestClickHouse;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.context.ContextConfiguration;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * HTTPS as an operator turns it on: an SSL bundle with a certificate (generated here, by the
 * JDK's keytool) named by {@code server.ssl.bundle}. A client that trusts the certificate makes
 * a real round trip; one that does not is refused at the handshake.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
@ContextConfiguration(initializers = TestClickHouse.class)
class TlsTests {

	private static final String PASSWORD = "keystore-password";

	private static Path keystore;

	@DynamicPropertySource
	static void tls(DynamicPropertyRegistry registry) throws Exception {
		keystore = generateKeystore();
		registry.add("server.ssl.bundle", () -> "web");
		registry.add("spring.ssl.bundle.jks.web.keystore.location", () -> keystore.toUri().toString());
		registry.add("spring.ssl.bundle.jks.web.keystore.password", () -> PASSWORD);
		registry.add("spring.ssl.bundle.jks.web.keystore.type", () -> "PKCS12");
	}

	@Value("${local.server.port}")
	int port;

	@Test
	void aClientThatTrustsTheCertificateMakesARoundTripOverHttps() throws Exception {
		HttpClient trusting = HttpClient.newBuilder().sslContext(trusting()).build();
		HttpResponse<String> written = trusting.send(HttpRequest.newBuilder(uri("/states/tls:round-trip"))
			.PUT(HttpRequest.BodyPublishers.ofString("{\"over\":\"https\"}"))
			.header("Content-Type", "application/json")
			.build(), HttpResponse.BodyHandlers.ofString());
		assertThat(written.statusCode()).isEqualTo(201);
		HttpResponse<String> read = trusting.send(HttpRequest.newBuilder(uri("/states/tls:round-trip")).build(),
				HttpResponse.BodyHandlers.ofString());
		assertThat(read.body()).isEqualTo("{\"over\":\"https\"}");
		assertThat(read.sslSession()).hasValueSatisfying(
				(session) -> assertThat(session.getProtocol()).isIn("TLSv1.2", "TLSv1.3"));

		HttpClient stranger = HttpClient.newHttpClient();
		assertThatExceptionOfType(SSLHandshakeException.class).isThrownBy(
				() -> stranger.send(HttpRequest.newBuilder(uri("/actuator/health")).build(),
						HttpResponse.BodyHandlers.ofString()));
	}

	private URI uri(String path) {
		return URI.create("https://localhost:" + this.port + path);
	}

	private static SSLContext trusting() throws Exception {
		KeyStore store = KeyStore.getInstance("PKCS12");
		try (InputStream in = Files.newInputStream(keystore)) {
			store.load(in, PASSWORD.toCharArray());
		}
		TrustManagerFactory trust = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
		trust.init(store);
		SSLContext context = SSLContext.getInstance("TLS");
		context.init(null, trust.getTrustManagers(), null);
		return context;
	}

	/** A self-signed certificate for localhost, valid for a day. */
	private static Path generateKeystore() throws IOException, InterruptedException {
		Path file = Files.createTempDirectory("statehouse-tls").resolve("keystore.p12");
		Path keytool = Path.of(System.getProperty("java.home"), "bin", "keytool");
		Process process = new ProcessBuilder(List.of(keytool.toString(), "-genkeypair", "-alias", "statehouse",
				"-keyalg", "EC", "-groupname", "secp256r1", "-dname", "CN=localhost", "-ext",
				"SAN=dns:localhost,ip:127.0.0.1", "-validity", "1", "-keystore", file.toString(), "-storetype", "PKCS12",
				"-storepass", PASSWORD, "-keypass", PASSWORD))
			.redirectErrorStream(true)
			.start();
		String output = new String(process.getInputStream().readAllBytes());
		assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
		assertThat(process.exitValue()).as(output).isZero();
		return file;
	}

}
