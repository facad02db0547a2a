package io.symmem.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.support.ui.WebDriverWait;

/**
 * The status page at `/` in a real headless Chromium (Debian's chromium and chromium-driver, driven by
 * Selenium; nothing downloaded): it shows every rank of a two-rank world as READY, then, without a
 * reload, rank 1 as LEFT once that rank is stopped as Kubernetes stops a pod (SIGTERM).
 */
class StatusPageIT {
    private static final Path CHROMIUM = Path.of("/usr/bin/chromium");
    private static final Path CHROMEDRIVER = Path.of("/usr/bin/chromedriver");

    @Test
    void theStatusPageShowsEveryRankAndFollowsARankThatLeaves() throws Exception {
        assumeTrue(Files.isExecutable(CHROMIUM) && Files.isExecutable(CHROMEDRIVER), "SKIPPED: the status page test needs "
                + CHROMIUM + " and " + CHROMEDRIVER + " (Debian: apt-get install chromium chromium-driver; bin/ensure-deps "
                + "installs them when it runs as root)");
        try (TwoRankWorld world = TwoRankWorld.start("status-page")) {
            ChromeOptions options = new ChromeOptions().setBinary(CHROMIUM.toFile())
                    .addArguments("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run");
            ChromeDriverService service = new ChromeDriverService.Builder().usingDriverExecutable(CHROMEDRIVER.toFile())
                    .usingAnyFreePort().build();
            WebDriver browser = new ChromeDriver(service, options);
            try {
                browser.get("http://127.0.0.1:" + world.port(0) + "/");
                WebDriverWait wait = new WebDriverWait(browser, Duration.ofSeconds(30), Duration.ofMillis(100));
                wait.until(b -> states(b).equals(List.of("READY", "READY")));
                assertThat(browser.findElement(By.id("title")).getText()).isEqualTo("symmem rank 0 of 2");
                assertThat(browser.findElement(By.id("summary")).getText()).contains("world of 2 ranks, backend host");
                assertThat(browser.findElement(By.id("topology-summary")).getText()).isNotBlank();
                ((JavascriptExecutor) browser).executeScript("window.notReloaded = true;");

                assertThat(world.terminate(1, 60)).as("SIGTERM is a normal end: exit 0; output:%n%s", world.output(1)).isZero();

                wait.until(b -> {
                    List<String> now = states(b);
                    return now.size() == 2 && (now.get(1).equals("LEFT") || now.get(1).equals("GONE"));
                });
                assertThat(states(browser)).as("rank 1 stopped by SIGTERM leaves in order; its output:%n%s", world.output(1))
                        .containsExactly("READY", "LEFT");
                assertThat(((JavascriptExecutor) browser).executeScript("return window.notReloaded === true;"))
                        .as("updated in place, not reloaded").isEqualTo(Boolean.TRUE);
                assertThat(((JavascriptExecutor) browser).executeScript(
                        "return document.querySelectorAll('#events li[data-type=departed]').length;")).isEqualTo(1L);
            } finally {
                browser.quit();
            }
        }
    }

    /**
     * The data-state of each row of the ranks table, in rank order, read in one script: the page rebuilds
     * the table on every update, so elements found one call earlier may be gone by the next.
     */
    @SuppressWarnings("unchecked")
    private static List<String> states(WebDriver browser) {
        return (List<String>) ((JavascriptExecutor) browser).executeScript(
                "return Array.from(document.querySelectorAll('#ranks tbody tr[data-rank]')).map(r => r.dataset.state);");
    }
}
