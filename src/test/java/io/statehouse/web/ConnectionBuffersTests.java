package io.statehouse.web;

import io.statehouse.support.StatehouseClient;
import io.statehouse.support.StatehouseTest;
import org.apache.catalina.connector.Connector;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.tomcat.TomcatWebServer;
import org.springframework.boot.web.server.context.WebServerApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;

/** The running connector keeps small buffers per connection, and a response many times their size still arrives whole. */
@StatehouseTest
class ConnectionBuffersTests {

	@Autowired
	WebServerApplicationContext context;

	@Autowired
	StatehouseClient client;

	@Test
	void theRunningConnectorHasTheSmallBuffers() {
		Connector connector = ((TomcatWebServer) this.context.getWebServer()).getTomcat().getConnector();
		assertThat(connector.getProtocolHandler()).isInstanceOf(SmallResponseBufferProtocol.class);
		assertThat(connector.getProtocolHandler().getDesiredBufferSize()).isEqualTo(2048);
		assertThat(connector.getProperty("socket.appReadBufSize")).hasToString("4096");
		assertThat(connector.getProperty("socket.appWriteBufSize")).hasToString("4096");
		assertThat(connector.getProperty("maxHttpResponseHeaderSize")).hasToString("4096");
	}

	@Test
	void aDocumentFarLargerThanTheBuffersRoundTripsWhole() {
		String document = "{\"rows\":\"" + "0123456789abcdef".repeat(16_384) + "\"}";
		assertThat(this.client.put("/states/buffers:large", document).status()).isEqualTo(201);
		StatehouseClient.Response read = this.client.get("/states/buffers:large");
		assertThat(read.status()).isEqualTo(200);
		assertThat(read.json().path("rows").asString()).hasSize(16 * 16_384);
	}

}
