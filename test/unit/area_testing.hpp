// Service areas as engines give them (ShortestPathEngine::solve_areas), for comparing two engines'
// answers: each source's area as (vertex, distance) pairs in vertex order.
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "engine/engine.hpp"

namespace gpu_routing::testing {

using AreaPairs = std::vector<std::pair<VertexIndex, double>>;

inline std::vector<AreaPairs> sorted_areas(const AreaLists& lists) {
  std::vector<AreaPairs> areas;
  std::int64_t begin = 0;
  for (const std::int64_t end : lists.ends) {
    AreaPairs area;
    for (std::int64_t k = begin; k < end; ++k)
      area.emplace_back(lists.vertices[static_cast<std::size_t>(k)],
                        lists.distances[static_cast<std::size_t>(k)]);
    std::sort(area.begin(), area.end());
    areas.push_back(std::move(area));
    begin = end;
  }
  return areas;
}

}  // namespace gpu_routing::testing
