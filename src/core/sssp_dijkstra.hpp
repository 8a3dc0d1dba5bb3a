// CPU Dijkstra: the reference every other engine is tested against, the single-source CPU engine,
// and (one source per thread) the many-source CPU engine.
#pragma once

#include <vector>

#include "common.hpp"
#include "graph.hpp"

namespace gpu_routing {

// Dijkstra's algorithm, sized once per vertex count and reused across sources. Two queues:
//  - Dial's buckets when every weight is a whole number no larger than kMaxBucketWeight: a ring
//    of one bucket per distance (a vertex goes in the bucket of its tentative distance; entries
//    made stale by a decrease are skipped when reached), with a bitmap to skip empty buckets.
//    Every operation is O(1): on the 4096-vertex random graph of the benchmarks (weights 1..100)
//    all sources take 0.53 s on one core against 1.12 s with the heap.
//  - otherwise an indexed 4-ary min-heap on (distance, vertex) with decrease-key.
// Both settle vertices in order of distance and give the same distances (exact for integers).
class DijkstraWorkspace {
 public:
  static constexpr double kMaxBucketWeight = 131071.0;

  // `max_integer_weight`: the graph's largest weight when all its weights are whole numbers
  // (Graph::integer_weights, Graph::max_weight), or a negative value: the heap is used.
  explicit DijkstraWorkspace(VertexIndex vertex_count, double max_integer_weight = -1.0);
  bool uses_buckets() const { return !buckets_.empty(); }

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
  std::int64_t run_buckets(const CsrGraph& graph, VertexIndex source, double* distances,
                           const VertexIndex* targets, int target_count, const CancelToken& cancel);
  void clear_buckets();

  std::vector<double> heap_keys_;
  std::vector<VertexIndex> heap_vertices_;
  std::vector<std::int32_t> slot_of_;  // heap slot of each vertex, -1 when not in the heap
  // The early-exit marks: set for a run's targets (returns how many distinct), cleared after it.
  int mark_targets(const VertexIndex* targets, int target_count);
  void clear_targets(const VertexIndex* targets, int target_count);
  std::vector<char> is_target_;
  std::vector<std::vector<VertexIndex>> buckets_;  // Dial's ring; empty when the heap is used
  std::vector<std::uint64_t> nonempty_;            // one bit per bucket
  std::size_t bucket_mask_ = 0;
};

// Plain binary-heap Dijkstra with no tricks: the unit tests' reference.
std::vector<double> reference_dijkstra(const CsrGraph& graph, VertexIndex source);

}  // namespace gpu_routing
