// tandem serve's own playground at / in a real browser (server started by tests/e2e/test_ui.py
// with --api-key): the key is asked once; a temperature-0 answer equals the API's greedy one.
import { check, runFlow, screenshot, sendInPlayground } from "./browser.mjs";

const URL = process.env.TANDEM_SERVE_URL;
const KEY = process.env.TANDEM_SERVE_KEY;
const MODEL = process.env.TANDEM_SERVE_MODEL;
const PROMPT = "Once upon a time";

await runFlow("serve playground flow", async ({ context, page }) => {
  const api = await context.request.post(`${URL}/v1/chat/completions`, {
    headers: { Authorization: `Bearer ${KEY}` },
    data: { model: MODEL, messages: [{ role: "user", content: PROMPT }], temperature: 0, max_tokens: 24 },
  });
  check(api.ok(), `the API answers: ${api.status()} ${await api.text()}`);
  const greedy = (await api.json()).choices[0].message.content.trim();

  // Every request the page makes stays under the URL it was opened at (a --root-path prefix
  // that a proxy forwards alone).
  const prefix = new globalThis.URL(URL + "/").pathname;
  const strays = [];
  page.on("request", (r) => {
    if (!new globalThis.URL(r.url()).pathname.startsWith(prefix)) strays.push(r.url());
  });
  await page.goto(URL + "/");
  await page.getByTestId("api-key-input").fill(KEY);
  await screenshot(page, "serve-key");
  await page.getByTestId("save-key").click();
  await page.getByTestId("model-select-0").getByText(MODEL).waitFor();
  await page.getByTestId("temperature").fill("0");
  await page.getByTestId("max-tokens").fill("24");
  const answer = await sendInPlayground(page, PROMPT);
  check(answer === greedy, `the streamed answer equals the API's greedy one:\n  ${JSON.stringify(answer)}\n  ${JSON.stringify(greedy)}`);
  await screenshot(page, "serve-playground");
  check(strays.length === 0, `requests outside ${prefix}: ${strays.join(", ")}`);
});
