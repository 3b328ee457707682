// Opening model and config files only when they are regular files. A FIFO named config.json
// blocks open(2) until some writer appears (start-up hung there, before the SIGTERM handler was
// installed, so it could not even be stopped); a directory or a device holds no config either.
// So every model, tokenizer and config file is opened with O_NONBLOCK (a FIFO opens at once
// instead of waiting) and checked with fstat(2) before a byte is read.
#pragma once

#include <string>

#include "core/status.h"

namespace tandem {

// Opens `path` read-only, O_NONBLOCK | O_CLOEXEC, following symlinks, and checks that it is a
// regular file. Returns the descriptor; the caller closes it. Thread: any.
// Errors: kNotFound "file 'PATH' does not exist"; kInvalidArgument "'PATH' is not a regular
// file (a FIFO)" (or a directory, a device, a socket); kDataLoss when open(2) fails otherwise
// (its strerror, e.g. permission denied).
Result<int> OpenRegularFile(const std::string& path);

// The same check by stat(2), without opening: for a path that is only looked at here and opened
// later by another reader. Errors: as OpenRegularFile.
Status CheckRegularFile(const std::string& path);

// The whole of `path` (OpenRegularFile, then read to the end) as bytes. Thread: any.
// Errors: as OpenRegularFile; kDataLoss on a read error.
Result<std::string> ReadRegularFile(const std::string& path);

}  // namespace tandem
