package io.statehouse.security;

import java.io.PrintStream;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.HexFormat;
import java.util.regex.Pattern;

/**
 * {@code java -jar statehouse.jar token --name=<name>}: mints a token. Prints a new random
 * secret (256 bits, URL-safe Base64, prefixed so that secret scanners can spot a leaked one)
 * for the client, and the configuration entry with its hash for the service. The secret is
 * shown once and stored nowhere.
 */
public final class TokenCommand {

	/** The first argument that runs this command instead of the service. */
	public static final String NAME = "token";

	private static final Pattern NAME_OPTION = Pattern.compile("--name=(" + SecurityProperties.Token.NAME + ")");

	private static final SecureRandom random = new SecureRandom();

	private TokenCommand() {
	}

	/**
	 * Runs the command.
	 * @return the exit status
	 */
	public static int run(String[] args, PrintStream out, PrintStream err) {
		String name = null;
		for (int i = 1; i < args.length; i++) {
			java.util.regex.Matcher option = NAME_OPTION.matcher(args[i]);
			if (option.matches()) {
				name = option.group(1);
			}
			else {
				name = null;
				break;
			}
		}
		if (name == null) {
			err.println("usage: java -jar statehouse.jar token --name=<1-64 of A-Z a-z 0-9 . _ : @ + ->");
			return 2;
		}
		byte[] bytes = new byte[32];
		random.nextBytes(bytes);
		String secret = "sth_" + Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
		String hash = HexFormat.of().formatHex(ConfiguredTokens.sha256(secret));
		out.println("secret (give it to the client; it is not shown again): " + secret);
		out.println("configuration (scopes: read, write, admin, metrics; ids: globs):");
		out.println("statehouse:");
		out.println("  security:");
		out.println("    tokens:");
		out.println("      - name: " + name);
		out.println("        sha256: \"" + hash + "\"");
		out.println("        scopes: [read, write]");
		out.println("        ids: [\"*\"]");
		return 0;
	}

}
