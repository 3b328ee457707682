// Shared by the browser tests: Debian's Chromium driven by playwright-core (no downloaded
// browser), a page that fails the test on any console error or uncaught exception, and
// screenshots into the test's output folder.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { chromium } from "playwright-core";

export const OUT = process.env.TANDEM_UI_OUT_DIR ?? "test-output";
mkdirSync(OUT, { recursive: true });

export async function openBrowser() {
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
    headless: true,
    // Root in CI: no sandbox; a closed network: no background connections.
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
      "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
  const context = await browser.newContext({ viewport: { width: 1280, height: 720 }, locale: "en-US" });
  const page = await context.newPage();
  const problems = [];
  page.on("console", (msg) => {
    if (msg.type() === "error") problems.push(`console error: ${msg.text()}`);
  });
  page.on("pageerror", (error) => problems.push(`page error: ${error.stack ?? error.message}`));
  page.setDefaultTimeout(30_000);
  return { browser, context, page, problems };
}

export async function screenshot(page, name) {
  await page.screenshot({ path: join(OUT, `${name}.png`), fullPage: true });
}

export function check(condition, message) {
  if (!condition) throw new Error(`check failed: ${message}`);
}

/** Polls `probe` (async → truthy) until it holds; throws with `what` after `timeoutMs`. */
export async function waitFor(what, probe, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Sends the playground's input and waits for the answer's stats (the stream has ended). */
export async function sendInPlayground(page, text, pane = 0) {
  const before = await page.getByTestId(`answer-${pane}`).count();
  await page.getByTestId("chat-input").fill(text);
  await page.getByTestId("send").click();
  // data-state "done": the stream has ended (the stats' TTFT tag shows at the first token).
  await waitFor("the answer to end", async () =>
    (await page.locator(`[data-testid="answer-${pane}"][data-state="done"]`).count()) > before, 120_000);
  // The streamed text exactly as it arrived (the page shows it rendered as Markdown).
  const answer = page.getByTestId(`answer-${pane}`).nth(before);
  check((await answer.innerText()).trim().length > 0, "the answer is shown");
  return ((await answer.getAttribute("data-raw")) ?? "").trim();
}

/** Waits until the answer of pane `pane` in turn `turn` has ended (data-state "done"). */
export async function answerEnded(page, pane, turn) {
  await page.locator(`[data-testid="turn-${pane}-${turn}"] [data-testid="answer-${pane}"][data-state="done"]`).waitFor({ timeout: 120_000 });
}

/** Logs in to the console at `url` as admin. */
export async function login(page, url, password) {
  await page.goto(url);
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: "Log in" }).click();
  await page.getByTestId("current-user").waitFor();
}

/**
 * Runs one browser flow: a fresh browser, `body({ browser, context, page, problems })`, then the
 * check that no console error happened. On failure: the console's errors and a screenshot named
 * failure-`name`, then the error again.
 */
export async function runFlow(name, body) {
  const session = await openBrowser();
  try {
    await body(session);
    check(session.problems.length === 0, `no console errors:\n${session.problems.join("\n")}`);
    console.log(`${name}: all checks passed`);
  } catch (error) {
    console.error(session.problems.join("\n"));
    await screenshot(session.page, `failure-${name.replace(/\W+/g, "_")}`).catch(() => {});
    throw error;
  } finally {
    await session.browser.close();
  }
}
