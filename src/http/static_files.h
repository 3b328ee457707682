// StaticSite: serves a set of in-memory files (the web UI built into the binary) over GET and
// HEAD (the session then sends the headers only):
// Content-Type, gzip when the client accepts it (precompressed at build time), ETag with
// If-None-Match → 304, Cache-Control (hashed assets immutable for a year, pages revalidated),
// and for a single-page app the index page for unknown paths that look like routes.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "http/types.h"

namespace tandem::http {

// One file. Views of static storage (the generated table outlives every request).
struct StaticFile {
  std::string_view path;          // "/index.html", "/assets/index-3f2a.js"
  std::string_view content_type;  // "text/html; charset=utf-8"
  std::string_view body;          // the file's bytes
  std::string_view gzip_body;     // the same, gzip-compressed; empty when that is no smaller
  std::string_view etag;          // a strong validator, quoted: "\"3f2a9c…\""
  bool immutable = false;         // its name carries its content hash
};

class StaticSite {
 public:
  // `index_path`: the page for "/" and for fallbacks ("/index.html").
  StaticSite(std::vector<StaticFile> files, std::string index_path);

  // The file at `path`, or nullptr.
  const StaticFile* Find(std::string_view path) const;

  // Answers a GET or HEAD of a file (or, with `fallback_to_index`, of a path whose last
  // segment has no '.', as a single-page app's route) and returns true; returns false without
  // answering otherwise (another method, no such file), so the caller can send its own 404/405.
  // A caller with API paths keeps them from the fallback (it serves any path it is given).
  bool Serve(const HttpRequest& request, ResponseSink& sink, bool fallback_to_index) const;

  // Whether Serve answers a GET of `path` (with the same `fallback_to_index`): the page a
  // request of another method there gets its 405 (Allow: GET, HEAD) for.
  bool Serves(std::string_view path, bool fallback_to_index) const {
    return FileFor(path, fallback_to_index) != nullptr;
  }

  bool empty() const { return files_.empty(); }

 private:
  // The file a GET of `path` is answered with, or nullptr.
  const StaticFile* FileFor(std::string_view path, bool fallback_to_index) const;

  std::vector<StaticFile> files_;  // sorted by path
  std::string index_path_;
};

}  // namespace tandem::http
