package io.statehouse.web;

import java.io.IOException;

import org.apache.catalina.connector.Request;
import org.apache.catalina.connector.Response;
import org.apache.catalina.valves.ErrorReportValve;

import org.springframework.http.HttpStatus;

/**
 * Tomcat's error report as a problem ({@code application/problem+json}) instead of an HTML
 * page: for what Tomcat refuses before the application sees it, such as a path with a
 * malformed %-escape or an encoded NUL, and for a failure in a filter (there is no {@code /error}
 * page: Spring Boot's is switched off, so that nothing answers in another format).
 */
class ProblemErrorReportValve extends ErrorReportValve {

	@Override
	protected void report(Request request, Response response, Throwable throwable) {
		int status = response.getStatus();
		if (status < 400 || response.getContentWritten() > 0 || !response.setErrorReported()) {
			return;
		}
		try {
			if (status >= 500) {
				Problems.write(response, status, "Internal Server Error", "internal-error",
						"The service failed unexpectedly; the failure is logged.");
			}
			else {
				HttpStatus known = HttpStatus.resolve(status);
				Problems.write(response, status, (known != null) ? known.getReasonPhrase() : "Refused",
						Problems.kind(status), "The request was refused before it reached the service.");
			}
			response.finishResponse();
		}
		catch (IOException | IllegalStateException ex) {
			// The client is gone, or the response is already on its way: nothing to add.
		}
	}

}
