// `tandem tokenize --tokenizer PATH [--ids|--pieces] [--no-add-special-tokens] [TEXT...]`:
// prints the token ids and/or pieces of a text as one JSON object, with the tokenizer a served
// model would use (a GGUF file, including vocab-only ones, or a folder with tokenizer.json).
#pragma once

namespace tandem::apps {

// argv[0] = "tokenize". The text is the TEXT arguments joined by single spaces, or all of stdin
// when there are none. Prints {"ids": [...], "pieces": [...]} (only one key with --ids or
// --pieces) and a newline to stdout. `--no-add-special-tokens` leaves out BOS where the
// tokenizer adds one; special-token text such as "<|im_start|>" maps to its id either way.
// Returns 0, 1 when the tokenizer cannot be loaded (the reason on stderr), 2 for bad flags.
int RunTokenizeCommand(int argc, char** argv);

}  // namespace tandem::apps
