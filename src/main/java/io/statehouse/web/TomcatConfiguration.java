package io.statehouse.web;

import org.apache.catalina.Valve;
import org.apache.catalina.core.StandardHost;
import org.apache.catalina.valves.ErrorReportValve;

import org.springframework.boot.tomcat.servlet.TomcatServletWebServerFactory;
import org.springframework.boot.web.server.WebServerFactoryCustomizer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Hostile paths get problems too: encoded slashes and backslashes reach the application, as an
 * id may contain them (where no id is expected, MalformedRequestFilter and the handlers refuse
 * them as problems), and what Tomcat itself refuses (a malformed %-escape, an encoded NUL) is
 * reported as a problem instead of an HTML page. And an open connection is cheap: a watch stream
 * holds one for hours, so its buffers are sized for events and headers, not for bulk transfer.
 */
@Configuration(proxyBeanMethods = false)
class TomcatConfiguration {

	static final int CONNECTION_BUFFER_BYTES = 4096;

	@Bean
	WebServerFactoryCustomizer<TomcatServletWebServerFactory> hostilePathsAnswerProblems() {
		return (factory) -> {
			factory.addConnectorCustomizers((connector) -> {
				connector.setEncodedSolidusHandling("passthrough");
				connector.setEncodedReverseSolidusHandling("passthrough");
			});
			factory.addContextCustomizers((context) -> {
				if (context.getParent() instanceof StandardHost host) {
					// Both: the class for a host that creates its valve later, the swap for one that has it.
					host.setErrorReportValveClass(ProblemErrorReportValve.class.getName());
					for (Valve valve : host.getPipeline().getValves()) {
						if (valve instanceof ErrorReportValve && !(valve instanceof ProblemErrorReportValve)) {
							host.getPipeline().removeValve(valve);
							host.getPipeline().addValve(new ProblemErrorReportValve());
						}
					}
				}
			});
		};
	}

	/**
	 * Per connection, Tomcat keeps read and write buffers, a response header buffer and a
	 * servlet response buffer for as long as the connection is open; with Tomcat's defaults
	 * (8 KB each) 1,000 open streams measured +114 MB of heap, with these +79 MB, at the same
	 * request throughput and latency (docs/benchmarks.md).
	 */
	@Bean
	WebServerFactoryCustomizer<TomcatServletWebServerFactory> connectionsKeepSmallBuffers() {
		return (factory) -> {
			factory.setProtocol(SmallResponseBufferProtocol.class.getName());
			factory.addConnectorCustomizers((connector) -> {
				connector.setProperty("socket.appReadBufSize", String.valueOf(CONNECTION_BUFFER_BYTES));
				connector.setProperty("socket.appWriteBufSize", String.valueOf(CONNECTION_BUFFER_BYTES));
				connector.setProperty("maxHttpResponseHeaderSize", String.valueOf(CONNECTION_BUFFER_BYTES));
			});
		};
	}

}
