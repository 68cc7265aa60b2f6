package io.statehouse.support;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * HTTP/1.1 as raw bytes on a socket, one request per connection: a request line, headers and a
 * body exactly as given — malformed escapes, control characters, bytes that are not UTF-8,
 * repeated headers — which {@code java.net.http} refuses to send.
 */
public final class RawHttp {

	private RawHttp() {
	}

	/**
	 * Sends a request and reads the whole response.
	 * @param head the request line and headers, without the blank line that ends them
	 * @param body sent as is after them ({@code Content-Length} is the caller's to set, or not)
	 */
	public static Response exchange(int port, byte[] head, byte[] body) throws IOException {
		try (Socket socket = new Socket()) {
			socket.connect(new InetSocketAddress("127.0.0.1", port), 5_000);
			socket.setSoTimeout(60_000);
			OutputStream out = socket.getOutputStream();
			try {
				out.write(head);
				out.write("\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
				out.write(body);
				out.flush();
			}
			catch (IOException refusedEarly) {
				// The server answered and closed before taking the whole body: read its answer.
			}
			return parse(socket.getInputStream().readAllBytes());
		}
	}

	/** Hangs up as a client does: it sends its FIN (and may still read), or it resets the connection. */
	public static void hangUp(Socket client, boolean reset) throws IOException {
		if (reset) {
			client.setSoLinger(true, 0);
			client.close();
		}
		else {
			client.shutdownOutput();
		}
	}

	private static Response parse(byte[] raw) {
		int end = indexOf(raw, "\r\n\r\n".getBytes(StandardCharsets.US_ASCII), 0);
		if (end < 0) {
			throw new IllegalStateException("No complete response: " + new String(raw, StandardCharsets.ISO_8859_1));
		}
		String[] lines = new String(raw, 0, end, StandardCharsets.ISO_8859_1).split("\r\n");
		int status = Integer.parseInt(lines[0].split(" ")[1]);
		Map<String, List<String>> headers = new LinkedHashMap<>();
		for (int i = 1; i < lines.length; i++) {
			int colon = lines[i].indexOf(':');
			headers.computeIfAbsent(lines[i].substring(0, colon).trim().toLowerCase(Locale.ROOT), (name) -> new ArrayList<>())
				.add(lines[i].substring(colon + 1).trim());
		}
		byte[] body = Arrays.copyOfRange(raw, end + 4, raw.length);
		if (headers.getOrDefault("transfer-encoding", List.of()).contains("chunked")) {
			body = dechunk(body);
		}
		return new Response(status, headers, body);
	}

	private static byte[] dechunk(byte[] chunked) {
		ByteArrayOutputStream body = new ByteArrayOutputStream();
		int at = 0;
		while (true) {
			int lineEnd = indexOf(chunked, "\r\n".getBytes(StandardCharsets.US_ASCII), at);
			String size = new String(chunked, at, lineEnd - at, StandardCharsets.US_ASCII).split(";")[0].trim();
			int length = Integer.parseInt(size, 16);
			if (length == 0) {
				return body.toByteArray();
			}
			body.write(chunked, lineEnd + 2, length);
			at = lineEnd + 2 + length + 2;
		}
	}

	private static int indexOf(byte[] bytes, byte[] pattern, int from) {
		outer: for (int i = from; i <= bytes.length - pattern.length; i++) {
			for (int j = 0; j < pattern.length; j++) {
				if (bytes[i + j] != pattern[j]) {
					continue outer;
				}
			}
			return i;
		}
		return -1;
	}

	/** A response: its status, headers by lower-case name, and body. */
	public record Response(int status, Map<String, List<String>> headers, byte[] body) {

		public String header(String name) {
			List<String> values = this.headers.getOrDefault(name.toLowerCase(Locale.ROOT), List.of());
			return values.isEmpty() ? "" : values.get(0);
		}

		public String text() {
			return new String(this.body, StandardCharsets.UTF_8);
		}

	}

}
