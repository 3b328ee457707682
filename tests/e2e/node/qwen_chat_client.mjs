// Real OpenAI client against tandem serving tiny-qwen3 (random weights) with
// --reasoning-parser qwen3 --enable-auto-tool-choice --tool-call-parser hermes: chat with
// thinking on and off (plain and streaming) and a tool-call round trip.
import OpenAI from "openai";

const client = new OpenAI({ baseURL: process.env.BASE_URL, apiKey: "unused" });
const model = process.env.MODEL;
const messages = [{ role: "user", content: "What is the weather in Paris?" }];
const off = { chat_template_kwargs: { enable_thinking: false } };

function fail(msg) {
  console.error(msg);
  process.exit(1);
}

async function plain(extra) {
  const r = await client.chat.completions.create({
    model, messages, max_tokens: 10, temperature: 0, ...extra,
  });
  const m = r.choices[0].message;
  if (m.role !== "assistant") fail(`role ${m.role}`);
  if (!("reasoning_content" in m)) fail(`no reasoning_content field: ${JSON.stringify(m)}`);
  if (r.usage.completion_tokens !== 10) fail(`usage ${JSON.stringify(r.usage)}`);
  return m;
}

async function streamed(extra) {
  const stream = await client.chat.completions.create({
    model, messages, max_tokens: 10, temperature: 0, stream: true,
    stream_options: { include_usage: true }, ...extra,
  });
  let reasoning = "";
  let content = "";
  let usage = null;
  for await (const chunk of stream) {
    if (chunk.usage) usage = chunk.usage;
    for (const c of chunk.choices) {
      if (c.delta.reasoning_content && c.delta.content) fail(`both in one delta ${JSON.stringify(c)}`);
      reasoning += c.delta.reasoning_content ?? "";
      content += c.delta.content ?? "";
    }
  }
  if (!usage || usage.completion_tokens !== 10) fail(`stream usage ${JSON.stringify(usage)}`);
  return { reasoning, content };
}

// Thinking off: the prompt closed the think block, so everything is content.
const offMsg = await plain(off);
if (offMsg.reasoning_content !== null || !offMsg.content) fail(`off: ${JSON.stringify(offMsg)}`);
const offStream = await streamed(off);
if (offStream.reasoning !== "" || offStream.content !== offMsg.content) {
  fail(`off stream ${JSON.stringify(offStream)} vs ${JSON.stringify(offMsg)}`);
}
console.log("thinking-off-ok", JSON.stringify(offMsg.content));

// Thinking on: plain and streaming split the same text the same way.
const onMsg = await plain({});
const onStream = await streamed({});
if (onStream.reasoning !== (onMsg.reasoning_content ?? "") ||
    onStream.content !== (onMsg.content ?? "")) {
  fail(`on stream ${JSON.stringify(onStream)} vs ${JSON.stringify(onMsg)}`);
}
console.log("thinking-on-ok");

// Tool round trip: tools → (whatever the model says) → assistant tool_calls + tool → answer.
const tools = [{
  type: "function",
  function: {
    name: "get_weather",
    description: "Weather of a city",
    parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  },
}];
const first = await client.chat.completions.create({
  model, messages, tools, tool_choice: "auto", max_tokens: 10, temperature: 0, ...off,
});
if (!["stop", "length", "tool_calls"].includes(first.choices[0].finish_reason)) {
  fail(`finish ${first.choices[0].finish_reason}`);
}
const second = await client.chat.completions.create({
  model,
  tools,
  max_tokens: 10,
  temperature: 0,
  messages: [
    ...messages,
    {
      role: "assistant",
      content: null,
      tool_calls: [{
        id: "chatcmpl-tool-abc",
        type: "function",
        function: { name: "get_weather", arguments: JSON.stringify({ city: "Paris" }) },
      }],
    },
    { role: "tool", tool_call_id: "chatcmpl-tool-abc", content: "sunny, 21 C" },
  ],
});
if (second.choices[0].message.role !== "assistant") fail("round trip answer");
if (second.usage.prompt_tokens <= first.usage.prompt_tokens) fail("round trip prompt not longer");

// Bad messages are 400s (BadRequestError) and the server stays up.
try {
  await client.chat.completions.create({ model, messages: [{ role: "wizard", content: "x" }] });
  fail("unknown role accepted");
} catch (e) {
  if (!(e instanceof OpenAI.BadRequestError)) fail(`expected 400, got ${e}`);
}
console.log("qwen-chat-ok");
