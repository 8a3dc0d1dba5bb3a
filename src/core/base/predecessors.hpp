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

#include <algorithm>
#include <cstdint>
#include <vector>

#include "base/common.hpp"
#include "base/graph.hpp"

namespace gpu_routing {

// Marks a vertex whose best arc is not strict; resolve_pending_predecessors() settles it.
constexpr ArcIndex kPendingArc = -2;

namespace detail {

// The rule's key of an arc u -> v.
struct ArcKey {
  double reach = kInfinity;  // dist[u] + w
  int non_strict = 1;
  std::int64_t edge_id = 0;
  ArcIndex arc = kNoArc;

  bool operator<(const ArcKey& other) const {
    if (reach != other.reach) return reach < other.reach;
    if (non_strict != other.non_strict) return non_strict < other.non_strict;
    if (edge_id != other.edge_id) return edge_id < other.edge_id;
    return arc < other.arc;
  }
};

}  // namespace detail

// best_incoming_arc() with each distance from distance_of(vertex): reads v's and its
// in-neighbours' alone.
template <typename DistanceOf>
ArcIndex best_incoming_arc_by(const CsrGraph& reverse, DistanceOf&& distance_of, VertexIndex source,
                              VertexIndex v, bool* strict) {
  *strict = false;
  if (v == source) return kNoArc;
  const double dist_v = distance_of(v);
  if (!(dist_v < kInfinity)) return kNoArc;
  detail::ArcKey best;
  for (ArcIndex a = reverse.begin(v); a < reverse.end(v); ++a) {
    const std::size_t arc = static_cast<std::size_t>(a);
    const double dist_u = distance_of(reverse.heads[arc]);
    if (!(dist_u < kInfinity)) continue;
    const detail::ArcKey key{dist_u + reverse.weights[arc], dist_u < dist_v ? 0 : 1,
                             reverse.edge_ids[arc], a};
    if (key < best) best = key;
  }
  *strict = best.arc != kNoArc && best.non_strict == 0;
  return best.arc;
}

// The rule's first stage for one vertex: the best arc into v (an index into `reverse`), or kNoArc
// when v is the source or unreachable. Sets *strict to whether the chosen arc is strict.
inline ArcIndex best_incoming_arc(const CsrGraph& reverse, const double* distances,
                                  VertexIndex source, VertexIndex v, bool* strict) {
  return best_incoming_arc_by(
      reverse, [distances](VertexIndex x) { return distances[x]; }, source, v, strict);
}

// The whole rule for one source's row: pred[v] for every v (indices into `reverse`).
void compute_predecessors(const CsrGraph& reverse, const double* distances, VertexIndex source,
                          ArcIndex* predecessor_arcs);

// The layered second stage: `predecessor_arcs` holds strict choices, kNoArc, and kPendingArc for
// vertices whose best arc is not strict (as a GPU kernel leaves them). Replaces every kPendingArc.
void resolve_pending_predecessors(const CsrGraph& reverse, const double* distances,
                                  VertexIndex source, ArcIndex* predecessor_arcs);

// trace_path()'s walk back from the target, each distance from distance_of(vertex), asked only
// for the vertices on the path and their in-neighbours (an engine that finds distances one by one,
// the road index, answers a path without a whole row). `path`: the arcs (indices into `reverse`)
// in path order, empty when target == source or unreachable. False (path undefined) where a
// vertex's best arc is not strict: zero-cost ties, which the rule resolves from the whole row.
template <typename DistanceOf>
bool trace_strict_path(const CsrGraph& reverse, DistanceOf&& distance_of, VertexIndex source,
                       VertexIndex target, std::vector<ArcIndex>& path) {
  path.clear();
  if (target == source || !(distance_of(target) < kInfinity)) return true;
  VertexIndex v = target;
  while (v != source) {
    bool strict = false;
    const ArcIndex arc = best_incoming_arc_by(reverse, distance_of, source, v, &strict);
    if (arc == kNoArc) throw RoutingError(ErrorKind::kInternal, "path tracing lost its way");
    if (!strict) return false;
    path.push_back(arc);
    v = reverse.heads[static_cast<std::size_t>(arc)];
    if (path.size() > static_cast<std::size_t>(reverse.vertex_count))
      throw RoutingError(ErrorKind::kInternal, "predecessor cycle while tracing a path");
  }
  std::reverse(path.begin(), path.end());
  return true;
}

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
