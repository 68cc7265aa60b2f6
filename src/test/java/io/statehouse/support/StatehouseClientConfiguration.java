package io.statehouse.support;

import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Lazy;
import org.springframework.core.env.Environment;

/** A {@link StatehouseClient} for the application under test, on its random port. */
@TestConfiguration(proxyBeanMethods = false)
public class StatehouseClientConfiguration {

	/** Lazy: the port is known once the web server has started, after the beans are created. */
	@Bean
	@Lazy
	StatehouseClient statehouseClient(Environment environment) {
		return StatehouseClient.forPort(environment.getRequiredProperty("local.server.port", Integer.class));
	}

}
