#include "structured/pda.h"

#include <algorithm>
#include <unordered_set>

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
  // `seen` holds every stack met (closed or not) so that nullable loops terminate. An ambiguous
  // grammar can double its stacks per byte, so a closure visits at most kMaxClosureVisits
  // stacks and keeps at most kMaxStacks: dropping stacks keeps every allowed token valid (each
  // kept stack is a real parse) and only narrows the choice.
  // Small sets (the usual case) are scanned; past 16 visits a hash set takes over.
  static thread_local std::vector<uint64_t> seen_small;
  static thread_local std::unordered_set<uint64_t> seen_large;
  static thread_local std::vector<PdaStack> work;
  seen_small.clear();
  seen_large.clear();
  size_t visits = 0;
  work.assign(raw.begin(), raw.end());
  while (!work.empty() && visits < kMaxClosureVisits) {
    const PdaStack s = work.back();
    work.pop_back();
    const uint64_t key = (static_cast<uint64_t>(static_cast<uint32_t>(s.state)) << 32) |
                         static_cast<uint32_t>(s.frame);
    if (seen_large.empty() && seen_small.size() < 16) {
      if (std::find(seen_small.begin(), seen_small.end(), key) != seen_small.end()) continue;
      seen_small.push_back(key);
    } else {
      if (seen_large.empty()) seen_large.insert(seen_small.begin(), seen_small.end());
      if (std::find(seen_small.begin(), seen_small.end(), key) != seen_small.end() ||
          !seen_large.insert(key).second) {
        continue;
      }
    }
    ++visits;
    if (automaton.HasByteEdges(s.state) && out->size() < kMaxStacks) out->push_back(s);
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
    // Distinct closed stacks stay distinct (same frame, different states move apart or to
    // the same state: then they are equal); sets are at most kMaxStacks, a scan is cheap.
    const PdaStack moved{next, s.frame};
    if (std::find(out->begin(), out->end(), moved) == out->end()) out->push_back(moved);
  }
}

}  // namespace tandem::structured
