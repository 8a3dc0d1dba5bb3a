#include "calibration/calibration.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <limits>
#include <thread>

#include "road_index/cch.hpp"
#include "base/parallel.hpp"
#include "base/predecessors.hpp"
#include "call/routing_call.hpp"

namespace gpu_routing {

namespace {

// Edge rows for build_graph, generated deterministically.
struct Edges {
  std::vector<std::int64_t> ids, sources, targets;
  std::vector<double> costs;
  void add(std::int64_t s, std::int64_t t, double c) {
    ids.push_back(static_cast<std::int64_t>(ids.size()) + 1);
    sources.push_back(s);
    targets.push_back(t);
    costs.push_back(c);
  }
  Graph build(const CancelToken& cancel) const {
    EdgeArrays arrays;
    arrays.count = ids.size();
    arrays.ids = ids.data();
    arrays.sources = sources.data();
    arrays.targets = targets.data();
    arrays.costs = costs.data();
    Graph graph = build_graph(arrays, true, cancel);
    ensure_reverse(graph);
    return graph;
  }
};

struct Random {
  std::uint64_t state;
  std::uint64_t next() {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  }
  double cost() { return 1.0 + static_cast<double>(next() % 100); }
};

// A side x side grid, both directions, numbered row by row.
Graph grid(int side, const CancelToken& cancel) {
  Edges edges;
  Random random{12345};
  auto id = [side](int r, int c) { return static_cast<std::int64_t>(r) * side + c + 1; };
  for (int r = 0; r < side; ++r)
    for (int c = 0; c < side; ++c) {
      if (c + 1 < side) {
        edges.add(id(r, c), id(r, c + 1), random.cost());
        edges.add(id(r, c + 1), id(r, c), random.cost());
      }
      if (r + 1 < side) {
        edges.add(id(r, c), id(r + 1, c), random.cost());
        edges.add(id(r + 1, c), id(r, c), random.cost());
      }
    }
  return edges.build(cancel);
}

// `vertices` vertices, `degree` arcs out of each to random vertices (plus a ring: every vertex
// reaches every other).
Graph random_graph(int vertices, int degree, const CancelToken& cancel) {
  Edges edges;
  Random random{987654321};
  for (int v = 0; v < vertices; ++v) {
    edges.add(v + 1, (v + 1) % vertices + 1, random.cost());
    for (int d = 1; d < degree; ++d)
      edges.add(v + 1, static_cast<std::int64_t>(random.next() % vertices) + 1, random.cost());
  }
  return edges.build(cancel);
}

Graph dense_graph(int vertices, double density, const CancelToken& cancel) {
  Edges edges;
  Random random{424242};
  const std::uint64_t threshold = static_cast<std::uint64_t>(density * 1000000);
  for (int u = 0; u < vertices; ++u)
    for (int v = 0; v < vertices; ++v)
      if (u != v && random.next() % 1000000 < threshold) edges.add(u + 1, v + 1, random.cost());
  return edges.build(cancel);
}

std::vector<VertexIndex> spread_sources(const Graph& graph, int count) {
  std::vector<VertexIndex> sources;
  const std::int64_t n = graph.vertex_count();
  for (int i = 0; i < count; ++i)
    sources.push_back(static_cast<VertexIndex>((static_cast<std::int64_t>(i) * 7919 + 1) % n));
  std::sort(sources.begin(), sources.end());
  sources.erase(std::unique(sources.begin(), sources.end()), sources.end());
  return sources;
}

// Milliseconds of run(), the fastest of `timed` runs after a warm-up run (cancel checked before
// each).
template <typename Run>
double fastest_after_warmup(int timed, const CancelToken& cancel, Run&& run) {
  double fastest = std::numeric_limits<double>::infinity();
  for (int i = 0; i <= timed; ++i) {
    cancel.throw_if_requested();
    Stopwatch watch;
    run();
    if (i > 0) fastest = std::min(fastest, watch.elapsed_ms());  // run 0 warms up
  }
  return fastest;
}

// Milliseconds of solve(request) for `sources` (whole rows, or compact rows to `targets`, with
// predecessors where asked): the fastest of five after a warm-up run. Another process on the
// machine only ever slows a run down, so the fastest is the one nearest the machine's own speed;
// with the median of three, calibrations a minute apart on an idle 2-core machine measured
// Dijkstra's arcs at 0.85 and 1.96 ns, and the model's near-ties flipped with them.
template <typename Solve>
double time_runs(const Graph& graph, const std::vector<VertexIndex>& sources,
                 const CancelToken& cancel, const std::vector<VertexIndex>* targets,
                 bool predecessors, Solve&& solve) {
  const std::size_t width =
      targets != nullptr ? targets->size() : static_cast<std::size_t>(graph.vertex_count());
  std::vector<double> rows(sources.size() * width);
  std::vector<ArcIndex> arcs(predecessors ? sources.size() * width : 0);
  SolveRequest request;
  request.sources = sources.data();
  request.source_count = static_cast<int>(sources.size());
  request.distances = rows.data();
  if (predecessors) request.predecessor_arcs = arcs.data();
  if (targets != nullptr) {
    request.targets = targets->data();
    request.target_count = static_cast<int>(targets->size());
    request.compact_targets = true;
  }
  return fastest_after_warmup(5, cancel, [&] { solve(request); });
}

// One engine, solving again and again.
double time_solve(ShortestPathEngine& engine, const Graph& graph,
                  const std::vector<VertexIndex>& sources, const CancelToken& cancel,
                  const std::vector<VertexIndex>* targets = nullptr, bool predecessors = false) {
  return time_runs(graph, sources, cancel, targets, predecessors,
                   [&engine](const SolveRequest& request) { engine.solve(request); });
}

// An engine made afresh for every run, as a call makes its CPU engine (its heap and rows
// allocated and touched anew) and an edges_sql call its GPU engine (the graph copied to the
// device); the dense engines also close the whole matrix on their first solve() only.
template <typename Make>
double time_fresh(Make&& make, const Graph& graph, const std::vector<VertexIndex>& sources,
                  const CancelToken& cancel, bool predecessors = false) {
  return time_runs(graph, sources, cancel, nullptr, predecessors,
                   [&make](const SolveRequest& request) { make()->solve(request); });
}

std::vector<VertexIndex> every_vertex(const Graph& graph) {
  std::vector<VertexIndex> all(static_cast<std::size_t>(graph.vertex_count()));
  for (std::size_t v = 0; v < all.size(); ++v) all[v] = static_cast<VertexIndex>(v);
  return all;
}

double clamp_positive(double value, double floor) {
  return std::max(value, floor);
}

}  // namespace

std::string hardware_description(const gpu::Availability& gpus, int processors) {
  // /proc/cpuinfo is read once a process: on a many-core host it is long, and every auto call
  // compares the hardware.
  static const std::string cpu = [] {
    std::ifstream info("/proc/cpuinfo");
    std::string line;
    while (std::getline(info, line))
      if (line.rfind("model name", 0) == 0) {
        const std::size_t colon = line.find(':');
        if (colon != std::string::npos) return line.substr(colon + 2);
      }
    return std::string("CPU");
  }();
  std::string text = cpu + " x " + std::to_string(processors) + " threads";
  // Each GPU once: the GPU service lists its lanes as devices, and a stored calibration must not
  // look like other hardware when the lane count changes.
  if (gpus.usable) {
    std::vector<int> listed;
    for (const auto& device : gpus.devices) {
      const int physical = device.physical >= 0 ? device.physical : device.index;
      if (std::find(listed.begin(), listed.end(), physical) != listed.end()) continue;
      listed.push_back(physical);
      text += "; " + device.name;
    }
  } else
    text += "; no GPU";
  return text;
}

Calibration calibrate(const CalibrationOptions& options) {
  Calibration result;
  MachineSpeeds& s = result.speeds;
  const CancelToken& cancel = options.cancel;
  const int threads = resolve_thread_count(options.threads);
  auto measured = [&](const char* name) { result.measured.emplace_back(name); };

  EngineOptions one_thread;
  one_thread.threads = 1;
  one_thread.cancel = cancel;
  EngineOptions every_thread = one_thread;
  every_thread.threads = threads;
  const EngineInfo* dijkstra = find_engine("dijkstra", Device::kCpu);
  const EngineInfo* cpu_fw = find_engine("blocked_fw", Device::kCpu);
  const EngineInfo* cpu_cch = find_engine("cch", Device::kCpu);

  const Graph local = grid(512, cancel);
  // 2^20 vertices: the random graph's distances (8 MB) and heap leave the caches, as a big
  // unordered graph's do.
  const Graph far = random_graph(1 << 20, 4, cancel);
  const double local_arcs = static_cast<double>(local.arc_count());
  const double far_arcs = static_cast<double>(far.arc_count());
  const std::vector<VertexIndex> one = {0};

  // CPU Dijkstra: one source on one thread on the grid and on a dense graph (per vertex and per
  // arc from the two), on the random graph (the cache misses), then many sources on every thread.
  const Graph dense = dense_graph(512, 0.2, cancel);
  // 4096 vertices and 16384 arcs: a graph that stays in the caches (kCpuSmallGraphBytes).
  const Graph small = random_graph(4096, 4, cancel);
  {
    auto fresh = [&](const Graph& graph, const EngineOptions& options) {
      return [&graph, &options, dijkstra] { return dijkstra->create(graph, options); };
    };
    const double single = time_fresh(fresh(local, one_thread), local, one, cancel);
    const double on_dense = time_fresh(fresh(dense, one_thread), dense, one, cancel);
    const double vg = static_cast<double>(local.vertex_count()), eg = local_arcs;
    const double vd = static_cast<double>(dense.vertex_count());
    const double ed = static_cast<double>(dense.arc_count());
    double arc_ns = (on_dense * vg - single * vd) / (ed * vg - eg * vd) * 1e6;
    if (!(arc_ns > 0)) arc_ns = on_dense * 1e6 / ed;
    s.cpu_dijkstra_arc_ns = clamp_positive(arc_ns, 0.05);
    s.cpu_dijkstra_vertex_ns =
        clamp_positive((single * 1e6 - eg * s.cpu_dijkstra_arc_ns) / vg, 0.1);
    const double on_far = time_fresh(fresh(far, one_thread), far, one, cancel);
    const double far_local = (static_cast<double>(far.vertex_count()) * s.cpu_dijkstra_vertex_ns +
                              far_arcs * s.cpu_dijkstra_arc_ns) *
                             1e-6;
    s.cpu_dijkstra_far_factor = std::clamp(on_far / far_local, 1.0, 20.0);
    // The predecessor pass (gpu_sssp's rows), per arc.
    const double with_predecessors = time_fresh(fresh(local, one_thread), local, one, cancel, true);
    s.cpu_predecessor_ns = clamp_positive((with_predecessors - single) * 1e6 / local_arcs, 0.1);
    for (const char* name : {"cpu_dijkstra_vertex_ns", "cpu_dijkstra_arc_ns",
                             "cpu_dijkstra_far_factor", "cpu_predecessor_ns"})
      measured(name);
    // One source at a time on the small graph (kCpuSmallGraphBytes), on one thread: the model
    // prices a search on a graph of that size from this timing (cpu_dijkstra_small_factor), not
    // from the vertex and arc speeds alone.
    const auto small_one = spread_sources(small, 64);
    const double one_thread_ms = time_fresh(fresh(small, one_thread), small, small_one, cancel) /
                                 static_cast<double>(small_one.size());
    const double small_predicted_ms =
        (static_cast<double>(small.vertex_count()) * s.cpu_dijkstra_vertex_ns +
         static_cast<double>(small.arc_count()) * s.cpu_dijkstra_arc_ns) *
        1e-6;
    s.cpu_dijkstra_small_factor = std::clamp(one_thread_ms / small_predicted_ms, 0.2, 5.0);
    measured("cpu_dijkstra_small_factor");
    if (threads > 1) {
      const auto sources = spread_sources(local, threads * 4);
      const double many = time_fresh(fresh(local, every_thread), local, sources, cancel);
      const double speedup = static_cast<double>(sources.size()) * single / many;
      s.cpu_parallel_efficiency = std::clamp(speedup / threads, 0.05, 1.5);
      measured("cpu_parallel_efficiency");
      // The same on the small graph, a batch of the CPU engines' size (16 sources a thread)
      // against the 64 sources on one thread: on the H100 host it measured 0.66-0.95 where the
      // grid's was 0.61-0.64. With the factor above, a many-source search on the small graph is
      // priced from this one timing on every thread.
      const auto small_many = spread_sources(small, threads * 16);
      const double every_thread_ms =
          time_fresh(fresh(small, every_thread), small, small_many, cancel);
      s.cpu_parallel_efficiency_small = std::clamp(
          static_cast<double>(small_many.size()) * one_thread_ms / every_thread_ms / threads, 0.05,
          1.5);
      measured("cpu_parallel_efficiency_small");
    }
  }
  const double cpu_speedup = threads > 1 ? std::max(1.0, threads * s.cpu_parallel_efficiency) : 1.0;

  // What a call adds per distance beyond its engine: all pairs of the small graph as cost arrays
  // through a RoutingCall (batches computed one ahead, rows copied into each batch, as a SQL
  // call does; the rows are not written) against the engine alone on the same sources, both on
  // the threads a call would use.
  {
    CallOptions call_options;
    call_options.device = DeviceSetting::kCpu;
    call_options.apsp_algorithm = "dijkstra";
    call_options.many_source = true;
    call_options.cost_arrays = true;
    call_options.engine = every_thread;
    call_options.engine.threads = threads_leaving_a_writer_core(threads);
    const gpu::Availability no_gpu;
    const auto run_call = [&] {
      RoutingCall call(CallKind::kAllPairs, small, call_options, no_gpu);
      call.set_all_pairs();
      call.prepare();
      ResultBatch batch;
      while (call.next_batch(batch)) cancel.throw_if_requested();
    };
    const double call_ms = fastest_after_warmup(3, cancel, run_call);
    EngineOptions engine_options = every_thread;
    engine_options.threads = call_options.engine.threads;
    const double engine_ms = time_fresh([&] { return dijkstra->create(small, engine_options); },
                                        small, every_vertex(small), cancel);
    const double cells = std::pow(static_cast<double>(small.vertex_count()), 2);
    s.cpu_row_cell_ns = clamp_positive((call_ms - engine_ms) * 1e6 / cells, 0.05);
    measured("cpu_row_cell_ns");
  }

  // Blocked Floyd-Warshall on every thread, scaled to one thread's time (the model divides).
  auto cpu_fw_ns_on = [&](const Graph& matrix_graph) {
    const double v3 = std::pow(static_cast<double>(matrix_graph.vertex_count()), 3);
    const double ms = time_fresh([&] { return cpu_fw->create(matrix_graph, every_thread); },
                                 matrix_graph, every_vertex(matrix_graph), cancel);
    return ms * 1e6 * cpu_speedup / v3;
  };
  // 1024 vertices: an 8 MB matrix, out of the caches as the matrices of the graphs that want
  // Floyd-Warshall are (on 512 the CPU's per V^3 was 3x too fast for 1000 vertices).
  const Graph big_dense = dense_graph(1024, 0.2, cancel);
  s.cpu_fw_ns = clamp_positive(cpu_fw_ns_on(big_dense), 1e-4);
  measured("cpu_fw_ns");
  // 2048 vertices: a 32 MB matrix, past the last-level cache of most machines (2000 vertices
  // ran 1.35x slower per V^3 than 1024 on the development machine). Never below the smaller
  // matrix's: noise must not make the larger one look faster.
  const Graph larger_dense = dense_graph(2048, 0.2, cancel);
  s.cpu_fw_large_ns = std::max(s.cpu_fw_ns, cpu_fw_ns_on(larger_dense));
  measured("cpu_fw_large_ns");

  // CPU Dijkstra on the same two dense graphs, 64 sources a thread on every thread, against
  // what the model says for them without the factor: their all pairs is the near-tie with
  // blocked_fw, and one source on the 512-vertex graph (the arc speed, 0.57-2.47 ns across
  // calibrations) does not price it.
  auto dense_factor_on = [&](const Graph& graph) {
    const auto sources = spread_sources(graph, threads * 64);
    const double ms =
        time_fresh([&] { return dijkstra->create(graph, every_thread); }, graph, sources, cancel);
    MachineSpeeds unscaled = s;
    unscaled.cpu_dijkstra_dense_factor = unscaled.cpu_dijkstra_dense_large_factor = 1;
    CallCostShape shape;
    shape.vertices = graph.vertex_count();
    shape.arcs = graph.arc_count();
    shape.sources = static_cast<std::int64_t>(sources.size());
    shape.dense = true;
    DeviceState state;
    state.cpu_threads = threads;
    state.hardware_threads = threads;
    const double predicted = estimate_call_ms(*dijkstra, shape, state, unscaled);
    return predicted > 0 ? std::clamp(ms / predicted, 0.2, 10.0) : 1.0;
  };
  s.cpu_dijkstra_dense_factor = dense_factor_on(big_dense);
  s.cpu_dijkstra_dense_large_factor = dense_factor_on(larger_dense);
  measured("cpu_dijkstra_dense_factor");
  measured("cpu_dijkstra_dense_large_factor");

  // The road index of a 384 x 384 grid: a sweep per source, a query per source or target.
  // 384 x 384: a hierarchy of tens of MB, out of the caches as a road network's is (on a 256 x
  // 256 grid the CPU's sweeps ran 1.6x faster than New York's on the H200 host).
  const Graph small_grid = grid(384, cancel);
  Stopwatch index_watch;
  Cch index(small_grid, cch_order(small_grid, nullptr, nullptr, cancel), cancel);
  index.customize(small_grid, cancel, 1);
  {
    const double arcs = static_cast<double>(small_grid.arc_count());
    s.cpu_cch_build_ns =
        clamp_positive(index_watch.elapsed_ms() * 1e6 / (arcs * std::log2(arcs)), 1);
    measured("cpu_cch_build_ns");
  }
  {
    EngineOptions with_index = one_thread;
    with_index.road_index = &index;
    auto engine = cpu_cch->create(small_grid, with_index);
    const auto sources = spread_sources(small_grid, 64);
    const auto targets = spread_sources(small_grid, 65);
    const double matrix = time_solve(*engine, small_grid, sources, cancel, &targets);
    s.cpu_cch_query_us =
        clamp_positive(matrix * 1e3 / static_cast<double>(sources.size() + targets.size()), 0.01);
    const double sweep = time_solve(*engine, small_grid, one, cancel);
    s.cpu_cch_sweep_ns = clamp_positive(
        (sweep - s.cpu_cch_query_us * 1e-3) * 1e6 / static_cast<double>(index.arc_count()), 0.01);
    s.cpu_cch_query_vertices = static_cast<double>(small_grid.vertex_count());
    // gpu_path's few targets: a path traced by the rule from distances the index settles one by
    // one, through the engine as a call asks for them (the matrix's pairs, the targets reversed,
    // each from another source, so that little of a path's arrays is cached from the one
    // before, as in a call), the fastest of three passes after one, per unit of the settling's
    // work, which settled_paths_work counts for the same pairs.
    const CsrGraph reverse = reverse_graph(small_grid.forward);
    std::vector<ArcIndex> path;
    const double paths_ms = fastest_after_warmup(3, cancel, [&] {
      for (std::size_t i = 0; i < sources.size(); ++i) {
        const auto distances = engine->source_distances(sources[i]);
        const auto distance_of = [&distances](VertexIndex v) { return distances->distance(v); };
        trace_strict_path(reverse, distance_of, sources[i], targets[targets.size() - 1 - i], path);
      }
    });
    CchWorkspace workspace(index.vertex_count());
    double work = 0;
    for (std::size_t i = 0; i < sources.size(); ++i)
      for (double w : settled_paths_work(index, reverse, sources[i],
                                         {targets[targets.size() - 1 - i]}, workspace))
        work += w;
    if (work > 0) {  // the grid's weights are positive: its paths never give up settling
      s.cpu_cch_settle_ns = clamp_positive(paths_ms * 1e6 / work, 0.01);
      measured("cpu_cch_settle_ns");
    }
    measured("cpu_cch_query_us");
    measured("cpu_cch_query_vertices");
    measured("cpu_cch_sweep_ns");
  }

  if (options.gpus == nullptr || !options.gpus->usable || !options.make_gpu_engine) {
    result.notes.push_back(
        "GPU speeds: built-in (" +
        std::string(options.gpus == nullptr ? "the GPU was not asked for" : options.gpus->reason) +
        ")");
    return result;
  }

  // GPU. The first engine of a process opens its context: timed against a second one.
  const EngineInfo* near_far = find_engine("near_far", Device::kGpu);
  const EngineInfo* multi_source = find_engine("multi_source", Device::kGpu);
  const EngineInfo* gpu_fw = find_engine("blocked_fw", Device::kGpu);
  const EngineInfo* gpu_cch = find_engine("cch", Device::kGpu);
  EngineOptions gpu_options;
  gpu_options.cancel = cancel;
  const Graph tiny = grid(16, cancel);
  const bool context_was_open = gpu::context_memory_bytes() > 0;
  double first_ms = 0, call_ms = 0;
  {
    Stopwatch watch;
    auto engine = options.make_gpu_engine(*near_far, tiny, gpu_options);
    first_ms = watch.elapsed_ms();
  }
  call_ms = time_fresh([&] { return options.make_gpu_engine(*near_far, tiny, gpu_options); }, tiny,
                       one, cancel);
  if (options.through_service) {
    s.gpu_service_call_ms = call_ms;
    measured("gpu_service_call_ms");
  } else {
    s.gpu_call_ms = call_ms;
    measured("gpu_call_ms");
    if (!context_was_open) {
      s.gpu_context_ms = clamp_positive(first_ms - call_ms, 0);
      measured("gpu_context_ms");
    } else {
      result.notes.push_back(
          "gpu_context_ms: built-in (this session had opened its CUDA context already)");
    }
  }

  // What an edges_sql call adds: a fresh engine (the graph's copy to the device, through the
  // service's shared memory where it runs there) and one search, against the search alone.
  double single_local_ms = 0;
  {
    auto engine = options.make_gpu_engine(*near_far, local, gpu_options);
    single_local_ms = time_solve(*engine, local, one, cancel);
    const double fresh_ms = time_fresh(
        [&] { return options.make_gpu_engine(*near_far, local, gpu_options); }, local, one, cancel);
    const double bytes = local_arcs * 12.0 + static_cast<double>(local.vertex_count()) * 8.0;
    s.gpu_upload_ns_per_byte =
        clamp_positive((fresh_ms - single_local_ms - call_ms) * 1e6 / bytes, 0.001);
    measured("gpu_upload_ns_per_byte");
  }

  // near_far: one source, then many (a cost matrix: compact rows, as cost-matrix calls ask, and
  // whole rows for the copies back); on the grid and on the random graph.
  const auto small_sources = spread_sources(small, 2048);
  {
    auto engine = options.make_gpu_engine(*near_far, local, gpu_options);
    s.gpu_single_local_ns = clamp_positive(single_local_ms * 1e6 / local_arcs, 0.01);
    const auto sources = spread_sources(local, 128);
    const auto targets = spread_sources(local, 129);
    const bool compact = engine->supports_compact_targets();
    const double many = time_solve(*engine, local, sources, cancel, compact ? &targets : nullptr);
    const double whole = time_solve(*engine, local, sources, cancel);
    const double rows_bytes =
        static_cast<double>(sources.size()) * static_cast<double>(local.vertex_count()) * 8.0;
    if (compact) {
      s.gpu_download_ns_per_byte = clamp_positive((whole - many) * 1e6 / rows_bytes, 0.001);
      measured("gpu_download_ns_per_byte");
    }
    // Per source on a small graph: what a source costs beyond its arcs.
    auto small_engine = options.make_gpu_engine(*near_far, small, gpu_options);
    const auto small_targets = spread_sources(small, 64);
    const double small_many =
        time_solve(*small_engine, small, small_sources, cancel, compact ? &small_targets : nullptr);
    s.gpu_many_source_us =
        clamp_positive(small_many * 1e3 / static_cast<double>(small_sources.size()), 0.01);
    const double per_source = many / static_cast<double>(sources.size()) -
                              s.gpu_many_source_us * 1e-3 -
                              (compact ? 0
                                       : rows_bytes / static_cast<double>(sources.size()) *
                                             s.gpu_download_ns_per_byte * 1e-6);
    s.gpu_many_local_ns = clamp_positive(per_source * 1e6 / local_arcs, 0.001);
    auto far_engine = options.make_gpu_engine(*near_far, far, gpu_options);
    s.gpu_single_far_ns =
        clamp_positive(time_solve(*far_engine, far, one, cancel) * 1e6 / far_arcs, 0.01);
    const auto far_sources = spread_sources(far, 32);
    const auto far_targets = spread_sources(far, 33);
    const double far_many =
        time_solve(*far_engine, far, far_sources, cancel, compact ? &far_targets : nullptr);
    const double far_per_source =
        far_many / static_cast<double>(far_sources.size()) - s.gpu_many_source_us * 1e-3 -
        (compact
             ? 0
             : static_cast<double>(far.vertex_count()) * 8.0 * s.gpu_download_ns_per_byte * 1e-6);
    s.gpu_many_far_ns = clamp_positive(far_per_source * 1e6 / far_arcs, 0.001);
    for (const char* name : {"gpu_single_local_ns", "gpu_single_far_ns", "gpu_many_local_ns",
                             "gpu_many_far_ns", "gpu_many_source_us"})
      measured(name);

    // multi_source (whole rows, as all pairs): per arc, source and hop, the copies back left
    // out. On the 384 x 384 grid, 32 sources (one warp's worth), whose hop depth makes the
    // rounds outweigh the copies: on the small random graph (a dozen hops) the copies were most
    // of the time, and once on an H100 the estimate of them exceeded it, which left the speed at
    // its floor and had auto send the New York 1000 x 1000 matrix to multi_source (7.7 s against
    // near_far's 0.37).
    if (multi_source != nullptr) {
      const auto sources = spread_sources(small_grid, 32);
      auto ms_engine = options.make_gpu_engine(*multi_source, small_grid, gpu_options);
      const double ms = time_solve(*ms_engine, small_grid, sources, cancel) -
                        static_cast<double>(sources.size()) *
                            static_cast<double>(small_grid.vertex_count()) * 8.0 *
                            s.gpu_download_ns_per_byte * 1e-6;
      const double hops = hop_depth(small_grid.forward, sources.front());
      s.gpu_multi_source_ns =
          clamp_positive(ms * 1e6 /
                             (static_cast<double>(sources.size()) *
                              static_cast<double>(small_grid.arc_count()) * hops),
                         1e-5);
      measured("gpu_multi_source_ns");
    }
  }

  // Blocked Floyd-Warshall on the GPU: the 1024-vertex dense graph.
  if (gpu_fw != nullptr) {
    const double v3 = std::pow(static_cast<double>(big_dense.vertex_count()), 3);
    const double ms =
        time_fresh([&] { return options.make_gpu_engine(*gpu_fw, big_dense, gpu_options); },
                   big_dense, every_vertex(big_dense), cancel);
    s.gpu_fw_ns = clamp_positive(ms * 1e6 / v3, 1e-6);
    measured("gpu_fw_ns");
  }

  // The GPU's road index sweeps (in this process only: through the service the index must be a
  // kept graph's, in shared memory).
  if (gpu_cch != nullptr && !options.through_service) {
    EngineOptions with_index = gpu_options;
    with_index.road_index = &index;
    auto engine = options.make_gpu_engine(*gpu_cch, small_grid, with_index);
    const auto sources = spread_sources(small_grid, 1024);
    const double rows_bytes =
        static_cast<double>(sources.size()) * static_cast<double>(small_grid.vertex_count()) * 8.0;
    const double ms = time_solve(*engine, small_grid, sources, cancel) -
                      rows_bytes * s.gpu_download_ns_per_byte * 1e-6;
    s.gpu_cch_sweep_ns = clamp_positive(
        ms * 1e6 / (static_cast<double>(sources.size()) * static_cast<double>(index.arc_count())),
        1e-5);
    measured("gpu_cch_sweep_ns");
  } else {
    result.notes.push_back("gpu_cch_sweep_ns: built-in (the service's cch needs a kept graph)");
  }
  return result;
}

}  // namespace gpu_routing
