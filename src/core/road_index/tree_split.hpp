// Splitting an elimination tree into a top and disjoint subtrees below it, for work on several
// threads: the parallel customization (cch_customize.cpp) and the parallel PHAST sweep
// (cch_sweep.cpp), each with its own work per rank. Internal to the road index.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

#include "base/common.hpp"

namespace gpu_routing::detail {

using Subtree = std::pair<double, VertexIndex>;  // (work, root)

struct TreeSplit {
  std::vector<double> subtree_work;  // by rank: its own work and its descendants'
  std::vector<VertexIndex> top;      // the ranks above every subtree, in the order they were opened
  // The subtrees below the top (roots of the forest included where not opened), by root rank.
  std::vector<Subtree> subtrees;
  double total_work = 0.0;
  double top_work = 0.0;
};

// Splits the elimination tree (`parent` by rank, kNoVertex for a root; a forest where the graph is
// disconnected) from its roots down: opening a subtree moves its root to the top and makes its
// children subtrees. Always opening the heaviest, it goes on while some subtree has more than
// 1 / max_subtrees_per_thread of a thread's share and there are fewer than
// max_subtrees_per_thread per thread; of the splits passed on the way it keeps the one with the
// least estimated time, the top's work plus the busiest thread's when the subtrees go to the least
// loaded thread, heaviest first (deal_subtrees). `work`: each rank's own work, by rank.
TreeSplit split_elimination_tree(const VertexIndex* parent, std::size_t n, std::vector<double> work,
                                 int threads, int max_subtrees_per_thread);

// Deals `subtrees` heaviest first (ties: the lower root first) to the least loaded of
// load.size() threads; returns the busiest thread's load. `owner`, when given, gets each root's
// thread (by rank).
double deal_subtrees(const std::vector<Subtree>& subtrees, std::vector<double>& load,
                     std::vector<ArcIndex>* owner);

// Whether subtree a goes before b when they are dealt: the heavier first, the lower root on a tie.
inline bool heavier_subtree(const Subtree& a, const Subtree& b) {
  return a.first != b.first ? a.first > b.first : a.second < b.second;
}

}  // namespace gpu_routing::detail
