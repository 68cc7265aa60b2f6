package io.statehouse.state;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.Map;
import java.util.function.Supplier;

import tools.jackson.core.JacksonException;
import tools.jackson.core.StreamReadConstraints;
import tools.jackson.core.StreamReadFeature;
import tools.jackson.core.exc.StreamConstraintsException;
import tools.jackson.core.json.JsonFactory;
import tools.jackson.databind.DeserializationFeature;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.JsonNodeFactory;
import tools.jackson.databind.node.ObjectNode;
import org.jspecify.annotations.Nullable;

import org.springframework.stereotype.Component;

/**
 * Reads, checks and normalizes state documents and merge patches: JSON objects within the size
 * and depth limits, duplicate keys refused, numbers kept exactly, stored compact.
 */
@Component
class JsonDocuments {

	private final JsonMapper mapper;

	/** Reads an export's lines: a document nests one level below its line. */
	private final JsonMapper lines;

	private final int maxBytes;

	private final int maxDepth;

	JsonDocuments(StateProperties properties) {
		this.maxBytes = (int) Math.min(Integer.MAX_VALUE - 1, properties.maxDocumentSize().toBytes());
		this.maxDepth = properties.maxDepth();
		JsonFactory factory = JsonFactory.builder()
			.streamReadConstraints(StreamReadConstraints.builder().maxNestingDepth(this.maxDepth).build())
			.enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
			.build();
		this.mapper = mapper(factory);
		this.lines = mapper(factory.rebuild()
			.streamReadConstraints(StreamReadConstraints.builder().maxNestingDepth(this.maxDepth + 1).build())
			.build());
	}

	private static JsonMapper mapper(JsonFactory factory) {
		return JsonMapper.builder(factory)
			.enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS)
			.enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
			.build();
	}

	/** Largest document, in bytes of UTF-8. */
	int maxBytes() {
		return this.maxBytes;
	}

	/**
	 * Reads one line of an export: a JSON object, duplicate keys refused, numbers exactly.
	 * @throws InvalidDocumentException when it is not one
	 */
	JsonNode readLine(byte[] line) {
		return checked(() -> this.lines.readTree(line), "The line", this.maxDepth + 1);
	}

	/**
	 * A document read as part of a larger JSON value, checked and compact as {@link #readObject}
	 * stores it, within the limit as stored: compacting may lengthen a number ({@code 1e5} is
	 * stored as {@code 1E+5}), and a stored document is never larger than the limit (so that every
	 * document can be patched, exported and imported again).
	 */
	String normalize(JsonNode document, String what) {
		if (!document.isObject()) {
			throw new InvalidDocumentException(what + " must be a JSON object, not "
					+ document.getNodeType().name().toLowerCase(Locale.ROOT) + ".");
		}
		String normalized = this.mapper.writeValueAsString(document);
		int bytes = normalized.getBytes(StandardCharsets.UTF_8).length;
		if (bytes > this.maxBytes) {
			throw new DocumentTooLargeException(what + " is " + bytes + " bytes as stored (compact, numbers as "
					+ "1E+5); the limit is " + this.maxBytes + ".");
		}
		if (hasLoneSurrogate(normalized)) {
			// An escaped half of a surrogate pair ("\ud800") is valid JSON but no text: stored as
			// UTF-8 it would silently become '?'.
			throw new InvalidDocumentException(what + " holds an unpaired UTF-16 surrogate escape, which is not text.");
		}
		return normalized;
	}

	/**
	 * Reads a request body that must be a JSON object.
	 * @param body the body, read no further than the size limit
	 * @return the document, compact
	 */
	String readObject(InputStream body) throws IOException {
		return normalize(readLimited(body), "The body");
	}

	/**
	 * Applies an RFC 7396 merge patch (itself read by {@link #readObject}) to a document: both
	 * read once, merged as trees, written once.
	 */
	String mergePatch(String document, String patch) {
		String merged = this.mapper.writeValueAsString(merge(this.mapper.readTree(document), this.mapper.readTree(patch)));
		int bytes = merged.getBytes(StandardCharsets.UTF_8).length;
		if (bytes > this.maxBytes) {
			throw new DocumentTooLargeException("The patched document would be " + bytes + " bytes; the limit is "
					+ this.maxBytes + ".");
		}
		return merged;
	}

	/**
	 * RFC 7396, section 2: a patch that is an object changes the target's members — a null
	 * removes one, anything else is merged into it — and any other patch replaces the target.
	 * (Jackson has no merge patch of its own; its "merge" keeps nulls.)
	 */
	private static JsonNode merge(@Nullable JsonNode target, JsonNode patch) {
		if (!patch.isObject()) {
			return patch;
		}
		ObjectNode merged = (target != null && target.isObject()) ? (ObjectNode) target
				: JsonNodeFactory.instance.objectNode();
		for (Map.Entry<String, JsonNode> member : patch.properties()) {
			if (member.getValue().isNull()) {
				merged.remove(member.getKey());
			}
			else {
				merged.set(member.getKey(), merge(merged.get(member.getKey()), member.getValue()));
			}
		}
		return merged;
	}

	private byte[] readLimited(InputStream body) throws IOException {
		byte[] bytes = body.readNBytes(this.maxBytes + 1);
		if (bytes.length > this.maxBytes) {
			throw new DocumentTooLargeException("The body is larger than the limit of " + this.maxBytes + " bytes.");
		}
		return bytes;
	}

	private String normalize(byte[] json, String what) {
		if (json.length == 0) {
			throw new InvalidDocumentException(what + " is empty; a JSON object is required.");
		}
		JsonNode node = checked(() -> this.mapper.readTree(json), what, this.maxDepth);
		if (node == null) {
			throw new InvalidDocumentException(what + " must be a JSON object, not empty.");
		}
		return normalize(node, what);
	}

	private static JsonNode checked(Supplier<JsonNode> read, String what, int maxDepth) {
		try {
			return read.get();
		}
		catch (StreamConstraintsException ex) {
			throw new InvalidDocumentException(String.valueOf(ex.getOriginalMessage()).contains("nesting depth")
					? what + " nests deeper than " + maxDepth + " levels."
					: what + " is beyond a limit of JSON: " + ex.getOriginalMessage());
		}
		catch (JacksonException ex) {
			throw new InvalidDocumentException(what + " is not valid JSON: " + ex.getOriginalMessage());
		}
		catch (NumberFormatException ex) {
			// A number whose exponent no BigDecimal holds (1e2147483648): Jackson's decimal parser
			// throws this, not one of its own exceptions.
			throw new InvalidDocumentException(what + " holds a number whose exponent is beyond the limits of a decimal.");
		}
	}

	private static boolean hasLoneSurrogate(String text) {
		for (int i = 0; i < text.length(); i++) {
			char c = text.charAt(i);
			if (Character.isHighSurrogate(c) && i + 1 < text.length() && Character.isLowSurrogate(text.charAt(i + 1))) {
				i++;
			}
			else if (Character.isSurrogate(c)) {
				return true;
			}
		}
		return false;
	}

}
