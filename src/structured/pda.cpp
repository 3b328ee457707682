#include "structured/pda.h"

#include <algorithm>

namespace tandem::structured {

int32_t FrameArena::Intern(int32_t return_state, int32_t below) {
  const uint64_t key = (static_cast<uint64_t>(static_cast<uint32_t>(return_state)) << 32) |
                       static_cast<uint32_t>(below);
  auto [it, inserted] = ids_.try_emplace(key, static_cast<int32_t>(frames_.size()));
  if (inserted) frames_.push_back({return_state, below});
  return it->second;
}

void FrameArena::Clear() {
  frames_.clear();
  ids_.clear();
}

bool Close(const Automaton& automaton, FrameArena& arena, std::span<const PdaStack> raw,
           std::vector<PdaStack>* out) {
  out->clear();
  // Fast path: one stack whose state neither calls nor ends is closed as it is.
  if (raw.size() == 1 && automaton.Calls(raw[0].state).empty() &&
      !automaton.IsAccepting(raw[0].state)) {
    if (automaton.HasByteEdges(raw[0].state)) out->push_back(raw[0]);
    return false;
  }
  bool reached_bottom = false;
  // `seen` holds every stack met (closed or not) so that nullable loops terminate; sets are
  // small (one or a few stacks for the grammars compilers produce), so a linear scan is best.
  static thread_local std::vector<PdaStack> seen;
  static thread_local std::vector<PdaStack> work;
  seen.clear();
  work.assign(raw.begin(), raw.end());
  while (!work.empty()) {
    const PdaStack s = work.back();
    work.pop_back();
    if (std::find(seen.begin(), seen.end(), s) != seen.end()) continue;
    seen.push_back(s);
    if (automaton.HasByteEdges(s.state)) out->push_back(s);
    if (automaton.IsAccepting(s.state)) {
      if (s.frame == kBottomFrame) {
        reached_bottom = true;
      } else {
        const FrameArena::Frame& f = arena.at(s.frame);
        work.push_back({f.return_state, f.below});
      }
    }
    for (const Automaton::Call& call : automaton.Calls(s.state)) {
      work.push_back({call.callee_start, arena.Intern(call.return_state, s.frame)});
    }
  }
  return reached_bottom;
}

void Advance(const Automaton& automaton, std::span<const PdaStack> closed, uint8_t byte,
             std::vector<PdaStack>* out) {
  out->clear();
  for (const PdaStack& s : closed) {
    const int32_t next = automaton.Next(s.state, byte);
    if (next < 0) continue;
    const PdaStack moved{next, s.frame};
    if (std::find(out->begin(), out->end(), moved) == out->end()) out->push_back(moved);
  }
}

}  // namespace tandem::structured
