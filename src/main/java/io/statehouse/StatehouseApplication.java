package io.statehouse;

import io.statehouse.importer.ImportCommand;
import io.statehouse.importer.TransferCommand;
import io.statehouse.security.TokenCommand;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.context.properties.ConfigurationPropertiesScan;

/** Statehouse: versioned pipeline state and advisory locks over HTTP, stored in ClickHouse. */
@SpringBootApplication
@ConfigurationPropertiesScan
public class StatehouseApplication {

	public static void main(String[] args) {
		if (args.length > 0 && args[0].equals(TokenCommand.NAME)) {
			System.exit(TokenCommand.run(args, System.out, System.err));
		}
		if (args.length > 0 && args[0].equals(ImportCommand.NAME)) {
			System.exit(ImportCommand.run(args));
		}
		if (args.length > 0 && (args[0].equals(TransferCommand.EXPORT) || args[0].equals(TransferCommand.IMPORT))) {
			System.exit(TransferCommand.run(args));
		}
		SpringApplication.run(StatehouseApplication.class, args);
	}

}
