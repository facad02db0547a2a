package io.symmem.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.openqa.selenium.By;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.support.ui.WebDriverWait;

/**
 * The status page at / in a real headless Chromium, against a real two-rank world of the packaged
 * application: it shows every rank READY, then, without a reload, rank 1 LEFT once that rank is stopped
 * as Kubernetes stops a pod (SIGTERM); with SYMMEM_API_TOKEN set it asks for the token and then shows
 * the world by polling.
 *
 * <p>Chromium and its driver come from the system (Debian: {@code apt-get install chromium
 * chromium-driver}; {@code bin/ensure-deps --test}, run by bin/test, installs them); Selenium never
 * downloads either. Where they are missing the tests are skipped, saying so. Other places: {@code -Dsymmem.chromium=...} and
 * {@code -Dsymmem.chromedriver=...}.
 */
class StatusPageIT {
    private static final Path CHROMIUM = Path.of(System.getProperty("symmem.chromium", "/usr/bin/chromium"));
    private static final Path CHROMEDRIVER = Path.of(System.getProperty("symmem.chromedriver", "/usr/bin/chromedriver"));
    /** Generous: the page polls every 3 s and follows events at once; the machine may be busy. */
    private static final Duration PATIENCE = Duration.ofSeconds(30);
    private static final String TOKEN = "status-page-test-token";

    private TwoRankWorld world;
    private WebDriver browser;
    /** Chromium's TMPDIR: it leaves its profile's singleton socket folders there (JUnit removes them), not in /tmp. */
    @TempDir
    Path chromiumTemp;

    /** Per test, not per class: a class-level assumption leaves no skipped test (nor its message) in the report. */
    @BeforeEach
    void browserPresent() {
        assumeTrue(Files.isExecutable(CHROMIUM), () -> "StatusPageIT skipped: no Chromium at " + CHROMIUM
                + " (install it: apt-get install chromium chromium-driver, or as root bin/ensure-deps --test, which bin/test runs;"
                + " elsewhere, -Dsymmem.chromium=/path/to/chromium)");
        assumeTrue(Files.isExecutable(CHROMEDRIVER), () -> "StatusPageIT skipped: no chromedriver at " + CHROMEDRIVER
                + " (install it: apt-get install chromium-driver, or as root bin/ensure-deps --test, which bin/test runs;"
                + " elsewhere, -Dsymmem.chromedriver=/path/to/chromedriver)");
        // Selenium Manager must not look for (or download) a driver or a browser: both are named below.
        System.setProperty("webdriver.chrome.driver", CHROMEDRIVER.toString());
        System.setProperty("SE_OFFLINE", "true");
        // Selenium's OpenTelemetry tracing is of no use here (and the Quarkus BOM pins an older OpenTelemetry).
        System.setProperty("webdriver.remote.enableTracing", "false");
    }

    @AfterEach
    void stop() {
        if (browser != null) {
            browser.quit();
        }
        if (world != null) {
            world.close();
        }
    }

    @Test
    void showsEveryRankAndFollowsARankThatLeavesWithoutReload() throws Exception {
        world = TwoRankWorld.start("statuspage");
        browser = chromium();
        browser.get("http://127.0.0.1:" + world.port(0) + "/");

        WebDriverWait wait = new WebDriverWait(browser, PATIENCE);
        wait.withMessage(() -> "both ranks READY on the page; it shows:\n" + page())
                .until(b -> "READY".equals(state(b, 0)) && "READY".equals(state(b, 1)));
        assertThat(browser.findElement(By.id("world-heading")).getText()).contains("2 ranks").contains("backend host");
        assertThat(browser.findElements(By.cssSelector("#ranks tbody tr[data-rank]"))).hasSize(2);
        // Live: the page follows the event stream (and rank 0 hosts the store: its figures are on the page).
        wait.withMessage(() -> "the page following the event stream; it shows:\n" + page())
                .until(b -> b.findElement(By.id("connection")).getText().startsWith("Live"));
        assertThat(browser.findElement(By.id("store-figures")).getText()).contains("Keys").contains("Open connections");
        assertThat(browser.findElement(By.id("topology-summary")).getText()).isNotEmpty();
        // Everything the page loaded came from the rank itself.
        @SuppressWarnings("unchecked")
        List<String> loaded = (List<String>) ((JavascriptExecutor) browser).executeScript(
                "return performance.getEntriesByType('resource').map(e => e.name);");
        assertThat(loaded).allMatch(url -> url.startsWith("http://127.0.0.1:" + world.port(0) + "/"));

        // A mark in the page's window: a reload would lose it.
        ((JavascriptExecutor) browser).executeScript("window.symmemNoReload = true;");
        assertThat(world.terminate(1, 60)).as("SIGTERM is a normal end: exit 0; output:\n%s", world.output(1)).isZero();

        wait.withMessage(() -> "rank 1 LEFT or GONE on the page after its SIGTERM; it shows:\n" + page()
                + "\nrank 0's output:\n" + world.output(0))
                .until(b -> List.of("LEFT", "GONE").contains(state(b, 1)));
        assertThat(((JavascriptExecutor) browser).executeScript("return window.symmemNoReload === true;"))
                .as("the page updated in place, without a reload").isEqualTo(true);
        assertThat(state(browser, 1)).as("rank 1 stopped by SIGTERM leaves in order; its output:\n%s", world.output(1))
                .isEqualTo("LEFT");
        assertThat(stateText(browser, 1)).isEqualTo("LEFT");
        assertThat(state(browser, 0)).isEqualTo("READY");
        // The departure came by the event stream too (polling alone would not list it among the events), once.
        wait.withMessage(() -> "rank 1's departure among the page's events; it shows:\n" + page())
                .until(b -> !b.findElements(By.cssSelector("#events li[data-type='departed'][data-rank='1']")).isEmpty());
        assertThat(browser.findElements(By.cssSelector("#events li[data-type='departed']"))).hasSize(1);
    }

    @Test
    void withAnApiTokenAsksForItAndPolls() throws Exception {
        world = TwoRankWorld.start("statuspage-token", Map.of("SYMMEM_API_TOKEN", TOKEN));
        browser = chromium();
        browser.get("http://127.0.0.1:" + world.port(0) + "/");

        WebDriverWait wait = new WebDriverWait(browser, PATIENCE);
        WebElement form = browser.findElement(By.id("token-form"));
        wait.withMessage(() -> "the token field after a 401; the page shows:\n" + page()).until(b -> form.isDisplayed());
        assertThat(browser.findElements(By.cssSelector("#ranks tbody tr[data-rank]"))).isEmpty();

        browser.findElement(By.id("token-input")).sendKeys(TOKEN);
        browser.findElement(By.cssSelector("#token-form button[type=submit]")).click();
        wait.withMessage(() -> "both ranks READY with the token; the page shows:\n" + page())
                .until(b -> "READY".equals(state(b, 0)) && "READY".equals(state(b, 1)));
        assertThat(form.isDisplayed()).isFalse();
        assertThat(browser.findElement(By.id("connection")).getText()).startsWith("Polling");
        // The token stays in the page's memory: not in the address, not in the field.
        assertThat(browser.getCurrentUrl()).doesNotContain(TOKEN);
        assertThat(browser.findElement(By.id("token-input")).getDomProperty("value")).isEmpty();
    }

    private WebDriver chromium() {
        ChromeOptions options = new ChromeOptions();
        options.setBinary(CHROMIUM.toFile());
        // --no-sandbox: tests may run as root (CI containers), where Chromium's sandbox refuses to start.
        options.addArguments("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                "--disable-extensions", "--no-first-run", "--window-size=1280,1000");
        ChromeDriverService service = new ChromeDriverService.Builder().usingDriverExecutable(CHROMEDRIVER.toFile())
                .usingAnyFreePort().withEnvironment(Map.of("TMPDIR", chromiumTemp.toString())).build();
        return new ChromeDriver(service, options);
    }

    /**
     * The data-state of the rank's row, or null while the page has no row for it. Read in the page in one
     * go: the page replaces its rows as it renders, so an element found a moment ago may be gone.
     */
    private static String state(WebDriver b, int rank) {
        return (String) ((JavascriptExecutor) b).executeScript(
                "const r = document.querySelector(\"#ranks tbody tr[data-rank='\" + arguments[0] + \"']\");"
                        + " return r ? r.getAttribute('data-state') : null;", rank);
    }

    /** The text of the rank's state cell, or null while the page has no row for it. */
    private static String stateText(WebDriver b, int rank) {
        return (String) ((JavascriptExecutor) b).executeScript(
                "const r = document.querySelector(\"#ranks tbody tr[data-rank='\" + arguments[0] + \"'] .state\");"
                        + " return r ? r.textContent : null;", rank);
    }

    private String page() {
        try {
            return browser.findElement(By.tagName("body")).getText();
        } catch (RuntimeException e) {
            return "(the page could not be read: " + e + ")";
        }
    }
}
