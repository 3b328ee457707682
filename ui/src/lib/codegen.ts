// "View code": the playground's current request as a curl command, a Python `openai` script and
// a Node `openai` script, with the API key as a placeholder (never the user's key).

export interface ChatMessage {
  role: "system" | "user" | "assistant";
  content: string;
}

export interface ChatParameters {
  temperature?: number;
  top_p?: number;
  max_tokens?: number;
  presence_penalty?: number;
  frequency_penalty?: number;
  seed?: number;
  stop?: string[];
  /** chat_template_kwargs.enable_thinking; undefined leaves the template's default. */
  enable_thinking?: boolean;
}

/** The request body the playground sends (always streamed). */
export function chatRequestBody(model: string, messages: ChatMessage[], params: ChatParameters) {
  const body: Record<string, unknown> = { model, messages, stream: true };
  const numeric = ["temperature", "top_p", "max_tokens", "presence_penalty", "frequency_penalty", "seed"] as const;
  for (const name of numeric) {
    const value = params[name];
    if (value !== undefined && value !== null && !Number.isNaN(value)) body[name] = value;
  }
  if (params.stop && params.stop.length > 0) body.stop = params.stop;
  if (params.enable_thinking !== undefined) {
    body.chat_template_kwargs = { enable_thinking: params.enable_thinking };
  }
  body.stream_options = { include_usage: true };
  return body;
}

export const KEY_PLACEHOLDER = "$TANDEM_API_KEY";

/** A POSIX-shell single-quoted word. */
function shellQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

export function curlCode(baseUrl: string, body: Record<string, unknown>, withKey = true): string {
  const lines = [`curl -N ${shellQuote(`${baseUrl}/v1/chat/completions`)} \\`, `  -H 'Content-Type: application/json' \\`];
  if (withKey) lines.push(`  -H "Authorization: Bearer ${KEY_PLACEHOLDER}" \\`);
  lines.push(`  -d ${shellQuote(JSON.stringify(body, null, 2))}`);
  return lines.join("\n");
}

/** A JSON value as a Python literal (true/false/null become True/False/None). */
function pythonLiteral(value: unknown, indent: string): string {
  if (value === null || value === undefined) return "None";
  if (value === true) return "True";
  if (value === false) return "False";
  if (typeof value === "number" || typeof value === "string") return JSON.stringify(value);
  const inner = indent + "    ";
  if (Array.isArray(value)) {
    if (value.length === 0) return "[]";
    return `[\n${value.map((v) => inner + pythonLiteral(v, inner)).join(",\n")},\n${indent}]`;
  }
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length === 0) return "{}";
  return `{\n${entries.map(([k, v]) => `${inner}${JSON.stringify(k)}: ${pythonLiteral(v, inner)}`).join(",\n")},\n${indent}}`;
}

// Fields the openai clients take as named arguments; the rest go in extra_body (Python) or
// ride along in the body (Node passes unknown fields through).
const OPENAI_ARGUMENTS = new Set([
  "model", "messages", "stream", "temperature", "top_p", "max_tokens", "presence_penalty",
  "frequency_penalty", "seed", "stop", "stream_options",
]);

export function pythonCode(baseUrl: string, body: Record<string, unknown>): string {
  const named = Object.entries(body).filter(([k]) => OPENAI_ARGUMENTS.has(k));
  const extra = Object.fromEntries(Object.entries(body).filter(([k]) => !OPENAI_ARGUMENTS.has(k)));
  const args = named.map(([k, v]) => `    ${k}=${pythonLiteral(v, "    ")},`);
  if (Object.keys(extra).length > 0) args.push(`    extra_body=${pythonLiteral(extra, "    ")},`);
  return [
    "import os",
    "from openai import OpenAI",
    "",
    `client = OpenAI(base_url=${JSON.stringify(`${baseUrl}/v1`)}, api_key=os.environ["TANDEM_API_KEY"])`,
    "stream = client.chat.completions.create(",
    ...args,
    ")",
    "for chunk in stream:",
    "    if chunk.choices and chunk.choices[0].delta.content:",
    '        print(chunk.choices[0].delta.content, end="", flush=True)',
    "print()",
  ].join("\n");
}

export function nodeCode(baseUrl: string, body: Record<string, unknown>): string {
  const json = JSON.stringify(body, null, 2).replace(/\n/g, "\n");
  return [
    'import OpenAI from "openai";',
    "",
    `const client = new OpenAI({ baseURL: ${JSON.stringify(`${baseUrl}/v1`)}, apiKey: process.env.TANDEM_API_KEY });`,
    `const stream = await client.chat.completions.create(${json});`,
    "for await (const chunk of stream) {",
    '  process.stdout.write(chunk.choices[0]?.delta?.content ?? "");',
    "}",
    'process.stdout.write("\\n");',
  ].join("\n");
}
