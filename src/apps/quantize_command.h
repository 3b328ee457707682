// `tandem quantize SRC_DIR OUT_DIR --format ascend|compressed-tensors --scheme w8a8-dynamic
// [--ignore PATTERN ...] [--max-shard-size BYTES]`: writes an int8 W8A8_DYNAMIC copy of a Hugging
// Face checkpoint (model/loader/w8a8_quantizer.h says which Linears; docs/design/w8a8.md).
#pragma once

namespace tandem::apps {

// argv[0] = "quantize". Progress bar on stderr (when it is a terminal, else one line per 10%),
// a summary on stdout. Returns 0, 1 on an error (the reason on stderr), 2 for bad flags.
int RunQuantizeCommand(int argc, char** argv);

}  // namespace tandem::apps
