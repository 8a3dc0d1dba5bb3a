// Phase 1 of the road index (cch.hpp): its contraction order, from the topology alone. It needs
// nothing of the hierarchy; cch.hpp includes it, so the hierarchy's users see it there.
#pragma once

#include <vector>

#include "base/common.hpp"
#include "base/graph.hpp"

namespace gpu_routing {

// A contraction order by nested dissection of the undirected topology (arc directions, weights,
// self loops and parallel arcs ignored). Returns the vertex at each rank: result[r] is the vertex
// contracted r-th (rank 0 first, the top separator's vertices last).
//
// With coordinates (x[v], y[v] for each vertex index v; both or neither) each part is bisected by
// inertial flow (Schild, Sommer 2015) with vertex cuts: for each of four directions (both axes,
// both diagonals) the first quarter of the part's vertices by projection is the source set, the
// last quarter the sink set, and a minimum vertex cut between them (unit vertex capacities,
// augmenting paths) is the candidate separator; of the two extreme minimum cuts (nearest the
// sources, nearest the sinks) the more balanced one. The smallest candidate wins (ties: the
// better balance, then the earlier direction); the sides are what remains on either side of it.
// Without coordinates, the coordinates are made from the topology: hop distances to four
// far-apart landmarks per connected component (x = dist(a) - dist(b), y = dist(c) - dist(d)).
// Where every direction's source and sink sets touch (no vertex cut), the part is split in the
// middle of the best of a breadth-first order from a pseudo-peripheral vertex and the median
// along each direction, the separator being the smaller side's vertices with a neighbour across.
// The separator is ranked above both halves, which are ordered recursively. Disconnected parts
// are ordered independently. Parts of at most kCchLeafSize vertices are ordered by ascending
// degree inside the part. Deterministic: the same order on any number of `threads` (the sides of
// a bisection ordered at once, each into its own order; 0: every core, as Cch::customize takes
// it; 1: none started, the default).
// New York (264,346 vertices): with its coordinates 4.8 CCH arcs per vertex, elimination tree
// 293 deep; with landmark coordinates 5.9 and 378 (breadth-first bisection alone: 22.6 and
// 1813); ordering a few seconds on one core. Rome (no coordinates): 5.8 arcs per vertex, 95 deep.
constexpr VertexIndex kCchLeafSize = 16;
std::vector<VertexIndex> cch_order(const Graph& graph, const double* x = nullptr,
                                   const double* y = nullptr, const CancelToken& cancel = {},
                                   int threads = 1);

}  // namespace gpu_routing
