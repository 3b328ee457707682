// Splits a byte stream of server-sent events or of the manager's watch feed into whole
// events: both separate events with a blank line ("\n\n"). Used by the chat stream
// (`data: {...}` lines) and by `?watch=true` (one JSON object per event).

/** Feeds decoded text; returns the whole events completed so far (without the blank line). */
export class EventSplitter {
  private buffer = "";

  feed(text: string): string[] {
    this.buffer += text.replace(/\r\n/g, "\n");
    const events: string[] = [];
    let end: number;
    while ((end = this.buffer.indexOf("\n\n")) >= 0) {
      const event = this.buffer.slice(0, end);
      this.buffer = this.buffer.slice(end + 2);
      if (event.trim() !== "") events.push(event);
    }
    return events;
  }

  /** What is left after the stream ended (an event without its blank line). */
  rest(): string {
    const rest = this.buffer;
    this.buffer = "";
    return rest.trim();
  }
}

/** The payload of an SSE event's `data:` lines, joined by "\n" (SSE's rule), or null. */
export function eventData(event: string): string | null {
  const lines = event
    .split("\n")
    .filter((line) => line.startsWith("data:"))
    .map((line) => line.slice(5).replace(/^ /, ""));
  return lines.length === 0 ? null : lines.join("\n");
}

/** Reads a fetch() body as text pieces until it ends or `signal` aborts. */
export async function* readText(response: Response): AsyncGenerator<string> {
  if (!response.body) return;
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      yield decoder.decode(value, { stream: true });
    }
    const tail = decoder.decode();
    if (tail) yield tail;
  } finally {
    reader.releaseLock();
  }
}
