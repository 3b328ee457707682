// RenderLimits: what one chat-template render may spend. A template comes from the operator
// (or the model's files) but its input comes from requests, and a template is a program: a macro
// that calls itself, range(10**9) or two nested loops over range(100000) must end in an error
// naming the limit, not in a crash, an OOM kill or a stuck thread.
// Reference: jinja2.sandbox (MAX_RANGE) bounds range() only; we bound every resource.
#pragma once

#include <atomic>
#include <cstdint>

namespace tandem::text::jinja {

struct RenderLimits {
  // Nested macro calls (a macro calling itself counts each level). Python's recursion limit
  // stops a jinja2 macro at a few hundred levels; beyond, the stack is also guarded in bytes.
  int32_t max_recursion_depth = 64;
  // For-loop iterations of one render, all loops together (also the longest range()).
  int64_t max_loop_iterations = 1'000'000;
  // Bytes of the rendered text, and of any one string, list or dict the template builds.
  int64_t max_output_bytes = 16 << 20;
  // Bytes the render holds at once: every value it made (strings, lists, dicts, copies) that is
  // still alive, and its outputs in progress (macro calls' included), together. The per-value
  // cap above does not bound 300 values of 15 MB, or 62 macro frames of 15 MB each.
  int64_t max_live_bytes = int64_t{64} << 20;
  // Wall time of one render, in seconds; <= 0 = no limit.
  double timeout_s = 10.0;
  // When set and true, the render stops at its next check (server shutdown).
  const std::atomic<bool>* cancelled = nullptr;
  // When set and true, the request's client has gone (http::ResponseSink::client_gone): the
  // render stops at its next check, so its preprocessing worker is free for others at once
  // instead of at the timeout.
  const std::atomic<bool>* client_gone = nullptr;
};

// Fixed bounds, not settings: how deep lists/dicts built by a template may nest (request JSON is
// at most kMaxJsonDepth deep), and how much of the thread's stack one render may use.
inline constexpr int32_t kMaxValueDepth = 512;
inline constexpr int64_t kMaxRenderStackBytes = 2 << 20;

}  // namespace tandem::text::jinja
