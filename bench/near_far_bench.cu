// near_far against the 1-thread CPU Dijkstra on the benchmark graphs (single source, compute only,
// graph resident), sweeps of its knobs, and the many-source cost matrix on a road network.
// Prints tables; every GPU row is checked bit for bit against the CPU.
//
//   near_far_bench [--quick] [--sweep] [--scaling] [--graphs=grid,random,rmat,ny]
//   [path/to/USA-road-d.NY.gr.gz]
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "graph_generators.hpp"
#include "engine/gpu.hpp"
#include "near_far.cuh"
#include "cpu/sssp_dijkstra.hpp"

using namespace gpu_routing;
using gpu::NearFarConfig;

namespace {

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const std::size_t m = values.size() / 2;
  return values.size() % 2 ? values[m] : 0.5 * (values[m - 1] + values[m]);
}

// Sources that reach much of the graph: vertices with out-arcs, picked by a fixed generator.
std::vector<VertexIndex> pick_sources(const Graph& g, int count, unsigned seed) {
  std::vector<VertexIndex> sources;
  std::mt19937 rng(seed);
  std::uniform_int_distribution<VertexIndex> any(0, g.vertex_count() - 1);
  while (static_cast<int>(sources.size()) < count) {
    const VertexIndex v = any(rng);
    if (g.forward.end(v) - g.forward.begin(v) >= 2) sources.push_back(v);
  }
  return sources;
}

struct CpuRows {
  std::vector<std::vector<double>> rows;
  double median_ms = 0;
};

CpuRows cpu_dijkstra(const Graph& g, const std::vector<VertexIndex>& sources) {
  CpuRows out;
  DijkstraWorkspace workspace(g.vertex_count());
  std::vector<double> times;
  for (VertexIndex s : sources) {
    out.rows.emplace_back(static_cast<std::size_t>(g.vertex_count()));
    Stopwatch watch;
    workspace.run(g.forward, s, out.rows.back().data(), nullptr, 0, CancelToken());
    times.push_back(watch.elapsed_ms());
  }
  out.median_ms = median(times);
  return out;
}

struct GpuResult {
  double kernel_ms = 0;  // median over sources
  double solve_ms = 0;   // median, the row's download included
  double rounds = 0;     // median
  double items_per_vertex = 0;
  bool exact = true;
  int grid_blocks = 0;
  double delta = 0;
};

GpuResult run_single(const Graph& g, const NearFarConfig& config,
                     const std::vector<VertexIndex>& sources, const CpuRows& cpu) {
  GpuResult result;
  auto engine = gpu::make_near_far_engine(g, EngineOptions{}, config);
  std::vector<double> row(static_cast<std::size_t>(g.vertex_count()));
  SolveRequest request;
  request.source_count = 1;
  request.distances = row.data();
  request.sources = &sources[0];
  engine->solve(request);  // upload and warm-up
  std::vector<double> kernel, solve, rounds, items;
  for (std::size_t i = 0; i < sources.size(); ++i) {
    request.sources = &sources[i];
    Stopwatch watch;
    engine->solve(request);
    solve.push_back(watch.elapsed_ms());
    const gpu::NearFarStats stats = gpu::near_far_stats(*engine);
    kernel.push_back(stats.kernel_ms);
    rounds.push_back(static_cast<double>(stats.rounds));
    items.push_back(static_cast<double>(stats.frontier_items) / g.vertex_count());
    result.grid_blocks = stats.grid_blocks;
    result.delta = stats.delta;
    if (std::memcmp(row.data(), cpu.rows[i].data(), row.size() * sizeof(double)) != 0) {
      result.exact = false;
      for (std::size_t v = 0; v < row.size(); ++v)
        if (!(row[v] == cpu.rows[i][v])) {
          std::printf("  MISMATCH source %d vertex %zu: gpu %.17g cpu %.17g\n", sources[i], v,
                      row[v], cpu.rows[i][v]);
          break;
        }
    }
  }
  result.kernel_ms = median(kernel);
  result.solve_ms = median(solve);
  result.rounds = median(rounds);
  result.items_per_vertex = median(items);
  return result;
}

void print_row(const char* label, const GpuResult& r, double cpu_ms) {
  std::printf("  %-34s %9.3f %9.3f %7.1fx %8.0f %6.2f %6d %10.1f %s\n", label, r.kernel_ms,
              r.solve_ms, cpu_ms / std::max(r.kernel_ms, 1e-9), r.rounds, r.items_per_vertex,
              r.grid_blocks, r.delta, r.exact ? "exact" : "WRONG");
  std::fflush(stdout);
}

void single_source_table(const bench::EdgeList& edges, bool quick, bool corner_source = false) {
  Stopwatch build_watch;
  Graph g = build_graph(edges.view(), true);
  const int source_count = quick ? 3 : 7;
  const std::vector<VertexIndex> sources = pick_sources(g, source_count, 12345);
  const CpuRows cpu = cpu_dijkstra(g, sources);
  std::printf("\n%s: V=%d E=%d (built in %.0f ms)\n", edges.name.c_str(), g.vertex_count(),
              g.arc_count(), build_watch.elapsed_ms());
  std::printf("  CPU Dijkstra, 1 thread: median %.2f ms over %d sources\n", cpu.median_ms,
              source_count);
  std::printf("  %-34s %9s %9s %8s %8s %6s %6s %10s\n", "near_far variant", "kernel", "solve",
              "vs CPU", "rounds", "items", "blocks", "delta");
  print_row("default", run_single(g, NearFarConfig{}, sources, cpu), cpu.median_ms);
  if (corner_source) {
    // The grid's worst case: a corner source, the most dependent rounds.
    const std::vector<VertexIndex> corner = {0};
    const CpuRows corner_cpu = cpu_dijkstra(g, corner);
    std::printf("  corner source 0: CPU Dijkstra %.2f ms\n", corner_cpu.median_ms);
    print_row("default, corner source", run_single(g, NearFarConfig{}, corner, corner_cpu),
              corner_cpu.median_ms);
  }
  if (quick) return;
  auto variant = [&](const std::string& label, const NearFarConfig& c) {
    try {
      print_row(label.c_str(), run_single(g, c, sources, cpu), cpu.median_ms);
    } catch (const std::exception& e) {
      std::printf("  %-34s failed: %s\n", label.c_str(), e.what());
    }
  };
  for (double scale : {0.25, 0.5, 2.0, 4.0}) {
    NearFarConfig c;
    c.delta_scale = scale;
    variant("delta x" + std::to_string(scale).substr(0, 4), c);
  }
  for (int hops : {0, 1, 2, 8, 16}) {
    NearFarConfig c;
    c.local_hops = hops;
    variant("local hops " + std::to_string(hops), c);
  }
  {
    NearFarConfig c;
    c.precheck = true;
    variant("precheck", c);
  }
  {
    NearFarConfig c;
    c.block_local_hops = false;
    variant("local queues per warp", c);
  }
  {
    NearFarConfig c;
    c.grid_wide_registers = false;
    variant("64-register cap (2 blocks/SM)", c);
  }
  {
    NearFarConfig c;
    c.grid_wide_registers = false;
    c.precheck = true;
    variant("64-register cap, precheck", c);
  }
  {
    NearFarConfig c;
    c.grid_wide_registers = false;
    c.grid_block_size = 1024;
    variant("64-register cap, block 1024", c);
  }
  {
    NearFarConfig c;
    c.grid_block_size = 256;
    variant("block 256", c);
  }
  for (int small : {0, 128, 2048, 8192}) {
    NearFarConfig c;
    c.small_frontier = small;
    variant("small_frontier " + std::to_string(small), c);
  }
  {
    NearFarConfig c;
    c.block_stretch_rounds = 64;
    variant("stretch 64 rounds", c);
  }
  {
    NearFarConfig c;
    c.delta_scale = 4.0;
    c.local_hops = 8;
    variant("delta x4, local hops 8", c);
  }
}

// The knobs that set the cost of a round against the number of rounds, crossed, for graphs bound
// by their dependent rounds (grids, roads): bucket width, local hops, the grid's size and when one
// block runs alone. One table row per combination, the default first.
void round_sweep_table(const bench::EdgeList& edges) {
  Graph g = build_graph(edges.view(), true);
  const std::vector<VertexIndex> sources = pick_sources(g, 7, 12345);
  const CpuRows cpu = cpu_dijkstra(g, sources);
  std::printf("\n%s, round sweep: V=%d E=%d; CPU Dijkstra, 1 thread: median %.2f ms\n",
              edges.name.c_str(), g.vertex_count(), g.arc_count(), cpu.median_ms);
  std::printf("  %-34s %9s %9s %8s %8s %6s %6s %10s\n", "near_far variant", "kernel", "solve",
              "vs CPU", "rounds", "items", "blocks", "delta");
  auto variant = [&](const std::string& label, const NearFarConfig& c) {
    try {
      print_row(label.c_str(), run_single(g, c, sources, cpu), cpu.median_ms);
    } catch (const std::exception& e) {
      std::printf("  %-34s failed: %s\n", label.c_str(), e.what());
    }
  };
  variant("default", NearFarConfig{});
  {
    NearFarConfig c;
    c.block_local_hops = false;
    variant("local queues per warp", c);
  }
  for (int deep : {8, 32}) {
    NearFarConfig c;
    c.deep_local_hops = deep;
    variant("deep hops " + std::to_string(deep), c);
  }
  for (int frontier : {0, 8192, 131072}) {
    NearFarConfig c;
    c.deep_frontier = frontier;
    variant("deep hops up to " + std::to_string(frontier) + " entries", c);
  }
  for (double scale : {4.0, 16.0, 32.0, 64.0})
    for (int hops : {4, 16}) {
      NearFarConfig c;
      c.delta_scale = scale;
      c.local_hops = hops;
      char label[64];
      std::snprintf(label, sizeof label, "delta x%g, hops %d", scale, hops);
      variant(label, c);
    }
  for (int blocks : {16, 33, 66}) {
    NearFarConfig c;
    c.grid_block_count = blocks;
    variant("grid of " + std::to_string(blocks) + " blocks", c);
  }
  for (int blocks : {66, 132}) {
    NearFarConfig c;
    c.grid_block_size = 256;
    c.grid_block_count = blocks;
    variant("grid of " + std::to_string(blocks) + " blocks x 256", c);
    c.delta_scale = 16;
    c.local_hops = 16;
    variant("grid of " + std::to_string(blocks) + " blocks x 256, x16, hops 16", c);
  }
  for (int small : {1024, 2048, 4096}) {
    NearFarConfig c;
    c.small_frontier = small;
    variant("small_frontier " + std::to_string(small), c);
    c.block_stretch_rounds = 64;
    variant("small_frontier " + std::to_string(small) + ", stretch 64", c);
  }
  {
    NearFarConfig c;
    c.small_frontier = 0;
    variant("never one block alone", c);
  }
}

// The cost matrix: `count` sources x `count` targets on one graph.
void cost_matrix_table(const bench::EdgeList& edges, int count, bool quick) {
  Graph g = build_graph(edges.view(), true);
  const std::size_t n = static_cast<std::size_t>(g.vertex_count());
  std::vector<VertexIndex> sources = pick_sources(g, count, 777);
  std::vector<VertexIndex> targets = pick_sources(g, count, 999);
  const int checked = quick ? 3 : 12;
  const CpuRows cpu =
      cpu_dijkstra(g, std::vector<VertexIndex>(sources.begin(), sources.begin() + checked));
  std::printf(
      "\n%s: %d x %d cost matrix (V=%zu E=%d); CPU 1-thread Dijkstra %.2f ms per source -> %.0f ms "
      "for all %d\n",
      edges.name.c_str(), count, count, n, g.arc_count(), cpu.median_ms, cpu.median_ms * count,
      count);
  std::printf("  %-44s %10s %10s %9s %6s %12s %s\n", "near_far run", "kernel ms", "solve ms",
              "per src", "slots", "rounds/src", "check");
  std::vector<double> rows(static_cast<std::size_t>(count) * n);

  auto run_matrix = [&](const char* label, NearFarConfig config, int batch, bool with_targets,
                        int repeats) {
    auto engine = gpu::make_near_far_engine(g, EngineOptions{}, config);
    std::vector<double> kernel_times, solve_times;
    gpu::NearFarStats stats;
    bool exact = true;
    for (int rep = 0; rep <= repeats; ++rep) {  // rep 0 is the warm-up (upload, mode choice)
      double kernel = 0, solve = 0;
      long long rounds = 0;
      for (int first = 0; first < count; first += batch) {
        SolveRequest request;
        request.sources = sources.data() + first;
        request.source_count = std::min(batch, count - first);
        request.distances = rows.data() + static_cast<std::size_t>(first) * n;
        if (with_targets) {
          request.targets = targets.data();
          request.target_count = count;
        }
        Stopwatch watch;
        engine->solve(request);
        solve += watch.elapsed_ms();
        stats = gpu::near_far_stats(*engine);
        kernel += stats.kernel_ms;
        rounds += stats.rounds;
      }
      stats.rounds = rounds;
      if (rep > 0) {
        kernel_times.push_back(kernel);
        solve_times.push_back(solve);
      }
    }
    for (int i = 0; i < checked; ++i)
      for (int j = 0; j < count; ++j) {
        const std::size_t v =
            with_targets ? static_cast<std::size_t>(targets[j]) : static_cast<std::size_t>(j);
        if (!(rows[static_cast<std::size_t>(i) * n + v] ==
              cpu.rows[static_cast<std::size_t>(i)][v]))
          exact = false;
      }
    const double k = median(kernel_times);
    std::printf("  %-44s %10.2f %10.2f %9.4f %6d %12.0f %s\n", label, k, median(solve_times),
                k / count, stats.batch_slots, static_cast<double>(stats.rounds) / count,
                exact ? "exact" : "WRONG");
    std::fflush(stdout);
  };
  auto run = [&](const char* label, NearFarConfig config, int batch, bool with_targets,
                 int repeats) {
    try {
      run_matrix(label, config, batch, with_targets, repeats);
    } catch (const std::exception& e) {
      std::printf("  %-44s failed: %s\n", label, e.what());
    }
  };

  NearFarConfig blocks;
  blocks.batch = NearFarConfig::Batch::kBlockPerSource;
  run("one solve, 1000 targets (block per source)", blocks, count, true, quick ? 1 : 3);
  run("one solve, auto mode", NearFarConfig{}, count, true, 1);
  if (quick) return;
  run("one solve, full rows", blocks, count, false, 1);
  run("batches of 254, 1000 targets", blocks, 254, true, 2);
  for (int hops : {0, 1, 2, 8}) {
    NearFarConfig c = blocks;
    c.local_hops = hops;
    run(("local hops " + std::to_string(hops)).c_str(), c, count, true, 2);
  }
  for (int block : {64, 256, 512}) {
    NearFarConfig c = blocks;
    c.batch_block_size = block;
    run(("batch block " + std::to_string(block)).c_str(), c, count, true, 2);
  }
  for (double scale : {0.25, 0.5, 2.0, 4.0}) {
    NearFarConfig c = blocks;
    c.delta_scale = scale;
    run(("delta x" + std::to_string(scale).substr(0, 4)).c_str(), c, count, true, 2);
  }
  {
    NearFarConfig c = blocks;
    c.precheck = true;
    run("precheck", c, count, true, 2);
  }
  {
    NearFarConfig c = blocks;
    c.batch_block_local_hops = true;
    run("local queues pooled per block", c, count, true, 2);
  }
}

// Cost matrices over every visible GPU: each GPU's engine takes a share of the sources.
void scaling_table(const bench::EdgeList& edges) {
  Graph g = build_graph(edges.view(), true);
  const int gpus = static_cast<int>(gpu::availability().devices.size());
  std::printf("\n## near_far cost matrices over %d GPU(s), %s (V=%d E=%d): ms, median of 3\n\n",
              gpus, edges.name.c_str(), g.vertex_count(), g.arc_count());
  std::printf(
      "| sources x targets | 1 GPU | %d GPUs | speed-up | check |\n|---|---:|---:|---:|---|\n",
      gpus);
  for (int count : {1000, 8000}) {
    const std::vector<VertexIndex> sources = pick_sources(g, count, 4242);
    const std::vector<VertexIndex> targets = pick_sources(g, 1000, 999);
    std::vector<double> one(static_cast<std::size_t>(count) * targets.size());
    std::vector<double> all(one.size());
    auto time_matrix = [&](int devices, std::vector<double>& out) {
      NearFarConfig config;
      config.devices = devices;
      auto engine = gpu::make_near_far_engine(g, EngineOptions{}, config);
      SolveRequest request;
      request.sources = sources.data();
      request.source_count = count;
      request.targets = targets.data();
      request.target_count = static_cast<int>(targets.size());
      request.compact_targets = true;
      request.distances = out.data();
      std::vector<double> times;
      for (int rep = 0; rep <= 3; ++rep) {  // rep 0: upload and mode choice
        Stopwatch watch;
        engine->solve(request);
        if (rep > 0) times.push_back(watch.elapsed_ms());
      }
      return median(times);
    };
    const double t1 = time_matrix(1, one);
    const double tn = time_matrix(gpus, all);
    const bool same = std::memcmp(one.data(), all.data(), one.size() * sizeof(double)) == 0;
    std::printf("| %d x %zu | %.1f | %.1f | %.2fx | %s |\n", count, targets.size(), t1, tn,
                t1 / std::max(tn, 1e-9), same ? "identical" : "DIFFERENT");
    std::fflush(stdout);
  }
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false, sweep = false, scaling = false;
  std::string ny_path, graphs = "grid,random,rmat,ny";
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0)
      quick = true;
    else if (std::strcmp(argv[i], "--sweep") == 0)
      sweep = true;
    else if (std::strcmp(argv[i], "--scaling") == 0)
      scaling = true;
    else if (std::strncmp(argv[i], "--graphs=", 9) == 0)
      graphs = argv[i] + 9;
    else
      ny_path = argv[i];
  }
  auto wants = [&](const char* key) {
    return ("," + graphs + ",").find(std::string(",") + key + ",") != std::string::npos;
  };
  const auto& gpus = gpu::availability();
  if (!gpus.usable) {
    std::printf("no usable GPU: %s\n", gpus.reason.c_str());
    return 1;
  }
  std::printf("device: %s, %d SMs; %s\n", gpus.devices[0].name.c_str(),
              gpus.devices[0].multiprocessors, gpu::build_description().c_str());
  std::printf(
      "kernel = search kernels' wall time (graph resident); solve = solve() incl. row download\n");
  try {
    if (scaling) {
      // --scaling: the NY cost matrices on one GPU and on every visible GPU.
      if (ny_path.empty()) throw std::runtime_error("--scaling needs the NY .gr.gz path");
      scaling_table(bench::read_dimacs(ny_path));
      return 0;
    }
    if (sweep) {
      // --sweep: the round-cost knobs crossed on the graphs bound by rounds.
      if (wants("grid")) round_sweep_table(bench::grid_graph(1000));
      if (wants("random")) round_sweep_table(bench::random_graph(1000000, 4, 1000));
      if (wants("ny") && !ny_path.empty()) round_sweep_table(bench::read_dimacs(ny_path));
      return 0;
    }
    if (wants("grid")) single_source_table(bench::grid_graph(1000), quick, true);
    if (wants("random")) single_source_table(bench::random_graph(1000000, 4, 1000), quick);
    if (wants("rmat"))
      single_source_table(bench::rmat_graph(20, std::int64_t{16} << 20, 1000), quick);
    if (wants("ny") && !ny_path.empty()) {
      bench::EdgeList ny = bench::read_dimacs(ny_path);
      single_source_table(ny, quick);
      cost_matrix_table(ny, 1000, quick);
    }
  } catch (const std::exception& e) {
    std::printf("error: %s\n", e.what());
    return 1;
  }
  return 0;
}
