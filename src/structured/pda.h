// The pushdown automaton's moves over an Automaton (structured/automaton.h), shared by the
// matcher of one sequence and by the token-mask builder.
//
// A stack is its top state plus a frame: the frames form a tree interned in a FrameArena, so a
// stack is two ints and equal stacks compare equal. A frame is where the caller resumes
// (return_state) and the frame below it. kBottomFrame is "no frame": for a sequence's matcher,
// popping there ends the text; for the mask builder, it leaves the position whose mask is being
// built, so the token's fate depends on a context it does not know.
//
// A set of stacks is "closed" when every stack in it can read a byte (calls expanded, ended
// rules popped); Close() makes a set closed, Advance() reads one byte from a closed set.
#pragma once

#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

#include "structured/automaton.h"

namespace tandem::structured {

inline constexpr int32_t kBottomFrame = -1;

// Bounds of one closure (ambiguous grammars can double their stacks per byte): the stacks a
// closed set keeps, and the stacks a closure may visit.
inline constexpr size_t kMaxStacks = 64;
inline constexpr size_t kMaxClosureVisits = 1024;

struct PdaStack {
  int32_t state = -1;
  int32_t frame = kBottomFrame;
  bool operator==(const PdaStack&) const = default;
};

class FrameArena {
 public:
  struct Frame {
    int32_t return_state;
    int32_t below;  // frame id or kBottomFrame
  };
  // The id of frame (return_state, below), created on first use.
  int32_t Intern(int32_t return_state, int32_t below);
  const Frame& at(int32_t id) const { return frames_[id]; }
  size_t size() const { return frames_.size(); }
  void Clear();

 private:
  std::vector<Frame> frames_;
  std::unordered_map<uint64_t, int32_t> ids_;
};

// Expands `raw` into the closed set *out (deduplicated, cleared first): calls push frames, ended
// rules pop. Returns true when some stack's rule ended on kBottomFrame. At most kMaxStacks are
// kept and kMaxClosureVisits visited (see there).
bool Close(const Automaton& automaton, FrameArena& arena, std::span<const PdaStack> raw,
           std::vector<PdaStack>* out);

// The stacks after reading `byte` from the closed set `closed` (*out cleared first; not closed).
void Advance(const Automaton& automaton, std::span<const PdaStack> closed, uint8_t byte,
             std::vector<PdaStack>* out);

}  // namespace tandem::structured
