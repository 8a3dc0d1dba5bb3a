// The engine interface every shortest-path engine implements, CPU (OpenMP) and GPU (CUDA) alike,
// and the table the SQL settings select engines from by name.
//
// An engine answers "distances from these sources to every vertex". Predecessors are not an engine
// matter: they follow from distances by one rule (predecessors.hpp), so every engine gives the same
// paths. An engine may compute them itself (a GPU kernel applying the same rule) by overriding
// solve() to fill predecessor_arcs; the default does it on the host.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/common.hpp"
#include "base/graph.hpp"

namespace gpu_routing {

enum class Device { kCpu, kGpu };
const char* device_label(Device device);  // "cpu" / "gpu"

class Cch;

struct EngineOptions {
  int threads = 0;     // OpenMP threads; 0 = every core
  int block_size = 0;  // CUDA threads per block; 0 = the engine's tuned default
  int streams = 0;     // CUDA streams for engines that run sources concurrently; 0 = default
  MemoryBudget budget;
  CancelToken cancel;
  // A kept graph's shared road index, customized for this graph (null: none). The cch engine
  // answers from it instead of making its own; it outlives the call.
  const Cch* road_index = nullptr;
  // GPU engines: the one device to run on (the GPU service gives each of its per-GPU workers its
  // own engines). -1: device 0, and the many-source engines split over every visible GPU.
  int device = -1;
};

struct SolveRequest {
  const VertexIndex* sources = nullptr;
  int source_count = 0;
  // Optional hint: only these columns of each row will be read. Engines may stop early once they
  // are final (CPU Dijkstra does); other vertices' entries are then upper bounds, not exact.
  // Null: every vertex is needed.
  const VertexIndex* targets = nullptr;
  int target_count = 0;
  // Optional, with targets and without compact_targets: source i's own targets are
  // targets[target_offsets[i] .. target_offsets[i + 1]) (source_count + 1 entries). An engine may
  // stop each source at its own targets, or treat all of targets as every source's hint (exact
  // too: a row is then final up to more vertices).
  const int* target_offsets = nullptr;
  // Out: source_count rows of vertex_count distances (row i belongs to sources[i]); kInfinity
  // where unreachable.
  double* distances = nullptr;
  // With targets, an engine whose supports_compact_targets() is true may be asked for compact
  // rows instead: source_count rows of target_count distances, entry j for targets[j]. Cost
  // matrices then move and hold only the cells they return.
  bool compact_targets = false;
  // Optional out: source_count rows of vertex_count indices into graph.reverse (the arc by which
  // the shortest path enters the vertex), kNoArc for the source and for unreachable vertices.
  // Requires graph.reverse. Never combined with targets, but for own_target_distances.
  ArcIndex* predecessor_arcs = nullptr;
  // Paths without rows, for an engine whose supports_paths_without_rows() is true: with targets,
  // target_offsets and predecessor_arcs, distances holds only each source's own targets
  // (target_count entries, entry i for targets[i]) while predecessor_arcs gets every row in full.
  // Paths read from the predecessors equal trace_path's on the rows, and a GPU engine moves 4
  // bytes a vertex to the host instead of 8.
  bool own_target_distances = false;
  // Row i of distances starts at distances + i * row_stride (in doubles; 0: rows are packed,
  // their width apart). Set only for an engine whose supports_row_stride() is true: the caller
  // leaves room before each row for what it sends the row in (a PostgreSQL tuple's header, so a
  // cost array is written where the tuplestore copies it from, not copied into a tuple first).
  std::size_t row_stride = 0;
  // Instead of distances (and row_stride): row i goes to row_pointers[i], each row where the
  // caller wants it (8-byte aligned). Set only for an engine whose supports_row_pointers() is
  // true, never with predecessor_arcs or own_target_distances.
  double* const* row_pointers = nullptr;
  // With row_pointers, for an engine whose supports_row_columns() is true: each row sent is
  // row_column_count entries, entry c the solved row's column row_columns[c] (negative:
  // kInfinity), so the caller's arrays come out in its own order of targets (repeats and ids not
  // in the graph included) without a second pass over them. Null: the rows as solved.
  const std::int64_t* row_columns = nullptr;
  std::size_t row_column_count = 0;
};

// One row in the caller's order of columns (SolveRequest::row_columns): out[c] = row[columns[c]],
// kInfinity for a column not in the row's `width` (negative ones included). `out` must not
// overlap `row`.
inline void gather_row_columns(const double* row, std::size_t width, const std::int64_t* columns,
                               std::size_t column_count, double* out) {
  for (std::size_t c = 0; c < column_count; ++c) {
    const auto column = static_cast<std::size_t>(columns[c]);  // negative: past the width
    out[c] = column < width ? row[column] : kInfinity;
  }
}

// Service areas as an engine gives them (ShortestPathEngine::solve_areas): each source's vertices
// within a distance and their distances, source i's at [ends[i - 1], ends[i]) (from 0 for the
// first), in no particular order. The rows themselves never leave the engine: a New York tree is
// 2 MB, a 5 km area of it a few thousand entries.
struct AreaLists {
  std::vector<std::int64_t> ends;
  std::vector<VertexIndex> vertices;
  std::vector<double> distances;
};

// What an engine reports about a run, for gpu_routing_last_run().
struct EngineReport {
  std::string device_name;  // "CPU, 16 threads" / "NVIDIA H100 80GB HBM3 (device 0)"
  double transfer_ms = 0;   // host<->device copies (GPU engines)
  double compute_ms = 0;    // kernels or CPU compute, predecessor pass included
  std::int64_t rounds = 0;  // iterations of the engine's main loop (summed over sources)
  std::string notes;        // anything a user should know ("graph is dense: adjacency matrix")
};

// A source's paths are traced from distances asked vertex by vertex (source_distances) up to this
// many targets; more paths share more of a whole row, which a sweep computes for less per vertex.
constexpr std::int64_t kSettledPathTargets = 16;

// One source's distances, vertex by vertex as asked (ShortestPathEngine::source_distances).
class SourceDistances {
 public:
  virtual ~SourceDistances() = default;
  virtual double distance(VertexIndex v) = 0;
  // The work so far, in vertices settled: a caller gives up on asking one by one past a share
  // of the graph (a whole row is cheaper per vertex).
  virtual std::size_t settled() const = 0;
};

class ShortestPathEngine {
 public:
  explicit ShortestPathEngine(const Graph& graph, EngineOptions options)
      : graph_(graph), options_(std::move(options)) {}
  virtual ~ShortestPathEngine() = default;
  ShortestPathEngine(const ShortestPathEngine&) = delete;
  ShortestPathEngine& operator=(const ShortestPathEngine&) = delete;

  virtual const char* name() const = 0;
  virtual Device device() const = 0;
  // Sources per solve() call that keep the engine efficient (32 for a warp-wide multi-source
  // kernel, the thread count for parallel CPU Dijkstra, every vertex for Floyd-Warshall).
  virtual int preferred_batch_size() const { return 1; }
  // The same for requests whose rows are `row_width` distances (a cost matrix's compact rows):
  // an engine that sizes its batches by their rows' bytes takes more of narrow rows.
  virtual int preferred_batch_size_for_rows(std::size_t row_width) const {
    (void)row_width;
    return preferred_batch_size();
  }
  // Whether solve() honours SolveRequest::compact_targets.
  virtual bool supports_compact_targets() const { return false; }
  // Whether solve() honours SolveRequest::row_stride for distances (rows apart by more than their
  // width). Never asked together with predecessor_arcs or own_target_distances.
  virtual bool supports_row_stride() const { return false; }
  // Whether solve() takes SolveRequest::row_pointers.
  virtual bool supports_row_pointers() const { return false; }
  // Whether solve() takes SolveRequest::row_columns with row_pointers.
  virtual bool supports_row_columns() const { return false; }
  // Whether solve() takes own_target_distances (see SolveRequest).
  virtual bool supports_paths_without_rows() const { return false; }
  // Fills request.distances (and request.predecessor_arcs when asked). Throws Cancelled when
  // options.cancel is raised, RoutingError on failure.
  virtual void solve(const SolveRequest& request) = 0;

  // The vertices at most `bound` from each of `count` sources (each source itself included, at 0;
  // unreachable vertices never, even for an infinite bound), appended to `areas` (its ends
  // continue from what it holds). The default solves whole rows a
  // few sources at a time and keeps what is within the bound; an engine that can keep its rows
  // where it computed them (a GPU) overrides it and sends back only the areas.
  virtual void solve_areas(const VertexIndex* sources, int count, double bound, AreaLists& areas);

  // The engine's own shortest path s -> t, where it has a search of its own (the road index):
  // `arcs` (indices into graph.forward, in path order; empty when s == t or t is unreachable) and
  // `cost` (kInfinity when unreachable). Where several paths tie it is the engine's pick, not the
  // predecessor rule's. False when the engine has none (the default).
  virtual bool own_path(VertexIndex s, VertexIndex t, std::vector<ArcIndex>& arcs, double* cost) {
    (void)s, (void)t, (void)arcs, (void)cost;
    return false;
  }

  // Distances from s found vertex by vertex, where the engine can without a whole row (the road
  // index settles only the ranks an asked distance depends on): a path's tracing by the predecessor
  // rule reads a few dozen (trace_strict_path), where a row is every vertex. Null where it cannot
  // (the default). The engine must outlive what it returns.
  virtual std::unique_ptr<SourceDistances> source_distances(VertexIndex s) {
    (void)s;
    return nullptr;
  }

  // A kept engine (EngineCache) serves a later call: that call's cancel token and memory budget
  // replace the ones it was created with. Engines that hold other engines pass them on.
  virtual void rebind(const EngineOptions& options) {
    options_.cancel = options.cancel;
    options_.budget = options.budget;
  }

  const EngineReport& report() const { return report_; }
  const Graph& graph() const { return graph_; }
  const EngineOptions& options() const { return options_; }

 protected:
  // The host-side predecessor pass over rows an engine filled with distances.
  void fill_predecessors_on_host(const SolveRequest& request);

  const Graph& graph_;
  EngineOptions options_;
  EngineReport report_;
};

// Engines kept between calls on the same kept graph, so that a GPU engine's device copy of the
// graph is uploaded once per session rather than once per call. Holds the last engine a call
// gave back, under a key naming the engine and its settings; an engine taken out belongs to the
// call until it is given back (only after a call that ended cleanly).
class EngineCache {
 public:
  // The kept engine when its key matches; otherwise frees it (one engine per graph at a time,
  // so what a session holds on the device stays bounded) and returns null.
  std::unique_ptr<ShortestPathEngine> take(const std::string& key) {
    if (key != key_) {
      clear();
      return nullptr;
    }
    key_.clear();
    return std::move(engine_);
  }
  void keep(std::string key, std::unique_ptr<ShortestPathEngine> engine) {
    key_ = std::move(key);
    engine_ = std::move(engine);
  }
  void clear() {
    engine_.reset();
    key_.clear();
  }
  bool empty() const { return engine_ == nullptr; }
  // The kept engine, still owned by the cache (null: none).
  const ShortestPathEngine* peek() const { return engine_.get(); }

 private:
  std::string key_;
  std::unique_ptr<ShortestPathEngine> engine_;
};

// One entry of the engine table.
struct EngineInfo {
  const char* name;
  Device device;
  bool single_source;  // selectable by gpu_routing.sssp_algorithm
  bool many_source;    // selectable by gpu_routing.apsp_algorithm
  bool dense;          // works on a V x V matrix (memory grows as V^2)
  const char* description;
  std::unique_ptr<ShortestPathEngine> (*create)(const Graph& graph, const EngineOptions& options);
  // Bytes the engine allocates for `graph` with batches of `batch` sources (host and device).
  std::size_t (*estimate_bytes)(const Graph& graph, int batch);
  // Kept between calls on a kept graph (EngineCache) although it runs on the CPU: what it makes
  // on its first call (the road index) costs far more than a call. GPU engines always are.
  bool kept_with_graph = false;
};

// Every engine this build has: the CPU engines, then the GPU engines when built with CUDA.
const std::vector<EngineInfo>& engine_table();
const EngineInfo* find_engine(const std::string& name, Device device);
// Names of the engines (for the settings' documentation and gpu_routing_info()).
std::vector<std::string> engine_names(bool single_source, bool many_source);

// Defined by src/core/cpu/cpu_engines.cpp and by kernels/ (or its stub when built without CUDA).
const std::vector<EngineInfo>& cpu_engine_table();
const std::vector<EngineInfo>& gpu_engine_table();

}  // namespace gpu_routing
