#include "base/predecessors.hpp"

#include <algorithm>

namespace gpu_routing {

namespace {

// Smallest (edge id, arc) among tight arcs into v whose tail is marked in `resolved`.
ArcIndex tight_arc_from_resolved(const CsrGraph& reverse, const double* distances, VertexIndex v,
                                 double reach, const std::vector<char>& resolved) {
  ArcIndex best = kNoArc;
  std::int64_t best_edge = 0;
  for (ArcIndex a = reverse.begin(v); a < reverse.end(v); ++a) {
    VertexIndex u = reverse.heads[static_cast<std::size_t>(a)];
    if (!resolved[static_cast<std::size_t>(u)]) continue;
    if (distances[u] + reverse.weights[static_cast<std::size_t>(a)] != reach) continue;
    std::int64_t edge = reverse.edge_ids[static_cast<std::size_t>(a)];
    if (best == kNoArc || edge < best_edge) {
      best = a;
      best_edge = edge;
    }
  }
  return best;
}

}  // namespace

void compute_predecessors(const CsrGraph& reverse, const double* distances, VertexIndex source,
                          ArcIndex* predecessor_arcs) {
  const VertexIndex n = reverse.vertex_count;
  bool any_pending = false;
  for (VertexIndex v = 0; v < n; ++v) {
    bool strict = false;
    ArcIndex arc = best_incoming_arc(reverse, distances, source, v, &strict);
    if (arc != kNoArc && !strict) {
      arc = kPendingArc;
      any_pending = true;
    }
    predecessor_arcs[v] = arc;
  }
  if (any_pending) resolve_pending_predecessors(reverse, distances, source, predecessor_arcs);
}

void resolve_pending_predecessors(const CsrGraph& reverse, const double* distances,
                                  VertexIndex source, ArcIndex* predecessor_arcs) {
  const VertexIndex n = reverse.vertex_count;
  std::vector<char> resolved(static_cast<std::size_t>(n), 0);
  std::vector<VertexIndex> pending;
  for (VertexIndex v = 0; v < n; ++v) {
    if (predecessor_arcs[v] == kPendingArc) {
      pending.push_back(v);
    } else if (v == source || predecessor_arcs[v] != kNoArc) {
      resolved[static_cast<std::size_t>(v)] = 1;
    }
  }
  if (pending.empty()) return;
  // reach[v] = the best dist[u] + w into v (the first component of the rule's key).
  std::vector<double> reach(pending.size());
  for (std::size_t i = 0; i < pending.size(); ++i) {
    bool strict = false;
    ArcIndex arc = best_incoming_arc(reverse, distances, source, pending[i], &strict);
    std::size_t a = static_cast<std::size_t>(arc);
    reach[i] = distances[reverse.heads[a]] + reverse.weights[a];
  }
  // Jacobi rounds: a vertex may only lean on vertices resolved before the round began, which
  // makes the result independent of the order vertices are visited in (GPU and CPU agree).
  std::vector<std::pair<std::size_t, ArcIndex>> newly;
  while (!pending.empty()) {
    newly.clear();
    for (std::size_t i = 0; i < pending.size(); ++i) {
      ArcIndex arc = tight_arc_from_resolved(reverse, distances, pending[i], reach[i], resolved);
      if (arc != kNoArc) newly.emplace_back(i, arc);
    }
    if (newly.empty()) break;
    for (auto& [i, arc] : newly) {
      predecessor_arcs[pending[i]] = arc;
      resolved[static_cast<std::size_t>(pending[i])] = 1;
    }
    std::size_t kept = 0;
    for (std::size_t i = 0; i < pending.size(); ++i) {
      if (predecessor_arcs[pending[i]] == kPendingArc) {
        pending[kept] = pending[i];
        reach[kept] = reach[i];
        ++kept;
      }
    }
    pending.resize(kept);
  }
  // Only inexact distances (rounding that made no tight chain exist) can leave vertices here:
  // fall back to the best arc; path_from_predecessors() reports a cycle should one form.
  for (VertexIndex v : pending) {
    bool strict = false;
    predecessor_arcs[v] = best_incoming_arc(reverse, distances, source, v, &strict);
  }
}

std::vector<ArcIndex> trace_path(const CsrGraph& reverse, const double* distances,
                                 VertexIndex source, VertexIndex target) {
  std::vector<ArcIndex> path;
  if (trace_strict_path(
          reverse, [distances](VertexIndex x) { return distances[x]; }, source, target, path))
    return path;
  // Zero-cost ties: the layered stage needs the whole row.
  std::vector<ArcIndex> row(static_cast<std::size_t>(reverse.vertex_count));
  compute_predecessors(reverse, distances, source, row.data());
  return path_from_predecessors(reverse, row.data(), source, target);
}

std::vector<ArcIndex> path_from_predecessors(const CsrGraph& reverse,
                                             const ArcIndex* predecessor_arcs, VertexIndex source,
                                             VertexIndex target) {
  std::vector<ArcIndex> path;
  if (target == source) return path;
  VertexIndex v = target;
  while (v != source) {
    ArcIndex arc = predecessor_arcs[v];
    if (arc < 0) {
      if (path.empty()) return path;  // unreachable
      throw RoutingError(ErrorKind::kInternal, "broken predecessor chain");
    }
    path.push_back(arc);
    v = reverse.heads[static_cast<std::size_t>(arc)];
    if (path.size() > static_cast<std::size_t>(reverse.vertex_count))
      throw RoutingError(ErrorKind::kInternal, "predecessor cycle while tracing a path");
  }
  std::reverse(path.begin(), path.end());
  return path;
}

}  // namespace gpu_routing
