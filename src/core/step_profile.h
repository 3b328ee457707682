// StepProfile: where one engine step's time goes, by phase — the weight matmuls, attention,
// norms/activations, MoE routing, collectives, sampling, drafting and the rest — summed over N
// steps and logged as one line (--additional-config '{"profile_steps": N}'; issue 33). Off by
// default: a disabled phase scope costs one relaxed atomic load.
//
// Phases are measured by scopes placed around the ops (not nested: a scope inside another
// phase's scope is not counted twice — the inner one is ignored, so "attention" is the paged
// attention kernel, not its projections, which are matmuls). Wall time on the thread that runs
// the step (the worker thread; the ops' OpenMP teams are inside it), so the phases add up to the
// step and "other" is the rest (input building, plan updates, copies).
// Process-wide; one stepping thread per process (a TP worker process has its own).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <string>

namespace tandem::core {

enum class StepPhase : int {
  kMatmul,      // weight matmuls (Linear, experts, lm_head)
  kAttention,   // paged attention and the KV write, the Gated DeltaNet recurrence
  kNormAct,     // RMSNorm, RoPE, SiLU·mul, residual adds, embedding lookup
  kRouting,     // MoE top-k routing and expert dispatch bookkeeping
  kCollective,  // TP all-reduce / all-gather, EP all-to-all
  kSampling,    // logits processing, sampling, draft verification
  kDrafting,    // speculative proposers (MTP head forward, n-gram lookup)
  kCount,
};
const char* StepPhaseName(StepPhase phase);

class StepProfile {
 public:
  // Turns profiling on, logging one line every `every_steps` steps (> 0), or off (0).
  static void Enable(int32_t every_steps);
  static bool enabled() { return every_steps_.load(std::memory_order_relaxed) > 0; }

  // One step of `num_tokens` tokens (`num_seqs` sequences) took `seconds` on this thread; logs
  // the summary after every every_steps steps and starts a new window.
  static void EndStep(double seconds, int64_t num_tokens, int64_t num_seqs);

  // The summary line of the window so far (for tests): "profile: …".
  static std::string Summary();

  // Adds `seconds` to `phase` (ScopedPhase does this).
  static void Add(StepPhase phase, double seconds);

 private:
  static std::atomic<int32_t> every_steps_;
};

// Times its lifetime into `phase` when profiling is on and no other phase scope is open on
// this thread.
class ScopedPhase {
 public:
  explicit ScopedPhase(StepPhase phase);
  ~ScopedPhase();
  ScopedPhase(const ScopedPhase&) = delete;
  ScopedPhase& operator=(const ScopedPhase&) = delete;

 private:
  StepPhase phase_;
  bool entered_ = false;  // profiling was on at construction: t_open counts this scope
  double start_ = -1.0;   // < 0: nested in another phase's scope, not timed
};

}  // namespace tandem::core
