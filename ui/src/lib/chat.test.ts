import { describe, expect, it } from "vitest";
import { splitThinking } from "./chat";

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
