package io.statehouse.state;

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.util.unit.DataSize;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

@Tag("fast")
class JsonDocumentsTests {

	private final JsonDocuments documents = new JsonDocuments(new StateProperties(DataSize.ofBytes(64), 64));

	/** RFC 7396, appendix A: every example, target and patch to result. */
	@ParameterizedTest(name = "{0} + {1} = {2}")
	@CsvSource(delimiter = '|', quoteCharacter = '`', textBlock = """
			{"a":"b"}                 | {"a":"c"}                    | {"a":"c"}
			{"a":"b"}                 | {"b":"c"}                    | {"a":"b","b":"c"}
			{"a":"b"}                 | {"a":null}                   | {}
			{"a":"b","b":"c"}         | {"a":null}                   | {"b":"c"}
			{"a":["b"]}               | {"a":"c"}                    | {"a":"c"}
			{"a":"c"}                 | {"a":["b"]}                  | {"a":["b"]}
			{"a":{"b":"c"}}           | {"a":{"b":"d","c":null}}     | {"a":{"b":"d"}}
			{"a":[{"b":"c"}]}         | {"a":[1]}                    | {"a":[1]}
			["a","b"]                 | ["c","d"]                    | ["c","d"]
			{"a":"b"}                 | ["c"]                        | ["c"]
			{"a":"foo"}               | null                         | null
			{"a":"foo"}               | "bar"                        | "bar"
			{"e":null}                | {"a":1}                      | {"e":null,"a":1}
			[1,2]                     | {"a":"b","c":null}           | {"a":"b"}
			{}                        | {"a":{"bb":{"ccc":null}}}    | {"a":{"bb":{}}}
			""")
	void mergePatchIsRfc7396(String target, String patch, String result) {
		assertThat(this.documents.mergePatch(target, patch)).isEqualTo(result);
	}

	@Test
	void numbersAreKeptExactly() {
		assertThat(this.documents.mergePatch("{\"n\":0.10}", "{\"m\":123456789012345678901234567890}"))
			.isEqualTo("{\"n\":0.10,\"m\":123456789012345678901234567890}");
	}

	@ParameterizedTest
	@ValueSource(strings = { "1e2147483648", "1e-2147483649", "0e2147483648", "1.0e-2147483647", "1e99999999999" })
	void numbersWhoseExponentNoDecimalHoldsAreInvalidDocuments(String number) {
		byte[] body = ("{\"n\":" + number + "}").getBytes(StandardCharsets.UTF_8);
		assertThatExceptionOfType(InvalidDocumentException.class)
			.isThrownBy(() -> this.documents.readObject(new ByteArrayInputStream(body)))
			.withMessageContaining("The body holds a number whose exponent is beyond the limits of a decimal");
		assertThatExceptionOfType(InvalidDocumentException.class).isThrownBy(() -> this.documents.readLine(body))
			.withMessageContaining("The line holds a number whose exponent is beyond the limits of a decimal");
	}

	@Test
	void aPatchedDocumentBeyondTheSizeLimitIsRefused() {
		assertThatExceptionOfType(DocumentTooLargeException.class)
			.isThrownBy(() -> this.documents.mergePatch("{\"a\":\"" + "x".repeat(40) + "\"}",
					"{\"b\":\"" + "y".repeat(40) + "\"}"))
			.withMessageContaining("limit is 64");
	}

}
