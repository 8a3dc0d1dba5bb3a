// The one predecessor rule every engine's paths follow, computed from distances alone, so the CPU
// and every GPU engine return identical path rows.
//
// For a reachable vertex v other than the source, among the arcs u->v with u reachable, choose the
// smallest key (dist[u] + w, strict ? 0 : 1, edge id, arc index), where strict means
// dist[u] < dist[v]. With exact distances this is "the cheapest tight arc, ties to the smallest
// edge id" (pgRouting's answer for parallel edges listed in id order). Preferring strict arcs
// keeps the predecessors a tree when zero-cost edges make neighbours equally far; a vertex whose
// best arc is not strict is resolved in layers: in each round it takes the smallest (edge id, arc)
// among its tight arcs from vertices resolved in earlier rounds.
#pragma once

#include <vector>

#include "common.hpp"
#include "graph.hpp"

namespace gpu_routing {

// Marks a vertex whose best arc is not strict; resolve_pending_predecessors() settles it.
constexpr ArcIndex kPendingArc = -2;

// The rule's first stage for one vertex: the best arc into v (an index into `reverse`), or kNoArc
// when v is the source or unreachable. Sets *strict to whether the chosen arc is strict.
ArcIndex best_incoming_arc(const CsrGraph& reverse, const double* distances, VertexIndex source,
                           VertexIndex v, bool* strict);

// The whole rule for one source's row: pred[v] for every v (indices into `reverse`).
void compute_predecessors(const CsrGraph& reverse, const double* distances, VertexIndex source,
                          ArcIndex* predecessor_arcs);

// The layered second stage: `predecessor_arcs` holds strict choices, kNoArc, and kPendingArc for
// vertices whose best arc is not strict (as a GPU kernel leaves them). Replaces every kPendingArc.
void resolve_pending_predecessors(const CsrGraph& reverse, const double* distances,
                                  VertexIndex source, ArcIndex* predecessor_arcs);

// The arcs (indices into `reverse`) of the path source -> target in path order, by the rule above.
// Empty when target == source or target is unreachable. Only reads distances of vertices on or
// next to the path, so rows that are exact only up to dist[target] (early-stopped Dijkstra) work.
std::vector<ArcIndex> trace_path(const CsrGraph& reverse, const double* distances,
                                 VertexIndex source, VertexIndex target);

// The same path read from a full predecessor row. Throws kInternal on a cycle.
std::vector<ArcIndex> path_from_predecessors(const CsrGraph& reverse,
                                             const ArcIndex* predecessor_arcs, VertexIndex source,
                                             VertexIndex target);

}  // namespace gpu_routing
