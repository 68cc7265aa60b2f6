package io.statehouse;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.context.properties.ConfigurationPropertiesScan;

/** Statehouse: versioned pipeline state and advisory locks over HTTP, stored in ClickHouse. */
@SpringBootApplication
@ConfigurationPropertiesScan
public class StatehouseApplication {

	public static void main(String[] args) {
		SpringApplication.run(StatehouseApplication.class, args);
	}

}
