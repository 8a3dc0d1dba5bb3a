// CPU Dijkstra: the reference every other engine is tested against, the single-source CPU engine,
// and (one source per thread) the many-source CPU engine.
#pragma once

#include <vector>

#include "common.hpp"
#include "graph.hpp"

namespace gpu_routing {

// An indexed 4-ary min-heap on (distance, vertex) with decrease-key; sized once per vertex count
// and reused across sources.
class DijkstraWorkspace {
 public:
  explicit DijkstraWorkspace(VertexIndex vertex_count);

  // Fills distances[0 .. V-1] from `source`. With targets, stops once every target is final and
  // no vertex at the same distance as the farthest target is left unsettled; entries of vertices
  // farther than that are then upper bounds. Returns the number of vertices settled.
  std::int64_t run(const CsrGraph& graph, VertexIndex source, double* distances,
                   const VertexIndex* targets, int target_count, const CancelToken& cancel);

 private:
  void push_or_decrease(VertexIndex v, double key);
  VertexIndex pop_min();
  void sift_up(std::int32_t slot);
  void sift_down(std::int32_t slot);

  std::vector<double> heap_keys_;
  std::vector<VertexIndex> heap_vertices_;
  std::vector<std::int32_t> slot_of_;  // heap slot of each vertex, -1 when not in the heap
  std::vector<char> is_target_;
};

// Plain binary-heap Dijkstra with no tricks: the unit tests' reference.
std::vector<double> reference_dijkstra(const CsrGraph& graph, VertexIndex source);

}  // namespace gpu_routing
