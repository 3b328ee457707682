// One streamed chat completion: POST /v1/chat/completions with stream: true, the answer's
// content and reasoning as they arrive, TTFT and decode speed at the end. Reasoning comes as
// `delta.reasoning` (current vLLM), `delta.reasoning_content` (older), or inside <think>…</think>
// in the content when the server has no reasoning parser.
import { errorMessage } from "./api";
import { eventData, EventSplitter, readText } from "./sse";

export interface Answer {
  content: string;
  reasoning: string;
  ttftMs?: number;
  tokensPerSecond?: number;
  completionTokens?: number;
  finishReason?: string;
  error?: string;
  /** True once the stream has ended (finished, failed or stopped): nothing more will arrive. */
  done?: boolean;
}

/** Moves <think>…</think> (an unclosed one too) from the content into the reasoning. */
export function splitThinking(content: string, reasoning: string): { content: string; reasoning: string } {
  const open = content.indexOf("<think>");
  const close = content.indexOf("</think>");
  if (open < 0 && close < 0) return { content, reasoning };
  if (open >= 0 && close < 0) {
    return { content: content.slice(0, open), reasoning: reasoning + content.slice(open + 7) };
  }
  // "</think>" with no "<think>": the template opened it in the prompt.
  const start = open >= 0 && open < close ? open + 7 : 0;
  const before = open >= 0 && open < close ? content.slice(0, open) : "";
  return {
    content: (before + content.slice(close + 8)).replace(/^\s+/, ""),
    reasoning: reasoning + content.slice(start, close),
  };
}

export async function streamChat(
  url: string,
  headers: Record<string, string>,
  body: Record<string, unknown>,
  signal: AbortSignal,
  onUpdate: (answer: Answer) => void,
): Promise<Answer> {
  const started = performance.now();
  let firstToken: number | undefined;
  let raw = "";
  let reasoning = "";
  const answer: Answer = { content: "", reasoning: "" };
  const publish = () => {
    const split = splitThinking(raw, reasoning);
    answer.content = split.content;
    answer.reasoning = split.reasoning;
    onUpdate({ ...answer });
  };
  try {
    const response = await fetch(url, {
      method: "POST",
      headers: { "Content-Type": "application/json", ...headers },
      body: JSON.stringify(body),
      signal,
      credentials: "same-origin",
    });
    if (!response.ok) {
      answer.error = errorMessage(response.status, await response.text());
      answer.done = true;
      onUpdate({ ...answer });
      return answer;
    }
    const splitter = new EventSplitter();
    for await (const text of readText(response)) {
      for (const event of splitter.feed(text)) {
        const data = eventData(event);
        if (data === null || data === "[DONE]") continue;
        const chunk = JSON.parse(data);
        if (chunk.error) {
          answer.error = chunk.error.message ?? JSON.stringify(chunk.error);
          continue;
        }
        const choice = chunk.choices?.[0];
        const delta = choice?.delta ?? {};
        const piece = (delta.reasoning ?? delta.reasoning_content ?? "") as string;
        const content = (delta.content ?? "") as string;
        if ((piece || content) && firstToken === undefined) {
          firstToken = performance.now();
          answer.ttftMs = firstToken - started;
        }
        reasoning += piece;
        raw += content;
        if (choice?.finish_reason) answer.finishReason = choice.finish_reason;
        if (chunk.usage?.completion_tokens !== undefined) {
          answer.completionTokens = chunk.usage.completion_tokens;
        }
        publish();
      }
    }
  } catch (e) {
    if (!signal.aborted) answer.error = e instanceof Error ? e.message : String(e);
    else answer.finishReason = "abort";
  }
  // Output tokens over the whole request (send to last token). Not the decode phase alone: a
  // busy page handles several network chunks at once, so its own timestamps between tokens
  // can be far shorter than the server's and give absurd rates for fast models.
  const ended = performance.now();
  if (answer.completionTokens && ended > started) {
    answer.tokensPerSecond = (answer.completionTokens * 1000) / (ended - started);
  }
  answer.done = true;
  publish();
  return answer;
}
