// One SQL call's work, PostgreSQL-free: build the graph from the edge arrays, pick the engine,
// run it over batches of sources, and turn distances into result rows in the order the SQL
// functions return them. The PostgreSQL layer reads the arguments and the edges before, and
// writes each batch's rows into the result between batches (so memory stays bounded by a batch).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "engine/engine.hpp"
#include "choice/engine_select.hpp"
#include "base/graph.hpp"
#include "service/service_client.hpp"
#include "cpu/service_area.hpp"

namespace gpu_routing {

enum class CallKind {
  kSsspOne,     // gpu_sssp(edges, source): node, distance, predecessor, edge
  kSsspMany,    // gpu_sssp(edges, sources[]): source, node, distance, predecessor, edge
  kPaths,       // gpu_path, every shape: path rows per (source, target)
  kCostMatrix,  // gpu_apsp(edges, sources[], targets[]): start_vid, end_vid, agg_cost
  kAllPairs,    // gpu_apsp(edges): start_vid, end_vid, agg_cost
  // gpu_driving_distance(edges, start(s), distance): start_vid, node, edge, cost, agg_cost
  kServiceArea,
};

class RowDestinations;

struct CallOptions {
  DeviceSetting device = DeviceSetting::kAuto;
  std::string sssp_algorithm = "auto";
  std::string apsp_algorithm = "auto";
  EngineOptions engine;
  bool directed = true;
  bool many_source = false;  // the SQL shape takes many sources: apsp_algorithm applies
  // Kept graphs: GPU engines are taken from and given back to this cache (null: none kept).
  EngineCache* engine_cache = nullptr;
  // The GPU service (null: none): engines it serves run there, not in this process.
  RemoteEngines* remote = nullptr;
  // A kept graph's image in shared memory, named for the service (empty: the call's own graph,
  // which the service engine publishes itself).
  std::string kept_image_segment;
  // Its road index's image in shared memory (with engine.road_index), for the service's cch.
  std::string kept_index_segment;
  std::size_t kept_index_bytes = 0;
  // A kept graph's far_arc_share(), measured once when it was kept (negative: measure it here).
  double kept_far_arc_share = -1;
  // kCostMatrix / kAllPairs: one row per source holding its costs to every column (the targets in
  // the order given, or every vertex by ascending id) instead of one row per pair.
  bool cost_arrays = false;
  // With cost_arrays: the bytes (a multiple of 8) its sender puts before each array's costs (a
  // tuple's header). Where the engine's rows are the arrays and it takes a row stride, that much
  // room is left before each row, so each array is written where it is sent from. 0: no room.
  std::size_t cost_array_row_prefix = 0;
  // With cost_arrays: memory of the caller's where each array goes (null: the call's own buffers).
  // Where the engine writes whole arrays in place (the CPU's road index, every column or the
  // targets in their given order), each batch's rows are asked for before the batch starts and
  // the engine writes them there: the caller sends them from where they lie, with no copy.
  RowDestinations* row_destinations = nullptr;
  // kPaths on an engine with its own path search (the road index): its pick where shortest paths
  // tie, one query per pair, instead of a tree and the common predecessor rule.
  bool index_paths_hierarchy = false;
  // The machine's speeds for auto's estimates (null: auto decides by the size rules alone).
  const MachineSpeeds* speeds = nullptr;
  // kServiceArea: the areas' distance, and whether each vertex goes to its nearest start only.
  double service_distance = 0;
  bool equicost = false;
};

// Where a call's cost arrays are written (CallOptions::row_destinations): the caller's memory, a
// row per source. take() is called on the thread that calls RoutingCall::next_batch() and
// batch_ready() (the caller's own), before the batch whose rows it gives starts; the batch's
// thread then writes the rows, and the caller reads them once next_batch() has handed the batch
// over. The caller keeps the memory until then, and for as long as a batch may be in flight
// (RoutingCall::abandon_batch()).
class RowDestinations {
 public:
  virtual ~RowDestinations() = default;
  // `count` rows of `width` doubles each: rows[i] gets where row i's costs go (8-byte aligned).
  // false: none given (the call's own buffers serve this batch). Must not throw.
  virtual bool take(int count, std::size_t width, double** rows) noexcept = 0;
};

// A batch's rows, which the engine fills whole before anything reads them: allocated without the
// zero fill of a std::vector, so that preparing a call touches none of it on the backend's own
// thread (a GPU service batch holds up to 1 GB of rows; zeroing 490 MB of them in prepare() held
// a cancel for 1.2 s, out of reach of the cancel checks). The engine's batch thread, which polls
// the cancel, touches it first.
template <typename T>
using RowBuffer = std::vector<T, UninitializedAllocator<T, HugePageAdvisedMemory>>;

// Rows of one batch, column by column; which columns are filled depends on the CallKind.
struct ResultBatch {
  std::vector<std::int64_t> start_vid, end_vid, node, edge, predecessor;
  std::vector<std::int32_t> path_seq;
  std::vector<double> cost, agg_cost;  // kSssp*: agg_cost holds the distance
  std::vector<char> has_predecessor;   // kSssp*: false for the source row (predecessor, edge NULL)
  // cost_arrays: array_costs holds rows() x array_width costs, row by row (infinity:
  // unreachable), and may hold more (its size is not the row count). Where a row of the engine's
  // output is already the array (every vertex, or the targets in their given order), the engine's
  // buffer itself is handed over, not copied: a call's rows rotate through three buffers.
  RowBuffer<double> array_costs;
  std::size_t array_width = 0;
  // Where CallOptions::cost_array_row_prefix left room: row r's costs start at
  // array_costs.data() + array_row_prefix + r * (array_row_prefix + array_width), and the
  // array_row_prefix doubles before them are the sender's to fill. 0: rows packed.
  std::size_t array_row_prefix = 0;
  // Where CallOptions::row_destinations gave the rows: row r's costs are at array_rows[r] (the
  // caller's memory; array_costs unused). Empty otherwise.
  std::vector<double*> array_rows;
  std::size_t rows() const { return array_width != 0 ? start_vid.size() : agg_cost.size(); }
  void clear();
};

struct CallSummary {
  std::string device;     // "CPU, 2 threads" / "NVIDIA H100 80GB HBM3 (device 0)"
  std::string algorithm;  // engine name
  std::string reason;     // why that engine
  std::string notes;
  std::int64_t vertices = 0;
  std::int64_t arcs = 0;
  std::int64_t sources = 0;
  double build_ms = 0;
  double compute_ms = 0;   // engine and path tracing, transfers included
  double transfer_ms = 0;  // part of compute_ms: host<->device copies
  std::int64_t rounds = 0;
  // Through the GPU service: requests that shared the launch (0: not through the service) and
  // how long the requests waited for it, summed over batches.
  int service_batch_size = 0;
  double service_wait_ms = 0;
};

// Runs a call's batches one after another on a thread of the process's own. A thread per batch
// (std::async) gave OpenMP a new team for every batch: on 2 cores the all-pairs of 4096 vertices
// took 2.3x the time of the engine alone. A thread per call cost a short call the thread's
// creation and its OpenMP team's (clone3 alone was 9% of a backend's time under pgbench, paths on
// a kept graph at 0.5 ms a call): the thread is borrowed from a pool that keeps it parked
// between calls, with its team. It is made with every signal blocked, so PostgreSQL's handlers
// stay on the backend's own thread.
class BatchThread {
 public:
  BatchThread() = default;
  BatchThread(const BatchThread&) = delete;
  BatchThread& operator=(const BatchThread&) = delete;
  ~BatchThread();  // waits for a job in flight, then gives the thread back to the pool
  void start(std::function<void()> job);  // when !valid()
  // Runs the job now, on the calling thread (with every signal blocked, as the batch thread's):
  // for a job shorter than two thread wake-ups. What it throws comes out of get().
  void run_here(std::function<void()> job);
  bool valid() const { return valid_; }  // a job was started and not yet collected by get()
  bool wait_for(int ms);                 // true once the job is done
  void wait();
  void get();  // waits, then rethrows what the job threw

  struct Worker;  // a pooled thread and the job it runs (routing_call.cpp)

 private:
  Worker* worker_ = nullptr;  // borrowed on the first start()
  bool valid_ = false;
  bool ran_here_ = false;  // the job in hand ran on the calling thread (run_here)
  std::exception_ptr here_error_;
};

class RoutingCall {
 public:
  // Checks the graph's memory against the budget, then builds it. Throws RoutingError.
  RoutingCall(CallKind kind, const EdgeArrays& edges, const CallOptions& options,
              const gpu::Availability& gpus);
  // On a graph built before (a kept graph): nothing is built; `kept_graph` must outlive the call
  // and carry its reversed CSR. Its directedness is the graph's own.
  RoutingCall(CallKind kind, const Graph& kept_graph, const CallOptions& options,
              const gpu::Availability& gpus);
  ~RoutingCall();

  // Which sources and targets. Ids not in the graph are dropped, so they give no rows (as
  // pgr_dijkstra and pgr_dijkstraCost; pgr_drivingDistance alone returns a root row for a source
  // outside the graph); duplicates are merged; results come out in ascending (source, target)
  // order.
  void set_sources(const std::int64_t* ids, std::size_t count);  // kSsspMany, kCostMatrix, kPaths
  void set_targets(const std::int64_t* ids, std::size_t count);  // kCostMatrix, kPaths
  // cost_arrays: the columns, in this order (duplicates kept; an id not in the graph is a column
  // of infinities). Without it (targets NULL, all pairs) the columns are every vertex by id.
  void set_array_columns(const std::int64_t* ids, std::size_t count);
  void set_all_targets();  // kCostMatrix with targets NULL
  void set_pairs(const std::int64_t* sources, const std::int64_t* targets,
                 std::size_t count);  // combinations (kPaths, kCostMatrix)
  // kServiceArea: the starts as given, in order, duplicates kept; an id not in the graph gets its
  // root row alone (as pgr_drivingDistance).
  void set_starts(const std::int64_t* ids, std::size_t count);
  void set_all_pairs();  // kAllPairs

  // Selects and creates the engine after checking the whole call's memory. Call once, after the
  // sources and targets are set.
  void prepare();
  // What prepare() counted against max_memory: graph, engine, batch buffers, result matrix.
  std::size_t prepared_bytes() const { return prepared_bytes_; }
  // Memory the caller holds for result rows (the tuplestore's in-memory part), counted with the
  // traced path rows of a batch so that everything together stays within max_memory.
  void reserve_result_rows(std::size_t bytes) { result_rows_bytes_ = bytes; }
  // Fills `batch` with the rows of the next batch of sources; false when there are no more.
  // Batches are computed one ahead on a thread of their own (signals blocked, no PostgreSQL),
  // so the engine works on batch k + 1 while the caller writes the rows of batch k.
  bool next_batch(ResultBatch& batch);
  // Starts the next batch if none is in flight and waits up to wait_ms for it; true when
  // next_batch() will not block. The caller checks for a cancel between short waits, so a cancel
  // never waits for a whole batch (the batch itself stops at the engine's next poll).
  bool batch_ready(int wait_ms);
  // Stops the batch in flight, if any, and waits for it to end (as the destructor does; the call
  // computes nothing more): for a caller that must free the memory a batch may be writing
  // (CallOptions::row_destinations) before the call itself goes, on an error. Does not throw.
  void abandon_batch() noexcept;

  const Graph& graph() const { return *graph_; }
  const CallSummary& summary() const { return summary_; }
  // Whether the engine writes the cost arrays into the caller's rows itself (after prepare()),
  // rather than the call gathering them there from its own buffer.
  bool engine_writes_caller_rows() const { return engine_writes_caller_rows_; }

  // For progress reports (gpu_routing_progress), read by the caller's thread between waits.
  enum class WorkStage : int { kIdle = 0, kSolving = 1, kTracing = 2 };
  WorkStage work_stage() const { return work_stage_.load(std::memory_order_relaxed); }
  std::size_t source_count() const { return source_indices_.size(); }
  std::size_t sources_delivered() const { return sources_delivered_; }

 private:
  // Starts the next batch unless one is in flight; false when there is none left to compute.
  bool batch_in_flight();
  void launch_next_batch();
  // `rows`: the batch's destinations (CallOptions::row_destinations), or empty.
  void compute_batch(std::size_t first, int count, ResultBatch& batch,
                     const std::vector<double*>& rows);
  void solve_batch(std::size_t first, int count, const std::vector<double*>& rows);
  // The GPU service stopped under a call with device = auto: the rest of the call runs on the CPU
  // engine in this process (from the batch that failed on).
  void continue_on_cpu(const RoutingError& why);
  void solve_locally(const SolveRequest& request);
  // The request's rows go to the call's own buffer (distances_, with the row prefix and stride).
  void write_into_call_rows(SolveRequest& request);
  // Whether engine_ can write the cost arrays into the caller's rows itself: in their columns'
  // order as given (array_slots_), or as solved where that is the order.
  bool engine_can_write_caller_rows() const;
  // engine_ for `info`: the GPU service's, a kept one, or made here.
  void create_engine(const EngineInfo& info);
  // What auto estimates from: this call's shape and the state of the devices.
  AutoCosts auto_costs(const ProblemShape& shape) const;
  void emit_sssp_rows(std::size_t first, int count, ResultBatch& batch);
  void emit_path_rows(std::size_t first, int count, ResultBatch& batch);
  // Every 256 traced paths: a cancel check, and the rows so far within max_memory.
  void check_path_rows(int count, const ResultBatch& batch);
  // One source's paths traced by the GPU service (only the paths cross, not the row); false
  // (nothing emitted) when the engine is not the service's or the paths did not fit.
  bool emit_traced_path_rows(std::size_t source_slot, ResultBatch& batch);
  // One source's few paths from distances the engine finds vertex by vertex (the road index),
  // without a whole row; false (nothing emitted) where it cannot or gives up (see the .cpp).
  bool emit_settled_path_rows(std::size_t source_slot, ResultBatch& batch);
  // index_paths_hierarchy: the engine's own paths; false (nothing emitted) when it has none.
  bool emit_index_path_rows(std::size_t first, int count, ResultBatch& batch);
  void emit_cost_rows(std::size_t first, int count, ResultBatch& batch);
  // kServiceArea (service_area_call.cpp): prepare() for it, and a batch of starts' rows.
  void prepare_service_areas();
  // The same on the GPU (gpu_routing.device = gpu): the engine's whole trees, cut to the distance
  // where they are swept; `host_bytes` what the rule's threads hold.
  void prepare_gpu_service_areas(int threads, std::size_t host_bytes);
  void emit_service_area_rows(std::size_t first, int count, ResultBatch& batch);
  void emit_cost_arrays(std::size_t first, int count, ResultBatch& batch,
                        const std::vector<double*>& rows);
  // Whether cost arrays go into CallOptions::row_destinations, and whether the engine writes
  // them there itself (else they are gathered there from its rows); set by prepare().
  bool rows_to_caller_ = false;
  bool engine_writes_caller_rows_ = false;

  CallKind kind_;
  CallOptions options_;
  const gpu::Availability& gpus_;
  Graph owned_graph_;                                 // built by this call from edge arrays
  const Graph* graph_;                                // owned_graph_, or a kept graph
  std::vector<VertexIndex> source_indices_;           // ascending
  std::vector<std::vector<VertexIndex>> targets_of_;  // per source (pairs), or empty
  std::vector<VertexIndex> shared_targets_;           // same targets for every source
  bool all_targets_ = false;
  std::unique_ptr<ShortestPathEngine> engine_;
  bool remote_engine_ = false;   // engine_ forwards to the GPU service
  ProblemShape shape_;           // what prepare() selected the engine for
  RowBuffer<double> full_rows_;  // continue_on_cpu: full rows when compact ones were planned
  int batch_size_ = 1;
  bool run_here_ = false;  // the call's one batch runs on the calling thread (prepare())
  std::size_t next_source_ = 0;
  RowBuffer<double> distances_;
  RowBuffer<ArcIndex> predecessors_;
  std::vector<VertexIndex> batch_targets_;
  bool compact_rows_ = false;  // distances_ holds target columns only (cost matrices)
  std::vector<std::int64_t> array_column_ids_;  // set_array_columns: the ids, as given
  bool array_columns_given_ = false;
  std::vector<std::int64_t>
      array_slots_;                    // per column, its place in a row of distances_ (-1: none)
  bool array_slots_identity_ = false;  // array_slots_ is 0, 1, ..., row_width_ - 1
  std::size_t row_width_ = 0;          // entries per row of distances_
  // Doubles left before each row of distances_ (CallOptions::cost_array_row_prefix), and the
  // rows' distance apart: row_width_ plus that.
  std::size_t row_prefix_ = 0;
  std::size_t row_stride_ = 0;
  std::size_t distance_cells() const { return static_cast<std::size_t>(batch_size_) * row_stride_; }
  std::size_t prepared_bytes_ = 0;  // what prepare() counted against max_memory
  // kServiceArea: the starts' ids as given (source_indices_ holds their vertices, kNoVertex for an
  // id not in the graph), and the search.
  std::vector<std::int64_t> start_ids_;
  std::unique_ptr<ServiceAreaSearch> service_areas_;
  double area_rows_ms_ = 0;            // the areas' rows made into batches, summed
  std::size_t result_rows_bytes_ = 0;  // reserve_result_rows()
  std::string engine_key_;             // the engine's key in options_.engine_cache
  bool finished_ = false;              // every batch was delivered: the engine may be kept
  EngineReport report_at_start_;       // a kept engine's report sums earlier calls too
  std::atomic<bool> abandon_{false};   // raised by the destructor: stop the batch in flight
  std::atomic<WorkStage> work_stage_{WorkStage::kIdle};  // what the batch thread is doing
  std::size_t sources_delivered_ = 0;  // sources whose rows next_batch() has handed out
  BatchThread pending_;                // the batch being computed ahead, into staging_
  ResultBatch staging_;
  CallSummary summary_;
};

// Rows a kAllPairs / kCostMatrix call returns at most, for gpu_routing.max_memory: the caller
// counts them as a dense float64 matrix.
std::size_t result_matrix_bytes(std::size_t sources, std::size_t targets);

}  // namespace gpu_routing
