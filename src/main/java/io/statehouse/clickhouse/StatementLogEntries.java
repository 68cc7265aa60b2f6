package io.statehouse.clickhouse;

import java.util.Arrays;

import net.ttddyy.dsproxy.listener.logging.DefaultQueryLogEntryCreator;
import net.ttddyy.dsproxy.proxy.ParameterSetOperation;

/**
 * Statements as the statement log shows them: a list parameter (an array) written out item by
 * item, and every value cut at {@value #MAX_VALUE_CHARACTERS} characters, so that a batch of
 * documents does not flood the log.
 */
class StatementLogEntries extends DefaultQueryLogEntryCreator {

	static final int MAX_VALUE_CHARACTERS = 200;

	@Override
	public String getDisplayValue(ParameterSetOperation operation) {
		Object value = operation.getArgs()[1];
		String text;
		if (value != null && value.getClass().isArray()) {
			String wrapped = Arrays.deepToString(new Object[] { value });
			text = wrapped.substring(1, wrapped.length() - 1);
		}
		else {
			text = super.getDisplayValue(operation);
		}
		return (text.length() <= MAX_VALUE_CHARACTERS) ? text
				: text.substring(0, MAX_VALUE_CHARACTERS) + "… (" + text.length() + " characters)";
	}

}
