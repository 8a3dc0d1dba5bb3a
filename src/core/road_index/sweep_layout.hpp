// The road index's hierarchy laid out as the GPU's PHAST sweep reads it (kernels/cch_phast.cu),
// and the part of it a cost matrix's targets need (RPHAST). Plain host code: made on the host,
// copied to the device, and checked on the CPU by a host sweep over the same layout
// (sweep_on_host), so that its logic is tested where no GPU is.
#pragma once

#include <vector>

#include "base/common.hpp"

namespace gpu_routing {

class Cch;

// The hierarchy as the sweep reads it. Positions: the top level by level, then the bottom group
// by group, each group level by level; a rank's higher neighbours always come in an earlier step.
struct SweepLayout {
  std::vector<VertexIndex> position_of_rank;
  std::vector<VertexIndex> position_of_vertex;
  std::vector<ArcIndex> first;    // by position
  std::vector<VertexIndex> head;  // positions
  std::vector<double> down;
  // Steps: the top's levels first (top_levels of them), then every group's levels. Step s covers
  // positions [step_first[s], step_first[s + 1]).
  std::vector<VertexIndex> step_first;
  std::vector<int> step_lanes;
  int top_levels = 0;
  // Group g runs steps [group_step[g], group_step[g + 1]).
  std::vector<VertexIndex> group_step;
};

// The layout of `cch`'s hierarchy: ranks grouped by level (level 0: no upward arcs; otherwise one
// more than the deepest higher neighbour), the bottom's elimination subtrees of at most
// `subtree_limit` ranks packed into groups (0: no bottom), lanes a step by its degrees (or
// `forced_lanes` everywhere, a power of two; 0: by degree).
SweepLayout make_sweep_layout(const Cch& cch, int subtree_limit, int forced_lanes = 0);

// The ranks `kept_ranks` marks (by rank: Cch::ancestor_closure's marks) of `full`, in the same
// order, steps and lanes, empty steps and groups dropped, numbered afresh; position_of_rank -1 for
// the others, position_of_vertex empty. `kept_ranks` must hold every kept rank's higher neighbours
// (a closure of elimination-tree ancestors does): otherwise it throws kInternal.
SweepLayout restrict_sweep_layout(const SweepLayout& full, const std::vector<char>& kept_ranks);

// The sweep the GPU runs, on one host thread, for one source's seeds (position, distance): the
// table by position, +infinity where nothing reaches. For tests: each position takes the minimum
// of its seed and the same sums as on the device (a minimum is exact in any order), so its
// distances equal the GPU's and Cch::one_to_all's bit for bit.
std::vector<double> sweep_on_host(const SweepLayout& layout,
                                  const std::vector<std::pair<VertexIndex, double>>& seeds);

}  // namespace gpu_routing
