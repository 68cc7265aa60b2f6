package io.statehouse.web;

import org.apache.coyote.http11.Http11NioProtocol;

/**
 * Tomcat's NIO connector with a 2 KB servlet response buffer instead of 8 KB. Each connection
 * keeps its buffer for as long as it is open, and a watch stream holds a connection open for
 * hours: at a thousand streams the default's byte and char buffers cost some 18 MB more, for
 * nothing, as an event is flushed as soon as it is written. A larger response is written in more chunks, at no measurable cost.
 * Public with a no-argument constructor: Tomcat creates it by name.
 */
public class SmallResponseBufferProtocol extends Http11NioProtocol {

	static final int RESPONSE_BUFFER_BYTES = 2048;

	@Override
	public int getDesiredBufferSize() {
		return RESPONSE_BUFFER_BYTES;
	}

}
