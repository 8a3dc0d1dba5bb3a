// The CPU engines (OpenMP): Dijkstra per source, Floyd-Warshall (blocked and naive) on the dense
// matrix, and the road index (a customizable contraction hierarchy, cch.hpp) queried by PHAST.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <exception>

#include "cpu/apsp_floyd_warshall.hpp"
#include "cpu/cch_engine_policy.hpp"
#include "road_index/cch.hpp"
#include "engine/engine.hpp"
#include "base/parallel.hpp"
#include "base/parallel_for.hpp"
#include "base/predecessors.hpp"
#include "cpu/sssp_dijkstra.hpp"

#ifdef _OPENMP
#include <omp.h>
#endif

namespace gpu_routing {

namespace {

std::string cpu_device_name(int threads) {
  return "CPU, " + std::to_string(threads) + (threads == 1 ? " thread" : " threads");
}

class CpuDijkstraEngine final : public ShortestPathEngine {
 public:
  CpuDijkstraEngine(const Graph& graph, const EngineOptions& options)
      : ShortestPathEngine(graph, options), threads_(resolve_thread_count(options.threads)) {
    report_.device_name = cpu_device_name(threads_);
  }
  ~CpuDijkstraEngine() override {
    for (auto& workspace : workspaces_) give_back_dijkstra_workspace(std::move(workspace));
  }
  const char* name() const override { return "dijkstra"; }
  Device device() const override { return Device::kCpu; }
  int preferred_batch_size() const override { return std::max(1, threads_ * 16); }

  void solve(const SolveRequest& request) override {
    Stopwatch watch;
    const VertexIndex n = graph_.vertex_count();
    const int workers = std::max(1, std::min(threads_, request.source_count));
    while (static_cast<int>(workspaces_.size()) < workers)
      workspaces_.push_back(
          take_dijkstra_workspace(n, graph_.integer_weights ? graph_.max_weight : -1.0));
    std::vector<std::int64_t> settled(static_cast<std::size_t>(workers), 0);
    parallel_for_each(request.source_count, workers, [&](int i, int thread) {
      double* row = request.distances + static_cast<std::size_t>(i) * n;
      settled[static_cast<std::size_t>(thread)] +=
          workspaces_[static_cast<std::size_t>(thread)]->run(graph_.forward, request.sources[i],
                                                             row, request.targets,
                                                             request.target_count, options_.cancel);
      if (request.predecessor_arcs != nullptr && request.source_count > 1)
        compute_predecessors(graph_.reverse, row, request.sources[i],
                             request.predecessor_arcs + static_cast<std::size_t>(i) * n);
    });
    if (request.predecessor_arcs != nullptr && request.source_count == 1) {
      fill_predecessors_on_host(request);
    }
    for (auto s : settled) report_.rounds += s;
    report_.compute_ms += watch.elapsed_ms();
  }

 private:
  int threads_;
  std::vector<std::unique_ptr<DijkstraWorkspace>> workspaces_;
};

// The road index: a customizable contraction hierarchy of the graph, made on the first solve()
// (order, chordal supergraph, customization: seconds on a city, so the engine is kept between
// calls on a kept graph) and then queried per source. Full rows come from PHAST sweeps (upward
// searches, then one downward pass over every rank for up to 8 sources at once, or for one
// source on every thread), exact like Dijkstra's, so paths follow the same predecessor rule as
// every engine; cost-matrix rows come from buckets (each target's upward search stored at the
// ranks it reaches, then one upward search per source). Distances equal Dijkstra's exactly for
// whole-number costs; fractional costs are summed in another order and may differ in the last
// bits.
class CpuCchEngine final : public ShortestPathEngine {
 public:
  CpuCchEngine(const Graph& graph, const EngineOptions& options)
      : ShortestPathEngine(graph, options), threads_(resolve_thread_count(options.threads)) {
    report_.device_name = cpu_device_name(threads_);
  }
  const char* name() const override { return "cch"; }
  Device device() const override { return Device::kCpu; }
  int preferred_batch_size() const override { return std::max(1, threads_ * 16); }
  bool supports_compact_targets() const override { return true; }
  bool supports_row_stride() const override { return true; }
  bool supports_row_pointers() const override { return true; }
  bool supports_row_columns() const override { return true; }
  void rebind(const EngineOptions& options) override {
    ShortestPathEngine::rebind(options);
    if (options.road_index != nullptr) options_.road_index = options.road_index;
    report_.notes = options_.road_index != nullptr
                        ? "the kept graph's road index (shared)"
                        : "road index kept from an earlier call on this graph";
  }

  bool own_path(VertexIndex s, VertexIndex t, std::vector<ArcIndex>& arcs, double* cost) override {
    Stopwatch watch;
    const Cch& cch = index();
    reserve_workspaces(1);
    *cost = index_path(cch, graph_, s, t, *workspaces_.front(), arcs);
    report_.rounds += 1;
    report_.compute_ms += watch.elapsed_ms();
    return true;
  }

  std::unique_ptr<SourceDistances> source_distances(VertexIndex s) override {
    const Cch& cch = index();
    reserve_workspaces(1);
    report_.rounds += 1;
    return std::make_unique<SettledDistances>(cch, s, *workspaces_.front());
  }

  void solve(const SolveRequest& request) override {
    Stopwatch watch;
    const Cch& cch = index();
    const bool compact = request.compact_targets && request.targets != nullptr;
    // Rows put in the caller's order of columns (gather_columns): one row of scratch for each
    // thread, made before the threads start and given back after the solve where they are
    // large (whole rows' widths: up to 2 MB a thread on New York).
    const std::size_t width = compact ? static_cast<std::size_t>(request.target_count)
                                      : static_cast<std::size_t>(graph_.vertex_count());
    if (request.row_columns != nullptr) {
      if (request.row_pointers == nullptr || request.row_column_count < width)
        throw RoutingError(ErrorKind::kInternal,
                           "cost arrays in the caller's order need its rows, each with room for "
                           "every solved column");
      if (static_cast<int>(column_scratch_.size()) < threads_)
        column_scratch_.resize(static_cast<std::size_t>(threads_));
    }
    struct ScratchRelease {
      std::vector<std::vector<double>>& scratch;
      ~ScratchRelease() {
        constexpr std::size_t kKeptColumns = std::size_t{32} << 10;  // a bucket row's at most
        for (std::vector<double>& row : scratch)
          if (row.capacity() > kKeptColumns) std::vector<double>().swap(row);
      }
    } release_scratch{column_scratch_};
    // Cost-matrix rows: the targets' buckets once, then one upward walk per source; past an
    // eighth of the vertices (cch_engine::by_buckets) the sources sweep and keep their targets'
    // columns, as whole rows do.
    if (compact && cch_engine::by_buckets(request.target_count, graph_.vertex_count()))
      solve_by_buckets(request, cch);
    else
      solve_by_sweeps(request, cch, compact);
    report_.rounds += request.source_count;
    report_.compute_ms += watch.elapsed_ms();
  }

 private:
  static constexpr int kSweepLanes = cch_engine::kSweepLanes;

  // Where row i of a request goes: the caller's row_pointers, else rows `stride` apart.
  static double* row_of(const SolveRequest& request, int i, std::size_t stride) {
    return request.row_pointers != nullptr
               ? request.row_pointers[i]
               : request.distances + static_cast<std::size_t>(i) * stride;
  }

  // Where `count` rows from row `first` are solved: their places (row_of). With row_columns
  // each place is the caller's row, which has room for the solved row (every solved column is
  // among the caller's), and gather_columns then puts it in the caller's order through one row
  // of the thread's scratch while it is in cache: through the call's buffer the rows were written
  // whole, then read again (New York 10,000 x 10,000: 800 MB each way).
  static void place_rows(const SolveRequest& request, int first, int count, std::size_t stride,
                         double** rows) {
    for (int i = 0; i < count; ++i) rows[i] = row_of(request, first + i, stride);
  }
  void gather_columns(const SolveRequest& request, int count, std::size_t width, int thread,
                      double* const* rows) {
    if (request.row_columns == nullptr) return;
    std::vector<double>& scratch = column_scratch_.at(static_cast<std::size_t>(thread));
    if (scratch.size() < width) scratch.resize(width);
    for (int i = 0; i < count; ++i) {
      std::memcpy(scratch.data(), rows[i], width * sizeof(double));
      gather_row_columns(scratch.data(), width, request.row_columns, request.row_column_count,
                         rows[i]);
    }
  }

  void solve_by_buckets(const SolveRequest& request, const Cch& cch) {
    // One source, one target: the point-to-point query walks the same two chains as a bucket
    // and its row, without gathering and sorting the target's entries first.
    const bool one_pair = request.target_count == 1 && request.source_count == 1;
    // Threads only for a few milliseconds of work or more: a bucket row takes tens of
    // microseconds, and on 2 cores a parallel region beside the backend writing the previous
    // batch's rows cost more than it saved (Rome 100 x 100: 2.3 ms on one thread, 5-20 ms on two).
    const double work_us = request.source_count * (20.0 + 0.02 * request.target_count);
    const int workers =
        work_us < 5000.0 ? 1 : std::max(1, std::min(threads_, request.source_count));
    reserve_workspaces(workers);
    // A call's batches share their targets: the buckets are made once for them (each fill walks
    // every target's ancestors and costs more than a batch's rows: New York 1000 x 1000 took
    // 249 ms in 32 batches, most of it refilling).
    if (!one_pair && (buckets_index_ != &cch ||
                      !std::equal(request.targets, request.targets + request.target_count,
                                  bucket_targets_.begin(), bucket_targets_.end()))) {
      // A walk per target, about 20 us each on New York: spread over the threads from a few
      // milliseconds of them on (1000 targets: 20 ms on one core).
      const int fill_threads =
          request.target_count * 20.0 < 5000.0 ? 1 : std::min(threads_, request.target_count);
      reserve_workspaces(fill_threads);
      std::vector<CchWorkspace*> fill_workspaces(static_cast<std::size_t>(fill_threads));
      for (int k = 0; k < fill_threads; ++k)
        fill_workspaces[static_cast<std::size_t>(k)] =
            workspaces_[static_cast<std::size_t>(k)].get();
      cch.fill_buckets(request.targets, request.target_count, buckets_, fill_workspaces.data(),
                       fill_threads);
      bucket_targets_.assign(request.targets, request.targets + request.target_count);
      buckets_index_ = &cch;
    }
    const auto stride = request.row_stride != 0 ? request.row_stride
                                                : static_cast<std::size_t>(request.target_count);
    const auto width = static_cast<std::size_t>(request.target_count);
    if (one_pair) {
      double* row[1];
      place_rows(request, 0, 1, stride, row);
      row[0][0] = cch.distance(request.sources[0], request.targets[0], *workspaces_[0]);
      gather_columns(request, 1, width, 0, row);
      return;
    }
    // Sources in groups, which read the buckets' columns together (cch_engine::kBucketRowGroup),
    // as many groups as make whole rounds of the threads: 100 sources on 15 threads in groups of
    // 8 would leave 2 groups for a second round, with 13 threads idle.
    const int per_round = workers * cch_engine::kBucketRowGroup;
    const int rounds = (request.source_count + per_round - 1) / per_round;
    const int group_size = (request.source_count + workers * rounds - 1) / (workers * rounds);
    const int groups = (request.source_count + group_size - 1) / group_size;
    parallel_for_each(groups, workers, [&](int group, int thread) {
      options_.cancel.throw_if_requested();
      const int first = group * group_size;
      const int count = std::min(group_size, request.source_count - first);
      double* rows[cch_engine::kBucketRowGroup];
      place_rows(request, first, count, stride, rows);
      cch.rows_from_buckets(request.sources + first, count, rows, buckets_,
                            *workspaces_[static_cast<std::size_t>(thread)]);
      gather_columns(request, count, width, thread, rows);
    });
  }

  // Whole rows (or the columns of many targets) by PHAST, kSweepLanes sources a sweep. The
  // groups of sources go one a thread in rounds; the groups left over, fewer than the threads,
  // each sweep on every thread by the hierarchy's sweep plan (so one source on 16 threads too).
  // Predecessors by the common rule after each group's sweep, on the threads that swept it.
  void solve_by_sweeps(const SolveRequest& request, const Cch& cch, bool compact) {
    const VertexIndex n = graph_.vertex_count();
    const std::size_t width =
        compact ? static_cast<std::size_t>(request.target_count) : static_cast<std::size_t>(n);
    const std::size_t stride = request.row_stride != 0 ? request.row_stride : width;
    const int sources = request.source_count;
    const int groups = (sources + kSweepLanes - 1) / kSweepLanes;
    const int threads = cch_engine::sweep_threads(
        cch_engine::sweep_work_us(sources, static_cast<double>(n)), threads_);
    const int alone = threads == 1 ? groups : groups / threads * threads;
    reserve_workspaces(std::max(1, std::min(threads, alone)));
    const bool predecessors = request.predecessor_arcs != nullptr && !compact;
    const auto sweep = [&](int group, int sweep_threads, int thread, CchWorkspace& workspace) {
      const int first = group * kSweepLanes;
      const int lanes = std::min(kSweepLanes, sources - first);
      double* rows[Cch::kMaxSweepLanes];
      place_rows(request, first, lanes, stride, rows);
      if (lanes == 1 && sweep_threads == 1 && !compact) {
        // one_to_all writes the row during its own sweep: 3.2 ms against 3.4 in a lane of its
        // own (New York, one core).
        cch.one_to_all(request.sources[first], rows[0], workspace);
        gather_columns(request, lanes, width, thread, rows);
        return;
      }
      Cch::SweepOptions options;
      options.threads = sweep_threads;
      options.cancel = options_.cancel;
      if (compact) {
        options.targets = request.targets;
        options.target_count = request.target_count;
      }
      cch.many_to_all(request.sources + first, lanes, rows, workspace, options);
      gather_columns(request, lanes, width, thread, rows);
    };
    parallel_for_each(alone, threads, [&](int group, int thread) {
      options_.cancel.throw_if_requested();
      sweep(group, 1, thread, *workspaces_[static_cast<std::size_t>(thread)]);
      if (!predecessors) return;
      for (int i = group * kSweepLanes; i < std::min(sources, (group + 1) * kSweepLanes); ++i)
        compute_predecessors(graph_.reverse, request.distances + static_cast<std::size_t>(i) * n,
                             request.sources[i],
                             request.predecessor_arcs + static_cast<std::size_t>(i) * n);
    });
    for (int group = alone; group < groups; ++group) {
      options_.cancel.throw_if_requested();
      sweep(group, threads, 0, *workspaces_[0]);
      if (!predecessors) continue;
      // Each row's predecessors over pieces of vertices on every thread.
      SolveRequest rows = request;
      const int first = group * kSweepLanes;
      rows.sources += first;
      rows.source_count = std::min(kSweepLanes, sources - first);
      rows.distances += static_cast<std::size_t>(first) * n;
      rows.predecessor_arcs += static_cast<std::size_t>(first) * n;
      fill_predecessors_on_host(rows);
    }
  }

  void reserve_workspaces(int count) {
    while (static_cast<int>(workspaces_.size()) < count)
      workspaces_.push_back(std::make_unique<CchWorkspace>(graph_.vertex_count()));
  }

  // Cch::settled_distance() for one source, the workspace given back when done.
  class SettledDistances final : public SourceDistances {
   public:
    SettledDistances(const Cch& cch, VertexIndex source, CchWorkspace& workspace)
        : cch_(cch), source_(source), workspace_(workspace) {
      cch_.start_settling(source_, workspace_);
    }
    ~SettledDistances() override { cch_.finish_settling(source_, workspace_); }
    SettledDistances(const SettledDistances&) = delete;
    SettledDistances& operator=(const SettledDistances&) = delete;
    double distance(VertexIndex v) override { return cch_.settled_distance(v, workspace_); }
    std::size_t settled() const override { return workspace_.settled_count(); }

   private:
    const Cch& cch_;
    VertexIndex source_;
    CchWorkspace& workspace_;
  };

  // The kept graph's shared index when there is one, else this engine's own (made now if not yet).
  const Cch& index() {
    if (options_.road_index != nullptr) {
      if (report_.notes.empty()) report_.notes = "the kept graph's road index (shared)";
      return *options_.road_index;
    }
    if (!cch_.customized()) build_index();
    return cch_;
  }

  void build_index() {
    cch_ = make_road_index(graph_, options_.cancel, options_.threads, &report_.notes);
  }

  int threads_;
  Cch cch_;
  std::vector<std::unique_ptr<CchWorkspace>> workspaces_;
  // Per thread: one row while it is put in the caller's order of columns (gather_columns).
  std::vector<std::vector<double>> column_scratch_;
  // The last targets' buckets and the index they were made on.
  CchBuckets buckets_;
  std::vector<VertexIndex> bucket_targets_;
  const Cch* buckets_index_ = nullptr;
};

// Dense engines close the whole matrix on the first solve() and copy rows out afterwards.
class CpuFloydWarshallEngine final : public ShortestPathEngine {
 public:
  CpuFloydWarshallEngine(const Graph& graph, const EngineOptions& options, bool blocked)
      : ShortestPathEngine(graph, options),
        threads_(resolve_thread_count(options.threads)),
        blocked_(blocked) {
    report_.device_name = cpu_device_name(threads_);
  }
  const char* name() const override { return blocked_ ? "blocked_fw" : "floyd_warshall"; }
  Device device() const override { return Device::kCpu; }
  int preferred_batch_size() const override {
    return std::max<VertexIndex>(1, graph_.vertex_count());
  }

  void solve(const SolveRequest& request) override {
    Stopwatch watch;
    if (!closed_) {
      int tile = blocked_ ? kCpuFloydWarshallTile : 1;
      matrix_ = build_dense_matrix(graph_.forward, tile);
      if (blocked_)
        floyd_warshall_blocked(matrix_, tile, threads_, options_.cancel);
      else
        floyd_warshall_naive(matrix_, threads_, options_.cancel);
      closed_ = true;
    }
    const VertexIndex n = graph_.vertex_count();
    for (int i = 0; i < request.source_count; ++i)
      std::memcpy(request.distances + static_cast<std::size_t>(i) * n,
                  matrix_.row(request.sources[i]), sizeof(double) * static_cast<std::size_t>(n));
    report_.compute_ms += watch.elapsed_ms();
    if (request.predecessor_arcs != nullptr) fill_predecessors_on_host(request);
  }

 private:
  int threads_;
  bool blocked_;
  bool closed_ = false;
  DenseDistanceMatrix matrix_;
};

std::size_t dijkstra_bytes(const Graph& graph, int batch) {
  std::size_t per_thread =
      static_cast<std::size_t>(graph.vertex_count()) * (sizeof(std::int32_t) + 1 + 16);
  return saturating_multiply(per_thread,
                             static_cast<std::size_t>(std::max(1, std::min(batch, 256))));
}

// The hierarchy of a road network holds 5-6 arcs per vertex of ~28 bytes each, plus ranks, the
// input arcs' positions and a workspace per thread: 200 bytes per vertex and 8 per arc covers
// New York (48 MB measured for 264k vertices) with room for denser graphs' fill-in. A workspace
// holds two distances and two arcs per vertex, and the lanes of a sweep (8 distances); there is
// one a thread that solves, at most one a core (not one a source of the batch: with the lanes
// that would have been 3 GB for a batch of 128 New York rows).
std::size_t cch_bytes(const Graph& graph, int batch) {
  const auto n = static_cast<std::size_t>(graph.vertex_count());
  const std::size_t threads =
      static_cast<std::size_t>(std::max(1, std::min(batch, resolve_thread_count(0))));
  return saturating_add(
      saturating_add(saturating_multiply(n, 200),
                     saturating_multiply(static_cast<std::size_t>(graph.arc_count()), 8)),
      saturating_multiply(threads,
                          n * (2 * sizeof(double) + 8 + Cch::kMaxSweepLanes * sizeof(double))));
}

std::size_t blocked_fw_bytes(const Graph& graph, int) {
  return dense_matrix_bytes(graph.vertex_count(), kCpuFloydWarshallTile);
}

std::size_t naive_fw_bytes(const Graph& graph, int) {
  return dense_matrix_bytes(graph.vertex_count(), 1);
}

}  // namespace

const std::vector<EngineInfo>& cpu_engine_table() {
  static const std::vector<EngineInfo> table = {
      {"dijkstra", Device::kCpu, true, true, false,
       "Dijkstra with Dial's buckets on whole-number weights, else an indexed 4-ary heap; many "
       "sources run in parallel, one per thread",
       [](const Graph& g, const EngineOptions& o) -> std::unique_ptr<ShortestPathEngine> {
         return std::make_unique<CpuDijkstraEngine>(g, o);
       },
       dijkstra_bytes},
      {"blocked_fw", Device::kCpu, false, true, true,
       "cache-blocked, vectorised three-phase Floyd-Warshall on the dense matrix (Pandey and "
       "Sharma)",
       [](const Graph& g, const EngineOptions& o) -> std::unique_ptr<ShortestPathEngine> {
         return std::make_unique<CpuFloydWarshallEngine>(g, o, true);
       },
       blocked_fw_bytes},
      {"floyd_warshall", Device::kCpu, false, true, true,
       "the textbook Floyd-Warshall, one parallel sweep per k",
       [](const Graph& g, const EngineOptions& o) -> std::unique_ptr<ShortestPathEngine> {
         return std::make_unique<CpuFloydWarshallEngine>(g, o, false);
       },
       naive_fw_bytes},
      {"cch", Device::kCpu, true, true, false,
       "the road index: a customizable contraction hierarchy made on the first call (kept with a "
       "kept graph), rows by PHAST sweeps, few-target rows by hierarchy queries",
       [](const Graph& g, const EngineOptions& o) -> std::unique_ptr<ShortestPathEngine> {
         return std::make_unique<CpuCchEngine>(g, o);
       },
       cch_bytes, true},
  };
  return table;
}

}  // namespace gpu_routing
