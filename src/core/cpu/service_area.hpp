// Service areas (pgRouting's pgr_drivingDistance): from each start, every vertex whose shortest
// path cost is at most a distance, with the arc of its shortest path tree. Dijkstra bounded by the
// distance: it settles the area and nothing beyond it, so a 5 km area of a city costs the area,
// not the graph (a whole tree and a filter cost the graph).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "base/common.hpp"
#include "base/graph.hpp"

namespace gpu_routing {

// One row of a service area, in pgr_drivingDistance's terms.
struct ServiceAreaRow {
  std::int32_t start = 0;          // the start's position in the starts given
  VertexIndex vertex = kNoVertex;  // kNoVertex: the root row of a start not in the graph
  ArcIndex arc = kNoArc;  // into graph.reverse: the tree arc into `vertex`; kNoArc for a root
  double agg_cost = 0;
};

class DijkstraWorkspace;
class ShortestPathEngine;

// Searches one graph's service areas of one distance; reusable for several batches of starts.
// `graph` must carry its reversed CSR (the predecessor rule reads in-arcs) and outlive this.
class ServiceAreaSearch {
 public:
  // With `engine` (it outlives this), the areas are the engine's (ShortestPathEngine::
  // solve_areas: the GPU's road index sweeps whole trees and sends back what is within the
  // distance) and only the rule and the order are made here; without, Dijkstra bounded by the
  // distance searches each.
  ServiceAreaSearch(const Graph& graph, double distance, int threads,
                    ShortestPathEngine* engine = nullptr);
  ~ServiceAreaSearch();
  ServiceAreaSearch(const ServiceAreaSearch&) = delete;
  ServiceAreaSearch& operator=(const ServiceAreaSearch&) = delete;

  // The areas of `count` starts (vertex indices, kNoVertex for an id not in the graph), given as
  // positions first_position .. first_position + count - 1, appended to `rows` start by start in
  // the order given (duplicates repeated): the start's root row, then the other vertices by
  // agg_cost, then vertex (ascending id). A negative distance gives no rows. Each tree arc follows
  // the predecessor rule (base/predecessors.hpp) on the start's distances. On `threads` threads.
  void areas(const VertexIndex* starts, int count, int first_position,
             std::vector<ServiceAreaRow>& rows, const CancelToken& cancel);

  // equicost: each vertex in the area of its nearest start only (ties: the start given first);
  // every start keeps its root row. All starts at once (the assignment needs every area).
  // `budget` is charged for the areas held until they are assigned.
  void nearest_areas(const VertexIndex* starts, int count, std::vector<ServiceAreaRow>& rows,
                     const CancelToken& cancel, const MemoryBudget& budget);

  // Starts a request of an engine's areas at most: their worst case (every vertex within the
  // distance, a vertex and a distance each) up to 256 MB, the GPU service's exchange of them
  // (pages a smaller area never reaches cost nothing).
  static int engine_batch(VertexIndex vertex_count);

  int threads() const { return threads_; }
  // Vertices settled by the searches so far (their work: the areas, not the graph).
  std::int64_t settled() const { return settled_; }
  // With an engine, where the time of areas() went so far: the engine's areas, then the rule and
  // the order on the threads.
  double engine_ms() const { return engine_ms_; }
  double rule_ms() const { return rule_ms_; }

  // A thread's scratch (a Dijkstra workspace and a row), kept by the process between calls.
  struct Worker;
  // How much the kept workers may hold together (a session's retained memory): at least
  // kMinKeptWorkers are kept whatever it is, and as many more as fit.
  static void set_kept_worker_bytes(std::size_t bytes);
  static std::size_t kept_worker_count();
  static constexpr std::size_t kMinKeptWorkers = 2;

 private:
  std::unique_ptr<Worker> take_worker() const;
  static void give_back_worker(std::unique_ptr<Worker> worker);
  // One start's area into `out`: root row first, then by (agg_cost, vertex).
  void one_area(VertexIndex start, int position, Worker& worker, std::vector<ServiceAreaRow>& out,
                const CancelToken& cancel);
  // The same from an engine's area (its vertices and distances, in any order).
  void one_area_from_engine(VertexIndex start, int position, Worker& worker,
                            const VertexIndex* vertices, const double* distances, std::size_t count,
                            std::vector<ServiceAreaRow>& out);
  // The area's rows but the root's, by the rule and in pgRouting's order, from the worker's row
  // (exact over the area) and its area (worker.settled).
  void area_rows(VertexIndex start, int position, Worker& worker, std::vector<ServiceAreaRow>& out);
  Worker& worker(int thread);

  const Graph& graph_;
  double distance_;
  int threads_;
  ShortestPathEngine* engine_;
  std::vector<std::unique_ptr<Worker>> workers_;
  std::int64_t settled_ = 0;
  double engine_ms_ = 0, rule_ms_ = 0;
};

}  // namespace gpu_routing
