package io.statehouse.web;

import org.springframework.boot.tomcat.servlet.TomcatServletWebServerFactory;
import org.springframework.boot.web.server.WebServerFactoryCustomizer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Lets encoded slashes and backslashes in a path reach the application, which refuses them as
 * a 400 problem (no id contains them) instead of Tomcat answering with an HTML error page.
 */
@Configuration(proxyBeanMethods = false)
class TomcatConfiguration {

	@Bean
	WebServerFactoryCustomizer<TomcatServletWebServerFactory> encodedSeparatorsReachTheApplication() {
		return (factory) -> factory.addConnectorCustomizers((connector) -> {
			connector.setEncodedSolidusHandling("passthrough");
			connector.setEncodedReverseSolidusHandling("passthrough");
		});
	}

}
