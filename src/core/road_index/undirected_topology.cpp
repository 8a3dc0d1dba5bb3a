#include "road_index/undirected_topology.hpp"

#include <algorithm>
#include <utility>

namespace gpu_routing::detail {

UndirectedTopology undirected_topology(const CsrGraph& forward) {
  const auto n = static_cast<std::size_t>(forward.vertex_count);
  std::vector<std::size_t> count(n + 1, 0);
  for (VertexIndex u = 0; u < forward.vertex_count; ++u)
    for (ArcIndex a = forward.begin(u); a < forward.end(u); ++a) {
      const VertexIndex v = forward.heads[static_cast<std::size_t>(a)];
      if (v == u) continue;
      ++count[static_cast<std::size_t>(u) + 1];
      ++count[static_cast<std::size_t>(v) + 1];
    }
  for (std::size_t v = 0; v < n; ++v) count[v + 1] += count[v];
  std::vector<VertexIndex> slots(count[n]);
  std::vector<std::size_t> fill(count.begin(), count.end() - 1);
  for (VertexIndex u = 0; u < forward.vertex_count; ++u)
    for (ArcIndex a = forward.begin(u); a < forward.end(u); ++a) {
      const VertexIndex v = forward.heads[static_cast<std::size_t>(a)];
      if (v == u) continue;
      slots[fill[static_cast<std::size_t>(u)]++] = v;
      slots[fill[static_cast<std::size_t>(v)]++] = u;
    }
  // Sort and deduplicate each row, compacting in place (a row never moves right).
  UndirectedTopology topology;
  topology.first.assign(n + 1, 0);
  std::size_t kept = 0;
  for (std::size_t v = 0; v < n; ++v) {
    auto row_begin = slots.begin() + static_cast<std::ptrdiff_t>(count[v]);
    auto row_end = slots.begin() + static_cast<std::ptrdiff_t>(count[v + 1]);
    std::sort(row_begin, row_end);
    row_end = std::unique(row_begin, row_end);
    const auto out = slots.begin() + static_cast<std::ptrdiff_t>(kept);
    kept += static_cast<std::size_t>(row_end - row_begin);
    std::move(row_begin, row_end, out);
    topology.first[v + 1] = kept;
  }
  slots.resize(kept);
  slots.shrink_to_fit();
  topology.neighbors = std::move(slots);
  return topology;
}

}  // namespace gpu_routing::detail
