#include "call/routing_call.hpp"

#include <algorithm>
#include <cstring>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <unistd.h>

#include "road_index/cch.hpp"
#include "engine/compact_rows.hpp"
#include "base/parallel.hpp"
#include "base/parallel_for.hpp"
#include "base/predecessors.hpp"

namespace gpu_routing {

namespace {

// Rows of distances (and predecessors) held at once: batches are cut to stay under this.
constexpr std::size_t kBatchRowBytes = std::size_t{512} << 20;
// Whole trees as arrays on the CPU: batches of about this many bytes of rows, so the next batch
// is computed while the backend writes this one and the two buffers they rotate through are faulted
// in once, small enough to stay in the heap that gpu_routing.retained_memory keeps (New York: 15
// trees a batch; 64 trees in one batch faulted in 135 MB of fresh pages each call and wrote nothing
// until all were computed).
constexpr std::size_t kTreeArrayBatchBytes = std::size_t{32} << 20;

void sort_unique(std::vector<VertexIndex>& v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
}

const char* kind_name(CallKind kind) {
  switch (kind) {
    case CallKind::kSsspOne:
    case CallKind::kSsspMany:
      return "gpu_sssp";
    case CallKind::kPaths:
      return "gpu_path";
    case CallKind::kServiceArea:
      return "gpu_driving_distance";
    default:
      return "gpu_apsp";
  }
}

}  // namespace

void ResultBatch::clear() {
  start_vid.clear();
  end_vid.clear();
  node.clear();
  edge.clear();
  predecessor.clear();
  path_seq.clear();
  cost.clear();
  agg_cost.clear();
  has_predecessor.clear();
  array_width = 0;  // array_costs keeps its size and pages: the next batch reuses them
  array_row_prefix = 0;
  array_rows.clear();
}

std::size_t result_matrix_bytes(std::size_t sources, std::size_t targets) {
  return saturating_multiply(saturating_multiply(sources, targets), sizeof(double));
}

RoutingCall::RoutingCall(CallKind kind, const EdgeArrays& edges, const CallOptions& options,
                         const gpu::Availability& gpus)
    : kind_(kind), options_(options), gpus_(gpus), graph_(&owned_graph_) {
  // Engines also stop when this call abandons a batch computed ahead.
  options_.engine.cancel = CancelToken(options.engine.cancel.poll(), &abandon_);
  options_.engine.budget.require(
      estimate_graph_bytes(edges.count, options.directed, edges.reverse_costs != nullptr),
      std::string(kind_name(kind)) + " loading " + std::to_string(edges.count) + " edges");
  Stopwatch watch;
  owned_graph_ = build_graph(edges, options.directed, options_.engine.cancel);
  summary_.build_ms = watch.elapsed_ms();
  summary_.vertices = graph_->vertex_count();
  summary_.arcs = graph_->arc_count();
}

RoutingCall::RoutingCall(CallKind kind, const Graph& kept_graph, const CallOptions& options,
                         const gpu::Availability& gpus)
    : kind_(kind), options_(options), gpus_(gpus), graph_(&kept_graph) {
  options_.engine.cancel = CancelToken(options.engine.cancel.poll(), &abandon_);
  summary_.vertices = graph_->vertex_count();
  summary_.arcs = graph_->arc_count();
}

RoutingCall::~RoutingCall() {
  // Runs on success and when PostgreSQL unwinds an error: a batch still in flight is told to stop
  // and waited for, since it uses this object.
  abandon_batch();
  // Only an engine whose call ended cleanly is kept: a cancelled or failed one may be mid-way.
  if (finished_ && engine_ != nullptr && !engine_key_.empty()) {
    try {
      options_.engine_cache->keep(engine_key_, std::move(engine_));
    } catch (...) {
      // Keeping is an optimisation; the engine is simply freed.
    }
  }
}

void RoutingCall::set_sources(const std::int64_t* ids, std::size_t count) {
  source_indices_.clear();
  for (std::size_t i = 0; i < count; ++i) {
    VertexIndex v = graph_->vertices.find(ids[i]);
    if (v != kNoVertex) source_indices_.push_back(v);
  }
  sort_unique(source_indices_);
}

void RoutingCall::set_starts(const std::int64_t* ids, std::size_t count) {
  start_ids_.assign(ids, ids + count);
  source_indices_.clear();
  for (std::size_t i = 0; i < count; ++i) source_indices_.push_back(graph_->vertices.find(ids[i]));
}

void RoutingCall::set_targets(const std::int64_t* ids, std::size_t count) {
  shared_targets_.clear();
  for (std::size_t i = 0; i < count; ++i) {
    VertexIndex v = graph_->vertices.find(ids[i]);
    if (v != kNoVertex) shared_targets_.push_back(v);
  }
  sort_unique(shared_targets_);
  all_targets_ = false;
}

void RoutingCall::set_array_columns(const std::int64_t* ids, std::size_t count) {
  array_column_ids_.assign(ids, ids + count);
  array_columns_given_ = true;
  set_targets(ids, count);
}

void RoutingCall::set_all_targets() {
  all_targets_ = true;
}

void RoutingCall::set_pairs(const std::int64_t* sources, const std::int64_t* targets,
                            std::size_t count) {
  std::vector<std::pair<VertexIndex, VertexIndex>> pairs;
  pairs.reserve(count);
  for (std::size_t i = 0; i < count; ++i) {
    VertexIndex s = graph_->vertices.find(sources[i]);
    VertexIndex t = graph_->vertices.find(targets[i]);
    if (s != kNoVertex && t != kNoVertex) pairs.emplace_back(s, t);
  }
  std::sort(pairs.begin(), pairs.end());
  pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
  source_indices_.clear();
  targets_of_.clear();
  for (const auto& [s, t] : pairs) {
    if (source_indices_.empty() || source_indices_.back() != s) {
      source_indices_.push_back(s);
      targets_of_.emplace_back();
    }
    targets_of_.back().push_back(t);
  }
}

void RoutingCall::set_all_pairs() {
  source_indices_.resize(static_cast<std::size_t>(graph_->vertex_count()));
  for (VertexIndex v = 0; v < graph_->vertex_count(); ++v)
    source_indices_[static_cast<std::size_t>(v)] = v;
  all_targets_ = true;
}

void RoutingCall::prepare() {
  summary_.sources = static_cast<std::int64_t>(source_indices_.size());
  if (source_indices_.empty()) return;
  if (kind_ == CallKind::kServiceArea) {
    prepare_service_areas();
    return;
  }
  // Targets asked for, none of them in the graph: no rows, nothing to compute (an engine asked
  // for zero-width compact rows would have nowhere to put them).
  const bool takes_targets = kind_ == CallKind::kCostMatrix || kind_ == CallKind::kPaths;
  if (takes_targets && !all_targets_ && targets_of_.empty() && shared_targets_.empty()) return;
  const bool with_predecessors = kind_ == CallKind::kSsspOne || kind_ == CallKind::kSsspMany;
  const bool trace_paths = kind_ == CallKind::kPaths;

  // Many sources on every core of a machine of 8 or more: one core is left to the backend, which
  // writes a batch's rows while the engine computes the next. On the H100 host's 16 cores, all
  // pairs of a 4096-vertex graph as arrays took 200-266 ms with 16 threads and 158 ms with 15
  // (OpenMP's idle workers spin, and the writer waited for a core). A thread count that was set
  // (gpu_routing.threads) is kept.
  if (options_.engine.threads <= 0 && options_.many_source && source_indices_.size() > 1)
    options_.engine.threads = threads_leaving_a_writer_core(resolve_thread_count(0));

  ProblemShape shape;
  shape.vertices = graph_->vertex_count();
  shape.arcs = graph_->arc_count();
  shape.source_count = static_cast<int>(std::min<std::size_t>(source_indices_.size(), 1 << 30));
  shape.all_pairs = kind_ == CallKind::kAllPairs;
  shape.many_source = options_.many_source;
  shape.road_index = options_.engine.road_index != nullptr;
  shape.road_index_pending = graph_ != &owned_graph_ && options_.engine.road_index == nullptr;
  shape.compact_targets = kind_ == CallKind::kCostMatrix && !all_targets_ && targets_of_.empty();
  shape_ = shape;
  const std::string& algorithm =
      options_.many_source ? options_.apsp_algorithm : options_.sssp_algorithm;
  // The estimates, for auto, and for a named engine both devices have where the device is auto.
  const bool named_on_both = options_.device == DeviceSetting::kAuto && gpus_.usable &&
                             find_engine(algorithm, Device::kCpu) != nullptr &&
                             find_engine(algorithm, Device::kGpu) != nullptr;
  std::unique_ptr<AutoCosts> costs;
  const bool auto_instead = algorithm == "cch" && shape.road_index_pending;  // select_engine
  if (options_.speeds != nullptr &&
      (algorithm.empty() || algorithm == "auto" || named_on_both || auto_instead))
    costs = std::make_unique<AutoCosts>(auto_costs(shape));
  EngineSelection selection = select_engine(options_.device, algorithm, shape, gpus_, costs.get());
  summary_.algorithm = selection.engine->name;
  summary_.reason = selection.reason;

  // The whole call's memory, before the engine allocates anything.
  const std::size_t vertex_count = static_cast<std::size_t>(graph_->vertex_count());
  const std::size_t row_bytes =
      vertex_count * (sizeof(double) + (with_predecessors ? sizeof(ArcIndex) : 0));
  const std::size_t rows_cap =
      std::max<std::size_t>(1, kBatchRowBytes / std::max<std::size_t>(row_bytes, 1));
  std::size_t provisional_batch = std::min(source_indices_.size(), rows_cap);
  std::size_t needed =
      graph_->forward.memory_bytes() * ((with_predecessors || trace_paths) ? 2 : 1);
  needed = saturating_add(
      needed, selection.engine->estimate_bytes(*graph_, static_cast<int>(provisional_batch)));
  needed = saturating_add(needed, saturating_multiply(provisional_batch, row_bytes));
  std::string what =
      std::string(kind_name(kind_)) + " over " + std::to_string(vertex_count) + " vertices";
  if (kind_ == CallKind::kAllPairs) {
    needed = saturating_add(needed, result_matrix_bytes(vertex_count, vertex_count));
    what += " (its " + std::to_string(vertex_count) + " x " + std::to_string(vertex_count) +
            " result included)";
  } else if (kind_ == CallKind::kCostMatrix) {
    std::size_t targets = all_targets_ ? vertex_count : shared_targets_.size();
    std::size_t rows_of_sources = source_indices_.size();
    if (!targets_of_.empty()) {  // combinations: as many results as pairs
      targets = 0;
      for (const auto& of_source : targets_of_) targets += of_source.size();
      rows_of_sources = 1;
    }
    needed = saturating_add(needed, result_matrix_bytes(rows_of_sources, targets));
    what += " (its " + std::to_string(source_indices_.size()) + " x " + std::to_string(targets) +
            " result included)";
  }
  options_.engine.budget.require(needed, what);
  prepared_bytes_ = needed;

  // A kept graph carries its reversed CSR; one built for this call gets it here.
  if ((with_predecessors || trace_paths) && !has_reverse(*graph_)) ensure_reverse(owned_graph_);
  Stopwatch watch;
  create_engine(*selection.engine);
  summary_.compute_ms += watch.elapsed_ms();
  work_stage_.store(WorkStage::kIdle, std::memory_order_relaxed);
  summary_.device = engine_->report().device_name;
  // A cost matrix to chosen targets needs only their columns; engines that can, return just those.
  compact_rows_ = kind_ == CallKind::kCostMatrix && !all_targets_ && targets_of_.empty() &&
                  engine_->supports_compact_targets();
  row_width_ = compact_rows_ ? shared_targets_.size() : vertex_count;
  // Rows of row_width_ distances that `bytes` hold (at least one).
  const auto rows_in = [&](std::size_t bytes) {
    return std::max<std::size_t>(1, bytes / std::max<std::size_t>(row_width_ * sizeof(double), 1));
  };
  const bool local_cpu = engine_->device() == Device::kCpu && !remote_engine_;
  std::size_t batch_cap = rows_cap;
  if (compact_rows_)
    batch_cap = rows_in(kBatchRowBytes);
  else if (options_.cost_arrays && local_cpu)
    batch_cap = rows_in(kTreeArrayBatchBytes);
  std::size_t preferred = static_cast<std::size_t>(
      std::max(1, compact_rows_ ? engine_->preferred_batch_size_for_rows(row_width_)
                                : engine_->preferred_batch_size()));
  // Cost-matrix rows on the CPU (a bucket row takes tens of microseconds): up to 8 MB of rows a
  // batch, so that a batch is work enough for the engine to spread over every thread. In
  // batches of 16 sources a thread each batch of New York 1000 x 1000 on 2 cores was under the
  // engine's threshold for threads and ran on one (60-70 ms; 26 ms in one batch). Larger batches
  // fault in their fresh rows on every batch: 3000 x 3000 in 32 MB batches took 64 ms on the
  // H200 host against 45 in batches of 240 rows.
  constexpr std::size_t kCostMatrixBatchBytes = std::size_t{8} << 20;
  if (compact_rows_ && local_cpu) preferred = std::max(preferred, rows_in(kCostMatrixBatchBytes));
  batch_size_ = static_cast<int>(
      std::max<std::size_t>(1, std::min({preferred, batch_cap, source_indices_.size()})));
  row_stride_ = row_width_;
  // One source's cells or few paths on the CPU's road index (microseconds): on the calling
  // thread. Handing such a call to the batch thread and back (two thread wake-ups) cost more than
  // the query itself (New York, 2-core machine: a quarter of a one-pair call). Anything longer
  // runs on the batch thread, so that a cancel lands while it computes.
  constexpr std::size_t kPathsHere = 16;
  run_here_ = source_indices_.size() == 1 && !remote_engine_ && engine_->device() == Device::kCpu &&
              std::strcmp(engine_->name(), "cch") == 0 &&
              (compact_rows_ || (kind_ == CallKind::kPaths && !all_targets_ &&
                                 shared_targets_.size() <= kPathsHere));
  if (options_.cost_arrays) {
    // Where each column's cost sits in a row of distances_: compact rows hold shared_targets_
    // (sorted), full rows every vertex (indices are in ascending id order).
    array_slots_.clear();
    if (array_columns_given_) {
      array_slots_.reserve(array_column_ids_.size());
      for (std::int64_t id : array_column_ids_) {
        const VertexIndex v = graph_->vertices.find(id);
        std::int64_t slot = -1;
        if (v != kNoVertex)
          slot = compact_rows_
                     ? std::lower_bound(shared_targets_.begin(), shared_targets_.end(), v) -
                           shared_targets_.begin()
                     : v;
        array_slots_.push_back(slot);
      }
    } else {
      array_slots_.resize(vertex_count);
      for (std::size_t v = 0; v < vertex_count; ++v) array_slots_[v] = static_cast<std::int64_t>(v);
    }
    array_slots_identity_ = array_slots_.size() == row_width_;
    for (std::size_t c = 0; array_slots_identity_ && c < array_slots_.size(); ++c)
      array_slots_identity_ = array_slots_[c] == static_cast<std::int64_t>(c);
    // The engine writes each array where the backend sends it from: room for the tuple's header
    // before each row. Otherwise each row was copied into a formed tuple, then by the tuplestore
    // (New York, 64 trees as arrays: 135 MB twice over; memory bandwidth on one core).
    if (array_slots_identity_ && options_.cost_array_row_prefix % sizeof(double) == 0 &&
        engine_->supports_row_stride()) {
      row_prefix_ = options_.cost_array_row_prefix / sizeof(double);
      row_stride_ = row_prefix_ + row_width_;
    }
    // Better still, each array goes straight into the caller's memory for it (the tuple the
    // backend sends), written on the engine's threads: the backend's one-core copy of every row
    // into the tuplestore was the floor of big answers (New York, H200 host: 64 trees' 135 MB
    // took 31-36 ms to copy against 16-18 ms to compute). The engine writes them there itself
    // where its rows are the arrays (the GPU service's client copies them there out of the
    // exchange segment); otherwise (columns in another order, repeated, or not in the graph)
    // they are gathered there from its rows, on every thread.
    rows_to_caller_ = options_.row_destinations != nullptr;
    engine_writes_caller_rows_ = rows_to_caller_ && engine_can_write_caller_rows();
  }
  distances_.resize(distance_cells());
  if (with_predecessors) predecessors_.resize(static_cast<std::size_t>(batch_size_) * vertex_count);
}

void RoutingCall::create_engine(const EngineInfo& info) {
  // A kept graph's shared road index is mapped in this process: its CPU engine runs here. (The
  // GPU's cch goes to the service like every GPU engine, which maps the same index: a backend
  // under the service never opens a CUDA context.)
  const bool remote = options_.remote != nullptr && options_.remote->serves(info) &&
                      !(info.kept_with_graph && info.device == Device::kCpu &&
                        options_.engine.road_index != nullptr);
  if (remote) {
    engine_ = options_.remote->create(info, *graph_, options_.engine, options_.kept_image_segment,
                                      options_.kept_index_segment, options_.kept_index_bytes);
    remote_engine_ = true;
  } else if (options_.engine_cache != nullptr &&
             (info.device == Device::kGpu || info.kept_with_graph)) {
    engine_key_ = std::string(info.name) + "/" + std::to_string(options_.engine.threads) + "/" +
                  std::to_string(options_.engine.block_size) + "/" +
                  std::to_string(options_.engine.streams);
    engine_ = options_.engine_cache->take(engine_key_);
    if (engine_ != nullptr) {
      engine_->rebind(options_.engine);
      summary_.notes = info.device == Device::kGpu
                           ? "engine kept from an earlier call on this graph (device copy reused)"
                           : "engine kept from an earlier call on this graph";
    }
  }
  if (engine_ == nullptr) engine_ = info.create(*graph_, options_.engine);
  report_at_start_ = engine_->report();
}

AutoCosts RoutingCall::auto_costs(const ProblemShape& problem) const {
  AutoCosts costs;
  costs.speeds = *options_.speeds;
  CallCostShape& shape = costs.shape;
  const Graph& graph = *graph_;
  const bool kept = graph_ != &owned_graph_;
  const std::int64_t n = graph.vertex_count();
  shape.vertices = graph.vertex_count();
  shape.arcs = graph.arc_count();
  shape.sources = static_cast<std::int64_t>(source_indices_.size());
  shape.all_pairs = problem.all_pairs;
  shape.compact_targets = problem.compact_targets;
  const double S = static_cast<double>(shape.sources);
  if (!targets_of_.empty()) {
    std::size_t pairs = 0;
    for (const auto& of_source : targets_of_) pairs += of_source.size();
    shape.targets_per_source =
        std::max<std::int64_t>(1, static_cast<std::int64_t>(pairs / targets_of_.size()));
  } else if (!all_targets_ && (kind_ == CallKind::kCostMatrix || kind_ == CallKind::kPaths)) {
    shape.targets_per_source = static_cast<std::int64_t>(shared_targets_.size());
  }
  const double width =
      shape.targets_per_source > 0 ? static_cast<double>(shape.targets_per_source) : n;
  switch (kind_) {
    case CallKind::kSsspOne:
    case CallKind::kSsspMany:
      shape.result_rows = S * n;
      break;
    case CallKind::kPaths:  // rows per path: about the square root of a road network's size
      shape.result_rows = S * width * std::sqrt(static_cast<double>(n));
      break;
    default:
      // An array the backend copies costs it about a row per 16 costs; one written into its
      // tuple by the engine (or gathered there on every thread: row_destinations) about a row.
      shape.result_rows = !options_.cost_arrays                  ? S * width
                          : options_.row_destinations != nullptr ? S
                                                                 : S * (1 + width / 16);
  }
  shape.result_cells = S * (problem.compact_targets ? width : static_cast<double>(n));
  // A kept graph's share was measured when it was kept (else remembered by where its arrays are
  // mapped); a graph built for this call is sampled afresh (its memory is the call's).
  shape.far_fraction = !kept                              ? far_arc_share(graph.forward)
                       : options_.kept_far_arc_share >= 0 ? options_.kept_far_arc_share
                                                          : remembered_far_arc_share(graph.forward);
  const double v = static_cast<double>(n);
  shape.dense = static_cast<double>(graph.arc_count()) >= kAutoDenseDensity * v * v &&
                n <= kAutoDenseMaxVerticesGpu;
  // Rounds of Bellman-Ford style engines follow the hop depth: measured by one BFS where that
  // is cheap against the many sources' work.
  // Also where a road index for an edges_sql graph is a candidate (many sources: one BFS is
  // milliseconds against their searches); never on a kept graph's larger calls, which auto
  // answers in a few milliseconds.
  const bool index_candidate =
      !kept && options_.engine.road_index == nullptr && shape.sources >= 64;
  if (options_.many_source && shape.sources > 1 && (n <= 65536 || index_candidate))
    shape.hop_depth = remembered_hop_depth(graph.forward, source_indices_.front());
  if (options_.engine.road_index != nullptr) {
    shape.index_arcs = options_.engine.road_index->arc_count();
    // A large matrix's targets' closure, which the GPU's sweeps restrict themselves to: one walk
    // up the elimination tree from each target (New York, 10,000 targets: 67k ranks, well under
    // a millisecond), only where the GPU could take the call.
    constexpr double kClosureFromCells = 1e6;
    if (problem.compact_targets && gpus_.usable && !shared_targets_.empty() &&
        S * static_cast<double>(shared_targets_.size()) >= kClosureFromCells) {
      const Cch::Closure closure = options_.engine.road_index->ancestor_closure(
          shared_targets_.data(), static_cast<int>(shared_targets_.size()));
      shape.target_closure_ranks = closure.ranks;
      shape.target_closure_arcs = closure.arcs;
    }
    // A source's few paths settle only what they need: the index's own work for them, sampled
    // once per process (the grid's or a guess put New York's at 3x what it takes).
    if (kind_ == CallKind::kPaths && shape.sources <= 1 && shape.targets_per_source > 0 &&
        shape.targets_per_source <= kSettledPathTargets && has_reverse(graph)) {
      const SettledPathWork work =
          remembered_settled_path_work(*options_.engine.road_index, graph.reverse);
      shape.settled_first_path_work = work.first;
      shape.settled_further_path_work = work.further;
      shape.settled_path_unit_ns = work.ns_per_unit;
    }
  }
  shape.predecessors = kind_ == CallKind::kSsspOne || kind_ == CallKind::kSsspMany;
  shape.index_point_queries = kind_ == CallKind::kPaths && options_.index_paths_hierarchy;
  shape.kept_graph = kept;
  shape.paths = kind_ == CallKind::kPaths;

  DeviceState& state = costs.state;
  state.gpu_usable = gpus_.usable;
  state.cpu_threads = resolve_thread_count(options_.engine.threads);
  state.hardware_threads = resolve_thread_count(0);
  state.service = options_.remote != nullptr;
  state.context_open = !state.service && gpu::context_memory_bytes() > 0;
  if (state.service && kept)
    state.kept_engine = "*";  // the service keeps a kept graph's device copy for every engine
  else if (options_.engine_cache != nullptr && options_.engine_cache->peek() != nullptr)
    state.kept_engine = std::string(device_label(options_.engine_cache->peek()->device())) + " " +
                        options_.engine_cache->peek()->name();
  return costs;
}

void RoutingCall::solve_batch(std::size_t first, int count, const std::vector<double*>& rows) {
  SolveRequest request;
  request.sources = source_indices_.data() + first;
  request.source_count = count;
  if (!rows.empty() && engine_writes_caller_rows_) {
    request.row_pointers = rows.data();
    if (!array_slots_identity_) {
      request.row_columns = array_slots_.data();
      request.row_column_count = array_slots_.size();
    }
  } else {
    write_into_call_rows(request);
  }
  if (kind_ == CallKind::kSsspOne || kind_ == CallKind::kSsspMany) {
    request.predecessor_arcs = predecessors_.data();
  } else if (!all_targets_) {
    // Only the targets' columns are read: let engines that can stop early do so.
    batch_targets_.clear();
    if (targets_of_.empty()) {
      batch_targets_ = shared_targets_;
    } else {
      for (int i = 0; i < count; ++i)
        batch_targets_.insert(batch_targets_.end(),
                              targets_of_[first + static_cast<std::size_t>(i)].begin(),
                              targets_of_[first + static_cast<std::size_t>(i)].end());
      sort_unique(batch_targets_);
    }
    request.targets = batch_targets_.data();
    request.target_count = static_cast<int>(batch_targets_.size());
    request.compact_targets = compact_rows_;
  }
  if (!remote_engine_) {
    solve_locally(request);
    return;
  }
  try {
    engine_->solve(request);
  } catch (const RoutingError& error) {
    // kNoDevice from the service: it stopped (it restarts by itself). device = auto promises an
    // answer wherever one can be had; device = gpu promises the GPU, so it fails.
    if (error.kind() != ErrorKind::kNoDevice || options_.device != DeviceSetting::kAuto) throw;
    continue_on_cpu(error);
    if (request.row_pointers != nullptr && !engine_writes_caller_rows_) {
      // The CPU engine cannot write the caller's rows: it fills the call's, gathered from there.
      request.row_pointers = nullptr;
      request.row_columns = nullptr;
      request.row_column_count = 0;
      write_into_call_rows(request);
    }
    solve_locally(request);
  }
}

bool RoutingCall::engine_can_write_caller_rows() const {
  return engine_->supports_row_pointers() &&
         (array_slots_identity_ || engine_->supports_row_columns()) &&
         (!compact_rows_ || engine_->supports_compact_targets());
}

void RoutingCall::write_into_call_rows(SolveRequest& request) {
  request.distances = distances_.data() + row_prefix_;
  if (row_stride_ != row_width_) request.row_stride = row_stride_;
}

void RoutingCall::solve_locally(const SolveRequest& request) {
  if (!request.compact_targets || engine_->supports_compact_targets()) {
    engine_->solve(request);
    return;
  }
  // Compact rows were planned for the service's engine: the CPU engine fills whole rows, a few
  // sources at a time, and the targets' columns are taken from them.
  solve_compact_from_whole_rows(*engine_, request, full_rows_, std::size_t{64} << 20);
}

void RoutingCall::continue_on_cpu(const RoutingError& why) {
  const gpu::Availability none;
  const EngineSelection selection = select_engine(DeviceSetting::kCpu, "auto", shape_, none);
  engine_ = selection.engine->create(*graph_, options_.engine);
  remote_engine_ = false;
  engine_writes_caller_rows_ = engine_writes_caller_rows_ && engine_can_write_caller_rows();
  report_at_start_ = engine_->report();
  summary_.algorithm = selection.engine->name;
  summary_.reason += std::string("; ") + why.what() + ": the call went on with " +
                     selection.reason + " in this session";
}

bool RoutingCall::batch_in_flight() {
  if (engine_ == nullptr && service_areas_ == nullptr) return false;
  if (!pending_.valid()) {
    if (next_source_ >= source_indices_.size()) return false;
    launch_next_batch();
  }
  return true;
}

bool RoutingCall::next_batch(ResultBatch& batch) {
  batch.clear();
  if (!batch_in_flight()) {
    finished_ = true;
    return false;
  }
  pending_.get();  // rethrows what the batch threw (Cancelled, RoutingError, ...)
  std::swap(staging_, batch);
  sources_delivered_ = next_source_;
  if (next_source_ < source_indices_.size()) launch_next_batch();
  return true;
}

void RoutingCall::abandon_batch() noexcept {
  // As the destructor: the batch stops at its engine's next poll. The caller's own cancel may
  // not reach it any more (an ERROR clears the pending cancel as it raises it), and a batch that
  // builds an index first would otherwise run on for a second.
  abandon_.store(true);
  try {
    if (pending_.valid()) pending_.wait();
  } catch (...) {  // std::system_error from the mutex: nothing else can be done
  }
}

bool RoutingCall::batch_ready(int wait_ms) {
  if (!batch_in_flight()) return true;
  return pending_.wait_for(wait_ms);
}

void RoutingCall::launch_next_batch() {
  const std::size_t first = next_source_;
  const int count = static_cast<int>(
      std::min<std::size_t>(static_cast<std::size_t>(batch_size_), source_indices_.size() - first));
  next_source_ += static_cast<std::size_t>(count);
  std::vector<double*> rows;
  if (rows_to_caller_) {
    rows.resize(static_cast<std::size_t>(count));
    if (!options_.row_destinations->take(count, array_slots_.size(), rows.data())) rows.clear();
  }
  auto job = [this, first, count, rows = std::move(rows)] {
    compute_batch(first, count, staging_, rows);
  };
  if (run_here_)
    pending_.run_here(job);
  else
    pending_.start(job);
}

struct BatchThread::Worker {
  std::thread thread;
  std::mutex mutex;
  std::condition_variable changed;
  std::function<void()> job;
  bool has_job = false, done = true, stop = false;
  std::exception_ptr error;

  void loop() {
    std::unique_lock<std::mutex> lock(mutex);
    while (true) {
      changed.wait(lock, [this] { return has_job || stop; });
      if (!has_job) return;  // stopped
      std::function<void()> work = std::move(job);
      has_job = false;
      lock.unlock();
      std::exception_ptr failure;
      try {
        work();
      } catch (...) {
        failure = std::current_exception();
      }
      work = nullptr;  // what the job captured goes before its owner is told
      lock.lock();
      error = failure;
      done = true;
      changed.notify_all();
    }
  }
};

namespace {

// The process's parked batch threads. A backend runs one call at a time, so one thread is
// usually all there is; more are made only for calls that overlap (tests, calibration inside a
// call), and at most kIdleWorkers stay parked.
constexpr std::size_t kIdleWorkers = 2;

struct WorkerPool {
  std::mutex mutex;
  std::vector<BatchThread::Worker*> idle;
  pid_t pid = 0;
};

WorkerPool& worker_pool() {
  // Never destroyed: the parked threads end with the process, and exit() must not wait on them.
  static WorkerPool* pool = new WorkerPool();
  return *pool;
}

BatchThread::Worker* borrow_worker() {
  WorkerPool& pool = worker_pool();
  {
    std::lock_guard<std::mutex> lock(pool.mutex);
    // A forked child has none of its parent's threads: what the parent had parked is forgotten.
    if (pool.pid != getpid()) {
      pool.idle.clear();
      pool.pid = getpid();
    }
    if (!pool.idle.empty()) {
      BatchThread::Worker* worker = pool.idle.back();
      pool.idle.pop_back();
      return worker;
    }
  }
  auto* worker = new BatchThread::Worker();
  // The thread inherits a full signal mask: PostgreSQL's handlers stay on the backend's thread.
  SignalBlock block;
  worker->thread = std::thread(&BatchThread::Worker::loop, worker);
  return worker;
}

void return_worker(BatchThread::Worker* worker) {
  WorkerPool& pool = worker_pool();
  {
    std::lock_guard<std::mutex> lock(pool.mutex);
    if (pool.pid == getpid() && pool.idle.size() < kIdleWorkers) {
      pool.idle.push_back(worker);
      return;
    }
  }
  {
    std::lock_guard<std::mutex> lock(worker->mutex);
    worker->stop = true;
  }
  worker->changed.notify_all();
  worker->thread.join();
  delete worker;
}

}  // namespace

BatchThread::~BatchThread() {
  if (worker_ == nullptr) return;
  // A job in flight uses its call: it finishes (told to stop by its cancel token) before the
  // thread goes back. What it threw, uncollected, is cleared by the thread's next start().
  wait();
  return_worker(worker_);
}

void BatchThread::start(std::function<void()> job) {
  if (worker_ == nullptr) worker_ = borrow_worker();
  {
    std::lock_guard<std::mutex> lock(worker_->mutex);
    worker_->job = std::move(job);
    worker_->has_job = true;
    worker_->done = false;
    worker_->error = nullptr;
  }
  valid_ = true;
  worker_->changed.notify_all();
}

void BatchThread::run_here(std::function<void()> job) {
  here_error_ = nullptr;
  {
    SignalBlock block;
    try {
      job();
    } catch (...) {
      here_error_ = std::current_exception();
    }
  }
  ran_here_ = true;
  valid_ = true;
}

bool BatchThread::wait_for(int ms) {
  if (ran_here_) return true;
  std::unique_lock<std::mutex> lock(worker_->mutex);
  return worker_->changed.wait_for(lock, std::chrono::milliseconds(ms),
                                   [this] { return worker_->done; });
}

void BatchThread::wait() {
  if (ran_here_) return;
  std::unique_lock<std::mutex> lock(worker_->mutex);
  worker_->changed.wait(lock, [this] { return worker_->done; });
}

void BatchThread::get() {
  if (ran_here_) {
    ran_here_ = false;
    valid_ = false;
    std::exception_ptr error;
    std::swap(error, here_error_);
    if (error) std::rethrow_exception(error);
    return;
  }
  wait();
  std::exception_ptr error;
  {
    std::lock_guard<std::mutex> lock(worker_->mutex);
    std::swap(error, worker_->error);
  }
  valid_ = false;
  if (error) std::rethrow_exception(error);
}

void RoutingCall::compute_batch(std::size_t first, int count, ResultBatch& batch,
                                const std::vector<double*>& rows) {
  batch.clear();
  Stopwatch watch;
  work_stage_.store(WorkStage::kSolving, std::memory_order_relaxed);
  if (kind_ == CallKind::kServiceArea) {
    emit_service_area_rows(first, count, batch);
    summary_.compute_ms += watch.elapsed_ms();
    return;
  }
  const bool by_index = kind_ == CallKind::kPaths && options_.index_paths_hierarchy &&
                        emit_index_path_rows(first, count, batch);
  const bool traced =
      !by_index && kind_ == CallKind::kPaths && count == 1 && emit_traced_path_rows(first, batch);
  const bool settled = !by_index && !traced && kind_ == CallKind::kPaths && count == 1 &&
                       emit_settled_path_rows(first, batch);
  if (!by_index && !traced && !settled) {
    solve_batch(first, count, rows);
    switch (kind_) {
      case CallKind::kSsspOne:
      case CallKind::kSsspMany:
        emit_sssp_rows(first, count, batch);
        break;
      case CallKind::kPaths:
        work_stage_.store(WorkStage::kTracing, std::memory_order_relaxed);
        emit_path_rows(first, count, batch);
        break;
      default:
        if (options_.cost_arrays)
          emit_cost_arrays(first, count, batch, rows);
        else
          emit_cost_rows(first, count, batch);
        break;
    }
  }
  summary_.compute_ms += watch.elapsed_ms();
  const EngineReport& report = engine_->report();
  summary_.transfer_ms = report.transfer_ms - report_at_start_.transfer_ms;
  summary_.rounds = report.rounds - report_at_start_.rounds;
  if (!report.notes.empty()) summary_.notes = report.notes;
  summary_.device = report.device_name;
  if (const auto* service = service::service_report_of(*engine_)) {
    summary_.service_batch_size = service->batch_size;
    summary_.service_wait_ms = service->wait_ms;
  }
}

void RoutingCall::emit_sssp_rows(std::size_t first, int count, ResultBatch& batch) {
  const std::size_t n = static_cast<std::size_t>(graph_->vertex_count());
  const CsrGraph& reverse = graph_->reverse;
  for (int i = 0; i < count; ++i) {
    // A batch's rows take long to build (1000 sources x 40000 vertices: seconds): stop between
    // sources when the call is cancelled or abandoned.
    options_.engine.cancel.throw_if_requested();
    const VertexIndex source = source_indices_[first + static_cast<std::size_t>(i)];
    const std::int64_t source_id = graph_->vertices.id(source);
    const double* row = distances_.data() + static_cast<std::size_t>(i) * n;
    const ArcIndex* pred = predecessors_.data() + static_cast<std::size_t>(i) * n;
    for (std::size_t v = 0; v < n; ++v) {
      if (!(row[v] < kInfinity)) continue;
      batch.start_vid.push_back(source_id);
      batch.node.push_back(graph_->vertices.id(static_cast<VertexIndex>(v)));
      batch.agg_cost.push_back(row[v]);
      ArcIndex arc = pred[v];
      if (static_cast<VertexIndex>(v) == source || arc < 0) {
        batch.has_predecessor.push_back(0);
        batch.predecessor.push_back(0);
        batch.edge.push_back(0);
      } else {
        batch.has_predecessor.push_back(1);
        batch.predecessor.push_back(
            graph_->vertices.id(reverse.heads[static_cast<std::size_t>(arc)]));
        batch.edge.push_back(reverse.edge_ids[static_cast<std::size_t>(arc)]);
      }
    }
  }
}

// Bytes a path row takes in a ResultBatch: six 8-byte columns and path_seq.
constexpr std::size_t kPathRowBytes = 6 * sizeof(std::int64_t) + sizeof(std::int32_t);

namespace {

// Appends one (source, target) path: a row per arc of `csr` (`arcs` in path order, the k-th
// leaving vertex `tail_of(k)`), then the target's closing row.
template <typename TailOf>
void append_path_rows(ResultBatch& batch, const Graph& graph, std::int64_t source_id,
                      std::int64_t target_id, const std::vector<ArcIndex>& arcs,
                      const CsrGraph& csr, TailOf tail_of) {
  double agg = 0.0;
  std::int32_t seq = 1;
  for (std::size_t k = 0; k < arcs.size(); ++k) {
    const auto arc = static_cast<std::size_t>(arcs[k]);
    batch.start_vid.push_back(source_id);
    batch.end_vid.push_back(target_id);
    batch.path_seq.push_back(seq++);
    batch.node.push_back(graph.vertices.id(tail_of(k)));
    batch.edge.push_back(csr.edge_ids[arc]);
    batch.cost.push_back(csr.weights[arc]);
    batch.agg_cost.push_back(agg);
    agg += csr.weights[arc];
  }
  batch.start_vid.push_back(source_id);
  batch.end_vid.push_back(target_id);
  batch.path_seq.push_back(seq);
  batch.node.push_back(target_id);
  batch.edge.push_back(-1);
  batch.cost.push_back(0.0);
  batch.agg_cost.push_back(agg);
}

// The same for `arcs` of the reversed CSR (traced back from the target by the rule): each
// arc's head is the vertex its step leaves.
void append_reverse_path_rows(ResultBatch& batch, const Graph& graph, std::int64_t source_id,
                              std::int64_t target_id, const std::vector<ArcIndex>& arcs) {
  const CsrGraph& reverse = graph.reverse;
  append_path_rows(batch, graph, source_id, target_id, arcs, reverse,
                   [&](std::size_t k) { return reverse.heads[static_cast<std::size_t>(arcs[k])]; });
}

}  // namespace

void RoutingCall::check_path_rows(int count, const ResultBatch& batch) {
  options_.engine.cancel.throw_if_requested();
  options_.engine.budget.require(saturating_add(saturating_add(prepared_bytes_, result_rows_bytes_),
                                                batch.rows() * kPathRowBytes),
                                 "the path rows of " + std::to_string(count) + " source(s) (" +
                                     std::to_string(batch.rows()) + " rows so far, " +
                                     format_bytes(kPathRowBytes) + " each)");
}

void RoutingCall::emit_path_rows(std::size_t first, int count, ResultBatch& batch) {
  const std::size_t n = static_cast<std::size_t>(graph_->vertex_count());
  const CsrGraph& reverse = graph_->reverse;
  for (int i = 0; i < count; ++i) {
    options_.engine.cancel.throw_if_requested();
    const std::size_t source_slot = first + static_cast<std::size_t>(i);
    const VertexIndex source = source_indices_[source_slot];
    const std::int64_t source_id = graph_->vertices.id(source);
    const double* row = distances_.data() + static_cast<std::size_t>(i) * n;
    const std::vector<VertexIndex>& targets =
        targets_of_.empty() ? shared_targets_ : targets_of_[source_slot];
    std::size_t traced = 0;
    for (VertexIndex target : targets) {
      if (target == source || !(row[target] < kInfinity)) continue;
      // One source may have tens of thousands of targets with long paths: check for a cancel
      // and keep the rows held within gpu_routing.max_memory as they grow, not after.
      if ((++traced & 255) == 0) check_path_rows(count, batch);
      const std::vector<ArcIndex> arcs = trace_path(reverse, row, source, target);
      append_reverse_path_rows(batch, *graph_, source_id, graph_->vertices.id(target), arcs);
    }
  }
}

bool RoutingCall::emit_index_path_rows(std::size_t first, int count, ResultBatch& batch) {
  const CsrGraph& forward = graph_->forward;
  std::vector<ArcIndex> arcs;
  double cost = 0.0;
  std::size_t traced = 0;
  for (int i = 0; i < count; ++i) {
    options_.engine.cancel.throw_if_requested();
    const std::size_t source_slot = first + static_cast<std::size_t>(i);
    const VertexIndex source = source_indices_[source_slot];
    const std::int64_t source_id = graph_->vertices.id(source);
    const std::vector<VertexIndex>& targets =
        targets_of_.empty() ? shared_targets_ : targets_of_[source_slot];
    for (VertexIndex target : targets) {
      if (target == source) continue;
      if ((++traced & 255) == 0) check_path_rows(count, batch);
      if (!engine_->own_path(source, target, arcs, &cost)) return false;
      if (!(cost < kInfinity)) continue;
      // Arcs of the forward CSR: each one leaves where the one before it ended.
      append_path_rows(batch, *graph_, source_id, graph_->vertices.id(target), arcs, forward,
                       [&](std::size_t k) {
                         return k == 0 ? source
                                       : forward.heads[static_cast<std::size_t>(arcs[k - 1])];
                       });
    }
  }
  return true;
}

bool RoutingCall::emit_traced_path_rows(std::size_t source_slot, ResultBatch& batch) {
  auto* service = remote_engine_ ? dynamic_cast<service::ServiceEngine*>(engine_.get()) : nullptr;
  if (service == nullptr || compact_rows_) return false;
  const VertexIndex source = source_indices_[source_slot];
  const std::vector<VertexIndex>& targets =
      targets_of_.empty() ? shared_targets_ : targets_of_[source_slot];
  std::vector<VertexIndex> distinct = targets;
  sort_unique(distinct);
  if (distinct.empty()) return false;
  service::TracedPaths paths;
  try {
    if (!service->solve_paths(source, distinct.data(), static_cast<int>(distinct.size()), paths))
      return false;  // more path than room: rows, traced here
  } catch (const RoutingError& error) {
    // As solve_batch: the service stopped, and device = auto goes on with the CPU engine.
    if (error.kind() != ErrorKind::kNoDevice || options_.device != DeviceSetting::kAuto) throw;
    continue_on_cpu(error);
    return false;
  }
  work_stage_.store(WorkStage::kTracing, std::memory_order_relaxed);
  const std::int64_t source_id = graph_->vertices.id(source);
  std::vector<ArcIndex> arcs;
  std::size_t traced = 0;
  for (VertexIndex target : targets) {
    const std::size_t j = static_cast<std::size_t>(
        std::lower_bound(distinct.begin(), distinct.end(), target) - distinct.begin());
    if (target == source || !(paths.distances[j] < kInfinity)) continue;
    if ((++traced & 255) == 0) check_path_rows(1, batch);
    const std::int64_t begin = j > 0 ? paths.ends[j - 1] : 0;
    arcs.assign(paths.arcs.begin() + begin, paths.arcs.begin() + paths.ends[j]);
    append_reverse_path_rows(batch, *graph_, source_id, graph_->vertices.id(target), arcs);
  }
  return true;
}

// The predecessor rule reads the distances of a path's vertices and their in-neighbours alone
// (trace_strict_path); the road index settles just the ranks those depend on. A whole PHAST
// sweep was most of a city's path on the index: Rome 1 -> 3000 on the H100 host took 60 us of
// compute by the sweep where Dijkstra, stopping at the target, took 26. Gives up (nothing
// emitted, the row is computed as before) past kSettledPathTargets targets, where a zero-cost
// tie needs the whole row, or once a quarter of the graph is settled.
bool RoutingCall::emit_settled_path_rows(std::size_t source_slot, ResultBatch& batch) {
  if (remote_engine_ || compact_rows_) return false;
  const std::vector<VertexIndex>& targets =
      targets_of_.empty() ? shared_targets_ : targets_of_[source_slot];
  if (targets.empty() || targets.size() > static_cast<std::size_t>(kSettledPathTargets))
    return false;
  const VertexIndex source = source_indices_[source_slot];
  const std::unique_ptr<SourceDistances> distances = engine_->source_distances(source);
  if (distances == nullptr) return false;
  const std::size_t give_up = static_cast<std::size_t>(graph_->vertex_count()) / 4 + 1;
  const CsrGraph& reverse = graph_->reverse;
  const std::int64_t source_id = graph_->vertices.id(source);
  const auto distance_of = [&distances](VertexIndex v) { return distances->distance(v); };
  std::vector<ArcIndex> arcs;
  for (VertexIndex target : targets) {
    options_.engine.cancel.throw_if_requested();
    if (target == source) continue;
    if (!trace_strict_path(reverse, distance_of, source, target, arcs) ||
        distances->settled() > give_up) {
      batch.clear();
      return false;
    }
    if (arcs.empty()) continue;  // unreachable
    append_reverse_path_rows(batch, *graph_, source_id, graph_->vertices.id(target), arcs);
  }
  return true;
}

void RoutingCall::emit_cost_rows(std::size_t first, int count, ResultBatch& batch) {
  const std::size_t n = static_cast<std::size_t>(graph_->vertex_count());
  // Room for every row the batch can have, at once: grown by doubling, 4M rows (all pairs of
  // 2000 vertices) were copied about twice over into fresh pages, 30% of such a call's compute
  // on the development machine. Pages reserved and never written (unreachable pairs) cost only
  // address space.
  std::size_t most = 0;
  for (int i = 0; i < count; ++i) {
    const std::size_t source_slot = first + static_cast<std::size_t>(i);
    most += compact_rows_          ? shared_targets_.size()
            : !targets_of_.empty() ? targets_of_[source_slot].size()
            : all_targets_         ? n
                                   : shared_targets_.size();
  }
  batch.start_vid.reserve(batch.start_vid.size() + most);
  batch.end_vid.reserve(batch.end_vid.size() + most);
  batch.agg_cost.reserve(batch.agg_cost.size() + most);
  for (int i = 0; i < count; ++i) {
    options_.engine.cancel.throw_if_requested();
    const std::size_t source_slot = first + static_cast<std::size_t>(i);
    const VertexIndex source = source_indices_[source_slot];
    const std::int64_t source_id = graph_->vertices.id(source);
    const double* row = distances_.data() + static_cast<std::size_t>(i) * row_width_;
    auto add = [&](VertexIndex target, double distance) {
      if (target == source || !(distance < kInfinity)) return;
      batch.start_vid.push_back(source_id);
      batch.end_vid.push_back(graph_->vertices.id(target));
      batch.agg_cost.push_back(distance);
    };
    if (compact_rows_) {
      for (std::size_t j = 0; j < shared_targets_.size(); ++j) add(shared_targets_[j], row[j]);
    } else if (!targets_of_.empty()) {  // combinations
      for (VertexIndex t : targets_of_[source_slot]) add(t, row[t]);
    } else if (all_targets_) {
      for (std::size_t t = 0; t < n; ++t) add(static_cast<VertexIndex>(t), row[t]);
    } else {
      for (VertexIndex t : shared_targets_) add(t, row[t]);
    }
  }
}

void RoutingCall::emit_cost_arrays(std::size_t first, int count, ResultBatch& batch,
                                   const std::vector<double*>& rows) {
  const std::size_t width = array_slots_.size();
  batch.array_width = width;
  for (int i = 0; i < count; ++i) {
    const VertexIndex source = source_indices_[first + static_cast<std::size_t>(i)];
    batch.start_vid.push_back(graph_->vertices.id(source));
  }
  if (!rows.empty()) {
    batch.array_rows = rows;
    if (engine_writes_caller_rows_) return;  // written there by the engine
    // Gathered from the engine's rows into the caller's, a row a thread.
    const int threads = std::min(count, resolve_thread_count(options_.engine.threads));
    parallel_for_each(count, threads, [&](int i, int) {
      options_.engine.cancel.throw_if_requested();
      const double* row =
          distances_.data() + row_prefix_ + static_cast<std::size_t>(i) * row_stride_;
      double* out = rows[static_cast<std::size_t>(i)];
      if (array_slots_identity_) {
        std::memcpy(out, row, width * sizeof(double));
        return;
      }
      for (std::int64_t slot : array_slots_) *out++ = slot < 0 ? kInfinity : row[slot];
    });
    return;
  }
  const std::size_t cells = static_cast<std::size_t>(count) * width;
  if (array_slots_identity_) {
    // The rows are the arrays: hand the engine's buffer over and give it the batch's old one
    // (both were sized for a whole batch before, so neither allocates nor faults pages again).
    // Copying them cost as much as the rest of writing the rows (New York, 64 trees: 135 MB).
    std::swap(batch.array_costs, distances_);
    batch.array_row_prefix = row_prefix_;
    if (distances_.size() < distance_cells()) distances_.resize(distance_cells());
    return;
  }
  if (batch.array_costs.size() < cells) batch.array_costs.resize(cells);
  double* out = batch.array_costs.data();
  for (int i = 0; i < count; ++i) {
    options_.engine.cancel.throw_if_requested();
    const double* row = distances_.data() + static_cast<std::size_t>(i) * row_width_;
    for (std::int64_t slot : array_slots_) *out++ = slot < 0 ? kInfinity : row[slot];
  }
}

}  // namespace gpu_routing
