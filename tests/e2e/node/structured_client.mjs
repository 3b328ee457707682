// Real OpenAI client against tandem's structured outputs: chat.completions.parse with a zod
// schema (response_format json_schema, strict), and tools with tool_choice "required".
import OpenAI from "openai";
import { zodResponseFormat } from "openai/helpers/zod";
import { z } from "zod";

const client = new OpenAI({ baseURL: process.env.BASE_URL, apiKey: "none" });
const model = process.env.MODEL;

function fail(msg) {
  console.error(msg);
  process.exit(1);
}

// Bounded fields: the model has random weights, so only the mask makes the output valid and
// only bounds make it end.
const Pet = z.object({
  name: z.string().max(10),
  age: z.number().int().min(0).max(30),
  kind: z.enum(["cat", "dog", "bird"]),
  vaccinated: z.boolean(),
});
for (const temperature of [0, 1]) {
  const completion = await client.beta.chat.completions.parse({
    model,
    messages: [{ role: "user", content: "Describe a pet as JSON." }],
    response_format: zodResponseFormat(Pet, "pet"),
    max_tokens: 200,
    temperature,
    seed: 7,
  });
  const message = completion.choices[0].message;
  if (!message.parsed) fail(`no parsed pet at T=${temperature}: ${JSON.stringify(message)}`);
  const checked = Pet.safeParse(message.parsed);
  if (!checked.success) fail(`pet does not validate: ${JSON.stringify(message.parsed)}`);
}
console.log("parse-zod-ok");

const tools = [{
  type: "function",
  function: {
    name: "get_weather",
    parameters: {
      type: "object",
      properties: { city: { type: "string", maxLength: 12 }, days: { type: "integer", minimum: 1, maximum: 7 } },
      required: ["city", "days"],
      additionalProperties: false,
    },
  },
}];
const called = await client.chat.completions.create({
  model,
  messages: [{ role: "user", content: "Weather in Paris for 3 days?" }],
  tools,
  tool_choice: "required",
  parallel_tool_calls: false,
  max_tokens: 200,
  temperature: 0,
});
const calls = called.choices[0].message.tool_calls ?? [];
if (called.choices[0].finish_reason !== "tool_calls" || calls.length !== 1) {
  fail(`tool_choice required: ${JSON.stringify(called.choices[0])}`);
}
const args = JSON.parse(calls[0].function.arguments);
if (calls[0].function.name !== "get_weather" || typeof args.city !== "string" ||
    !Number.isInteger(args.days) || args.days < 1 || args.days > 7) {
  fail(`bad tool call: ${JSON.stringify(calls[0])}`);
}
console.log("tool-required-ok");
