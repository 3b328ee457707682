// The console in a real browser against a real tandem manager + agent (started by
// tests/e2e/test_ui.py): log in; create the seed's custom backend; deploy stories260K with
// manual placement and replicas 0; Clone it; + to one replica and see RUNNING without a reload;
// chat in the playground at temperature 0 and get the API's greedy answer; thinking off on
// tiny-qwen3 sends enable_thinking: false; create an API key and use it with curl; follow an
// instance's logs and see a new request's access-log line. Screenshots of every page.
import { execFileSync } from "node:child_process";
import { answerEnded, check, runFlow, screenshot, sendInPlayground, waitFor } from "./browser.mjs";

const URL = process.env.TANDEM_MANAGER_URL;
const PASSWORD = process.env.TANDEM_ADMIN_PASSWORD;
const STORIES = process.env.STORIES_GGUF;
const WORKER = process.env.TANDEM_WORKER ?? "node-a";
const CHAT_TEMPLATE = process.env.CHAT_TEMPLATE;  // stories260K has none of its own
const PROMPT = "Once upon a time";

await runFlow("manager UI flow", async ({ context, page }) => {
  // Log in.
  await page.goto(URL);
  await page.getByLabel("Password").fill(PASSWORD);
  await screenshot(page, "login");
  await page.getByRole("button", { name: "Log in" }).click();
  await page.getByTestId("current-user").waitFor();
  check((await page.getByTestId("current-user").innerText()) === "admin", "logged in as admin");

  // The seed's custom backend.
  await page.getByRole("menuitem", { name: "Backends" }).click();
  await page.getByTestId("add-backend").click();
  const dialog = page.getByRole("dialog");
  await dialog.getByLabel("Name", { exact: true }).fill("vllm-ascend-custom");
  await dialog.getByLabel("Version name").fill("0.18.0rc1");
  await dialog.getByLabel("Entrypoint").fill("tandem serve");
  await dialog.getByLabel("Run command").fill("{{model_path}} --host {{worker_ip}} --port {{port}} --served-model-name {{model_name}}");
  await dialog.getByLabel("Default version").fill("0.18.0rc1");
  await screenshot(page, "backend-form");
  await dialog.getByRole("button", { name: "Save" }).click();
  await page.getByRole("cell", { name: "vllm-ascend-custom" }).waitFor();
  await screenshot(page, "backends");

  // Deploy: manual placement on the worker's first device, replicas 0.
  await page.getByRole("menuitem", { name: "Deployments" }).click();
  await page.getByRole("button", { name: "Deploy" }).click();
  await page.getByLabel("Name", { exact: true }).fill("stories");
  await page.getByLabel("Model path on the worker").fill(STORIES);
  await page.getByLabel("Backend", { exact: true }).click();
  await page.locator(".ant-select-item-option", { hasText: "vllm-ascend-custom" }).click();
  await page.getByLabel("Replicas").fill("0");
  await page.getByText("Manual", { exact: true }).click();
  await page.getByTestId(`device-${WORKER}:cpu:1`).click();  // tiny-qwen3 holds cpu:0
  await page.getByLabel("Backend parameters").fill(`--max-model-len 512   # the seed pastes comments\n--max-num-seqs 4 --chat-template ${CHAT_TEMPLATE}`);
  await page.getByTestId("parameter-words").waitFor();
  check((await page.getByTestId("parameter-words").innerText()).includes("6 arguments"), "the parameters preview lists 6 arguments");
  await screenshot(page, "deploy-form");
  await page.getByRole("button", { name: "Deploy" }).click();
  await page.getByTestId("replicas-count-stories").waitFor();
  check((await page.getByTestId("replicas-count-stories").innerText()) === "0/0", "stories deployed with replicas 0");

  // Clone: the form pre-filled under a new name.
  const row = page.locator("tr", { has: page.getByTestId("replicas-count-stories") });
  await row.getByRole("button", { name: "Clone" }).click();
  await waitFor("the clone's name", async () => (await page.getByLabel("Name", { exact: true }).inputValue()) === "stories-2");
  check((await page.getByLabel("Model path on the worker").inputValue()) === STORIES, "the clone keeps the model path");
  check((await page.getByLabel("Backend parameters").inputValue()).includes("# the seed pastes comments"), "the clone keeps the parameters");
  await page.getByRole("button", { name: "Deploy" }).click();
  await page.getByTestId("replicas-count-stories-2").waitFor();

  // + on stories: RUNNING arrives through the watch stream, no reload.
  const navigations = [];
  page.on("framenavigated", (f) => f === page.mainFrame() && navigations.push(f.url()));
  await page.getByTestId("replicas-stories").getByRole("button", { name: "One replica more" }).click();
  await waitFor("stories 1/1 RUNNING", async () =>
    (await page.getByTestId("replicas-count-stories").innerText()) === "1/1", 120_000);
  check(navigations.length === 0, `the page did not reload (${navigations.join(", ")})`);
  await page.getByTestId("state-stories").getByText("Running").waitFor();
  await page.locator("tr", { has: page.getByTestId("replicas-count-stories") }).getByRole("button", { name: "Expand row" }).click();
  await page.locator('.ant-table-expanded-row-level-1 [data-state="RUNNING"]').first().waitFor();
  await screenshot(page, "deployments");

  // The API's greedy answer, for the playground to match.
  // With the Origin a page of the console sends (the manager refuses a cross-site write made
  // with the session cookie).
  const api = await context.request.post(`${URL}/v1/chat/completions`, {
    headers: { Origin: URL },
    data: { model: "stories", messages: [{ role: "user", content: PROMPT }], temperature: 0, max_tokens: 24 },
  });
  check(api.ok(), `the gateway answers the session: ${api.status()} ${await api.text()}`);
  const greedy = (await api.json()).choices[0].message.content.trim();
  check(greedy.length > 0, "the greedy answer is not empty");

  // Playground: temperature 0, the same max_tokens, the same message.
  await row.getByRole("button", { name: "Open in playground" }).click();
  await page.getByTestId("temperature").fill("0");
  await page.getByTestId("max-tokens").fill("24");
  const answer = await sendInPlayground(page, PROMPT);
  check(answer === greedy, `the playground's streamed answer equals the API's greedy one:\n  ${JSON.stringify(answer)}\n  ${JSON.stringify(greedy)}`);
  await screenshot(page, "playground");
  await page.getByTestId("view-code").click();
  check((await page.getByTestId("code-curl").innerText()).includes('"model": "stories"'), "View code shows the request");
  await screenshot(page, "playground-code");
  await page.keyboard.press("Escape");

  // Thinking off on tiny-qwen3 (deployed by the test through the API): the request says so.
  await page.getByTestId("model-select-0").click();
  await page.locator(".ant-select-item-option", { hasText: "tiny-qwen3" }).click();
  await page.getByTestId("thinking").click();
  const sent = page.waitForRequest((r) => r.url().endsWith("/v1/chat/completions") && r.method() === "POST");
  await page.getByTestId("chat-input").fill("Hello");
  await page.getByTestId("send").click();
  const body = JSON.parse((await sent).postData());
  check(body.model === "tiny-qwen3" && body.chat_template_kwargs?.enable_thinking === false,
    `the request carries enable_thinking: false: ${JSON.stringify(body)}`);
  await answerEnded(page, 0, 1);

  // Compare: the same message to two deployments, answered side by side.
  await page.getByTestId("compare").click();
  await page.getByTestId("model-select-1").click();
  await page.locator(".ant-select-dropdown:not(.ant-select-dropdown-hidden) .ant-select-item-option", { hasText: /^stories$/ }).click();
  await page.getByTestId("chat-input").fill(PROMPT);
  await page.getByTestId("send").click();
  await answerEnded(page, 0, 3);
  await answerEnded(page, 1, 1);
  const compared = (await page.locator('[data-testid="turn-1-1"] [data-testid="answer-1"]').getAttribute("data-raw")).trim();
  check(compared === greedy,
    `the compared stories pane gives the greedy answer too (temperature 0): ${JSON.stringify(compared)} vs ${JSON.stringify(greedy)}`);
  await screenshot(page, "playground-compare");

  // An API key, shown once, used with curl.
  await page.getByRole("menuitem", { name: "API keys" }).click();
  await page.getByTestId("create-key").click();
  await page.getByTestId("key-name").fill("browser-key");
  await page.getByRole("dialog").getByRole("button", { name: "Create an API key" }).click();
  const key = (await page.getByTestId("new-key-value").locator("code").innerText()).trim();
  check(/^tandem_[0-9a-f]{16}_[0-9a-f]{32}$/.test(key), `a key was shown: ${key}`);
  await screenshot(page, "api-key-created");
  await page.getByRole("button", { name: "Done" }).click();
  await page.getByTestId("new-key-value").waitFor({ state: "detached" });
  await page.getByRole("cell", { name: "browser-key" }).waitFor();
  check(!(await page.content()).includes(key.slice(24)), "the key's secret is not shown again");
  await screenshot(page, "api-keys");

  // Logs that follow: a request made now shows up in the open view.
  await page.getByRole("menuitem", { name: "Deployments" }).click();
  await page.locator("tr", { has: page.getByTestId("replicas-count-stories") }).getByRole("button", { name: "Expand row" }).click();
  await page.getByRole("button", { name: "View logs" }).first().click();
  await waitFor("the log's first lines", async () => (await page.getByTestId("log-text").innerText()).includes("HTTP server listening"));
  const before = (await page.getByTestId("log-text").innerText()).split("\n").filter((l) => l.includes("POST /v1/completions")).length;
  const curl = execFileSync("curl", ["-sS", "-f", `${URL}/v1/completions`, "-H", `Authorization: Bearer ${key}`,
    "-H", "Content-Type: application/json", "-d", JSON.stringify({ model: "stories", prompt: PROMPT, max_tokens: 4 })]).toString();
  check(JSON.parse(curl).choices[0].text.length > 0, `curl with the key is served: ${curl}`);
  await waitFor("the new access-log line", async () =>
    (await page.getByTestId("log-text").innerText()).split("\n").filter((l) => l.includes("POST /v1/completions")).length > before);
  await screenshot(page, "logs");
  await page.keyboard.press("Escape");

  // The other pages, for their screenshots (and their console errors).
  for (const [item, name] of [["Workers", "workers"], ["Devices", "devices"]]) {
    await page.getByRole("menuitem", { name: item }).click();
    await page.locator(".ant-table-row").first().waitFor();
    await screenshot(page, name);
  }
  // Maintenance on and off again, seen through the workers' watch stream.
  await page.getByRole("menuitem", { name: "Workers" }).click();
  const worker = page.locator("tr", { hasText: WORKER });
  await worker.getByRole("switch").click();
  await worker.locator('[data-state="maintenance"]').waitFor();
  await worker.getByRole("switch").click();
  await worker.locator('[data-state="ready"]').waitFor();
  // The dashboard counts this run's gateway requests among the busiest deployments.
  await page.getByRole("menuitem", { name: "Dashboard" }).click();
  await page.getByRole("cell", { name: "stories", exact: true }).waitFor();
  await page.locator(".recharts-line-curve").first().waitFor();
  await screenshot(page, "dashboard");
  // Dark mode and Chinese render too.
  await page.getByTestId("dark-mode").locator(".ant-segmented-item").nth(1).click();
  await page.getByLabel("Language").click();
  await page.locator(".ant-select-item-option", { hasText: "简体中文" }).click();
  await page.getByRole("menuitem", { name: "模型部署" }).click();
  await page.getByRole("button", { name: "部署模型" }).waitFor();
  await screenshot(page, "deployments-zh-dark");
});
