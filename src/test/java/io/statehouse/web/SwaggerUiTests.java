package io.statehouse.web;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

import io.statehouse.support.Installed;
import io.statehouse.support.StatehouseClient;
import io.statehouse.support.StatehouseTest;
import io.statehouse.support.TestTokens;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.openqa.selenium.By;
import org.openqa.selenium.Keys;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.support.ui.ExpectedConditions;
import org.openqa.selenium.support.ui.WebDriverWait;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Swagger UI as an operator uses it, in a real browser (Debian's headless {@code chromium} and
 * {@code chromedriver}; CI installs them, elsewhere the test is skipped when they are missing):
 * every operation of the contract is listed, and a token given to Authorize is what a request
 * tried out from the page carries.
 */
@StatehouseTest
class SwaggerUiTests {

	static final String OPERATOR = "sth_swagger-operator-0123456789abcdefghijklmnopqrstu";

	private static final Duration PATIENCE = Duration.ofSeconds(30);

	@DynamicPropertySource
	static void tokens(DynamicPropertyRegistry registry) {
		TestTokens.register(registry, 0, "operator", OPERATOR, "read,write", "ui:*");
	}

	@Autowired
	StatehouseClient client;

	@TempDir
	Path profile;

	private WebDriver browser;

	private WebDriverWait wait;

	@BeforeEach
	void openBrowser() {
		Optional<Path> chromium = Installed.onPath("chromium");
		Optional<Path> chromedriver = Installed.onPath("chromedriver");
		assumeTrue(chromium.isPresent() && chromedriver.isPresent(),
				"chromium or chromedriver is not installed (Debian: apt-get install chromium chromium-driver)");
		ChromeOptions options = new ChromeOptions().setBinary(chromium.get().toFile())
			.addArguments("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
					"--user-data-dir=" + this.profile);
		ChromeDriverService driver = new ChromeDriverService.Builder()
			.usingDriverExecutable(chromedriver.get().toFile())
			.usingAnyFreePort()
			.build();
		this.browser = new ChromeDriver(driver, options);
		this.wait = new WebDriverWait(this.browser, PATIENCE);
	}

	@AfterEach
	void closeBrowser() {
		if (this.browser != null) {
			this.browser.quit();
		}
	}

	@Test
	void everyOperationOfTheContractIsListed() throws Exception {
		this.browser.get("http://localhost:" + this.client.port() + "/swagger-ui.html");
		this.wait.until(ExpectedConditions.presenceOfElementLocated(By.id("operations-States-putState")));

		Set<String> listed = new TreeSet<>();
		for (WebElement operation : this.browser.findElements(By.cssSelector(".opblock"))) {
			String method = operation.findElement(By.cssSelector(".opblock-summary-method")).getText();
			String path = operation.findElement(By.cssSelector(".opblock-summary-path")).getAttribute("data-path");
			listed.add(method + " " + path);
		}
		assertThat(listed).isEqualTo(OpenApiDocument.operations());
		assertThat(this.browser.findElements(By.cssSelector(".errors-wrapper"))).isEmpty();
	}

	@Test
	void aStateWrittenFromThePageIsWrittenWithTheAuthorizedToken() {
		this.browser.get("http://localhost:" + this.client.port() + "/swagger-ui.html");
		WebElement put = this.wait
			.until(ExpectedConditions.presenceOfElementLocated(By.id("operations-States-putState")));

		// The page percent-encodes the id as one path segment, as every client must.
		String id = "ui:team a/run 1";
		assertThat(tryOut(put, id, "{\"cursor\": 1}")).as("no token given yet").isEqualTo("401");

		authorize(OPERATOR);
		assertThat(execute(put)).isEqualTo("201");
		assertThat(put.findElement(By.cssSelector(".curl-command")).getText())
			.contains("Authorization: Bearer " + OPERATOR);

		String path = "/states/" + StatehouseClient.segment(id);
		StatehouseClient.Response written = this.client.get(path, "Authorization",
				"Bearer " + OPERATOR);
		assertThat(written.status()).isEqualTo(200);
		assertThat(written.json().get("cursor").asInt()).isEqualTo(1);
		StatehouseClient.Response history = this.client.get(path + "/versions", "Authorization",
				"Bearer " + OPERATOR);
		assertThat(history.json().valueStream().map((version) -> version.get("writtenBy").asString()))
			.containsExactly("operator");
	}

	/**
	 * Opens an operation, presses "Try it out", fills its id and body, and executes it: the status
	 * the page shows.
	 */
	private String tryOut(WebElement operation, String id, String body) {
		operation.findElement(By.cssSelector(".opblock-summary")).click();
		this.wait.until(ExpectedConditions.elementToBeClickable(operation.findElement(By.cssSelector(".try-out__btn"))))
			.click();
		WebElement idField = operation.findElement(By.cssSelector(".parameters input[placeholder='id']"));
		idField.sendKeys(id);
		WebElement bodyField = operation.findElement(By.cssSelector("textarea.body-param__text"));
		bodyField.sendKeys(Keys.chord(Keys.CONTROL, "a"), Keys.DELETE);
		bodyField.sendKeys(body);
		return execute(operation);
	}

	/** Sends the operation's request as filled in (clearing the response shown before): its status. */
	private String execute(WebElement operation) {
		operation.findElements(By.cssSelector("button.btn-clear")).forEach(WebElement::click);
		By status = By.cssSelector(".live-responses-table .response .response-col_status");
		this.wait.until((browser) -> operation.findElements(status).isEmpty());
		operation.findElement(By.cssSelector("button.execute")).click();
		this.wait.until((browser) -> !operation.findElements(status).isEmpty()
				&& !operation.findElement(status).getText().isBlank());
		return operation.findElement(status).getText().strip().split("\\s+")[0];
	}

	private void authorize(String secret) {
		this.browser.findElement(By.cssSelector(".auth-wrapper .authorize")).click();
		WebElement dialog = this.wait.until(ExpectedConditions.visibilityOfElementLocated(By.cssSelector(".dialog-ux")));
		dialog.findElement(By.cssSelector("input[type='text'], input[type='password']")).sendKeys(secret);
		dialog.findElement(By.cssSelector(".auth-btn-wrapper .authorize")).click();
		dialog.findElement(By.cssSelector(".auth-btn-wrapper .btn-done")).click();
		this.wait.until(ExpectedConditions.invisibilityOfElementLocated(By.cssSelector(".dialog-ux")));
	}

}
