// Backend parameters as the deploy form edits them: a multi-line text where each line may hold
// one flag or several and a trailing `# comment` (how the seed's write-up pastes them). The
// manager stores one entry per line; the agent splits each entry into words as a POSIX shell
// does, without expansions (src/cluster/agent/command_line.h, SplitPosixWords). This is the
// same splitting, so the form can show the argument list and refuse what the agent would.

export class ParameterError extends Error {
  /** 1-based line of the text, 0 when not known. */
  constructor(message: string, readonly line: number) {
    super(message);
  }
}

/** The entries to store: one per line that holds anything but blanks. */
export function parameterEntries(text: string): string[] {
  return text
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== "");
}

/** The form's text for stored entries. */
export function parameterText(entries: string[] | undefined | null): string {
  return (entries ?? []).join("\n");
}

/**
 * Splits one entry into words as POSIX sh does without expansions: blanks separate words;
 * '…' is literal; "…" keeps blanks and honours \" \\ \$ \` and \newline; a backslash outside
 * quotes escapes the next character; '#' at the start of a word begins a comment to the end of
 * the line. Throws ParameterError for an unbalanced quote or a trailing backslash.
 */
export function splitPosixWords(text: string, line = 0): string[] {
  const words: string[] = [];
  let word = "";
  let inWord = false;
  let i = 0;
  const where = (pos: number) => (line > 0 ? `line ${line}, ` : "") + `character ${pos + 1}`;
  while (i < text.length) {
    const c = text[i];
    if (c === " " || c === "\t" || c === "\n") {
      if (inWord) words.push(word);
      word = "";
      inWord = false;
      i += 1;
    } else if (c === "#" && !inWord) {
      while (i < text.length && text[i] !== "\n") i += 1;
    } else if (c === "'") {
      const close = text.indexOf("'", i + 1);
      if (close < 0) throw new ParameterError(`unbalanced ' at ${where(i)}`, line);
      word += text.slice(i + 1, close);
      inWord = true;
      i = close + 1;
    } else if (c === '"') {
      const start = i;
      i += 1;
      for (;;) {
        if (i >= text.length) throw new ParameterError(`unbalanced " at ${where(start)}`, line);
        const d = text[i];
        if (d === '"') break;
        if (d === "\\" && i + 1 < text.length && '"\\$`\n'.includes(text[i + 1])) {
          if (text[i + 1] !== "\n") word += text[i + 1];
          i += 2;
          continue;
        }
        word += d;
        i += 1;
      }
      inWord = true;
      i += 1;
    } else if (c === "\\") {
      if (i + 1 >= text.length) throw new ParameterError(`a trailing backslash at ${where(i)}`, line);
      if (text[i + 1] !== "\n") {
        word += text[i + 1];
        inWord = true;
      }
      i += 2;
    } else {
      word += c;
      inWord = true;
      i += 1;
    }
  }
  if (inWord) words.push(word);
  return words;
}

/** The argument list of the whole text, entry by entry; errors name the line. */
export function parameterWords(text: string): string[] {
  const words: string[] = [];
  text.split(/\r?\n/).forEach((line, index) => {
    words.push(...splitPosixWords(line, index + 1));
  });
  return words;
}

/** The first error of the text as a message, or null when it splits. */
export function parameterProblem(text: string): string | null {
  try {
    parameterWords(text);
    return null;
  } catch (e) {
    return e instanceof ParameterError ? e.message : String(e);
  }
}
