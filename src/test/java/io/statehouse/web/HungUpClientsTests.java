package io.statehouse.web;

import java.net.InetAddress;

import io.statehouse.web.HungUpClients.Endpoints;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** Which lines of the kernel's TCP tables are connections their clients closed. */
@Tag("fast")
class HungUpClientsTests {

	@Test
	void aConnectionInCloseWaitOrCloseIsOneItsClientClosed() throws Exception {
		// 127.0.0.1:8080 <- 127.0.0.1:40000 in CLOSE_WAIT (a FIN), then the same in CLOSE (a reset).
		String closeWait = "   5: 0100007F:1F90 0100007F:9C40 08 00000000:00000000 00:00000000 00000000     0        0 4711";
		assertThat(Endpoints.closedByPeer(closeWait))
			.isEqualTo(new Endpoints(8080, InetAddress.getByName("127.0.0.1"), 40000));
		assertThat(Endpoints.closedByPeer(closeWait.replace(" 08 ", " 07 "))).isNotNull();
	}

	@Test
	void establishedAndListeningConnectionsAreNot() {
		String established = "   5: 0100007F:1F90 0100007F:9C40 01 00000000:00000000 00:00000000 00000000     0        0 4711";
		assertThat(Endpoints.closedByPeer(established)).isNull();
		assertThat(Endpoints.closedByPeer(established.replace(" 01 ", " 0A "))).isNull();
		assertThat(Endpoints.closedByPeer("  sl  local_address rem_address   st tx_queue rx_queue")).isNull();
		assertThat(Endpoints.closedByPeer("")).isNull();
	}

	@Test
	void ipv6AddressesAreReadWordByWordAndAnIpv4ClientOfAnIpv6SocketIsItsIpv4Address() throws Exception {
		// ::1 -> ::1, and ::ffff:10.1.2.3 -> 10.1.2.3, as the kernel prints them.
		String loopback = "  0: 00000000000000000000000001000000:1F90 00000000000000000000000001000000:9C41 08 0 0 0 0";
		assertThat(Endpoints.closedByPeer(loopback))
			.isEqualTo(new Endpoints(8080, InetAddress.getByName("::1"), 40001));
		String mapped = "  0: 0000000000000000FFFF00000100007F:1F90 0000000000000000FFFF00000302010A:9C42 08 0 0 0 0";
		assertThat(Endpoints.closedByPeer(mapped))
			.isEqualTo(new Endpoints(8080, InetAddress.getByName("10.1.2.3"), 40002));
	}

}
