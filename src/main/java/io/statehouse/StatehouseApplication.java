package io.statehouse;

import java.util.List;

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

	/** What {@code --help} prints: the service, and the commands the same jar runs. */
	static final String USAGE = """
			usage: java -jar statehouse.jar [--<property>=<value> ...]    run the service (README, docs/operations.md)
			       java -jar statehouse.jar token --name=<name>           mint an API token (docs/security.md)
			       java -jar statehouse.jar export|import [<options>]     copy states out of or into a Statehouse
			       java -jar statehouse.jar import-clickhouse [<options>] take in Meltano's ClickHouse backend's state
			Each command lists its options when given one it does not know.
			""";

	public static void main(String[] args) {
		if (args.length == 1 && List.of("--help", "-h", "help").contains(args[0])) {
			System.out.print(USAGE);
			System.exit(0);
		}
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
