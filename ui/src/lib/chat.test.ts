import { describe, expect, it, vi } from "vitest";
import { type Answer, splitThinking, streamChat } from "./chat";

describe("splitThinking", () => {
  it("moves a closed <think> block into the reasoning", () => {
    expect(splitThinking("<think>\nplan</think>\n\nHello", "")).toEqual({ content: "Hello", reasoning: "\nplan" });
  });
  it("treats an unclosed <think> as reasoning still streaming", () => {
    expect(splitThinking("<think>so far", "")).toEqual({ content: "", reasoning: "so far" });
  });
  it("handles a </think> whose <think> the template put in the prompt", () => {
    expect(splitThinking("plan</think>Answer", "")).toEqual({ content: "Answer", reasoning: "plan" });
  });
  it("leaves plain content alone", () => {
    expect(splitThinking("Once upon a time", "r")).toEqual({ content: "Once upon a time", reasoning: "r" });
  });
});

describe("streamChat", () => {
  const sse = (...events: object[]) =>
    events.map((e) => `data: ${JSON.stringify(e)}\n\n`).join("") + "data: [DONE]\n\n";

  it("marks only the last update done, after the usage chunk", async () => {
    const body = sse(
      { choices: [{ delta: { content: "Once" } }] },
      { choices: [{ delta: { content: " upon" }, finish_reason: "length" }] },
      { choices: [], usage: { completion_tokens: 2 } },
    );
    vi.stubGlobal("fetch", async () => new Response(body, { status: 200 }));
    const updates: Answer[] = [];
    const final = await streamChat("v1/chat/completions", {}, {}, new AbortController().signal, (a) => updates.push(a));
    vi.unstubAllGlobals();
    expect(updates.length).toBeGreaterThan(1);
    expect(updates.slice(0, -1).every((a) => !a.done)).toBe(true);
    expect(updates[updates.length - 1]).toMatchObject({ content: "Once upon", completionTokens: 2, finishReason: "length", done: true });
    expect(final.done).toBe(true);
  });

  it("marks a refused request done with its error", async () => {
    vi.stubGlobal("fetch", async () =>
      new Response(JSON.stringify({ error: { message: "bad temperature", type: "BadRequestError" } }), { status: 400 }));
    const updates: Answer[] = [];
    await streamChat("v1/chat/completions", {}, {}, new AbortController().signal, (a) => updates.push(a));
    vi.unstubAllGlobals();
    expect(updates).toHaveLength(1);
    expect(updates[0].done).toBe(true);
    expect(updates[0].error).toContain("bad temperature");
  });
});
