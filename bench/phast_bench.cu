// One-to-all trees on the road index, GPU against CPU (issue 12's "one-to-all on New York under
// 0.5 ms on one GPU"): the GPU engine cch (PHAST sweeps, kernels/cch_phast.cu) given the same
// customized hierarchy the kept graph would share, at 1 to 1024 sources a solve, against
// PHAST on one CPU core (Cch::one_to_all) and the GPU's near_far search for one source. Every GPU
// row is compared with the CPU's PHAST row (must be equal bit for bit). Then the hierarchy's
// customization: Cch::customize on one core and on all of them against gpu::CchCustomizer
// (kernels/cch_customize.cu), whose weights and vias must equal the CPU's bit for bit.
// Then (section matrices, asked for by name) cost matrices with sweeps restricted to the targets'
// closure (RPHAST) against full ones.
//   phast_bench [--data DIR] [--reps N] [--sections trees,customization,matrices]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "road_index/cch.hpp"
#include "engine/engine.hpp"
#include "engine/gpu.hpp"
#include "graph_generators.hpp"
#include "gpu_engines.hpp"
#include "base/parallel.hpp"

using namespace gpu_routing;

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

double now_ms() {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

struct Timing {
  double wall_ms, compute_ms, transfer_ms;
};

// One solve of `sources` (full rows), with the engine's own split of its time.
Timing solve(ShortestPathEngine& engine, const std::vector<VertexIndex>& sources,
             std::vector<double>& rows, std::size_t n) {
  rows.resize(sources.size() * n);
  SolveRequest request;
  request.sources = sources.data();
  request.source_count = static_cast<int>(sources.size());
  request.distances = rows.data();
  const EngineReport before = engine.report();
  const double start = now_ms();
  engine.solve(request);
  const double wall = now_ms() - start;
  return {wall, engine.report().compute_ms - before.compute_ms,
          engine.report().transfer_ms - before.transfer_ms};
}

// A graph's road index and the GPU's cch engine on it, its hierarchy already on the device (a
// first solve, not timed by the callers). The engine reads the index through its pointer.
struct IndexedEngine {
  std::unique_ptr<Cch> cch;
  std::unique_ptr<ShortestPathEngine> engine;
};
IndexedEngine gpu_engine_on_index(const Graph& graph) {
  IndexedEngine indexed;
  indexed.cch = std::make_unique<Cch>(graph, cch_order(graph));
  indexed.cch->customize(graph);
  EngineOptions options;
  options.road_index = indexed.cch.get();
  indexed.engine = find_engine("cch", Device::kGpu)->create(graph, options);
  std::vector<double> row;
  solve(*indexed.engine, {0}, row, static_cast<std::size_t>(graph.vertex_count()));
  return indexed;
}

void run(const std::string& name, const Graph& graph, int reps) {
  const auto n = static_cast<std::size_t>(graph.vertex_count());
  IndexedEngine indexed = gpu_engine_on_index(graph);
  Cch& cch = *indexed.cch;
  ShortestPathEngine* engine = indexed.engine.get();
  std::mt19937_64 rng(11);
  std::uniform_int_distribution<VertexIndex> pick(0, graph.vertex_count() - 1);
  std::vector<double> rows, cpu_row(n);
  int mismatches = 0;
  double cpu_tree_ms = 0;
  {
    std::vector<double> times;
    for (int r = 0; r < reps; ++r) {
      const VertexIndex s = pick(rng);
      const double start = now_ms();
      cch.one_to_all(s, cpu_row.data());
      times.push_back(now_ms() - start);
    }
    cpu_tree_ms = median(times);
  }
  struct Config {
    int k, passes, lanes;
    bool graphs = true;
    int subtree = -1;   // the bottom's largest subtree (-1: the default, 0: no bottom)
    int block = 0;      // threads of a bottom group's block (0: the default)
    int per_block = 0;  // sources a bottom block sweeps (0: the default)
    int width = 0;      // sources a sweep at most (0: the default)
  };
  // The defaults (the top level by level, two passes of one block a level before a level gets the
  // whole GPU; the bottom's subtrees in one launch; lanes by each level's degrees; the launches
  // replayed as a CUDA graph; up to the built-in sources a sweep) at 1 to 1024 sources a solve,
  // then fewer sources a sweep, then more sources a bottom block at 256 a sweep, then the
  // launches enqueued one by one. Earlier tunings (subtree limits, blocks, passes, lanes) are in
  // docs/results/h200_phast_customization.md.
  const std::vector<Config> configs = {{1, 2, 0},
                                       {8, 2, 0},
                                       {32, 2, 0},
                                       {256, 2, 0},
                                       {1024, 2, 0},
                                       {256, 2, 0, true, -1, 0, 0, 32},
                                       {256, 2, 0, true, -1, 0, 0, 64},
                                       {256, 2, 0, true, -1, 0, 0, 128},
                                       {1024, 2, 0, true, -1, 0, 0, 32},
                                       {1024, 2, 0, true, -1, 0, 0, 512},
                                       {1024, 2, 0, true, -1, 0, 0, 1024},
                                       {256, 2, 0, true, -1, 0, 8},
                                       {256, 2, 0, true, -1, 0, 16},
                                       {256, 2, 0, true, -1, 0, 2},
                                       {256, 2, 0, false}};
  for (const Config& config : configs) {
    const int k = config.k;
    gpu::set_phast_one_block_passes(config.passes);
    gpu::set_phast_lanes(config.lanes);
    gpu::set_phast_graphs(config.graphs);
    gpu::set_phast_subtree_vertices(config.subtree);
    gpu::set_phast_group_block(config.block);
    gpu::set_phast_group_sources(config.per_block);
    gpu::set_phast_sources_per_sweep(config.width);
    std::vector<double> wall, compute, transfer;
    for (int r = 0; r < reps; ++r) {
      std::vector<VertexIndex> sources;
      for (int i = 0; i < k; ++i) sources.push_back(pick(rng));
      const Timing t = solve(*engine, sources, rows, n);
      wall.push_back(t.wall_ms / k);
      compute.push_back(t.compute_ms / k);
      transfer.push_back(t.transfer_ms / k);
      for (int i = 0; i < std::min(k, 3); ++i) {
        cch.one_to_all(sources[static_cast<std::size_t>(i)], cpu_row.data());
        if (!std::equal(cpu_row.begin(), cpu_row.end(),
                        rows.begin() + static_cast<std::ptrdiff_t>(i * n)))
          ++mismatches;
      }
    }
    std::string variant;
    if (config.passes != 2) variant += " (one-block passes " + std::to_string(config.passes) + ")";
    if (config.lanes != 0) variant += " (" + std::to_string(config.lanes) + " lanes)";
    if (!config.graphs) variant += " (launched one by one)";
    if (config.subtree == 0) variant += " (no bottom: every level over the GPU)";
    if (config.subtree > 0) variant += " (subtrees of " + std::to_string(config.subtree) + ")";
    if (config.block != 0) variant += " (bottom blocks of " + std::to_string(config.block) + ")";
    if (config.per_block != 0)
      variant += " (" + std::to_string(config.per_block) + " sources a bottom block)";
    if (config.width != 0) variant += " (" + std::to_string(config.width) + " a sweep)";
    std::printf("| %s | %d%s | %.3f | %.3f | %.3f | %.2f | %d |\n", name.c_str(), k,
                variant.c_str(), median(compute), median(transfer), median(wall), cpu_tree_ms,
                mismatches);
  }
  gpu::set_phast_one_block_passes(2);
  gpu::set_phast_lanes(0);
  gpu::set_phast_graphs(true);
  gpu::set_phast_subtree_vertices(-1);
  gpu::set_phast_group_block(0);
  gpu::set_phast_group_sources(0);
  gpu::set_phast_sources_per_sweep(0);
  // near_far, one source on the whole GPU, on the same graph.
  auto near_far = find_engine("near_far", Device::kGpu)->create(graph, EngineOptions{});
  solve(*near_far, {0}, rows, n);
  std::vector<double> compute;
  for (int r = 0; r < reps; ++r)
    compute.push_back(solve(*near_far, {pick(rng)}, rows, n).compute_ms);
  std::printf("| %s | near_far, 1 | %.3f | | | | |\n", name.c_str(), median(compute));
  std::fprintf(stderr, "%s: %s\n", name.c_str(), engine->report().notes.c_str());
}

// Cost matrices (compact rows, N sources x N other targets) on New York's index, in solves of
// 2048 sources as the GPU service's requests come: the GPU's sweeps restricted to the targets'
// closure (RPHAST) against full sweeps, in one engine, alternating; every cell equal between the
// two, and a sample of rows against the CPU's PHAST. The engine alone: no SQL, no service.
void matrices(const std::string& name, const Graph& graph, int reps) {
  constexpr int kRequestSources = 2048;  // ServiceEngine::preferred_batch_size_for_rows
  const auto n = static_cast<std::size_t>(graph.vertex_count());
  IndexedEngine indexed = gpu_engine_on_index(graph);
  Cch& cch = *indexed.cch;
  ShortestPathEngine* engine = indexed.engine.get();
  std::mt19937_64 rng(29);
  std::uniform_int_distribution<VertexIndex> pick(0, graph.vertex_count() - 1);
  std::vector<double> cpu_row(n);
  for (const int size : {1000, 3000, 10000}) {
    std::vector<VertexIndex> sources, targets;
    for (int i = 0; i < size; ++i) sources.push_back(pick(rng));
    for (int i = 0; i < size; ++i) targets.push_back(pick(rng));
    std::vector<double> got[2];
    std::vector<double> wall[2], compute[2], transfer[2];
    std::string notes[2];
    const auto cells = static_cast<std::size_t>(size) * static_cast<std::size_t>(size);
    for (int r = 0; r < reps; ++r) {
      for (const int restricted : {1, 0}) {
        gpu::set_phast_restrict(restricted == 1);
        std::vector<double>& out = got[restricted];
        out.assign(cells, -1.0);
        const EngineReport before = engine->report();
        const double start = now_ms();
        for (int first = 0; first < size; first += kRequestSources) {
          SolveRequest request;
          request.sources = sources.data() + first;
          request.source_count = std::min(kRequestSources, size - first);
          request.targets = targets.data();
          request.target_count = size;
          request.compact_targets = true;
          request.distances = out.data() + static_cast<std::size_t>(first) * size;
          engine->solve(request);
        }
        wall[restricted].push_back(now_ms() - start);
        compute[restricted].push_back(engine->report().compute_ms - before.compute_ms);
        transfer[restricted].push_back(engine->report().transfer_ms - before.transfer_ms);
        notes[restricted] = engine->report().notes;
      }
    }
    gpu::set_phast_restrict(true);
    int mismatches = got[0] == got[1] ? 0 : 1;
    for (int i = 0; i < 3; ++i) {
      cch.one_to_all(sources[static_cast<std::size_t>(i)], cpu_row.data());
      for (int j = 0; j < size; ++j)
        if (cpu_row[static_cast<std::size_t>(targets[static_cast<std::size_t>(j)])] !=
            got[1][static_cast<std::size_t>(i) * size + j])
          ++mismatches;
    }
    for (const int restricted : {1, 0})
      std::printf("| %s | %d x %d | %s | %.1f | %.1f | %.1f | %d |\n", name.c_str(), size, size,
                  restricted ? "restricted (RPHAST)" : "full", median(compute[restricted]),
                  median(transfer[restricted]), median(wall[restricted]), mismatches);
    std::fprintf(stderr, "%s %d x %d: %s\n", name.c_str(), size, size, notes[1].c_str());
  }
}

// Arcs whose weight or via differs in either direction.
int customization_mismatches(const Cch& got, const Cch& want) {
  int mismatches = 0;
  const auto same = [](double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; };
  for (std::size_t a = 0; a < static_cast<std::size_t>(want.arc_count()); ++a)
    if (!same(got.upward_weights()[a], want.upward_weights()[a]) ||
        !same(got.downward_weights()[a], want.downward_weights()[a]) ||
        got.upward_vias()[a] != want.upward_vias()[a] ||
        got.downward_vias()[a] != want.downward_vias()[a])
      ++mismatches;
  return mismatches;
}

// The hierarchy's customization (the same landmark order as above), CPU against GPU.
void customization(const std::string& name, const Graph& graph, int reps) {
  const std::vector<VertexIndex> order = cch_order(graph);
  Cch want(graph, order), cpu(graph, order), on_gpu(graph, order);
  want.customize(graph, {}, 1);
  const int cores = resolve_thread_count(0);
  auto cpu_median = [&](int threads) {
    std::vector<double> times;
    for (int r = 0; r < reps; ++r) {
      const double start = now_ms();
      cpu.customize(graph, {}, threads);
      times.push_back(now_ms() - start);
    }
    return median(times);
  };
  const double one_core = cpu_median(1);
  const double all_cores = cpu_median(cores);
  int mismatches = customization_mismatches(cpu, want);

  // A fresh customizer each time: the topology laid out and copied too.
  std::vector<double> fresh;
  for (int r = 0; r < reps; ++r) {
    const double start = now_ms();
    gpu::customize_cch_on_device(on_gpu, graph);
    fresh.push_back(now_ms() - start);
    mismatches += customization_mismatches(on_gpu, want);
  }
  // Customizers kept (with triangle lists and without): the first customization of each copies
  // the topology.
  double topology_ms[2] = {0, 0};
  std::unique_ptr<gpu::CchCustomizer> customizers[2];
  for (const bool lists : {true, false}) {
    gpu::set_cch_customize_triangle_lists(lists);
    const double made = now_ms();
    customizers[lists] = std::make_unique<gpu::CchCustomizer>(on_gpu, graph);
    topology_ms[lists] = now_ms() - made;
    customizers[lists]->customize(on_gpu, graph);  // warm-up
  }
  gpu::set_cch_customize_triangle_lists(false);
  struct Variant {
    bool lists;
    int middles, one_block_pairs;
  };
  bool first = true;
  for (const Variant variant :
       {Variant{false, 1, 8192}, Variant{false, 2, 8192}, Variant{false, 4, 8192},
        Variant{false, 8, 8192}, Variant{false, 1, 0}, Variant{false, 1, 32768},
        Variant{true, 1, 8192}, Variant{true, 2, 8192}, Variant{true, 4, 8192}}) {
    gpu::set_cch_customize_middles_per_thread(variant.middles);
    gpu::set_cch_customize_one_block_pairs(variant.one_block_pairs);
    gpu::CchCustomizer& customizer = *customizers[variant.lists];
    customizer.customize(on_gpu, graph);  // groups chosen and copied
    std::vector<double> compute, upload, download, wall;
    for (int r = 0; r < reps; ++r) {
      const double start = now_ms();
      const gpu::CchCustomizationTimes t = customizer.customize(on_gpu, graph);
      wall.push_back(now_ms() - start);
      compute.push_back(t.compute_ms);
      upload.push_back(t.upload_ms);
      download.push_back(t.download_ms);
      mismatches += customization_mismatches(on_gpu, want);
    }
    if (first) {
      std::printf("| %s | %d | %.1f | %.1f (%d) | %.2f | %.2f | %.2f | %.2f | %.1f | %.1f | %d |\n",
                  name.c_str(), want.arc_count(), one_core, all_cores, cores, median(compute),
                  median(upload), median(download), median(wall), median(fresh), topology_ms[1],
                  mismatches);
    } else {
      std::printf(
          "| %s (%s, %d middles a thread, one-block loop up to %d middles) | | | | %.2f | | | "
          "%.2f | | %s | %d |\n",
          name.c_str(), variant.lists ? "triangle lists" : "row searches", variant.middles,
          variant.one_block_pairs, median(compute), median(wall),
          variant.lists ? std::to_string(topology_ms[1]).substr(0, 5).c_str() : "", mismatches);
    }
    first = false;
  }
  gpu::set_cch_customize_middles_per_thread(0);
  gpu::set_cch_customize_one_block_pairs(-1);
}

}  // namespace

int main(int argc, char** argv) {
  std::string data = "../shared/data";
  int reps = 9;
  std::string sections = "trees,customization";
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--data")) data = argv[i + 1];
    if (!std::strcmp(argv[i], "--reps")) reps = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--sections")) sections = argv[i + 1];
  }
  const bool trees = sections.find("trees") != std::string::npos;
  const bool customizing = sections.find("customization") != std::string::npos;
  const bool matrix_section = sections.find("matrices") != std::string::npos;
  if (!gpu::availability().usable) {
    std::fprintf(stderr, "phast_bench: no usable GPU: %s\n", gpu::availability().reason.c_str());
    return 1;
  }
  const auto& device = gpu::availability().devices.front();
  const auto new_york_edges = bench::read_dimacs(data + "/USA-road-d.NY.gr.gz");
  const auto rome_edges = bench::read_dimacs(data + "/rome99.gr");
  const Graph new_york = build_graph(new_york_edges.view(), true);
  const Graph rome = build_graph(rome_edges.view(), true);
  if (trees) {
    std::printf(
        "phast_bench on %s: one-to-all trees on the road index (landmark order, as a kept graph's "
        "index); medians of %d solves, per tree. compute: host upward searches + GPU sweep; "
        "transfer: rows to the host. CPU PHAST: one core of this host.\n\n",
        device.name.c_str(), reps);
    std::printf(
        "| graph | sources a solve | GPU PHAST compute per tree (ms) | transfer per tree (ms) | "
        "wall per tree (ms) | CPU PHAST one core (ms) | mismatches |\n");
    std::printf("|---|---:|---:|---:|---:|---:|---:|\n");
    run("New York", new_york, reps);
    run("Rome", rome, reps);
  }
  if (customizing) {
    std::printf(
        "\nphast_bench on %s: customizing the road index (landmark order), medians of %d. CPU: "
        "Cch::customize on one core and on every core of this host. GPU (a kept "
        "gpu::CchCustomizer): compute = original arcs and triangles on the device; weights up = "
        "the graph's arc weights to the device; down = weights and vias back into the Cch; "
        "with copies = the whole call (checks included); fresh = customize_cch_on_device, the "
        "topology laid out (triangles listed) and copied each time; topology = making the "
        "customizer once. "
        "mismatches: arcs whose weight or via differs from one CPU core's, all runs so far.\n\n",
        device.name.c_str(), reps);
    std::printf(
        "| graph | hierarchy arcs | CPU one core (ms) | CPU all cores (ms) (threads) | GPU compute "
        "(ms) | weights up (ms) | down (ms) | GPU with copies (ms) | GPU fresh (ms) | topology "
        "(ms) | mismatches |\n");
    std::printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    customization("New York", new_york, reps);
    customization("Rome", rome, reps);
  }
  if (matrix_section) {
    std::printf(
        "\nphast_bench on %s: cost matrices as compact rows, N random sources x N random targets, "
        "in solves of 2048 sources (the GPU service's requests), restricted and full sweeps "
        "alternating in one engine, medians of %d (ms, the whole matrix). compute: upward "
        "searches, sweeps and gathers (and laying out a restriction when the targets change); "
        "transfer: rows to the host. mismatches: cells where the two differ, plus cells of 3 rows "
        "against the CPU's PHAST.\n\n",
        device.name.c_str(), reps);
    std::printf(
        "| graph | matrix | sweeps | compute (ms) | transfer (ms) | wall (ms) | mismatches |\n");
    std::printf("|---|---|---|---:|---:|---:|---:|\n");
    matrices("New York", new_york, reps);
  }
  return 0;
}
