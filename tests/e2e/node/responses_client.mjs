// Real OpenAI client (openai v4) against tandem's /v1/responses: responses.create plain and
// with stream: true, the responses.stream() helper (which rebuilds the response from the events
// and throws on an event that names a missing item or part), previous_response_id, retrieve and
// del.
import OpenAI from "openai";

const client = new OpenAI({ baseURL: process.env.BASE_URL, apiKey: process.env.API_KEY });
const model = process.env.MODEL;
const request = { model, input: "Once upon a time", max_output_tokens: 16, temperature: 0 };

function fail(msg) {
  console.error(msg);
  process.exit(1);
}

// Plain: the SDK computes output_text from the message items.
const plain = await client.responses.create({ ...request, instructions: "Tell a story." });
if (plain.object !== "response" || !plain.id.startsWith("resp_")) fail(`plain ${JSON.stringify(plain)}`);
if (!plain.output_text.length) fail(`empty output_text ${JSON.stringify(plain)}`);
if (plain.output_text !== plain.output[0].content[0].text) fail("output_text mismatch");
if (plain.status !== "incomplete" || plain.usage.output_tokens !== 16) {
  fail(`status/usage ${plain.status} ${JSON.stringify(plain.usage)}`);
}
if (plain.instructions !== "Tell a story.") fail(`instructions ${plain.instructions}`);

// stream: true: the raw events, in order, ending with response.completed.
const stream = await client.responses.create({ ...request, instructions: "Tell a story.", stream: true });
let text = "";
let last = -1;
let completed = null;
for await (const event of stream) {
  if (event.sequence_number !== last + 1) fail(`sequence ${event.sequence_number} after ${last}`);
  last = event.sequence_number;
  if (event.type === "response.output_text.delta") text += event.delta;
  if (event.type === "response.completed") completed = event.response;
}
if (!completed || text !== plain.output_text) fail(`streamed ${JSON.stringify(text)} vs ${JSON.stringify(plain.output_text)}`);
if (completed.usage.output_tokens !== 16) fail(`streamed usage ${JSON.stringify(completed.usage)}`);

// The stream helper accumulates the events into a response of its own (v4's finalResponse()
// has no output_text: read the message item it built).
const helper = client.responses.stream({ ...request, instructions: "Tell a story." });
let helperText = "";
helper.on("response.output_text.delta", (event) => { helperText += event.delta; });
const final = await helper.finalResponse();
const finalText = final.output[0]?.content?.[0]?.text;
if (finalText !== plain.output_text || helperText !== plain.output_text) {
  fail(`helper ${JSON.stringify(finalText)} / ${JSON.stringify(helperText)}`);
}

// previous_response_id continues the conversation; retrieve returns the stored response.
const next = await client.responses.create({ ...request, input: "And then?", previous_response_id: plain.id });
if (next.previous_response_id !== plain.id) fail(`previous ${next.previous_response_id}`);
if (next.usage.input_tokens <= plain.usage.input_tokens) fail(`history not in the prompt ${JSON.stringify(next.usage)}`);
const again = await client.responses.retrieve(next.id);
if (JSON.stringify(again.output) !== JSON.stringify(next.output)) fail("retrieve differs");
await client.responses.del(next.id);
try {
  await client.responses.retrieve(next.id);
  fail("retrieve after del succeeded");
} catch (e) {
  if (e.status !== 404) fail(`retrieve after del: ${e}`);
}
try {
  await client.responses.create({ ...request, previous_response_id: "resp_unknown" });
  fail("unknown previous_response_id succeeded");
} catch (e) {
  if (e.status !== 404 || e.param !== "previous_response_id") fail(`unknown previous id: ${e}`);
}
console.log("responses-ok", JSON.stringify(plain.output_text));
