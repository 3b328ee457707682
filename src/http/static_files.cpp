#include "http/static_files.h"

#include <algorithm>
#include <utility>

namespace tandem::http {

StaticSite::StaticSite(std::vector<StaticFile> files, std::string index_path)
    : files_(std::move(files)), index_path_(std::move(index_path)) {
  std::sort(files_.begin(), files_.end(),
            [](const StaticFile& a, const StaticFile& b) { return a.path < b.path; });
}

const StaticFile* StaticSite::Find(std::string_view path) const {
  auto it = std::lower_bound(files_.begin(), files_.end(), path,
                             [](const StaticFile& f, std::string_view p) { return f.path < p; });
  return it != files_.end() && it->path == path ? &*it : nullptr;
}

namespace {

// Whether a comma-separated header lists `token` (any case, parameters ignored, a q=0 taken
// as a refusal).
bool ListsToken(std::string_view header, std::string_view token) {
  for (std::string_view item : SplitHeaderList(header)) {
    const size_t semi = item.find(';');
    std::string_view name = item.substr(0, semi);
    while (!name.empty() && name.back() == ' ') name.remove_suffix(1);
    bool refused = false;
    if (semi != std::string_view::npos) {
      std::string_view params = item.substr(semi + 1);
      size_t q = params.find("q=");
      if (q == std::string_view::npos) q = params.find("Q=");
      if (q != std::string_view::npos) {
        std::string_view value = params.substr(q + 2);
        refused =
            value.rfind("0", 0) == 0 && value.find_first_of("123456789") == std::string_view::npos;
      }
    }
    if (!refused && EqualsIgnoreCase(name, token)) return true;
  }
  return false;
}

// Whether If-None-Match lists `etag` (weak comparison, RFC 9110 §13.1.2: W/ is ignored; "*"
// matches any).
bool NoneMatch(std::string_view header, std::string_view etag) {
  for (std::string_view tag : SplitHeaderList(header)) {
    if (tag.rfind("W/", 0) == 0) tag.remove_prefix(2);
    if (tag == "*" || tag == etag) return true;
  }
  return false;
}

// The gzip body's validator: another representation, so another ETag ("…-gzip").
std::string GzipEtag(std::string_view etag) {
  std::string out(etag);
  if (!out.empty() && out.back() == '"') out.insert(out.size() - 1, "-gzip");
  return out;
}

}  // namespace

const StaticFile* StaticSite::FileFor(std::string_view path, bool fallback_to_index) const {
  const StaticFile* file = Find(path == "/" ? std::string_view(index_path_) : path);
  if (!file && fallback_to_index) {
    const std::string_view last = path.substr(path.rfind('/') + 1);
    if (last.find('.') == std::string_view::npos) file = Find(index_path_);
  }
  return file;
}

bool StaticSite::Serve(const HttpRequest& request, ResponseSink& sink,
                       bool fallback_to_index) const {
  if (request.method != "GET" && request.method != "HEAD") return false;  // HEAD: no body sent
  const StaticFile* file = FileFor(request.path, fallback_to_index);
  if (!file) return false;
  const bool gzip =
      !file->gzip_body.empty() && ListsToken(request.Header("accept-encoding"), "gzip");
  const std::string etag = gzip ? GzipEtag(file->etag) : std::string(file->etag);
  std::vector<std::pair<std::string, std::string>> headers = {
      {"ETag", etag},
      {"Cache-Control", file->immutable ? "public, max-age=31536000, immutable" : "no-cache"},
      {"X-Content-Type-Options", "nosniff"},
  };
  if (!file->gzip_body.empty()) headers.emplace_back("Vary", "Accept-Encoding");
  if (auto match = request.Header("if-none-match"); !match.empty() && NoneMatch(match, etag)) {
    sink.SendResponseWithHeaders(304, std::string(file->content_type), "", std::move(headers));
    return true;
  }
  std::string_view body = file->body;
  if (gzip) {
    body = file->gzip_body;
    headers.emplace_back("Content-Encoding", "gzip");
  }
  sink.SendResponseWithHeaders(200, std::string(file->content_type), std::string(body),
                               std::move(headers));
  return true;
}

}  // namespace tandem::http
