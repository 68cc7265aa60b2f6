package io.statehouse.state;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.Arrays;
import java.util.Set;
import java.util.function.Predicate;

import io.statehouse.shared.Ids;
import io.statehouse.shared.InvalidRequestException;
import org.jspecify.annotations.Nullable;
import tools.jackson.core.JsonGenerator;
import tools.jackson.databind.JsonNode;

/**
 * The JSON Lines an export writes and an import reads (UTF-8, one JSON object a line): a header,
 * one line per state (or, with history, per retained version, oldest first) in id order, then an
 * end line that counts them, so that a file cut short is told from a whole one.
 *
 * <pre>
 * {"statehouse":"states","format":1,"exportedAt":"…","cursor":"…","match":"*","history":false}
 * {"id":"a","version":7,"updatedAt":"…","document":{…}}
 * {"end":true,"lines":1}
 * </pre>
 * With history, each line names its {@code operation} and {@code writtenBy}, and a version
 * without a document (a deletion) has {@code "document":null}.
 */
final class ExportFormat {

	/** What JSON Lines are called over HTTP. */
	static final String MEDIA_TYPE = "application/x-ndjson";

	static final int VERSION = 1;

	/** A line holds a document and at most this much besides (an id of 255 characters, escaped, and the fields). */
	static final int LINE_OVERHEAD_BYTES = 4096;

	private static final Set<String> HEADER_FIELDS = Set.of("statehouse", "format", "exportedAt", "cursor", "match",
			"history");

	private static final Set<String> STATE_FIELDS = Set.of("id", "version", "updatedAt", "document", "operation",
			"writtenBy");

	private static final Set<String> END_FIELDS = Set.of("end", "lines");

	private ExportFormat() {
	}

	/**
	 * What an export says of itself.
	 * @param exportedAt when it started: every state in it is as new as then, or newer
	 * @param cursor the change feed's position then: following {@code GET /changes} from it
	 * replays every change the export may have missed
	 */
	record Header(Instant exportedAt, String cursor, String match, boolean history) {

		void write(JsonGenerator json) {
			json.writeStartObject();
			json.writeStringProperty("statehouse", "states");
			json.writeNumberProperty("format", VERSION);
			json.writeStringProperty("exportedAt", this.exportedAt.toString());
			json.writeStringProperty("cursor", this.cursor);
			json.writeStringProperty("match", this.match);
			json.writeBooleanProperty("history", this.history);
			json.writeEndObject();
			json.writeRaw('\n');
		}

		static Header read(JsonNode line) {
			if (!"states".equals(line.path("statehouse").asString(null)) || !line.path("format").isIntegralNumber()
					|| !line.path("format").canConvertToInt()) {
				throw new InvalidRequestException("line 1: not the header of an export of states "
						+ "({\"statehouse\":\"states\",\"format\":1,\"exportedAt\":…})");
			}
			if (line.path("format").asInt() != VERSION) {
				throw new InvalidRequestException("line 1: format " + line.path("format").asString()
						+ " is not one this service reads (" + VERSION + ")");
			}
			requireOnly(line, HEADER_FIELDS, 1);
			requireType(line, "cursor", JsonNode::isString, "text", 1);
			requireType(line, "match", JsonNode::isString, "text", 1);
			requireType(line, "history", JsonNode::isBoolean, "true or false", 1);
			return new Header(time(line, "exportedAt", 1), line.path("cursor").asString(""),
					line.path("match").asString("*"), line.path("history").asBoolean(false));
		}

	}

	/**
	 * One line of an id: its newest version, or with history one of its versions.
	 * @param document the document, compact; {@code null} for a version without one (a deletion)
	 */
	record StateLine(String id, long version, Instant updatedAt, @Nullable String operation,
			@Nullable String writtenBy, @Nullable String document) {

		void write(JsonGenerator json) {
			json.writeStartObject();
			json.writeStringProperty("id", this.id);
			json.writeNumberProperty("version", this.version);
			json.writeStringProperty("updatedAt", this.updatedAt.toString());
			if (this.operation != null) {
				json.writeStringProperty("operation", this.operation);
				json.writeStringProperty("writtenBy", this.writtenBy);
			}
			json.writeName("document");
			if (this.document != null) {
				json.writeRawValue(this.document);
			}
			else {
				json.writeNull();
			}
			json.writeEndObject();
			json.writeRaw('\n');
		}

		/**
		 * @param documents normalizes a document as a write of it would
		 * @param number the line's number in the file, for problems
		 */
		static StateLine read(JsonNode line, JsonDocuments documents, long number) {
			requireOnly(line, STATE_FIELDS, number);
			JsonNode id = line.path("id");
			if (!id.isString() || !Ids.isValid(id.asString())) {
				throw new InvalidRequestException("line " + number + ": id: " + Ids.DESCRIPTION);
			}
			JsonNode version = line.path("version");
			if (!version.isIntegralNumber() || !version.canConvertToLong() || version.asLong() < 1) {
				throw new InvalidRequestException("line " + number + ": version: must be a whole number of at least 1");
			}
			JsonNode document = line.path("document");
			if (document.isMissingNode()) {
				throw new InvalidRequestException("line " + number + ": document: required (null for a deletion)");
			}
			String normalized;
			try {
				normalized = document.isNull() ? null : documents.normalize(document, "document");
			}
			catch (InvalidDocumentException | DocumentTooLargeException ex) {
				throw new InvalidRequestException("line " + number + ": " + ex.getMessage());
			}
			requireType(line, "operation", JsonNode::isString, "text", number);
			requireType(line, "writtenBy", JsonNode::isString, "text", number);
			return new StateLine(id.asString(), version.asLong(), time(line, "updatedAt", number),
					line.path("operation").asString(null), line.path("writtenBy").asString(null), normalized);
		}

	}

	/** The last line: how many state lines came before it. */
	static void writeEnd(JsonGenerator json, long lines) {
		json.writeStartObject();
		json.writeBooleanProperty("end", true);
		json.writeNumberProperty("lines", lines);
		json.writeEndObject();
		json.writeRaw('\n');
	}

	/** Whether a line is the end line; checks that it counts {@code lines}. */
	static boolean isEnd(JsonNode line, long lines, long number) {
		if (!line.has("end")) {
			return false;
		}
		requireOnly(line, END_FIELDS, number);
		if (!line.path("end").isBoolean() || !line.path("end").asBoolean() || !line.path("lines").isIntegralNumber()
				|| !line.path("lines").canConvertToLong()) {
			throw new InvalidRequestException("line " + number + ": the end line is {\"end\":true,\"lines\":…}");
		}
		if (line.path("lines").asLong() != lines) {
			throw new InvalidRequestException("line " + number + ": the end line counts " + line.path("lines").asLong()
					+ " lines of states, the file has " + lines + ": a file put together from parts?");
		}
		return true;
	}

	/**
	 * The next line of a stream, without its line break; {@code null} at its end.
	 * @throws InvalidRequestException when a line is longer than {@code maxBytes}
	 */
	static byte @Nullable [] nextLine(InputStream in, int maxBytes, long number) throws IOException {
		ByteArrayOutputStream line = new ByteArrayOutputStream();
		int b = in.read();
		if (b < 0) {
			return null;
		}
		while (b >= 0 && b != '\n') {
			if (line.size() >= maxBytes) {
				throw new InvalidRequestException("line " + number + ": longer than " + maxBytes
						+ " bytes (a document over the size limit?)");
			}
			line.write(b);
			b = in.read();
		}
		byte[] bytes = line.toByteArray();
		int length = bytes.length;
		return (length > 0 && bytes[length - 1] == '\r') ? Arrays.copyOf(bytes, length - 1) : bytes;
	}

	private static void requireOnly(JsonNode line, Set<String> fields, long number) {
		for (String name : line.propertyNames()) {
			if (!fields.contains(name)) {
				throw new InvalidRequestException("line " + number + ": unknown field '" + name + "'");
			}
		}
	}

	private static void requireType(JsonNode line, String field, Predicate<JsonNode> type,
			String what, long number) {
		if (line.has(field) && !line.get(field).isNull() && !type.test(line.get(field))) {
			throw new InvalidRequestException("line " + number + ": " + field + ": must be " + what);
		}
	}

	private static Instant time(JsonNode line, String field, long number) {
		try {
			return Instant.parse(line.path(field).asString(""));
		}
		catch (DateTimeParseException ex) {
			throw new InvalidRequestException("line " + number + ": " + field + ": must be an RFC 3339 time such as "
					+ "2026-12-01T00:00:00Z");
		}
	}

}
