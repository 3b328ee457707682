// A deployment across two workers (started by tests/e2e/test_ui.py: DP 2 over node-a and
// node-b, both RUNNING): its expanded row lists the subordinate worker with its own state, and
// the log view's worker selector shows that worker's log.
import { check, login, runFlow, screenshot, waitFor } from "./browser.mjs";

const URL = process.env.TANDEM_MANAGER_URL;
await runFlow("two-worker deployment flow", async ({ page }) => {
  await login(page, URL, process.env.TANDEM_ADMIN_PASSWORD);
  await page.getByRole("menuitem", { name: "Deployments" }).click();
  const row = page.locator("tr", { has: page.getByTestId("replicas-count-stories-2x") });
  await waitFor("1/1", async () => (await page.getByTestId("replicas-count-stories-2x").innerText()) === "1/1");
  await row.getByRole("button", { name: "Expand row" }).click();
  const expanded = page.locator(".ant-table-expanded-row-level-1");
  const subordinate = expanded.locator("tr", { hasText: "Subordinate worker" });
  await subordinate.waitFor();
  check((await subordinate.innerText()).includes("node-b"), "the subordinate row names node-b");
  await subordinate.locator('[data-state="RUNNING"]').waitFor();
  const main = expanded.locator("tr", { hasText: "node-a" }).first();
  await main.locator('[data-state="RUNNING"]').waitFor();
  await screenshot(page, "deployments-two-workers");

  await expanded.getByRole("button", { name: "View logs" }).first().click();
  await page.getByLabel("Worker").click();
  await page.locator(".ant-select-item-option", { hasText: "Subordinate: node-b" }).click();
  await waitFor("the subordinate's log", async () => (await page.getByTestId("log-text").innerText()).includes("joined the head"));
  await screenshot(page, "logs-subordinate");
});
