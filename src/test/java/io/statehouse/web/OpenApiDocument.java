package io.statehouse.web;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import org.yaml.snakeyaml.Yaml;

/** The committed {@code openapi.yaml}, as the tests that check the service against it read it. */
final class OpenApiDocument {

	private static final Set<String> METHODS = Set.of("get", "put", "post", "delete", "patch", "head", "options",
			"trace");

	private OpenApiDocument() {
	}

	/** Every operation it describes, as {@code "METHOD /path"}. */
	@SuppressWarnings("unchecked")
	static Set<String> operations() throws IOException {
		Map<String, Object> contract = new Yaml().load(Files.readString(Path.of("openapi.yaml")));
		Set<String> operations = new TreeSet<>();
		((Map<String, Map<String, Object>>) contract.get("paths")).forEach((path, methods) -> methods.keySet()
			.stream()
			.filter(METHODS::contains)
			.forEach((method) -> operations.add(method.toUpperCase(Locale.ROOT) + " " + path)));
		return operations;
	}

}
