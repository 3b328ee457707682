// Real OpenAI client against tandem: a streaming chat and a plain completion.
import OpenAI from "openai";

const client = new OpenAI({ baseURL: process.env.BASE_URL, apiKey: process.env.API_KEY });
const model = process.env.MODEL;

function fail(msg) {
  console.error(msg);
  process.exit(1);
}

const stream = await client.chat.completions.create({
  model,
  messages: [{ role: "user", content: "Once upon a time" }],
  max_tokens: 24,
  temperature: 0,
  stream: true,
  stream_options: { include_usage: true },
});
let text = "";
let usage = null;
let finish = null;
for await (const chunk of stream) {
  if (chunk.usage) usage = chunk.usage;
  for (const choice of chunk.choices) {
    text += choice.delta?.content ?? "";
    if (choice.finish_reason) finish = choice.finish_reason;
  }
}
if (!text.length) fail("empty streamed chat");
if (!usage || usage.completion_tokens !== 24) fail(`bad usage ${JSON.stringify(usage)}`);
if (finish !== "length") fail(`finish_reason ${finish}`);
console.log("chat-stream-ok", JSON.stringify(text));

const completion = await client.completions.create({
  model,
  prompt: "Once upon a time",
  max_tokens: 16,
  temperature: 0,
});
const ctext = completion.choices[0].text;
if (!ctext.startsWith(", there was a little girl")) fail(`completion text ${JSON.stringify(ctext)}`);
if (completion.usage.prompt_tokens !== 5) fail(`usage ${JSON.stringify(completion.usage)}`);
console.log("completion-ok", JSON.stringify(ctext));

const models = await client.models.list();
if (!models.data.some((m) => m.id === model)) fail("model not listed");
