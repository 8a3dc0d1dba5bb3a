// Cancel polls paced by work done, for the hierarchy's construction (cch.cpp) and its
// customization (cch_customize.cpp). Internal to the road index.
#pragma once

#include <cstdint>

#include "base/common.hpp"

namespace gpu_routing::detail {

// Cancel polls paced by work done, not by vertices: a vertex's triangles grow with its upward
// degree squared, and where the graph is no road network (a random sparse graph of 4096 vertices:
// 3.1 million arcs, a top separator of thousands of vertices) 1024 vertices took 5 s between two
// polls; a cancelled call, or the GPU service's lane that made the index, ran on that long.
// About 2^21 arc visits a poll: a few milliseconds.
constexpr std::int64_t kWorkPerCancelPoll = std::int64_t{1} << 21;

class CancelPacer {
 public:
  explicit CancelPacer(const CancelToken& cancel) : cancel_(cancel) {}
  // Counts `work` and, once a poll's worth is done, polls: true when the call is to stop.
  // Callable on any thread with a pacer of its own (it never throws).
  bool stop_after(std::int64_t work) {
    done_ += work;
    if (done_ < kWorkPerCancelPoll) return false;
    done_ = 0;
    return cancel_.requested();
  }
  void throw_after(std::int64_t work) {
    if (stop_after(work)) throw Cancelled();
  }

 private:
  const CancelToken& cancel_;
  std::int64_t done_ = 0;
};

}  // namespace gpu_routing::detail
