package io.statehouse.web;

import java.net.InetAddress;
import java.util.Set;

import io.statehouse.web.HungUpClients.Endpoints;
import io.statehouse.web.HungUpClients.Listed;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** How lines of the kernel's TCP tables are read: whose connection, and whether its client closed it. */
@Tag("fast")
class HungUpClientsTests {

	private static final Set<Integer> PORTS = Set.of(8080);

	@Test
	void aConnectionInCloseWaitIsOneItsClientClosed() throws Exception {
		// 127.0.0.1:8080 <- 127.0.0.1:40000 in CLOSE_WAIT (a FIN), then ESTABLISHED.
		String closeWait = "   5: 0100007F:1F90 0100007F:9C40 08 00000000:00000000 00:00000000 00000000     0        0 4711";
		Endpoints endpoints = new Endpoints(InetAddress.getByName("127.0.0.1"), 8080, InetAddress.getByName("127.0.0.1"),
				40000);
		assertThat(Listed.of(closeWait, PORTS)).isEqualTo(new Listed(endpoints, true));
		assertThat(Listed.of(closeWait.replace(" 08 ", " 01 "), PORTS)).isEqualTo(new Listed(endpoints, false));
	}

	@Test
	void linesOfOtherPortsAndHeadersAreNotRead() {
		String established = "   5: 0100007F:1F91 0100007F:9C40 01 00000000:00000000 00:00000000 00000000     0        0 4711";
		assertThat(Listed.of(established, PORTS)).isNull();
		assertThat(Listed.of("  sl  local_address rem_address   st tx_queue rx_queue", PORTS)).isNull();
		assertThat(Listed.of("", PORTS)).isNull();
	}

	@Test
	void ipv6AddressesAreReadWordByWordAndAnIpv4ClientOfAnIpv6SocketIsItsIpv4Address() throws Exception {
		// ::1 -> ::1, and ::ffff:10.1.2.3 -> 10.1.2.3, as the kernel prints them.
		String loopback = "  0: 00000000000000000000000001000000:1F90 00000000000000000000000001000000:9C41 08 0 0 0 0";
		assertThat(Listed.of(loopback, PORTS).endpoints())
			.isEqualTo(new Endpoints(InetAddress.getByName("::1"), 8080, InetAddress.getByName("::1"), 40001));
		String mapped = "  0: 0000000000000000FFFF00000100007F:1F90 0000000000000000FFFF00000302010A:9C42 08 0 0 0 0";
		assertThat(Listed.of(mapped, PORTS).endpoints())
			.isEqualTo(new Endpoints(InetAddress.getByName("127.0.0.1"), 8080, InetAddress.getByName("10.1.2.3"), 40002));
	}

}
