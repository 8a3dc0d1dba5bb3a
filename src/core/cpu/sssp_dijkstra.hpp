// CPU Dijkstra: the reference every other engine is tested against, the single-source CPU engine,
// and (one source per thread) the many-source CPU engine.
#pragma once

#include <memory>
#include <vector>

#include "base/common.hpp"
#include "base/graph.hpp"

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
  VertexIndex vertex_count() const { return static_cast<VertexIndex>(slot_of_.size()); }
  // The buckets a workspace for a graph of this largest whole-number weight has (0: the heap).
  static std::size_t ring_for(double max_integer_weight);
  std::size_t ring_size() const { return buckets_.size(); }
  // Whether it is ready for another source: every run that returns or is cancelled leaves it so;
  // one that failed on the way (out of memory) may not.
  bool clean() const { return clean_; }

  // Fills distances[0 .. V-1] from `source`. With targets, stops once every target is final and
  // no vertex at the same distance as the farthest target is left unsettled; entries of vertices
  // farther than that are then upper bounds. With a `bound`, settles only the vertices at most
  // that far (a service area): every vertex within it is final, any other entry is an upper bound
  // above it or +infinity. `settled`, when given, receives the settled vertices in the order they
  // were settled (nondecreasing distance). `filled`: the caller keeps `distances` at +infinity
  // between runs (putting back what a run wrote), so the run does not fill the whole row.
  // Returns the number of vertices settled.
  std::int64_t run(const CsrGraph& graph, VertexIndex source, double* distances,
                   const VertexIndex* targets, int target_count, const CancelToken& cancel,
                   double bound = kInfinity, std::vector<VertexIndex>* settled = nullptr,
                   bool filled = false);

 private:
  void push_or_decrease(VertexIndex v, double key);
  VertexIndex pop_min();
  void sift_up(std::int32_t slot);
  void sift_down(std::int32_t slot);
  std::int64_t run_buckets(const CsrGraph& graph, VertexIndex source, double* distances,
                           const VertexIndex* targets, int target_count, const CancelToken& cancel,
                           double bound, std::vector<VertexIndex>* settled_order, bool filled);
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
  bool clean_ = true;
};

// A workspace for a new engine: one an earlier engine of this process gave back when it fits
// (the same vertex count and ring), else a new one. Making one costs its arrays (a vertex's slot
// and mark, the ring's buckets, each bucket's first entries): on Rome (3353 vertices, a ring of
// 16384) that was a fifth of a 0.7 ms path query on a road index, which Dijkstra lost to cch by
// that alone.
std::unique_ptr<DijkstraWorkspace> take_dijkstra_workspace(VertexIndex vertex_count,
                                                           double max_integer_weight);
// Keeps a clean workspace of a small graph for the next engine (at most two are kept, of graphs
// up to kPooledWorkspaceVertices vertices: what a backend holds stays a few megabytes); frees
// any other.
void give_back_dijkstra_workspace(std::unique_ptr<DijkstraWorkspace> workspace);
constexpr VertexIndex kPooledWorkspaceVertices = VertexIndex{1} << 18;
// How many are kept now, and freeing them (for tests).
std::size_t pooled_dijkstra_workspaces();
void clear_dijkstra_workspace_pool();

// Plain binary-heap Dijkstra with no tricks: the unit tests' reference.
std::vector<double> reference_dijkstra(const CsrGraph& graph, VertexIndex source);

}  // namespace gpu_routing
