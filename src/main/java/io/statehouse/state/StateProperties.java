package io.statehouse.state;

import jakarta.validation.constraints.Max;
import jakarta.validation.constraints.Min;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.util.unit.DataSize;
import org.springframework.validation.annotation.Validated;

/**
 * Limits of state documents.
 *
 * @param maxDocumentSize largest request body and stored document (413 beyond)
 * @param maxDepth deepest nesting of objects and arrays in a document (400 beyond)
 */
@ConfigurationProperties("statehouse.state")
@Validated
record StateProperties(@DefaultValue("1MB") DataSize maxDocumentSize,
		@DefaultValue("64") @Min(1) @Max(1000) int maxDepth) {
}
