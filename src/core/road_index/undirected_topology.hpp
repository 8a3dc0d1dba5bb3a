// What the contraction order (nested_dissection.cpp) and the hierarchy built on it (cch.cpp)
// share: both are defined on the graph's undirected topology. Internal to the road index.
#pragma once

#include <cstddef>
#include <vector>

#include "base/graph.hpp"

namespace gpu_routing::detail {

// The graph as an undirected simple graph: every arc u->v (u != v) makes u and v neighbours once,
// whatever its direction, weight or parallel copies. Both the order and the chordal supergraph
// are defined on this.
struct UndirectedTopology {
  std::vector<std::size_t> first;      // vertex_count + 1 entries
  std::vector<VertexIndex> neighbors;  // sorted and distinct within each row

  VertexIndex vertex_count() const { return static_cast<VertexIndex>(first.size() - 1); }
  const VertexIndex* begin(VertexIndex v) const { return neighbors.data() + first[v]; }
  const VertexIndex* end(VertexIndex v) const { return neighbors.data() + first[v + 1]; }
  std::size_t degree(VertexIndex v) const { return first[v + 1] - first[v]; }
};

UndirectedTopology undirected_topology(const CsrGraph& forward);

}  // namespace gpu_routing::detail
