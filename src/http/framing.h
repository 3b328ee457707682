// Request framing by RFC 9112 (HTTP/1.1 message syntax), the checks Beast's parser leaves to
// its user: which Transfer-Encoding a server may accept, Content-Length next to it (request
// smuggling), the request target forms, chunk lines that end in a bare LF (Beast waits for a
// CR that never comes), and Expect: 100-continue.
// Reference: RFC 9112 §3.2 (request target), §6.1 (Transfer-Encoding), §6.3 (message body
// length), §7.1 (chunked coding); RFC 9110 §4.2.4 (userinfo), §10.1.1 (Expect); RFC 3986 §3.2
// (authority).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace tandem::http {

struct FramingError {
  int http_status = 400;  // 400 (cannot frame the body) or 501 (a coding not implemented)
  std::string message;
};

// Checks a request's Transfer-Encoding and Content-Length header values (`nullopt` = absent;
// each joined over repeated fields with ", "). Accepted: neither, Content-Length alone, or
// Transfer-Encoding exactly "chunked" (any case) without Content-Length. Errors (the server
// answers them and closes, as §6.3 requires): chunked not the final coding ("gzip",
// "chunked, identity", "xchunked") → 400; Transfer-Encoding and Content-Length both → 400;
// another coding before chunked ("gzip, chunked") → 501.
std::optional<FramingError> CheckRequestFraming(std::optional<std::string_view> transfer_encoding,
                                                std::optional<std::string_view> content_length);

// The origin form of a request target: an absolute-form target
// ("http://host:8000/v1/models?x=1", scheme any case) → "/v1/models?x=1" ("/" for an empty
// path, "http://h?x" → "/?x"); any other target is returned unchanged (origin form, "*").
// nullopt for an absolute form whose authority is malformed (the request is a 400): an empty
// host, userinfo ("user@host"), an unclosed or non-IPv6 "[...]" literal, a character a host
// name cannot hold, a port that is not a number up to 65535.
std::optional<std::string> OriginFormTarget(std::string_view target);

// Whether `unparsed`, the bytes of a chunked body Beast's parser could not parse yet (it waits
// at a chunk-size line, the CRLF after chunk data or a trailer), holds a line ending in a bare
// LF: such a line never ends for the parser, so the request is a 400 at once instead of an idle
// timeout (§7.1: every line of the chunked coding ends in CRLF).
bool HasBareLineFeed(std::string_view unparsed);

// Whether an Expect header value asks for "100 Continue" (case-insensitive, §10.1.1).
bool ExpectsContinue(std::string_view expect);

}  // namespace tandem::http
