// The road index's GPU engine (kernels/cch_phast.cu): PHAST sweeps on the device against the CPU's
// cch engine (the same minimum over the same sums: equal bit for bit, fractional costs included)
// and the reference Dijkstra (exact for whole-number costs), predecessors by the common rule,
// compact cost-matrix rows, a shared index, its own paths and cancel. Skips where no GPU is usable.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "../../kernels/gpu_engines.hpp"
#include "road_index/cch.hpp"
#include "engine/engine.hpp"
#include "engine/gpu.hpp"
#include "base/predecessors.hpp"
#include "cpu/sssp_dijkstra.hpp"
#include "area_testing.hpp"
#include "gpu_testing.hpp"
#include "test_graphs.hpp"

namespace gpu_routing {
namespace {

using testing::EdgeTable;
using testing::RandomGraphSpec;

const EngineInfo& gpu_cch() {
  const EngineInfo* info = find_engine("cch", Device::kGpu);
  EXPECT_NE(info, nullptr);
  return *info;
}

struct Rows {
  std::vector<double> distances;
  std::vector<ArcIndex> predecessors;
};

Rows run(ShortestPathEngine& engine, const Graph& g, const std::vector<VertexIndex>& sources,
         int batch, bool with_predecessors) {
  const std::size_t n = static_cast<std::size_t>(g.vertex_count());
  Rows rows;
  rows.distances.assign(sources.size() * n, -1.0);  // poisoned: every entry must be written
  if (with_predecessors) rows.predecessors.assign(sources.size() * n, -7);
  for (std::size_t first = 0; first < sources.size(); first += static_cast<std::size_t>(batch)) {
    SolveRequest request;
    request.sources = sources.data() + first;
    request.source_count = static_cast<int>(std::min(sources.size() - first, std::size_t(batch)));
    request.distances = rows.distances.data() + first * n;
    if (with_predecessors) request.predecessor_arcs = rows.predecessors.data() + first * n;
    engine.solve(request);
  }
  return rows;
}

std::vector<VertexIndex> spread_sources(VertexIndex n, int wanted) {
  std::vector<VertexIndex> sources;
  for (int i = 0; i < wanted && n > 0; ++i)
    sources.push_back(static_cast<VertexIndex>((static_cast<long long>(i) * 7919) % n));
  return sources;
}

TEST(GpuCch, EqualsTheCpuIndexAndTheReferenceOnRandomGraphs) {
  SKIP_WITHOUT_GPU();
  const EngineInfo* cpu = find_engine("cch", Device::kCpu);
  ASSERT_NE(cpu, nullptr);
  for (unsigned seed = 1; seed <= 40; ++seed) {
    RandomGraphSpec spec;
    spec.vertices = 1 + static_cast<int>(seed * 37 % 400);
    spec.edges = static_cast<int>(seed * 101 % 1800);
    spec.integer_weights = seed % 2 == 0;
    spec.zero_weights = seed % 5 == 0;
    spec.max_weight = seed % 7 == 0 ? 3 : 100;  // few distinct weights: many ties
    spec.components = 1 + static_cast<int>(seed % 3);
    spec.parallel_edges = seed % 4 != 0;
    spec.self_loops = seed % 3 != 0;
    spec.with_reverse = seed % 6 != 0;
    EdgeTable t = testing::random_edges(spec, seed);
    const bool directed = seed % 2 == 1;
    Graph g = build_graph(t.view(), directed);
    if (g.vertex_count() == 0) continue;
    ensure_reverse(g);
    const std::string what = testing::describe(spec, seed) + (directed ? " directed" : "");
    // 70 sources: three sweeps of up to 32, and a batch of 5 leaves uneven sweeps.
    const auto sources = spread_sources(g.vertex_count(), 70);
    auto on_gpu = gpu_cch().create(g, EngineOptions{});
    auto on_cpu = cpu->create(g, EngineOptions{});
    const int batch = seed % 3 == 0 ? 5 : 70;
    Rows got = run(*on_gpu, g, sources, batch, true);
    Rows want = run(*on_cpu, g, sources, batch, false);
    const std::size_t n = static_cast<std::size_t>(g.vertex_count());
    for (std::size_t i = 0; i < sources.size(); ++i) {
      for (std::size_t v = 0; v < n; ++v)
        ASSERT_EQ(got.distances[i * n + v], want.distances[i * n + v])
            << what << " source " << sources[i] << " vertex " << v;
      auto reference = reference_dijkstra(g.forward, sources[i]);
      const double* row = got.distances.data() + i * n;
      ASSERT_TRUE(g.integer_weights ? testing::same_distances(row, reference)
                                    : testing::near_distances(row, reference, 1e-9))
          << what;
      // The rule applied to the engine's own distances (the reference's where they are exact).
      std::vector<ArcIndex> rule(n);
      compute_predecessors(g.reverse, row, sources[i], rule.data());
      for (std::size_t v = 0; v < n; ++v)
        ASSERT_EQ(got.predecessors[i * n + v], rule[v]) << what << " vertex " << v;
    }
  }
}

// Paths without rows (the GPU service's traced routes): each source's own targets' distances and
// full predecessor rows, equal to the CPU's rows and the rule applied to them; zero-cost ties
// leave vertices pending on the device, resolved on the host from the row.
TEST(GpuCch, PathsWithoutRowsEqualTheRuleOnTheRows) {
  SKIP_WITHOUT_GPU();
  const EngineInfo* cpu = find_engine("cch", Device::kCpu);
  ASSERT_NE(cpu, nullptr);
  for (unsigned seed = 1; seed <= 12; ++seed) {
    RandomGraphSpec spec;
    spec.vertices = 50 + static_cast<int>(seed * 53 % 300);
    spec.edges = spec.vertices * 3;
    spec.integer_weights = true;
    spec.zero_weights = seed % 2 == 0;
    spec.max_weight = seed % 3 == 0 ? 2 : 50;
    spec.components = 1 + static_cast<int>(seed % 2);
    EdgeTable t = testing::random_edges(spec, seed);
    Graph g = build_graph(t.view(), seed % 2 == 1);
    ensure_reverse(g);
    const std::string what = testing::describe(spec, seed);
    const auto n = static_cast<std::size_t>(g.vertex_count());
    // 40 sources (a sweep of 32 and one of 8), 0 to 3 targets each, some of them the source.
    const auto sources = spread_sources(g.vertex_count(), 40);
    std::vector<VertexIndex> targets;
    std::vector<int> offsets{0};
    for (std::size_t i = 0; i < sources.size(); ++i) {
      for (std::size_t j = 0; j < i % 4; ++j)
        targets.push_back(j == 2 ? sources[i]
                                 : static_cast<VertexIndex>((i * 131 + j * 17 + seed) % n));
      offsets.push_back(static_cast<int>(targets.size()));
    }
    auto on_gpu = gpu_cch().create(g, EngineOptions{});
    ASSERT_TRUE(on_gpu->supports_paths_without_rows());
    std::vector<double> own(targets.size(), -1.0);
    std::vector<ArcIndex> predecessors(sources.size() * n, -7);
    SolveRequest request;
    request.sources = sources.data();
    request.source_count = static_cast<int>(sources.size());
    request.targets = targets.data();
    request.target_count = static_cast<int>(targets.size());
    request.target_offsets = offsets.data();
    request.own_target_distances = true;
    request.distances = own.data();
    request.predecessor_arcs = predecessors.data();
    on_gpu->solve(request);
    auto on_cpu = cpu->create(g, EngineOptions{});
    Rows want = run(*on_cpu, g, sources, 40, false);
    std::vector<ArcIndex> rule(n);
    for (std::size_t i = 0; i < sources.size(); ++i) {
      const double* row = want.distances.data() + i * n;
      compute_predecessors(g.reverse, row, sources[i], rule.data());
      for (std::size_t v = 0; v < n; ++v)
        ASSERT_EQ(predecessors[i * n + v], rule[v]) << what << " source " << i << " vertex " << v;
      for (int k = offsets[i]; k < offsets[i + 1]; ++k) {
        const auto target = static_cast<std::size_t>(targets[static_cast<std::size_t>(k)]);
        ASSERT_EQ(own[static_cast<std::size_t>(k)], row[target]) << what << " source " << i;
        ASSERT_EQ(path_from_predecessors(g.reverse, predecessors.data() + i * n, sources[i],
                                         targets[static_cast<std::size_t>(k)]),
                  trace_path(g.reverse, row, sources[i], targets[static_cast<std::size_t>(k)]))
            << what << " source " << i;
      }
    }
  }
}

// A road-like graph: a grid with random travel times, one-way streets and a river with bridges.
Graph road_grid(int side, unsigned seed) {
  EdgeTable t;
  std::mt19937 rng(seed);
  auto id = [side](int x, int y) { return static_cast<std::int64_t>(y) * side + x + 1; };
  for (int y = 0; y < side; ++y)
    for (int x = 0; x < side; ++x) {
      const double east = 1 + rng() % 60, north = 1 + rng() % 60;
      if (x + 1 < side && !(x + 1 == side / 2 && y % 17 != 0))
        t.add(id(x, y), id(x + 1, y), east, rng() % 9 == 0 ? -1.0 : east);
      if (y + 1 < side) t.add(id(x, y), id(x, y + 1), north, rng() % 11 == 0 ? -1.0 : north);
    }
  Graph g = build_graph(t.view(), true);
  ensure_reverse(g);
  return g;
}

TEST(GpuCch, SharedIndexCompactRowsAndOwnPaths) {
  SKIP_WITHOUT_GPU();
  Graph g = road_grid(120, 3);
  Cch index(g, cch_order(g));
  index.customize(g);
  EngineOptions options;
  options.road_index = &index;
  auto engine = gpu_cch().create(g, options);
  const VertexIndex n = g.vertex_count();
  const auto sources = spread_sources(n, 40);
  Rows full = run(*engine, g, sources, 40, false);
  for (std::size_t i = 0; i < sources.size(); i += 13) {
    auto reference = reference_dijkstra(g.forward, sources[i]);
    ASSERT_TRUE(testing::same_distances(full.distances.data() + i * n, reference));
  }
  // Compact rows: the targets' columns of the full rows.
  std::vector<VertexIndex> targets = spread_sources(n, 300);
  targets.push_back(n - 1);
  ASSERT_TRUE(engine->supports_compact_targets());
  const std::vector<double> compact = testing::solve_compact(*engine, sources, targets);
  for (std::size_t i = 0; i < sources.size(); ++i)
    for (std::size_t j = 0; j < targets.size(); ++j)
      ASSERT_EQ(
          compact[i * targets.size() + j],
          full.distances[i * static_cast<std::size_t>(n) + static_cast<std::size_t>(targets[j])]);
  // The hierarchy's own paths: walks over real arcs costing the distance.
  for (std::size_t i = 0; i < 8; ++i) {
    const VertexIndex s = sources[i], t = targets[i * 7];
    std::vector<ArcIndex> arcs;
    double cost = -1;
    ASSERT_TRUE(engine->own_path(s, t, arcs, &cost));
    const double want =
        full.distances[i * static_cast<std::size_t>(n) + static_cast<std::size_t>(t)];
    ASSERT_EQ(cost, want);
    VertexIndex at = s;
    for (ArcIndex a : arcs) {
      ASSERT_GE(a, g.forward.begin(at));
      ASSERT_LT(a, g.forward.end(at));
      at = g.forward.heads[static_cast<std::size_t>(a)];
    }
    if (want != kInfinity) ASSERT_EQ(at, t);
  }
  EXPECT_NE(engine->report().notes.find("shared"), std::string::npos) << engine->report().notes;
}

// The sweep's layouts: the top level by level, the bottom's subtrees in groups of one block each
// (none, small, the default, one group for nearly everything), lanes by degree or forced, blocks
// of several sizes, the launches captured or not: every one gives the CPU's rows bit for bit.
TEST(GpuCch, EveryLayoutOfTheSweepEqualsTheCpu) {
  SKIP_WITHOUT_GPU();
  Graph g = road_grid(150, 7);
  Cch index(g, cch_order(g));
  index.customize(g);
  EngineOptions options;
  options.road_index = &index;
  auto engine = gpu_cch().create(g, options);
  const auto n = static_cast<std::size_t>(g.vertex_count());
  struct Layout {
    int subtree, lanes, block, passes;
    bool graphs;
    int per_block = 0;
  };
  const std::vector<Layout> layouts = {{-1, 0, 0, 2, true},           {0, 0, 0, 2, true},
                                       {0, 16, 0, 2, true},           {64, 0, 0, 2, true, 1},
                                       {64, 2, 64, 1, false, 5},      {4096, 32, 1024, 8, true, 32},
                                       {1000000, 0, 256, 2, true, 3}, {-1, 4, 0, 2, false, 2}};
  for (const Layout& layout : layouts) {
    gpu::set_phast_subtree_vertices(layout.subtree);
    gpu::set_phast_lanes(layout.lanes);
    gpu::set_phast_group_block(layout.block);
    gpu::set_phast_one_block_passes(layout.passes);
    gpu::set_phast_graphs(layout.graphs);
    gpu::set_phast_group_sources(layout.per_block);
    const std::string what = "subtrees " + std::to_string(layout.subtree) + ", " +
                             std::to_string(layout.per_block) + " sources a block, lanes " +
                             std::to_string(layout.lanes) + ", block " +
                             std::to_string(layout.block) + ", passes " +
                             std::to_string(layout.passes) + (layout.graphs ? "" : ", no graphs");
    for (const int k : {1, 17, 32}) {
      std::vector<VertexIndex> sources;
      for (int i = 0; i < k; ++i)
        sources.push_back(static_cast<VertexIndex>((static_cast<std::size_t>(i) * 4253 + 11) % n));
      Rows got = run(*engine, g, sources, k, false);
      std::vector<double> want(n);
      for (int i = 0; i < k; ++i) {
        index.one_to_all(sources[static_cast<std::size_t>(i)], want.data());
        for (std::size_t v = 0; v < n; ++v)
          ASSERT_EQ(got.distances[static_cast<std::size_t>(i) * n + v], want[v])
              << what << ", " << k << " sources, source " << i << " vertex " << v;
      }
    }
    if (layout.subtree == 0)
      EXPECT_NE(engine->report().notes.find("0 groups"), std::string::npos)
          << engine->report().notes;
    if (layout.subtree == 1000000)
      EXPECT_NE(engine->report().notes.find("0 top levels, then 1 groups"), std::string::npos)
          << engine->report().notes;
  }
  gpu::set_phast_subtree_vertices(-1);
  gpu::set_phast_lanes(0);
  gpu::set_phast_group_block(0);
  gpu::set_phast_one_block_passes(2);
  gpu::set_phast_graphs(true);
  gpu::set_phast_group_sources(0);
}

bool always_cancelled() {
  return true;
}

TEST(GpuCch, CancelStopsASolve) {
  SKIP_WITHOUT_GPU();
  Graph g = road_grid(60, 5);
  EngineOptions options;
  options.cancel = CancelToken(&always_cancelled);
  Cch index(g, cch_order(g));
  index.customize(g);
  options.road_index = &index;
  auto engine = gpu_cch().create(g, options);
  std::vector<VertexIndex> sources = {0, 1, 2};
  std::vector<double> rows(sources.size() * static_cast<std::size_t>(g.vertex_count()));
  SolveRequest request;
  request.sources = sources.data();
  request.source_count = 3;
  request.distances = rows.data();
  EXPECT_THROW(engine->solve(request), Cancelled);
}

TEST(GpuCch, RefusesWhatTheBudgetCannotHold) {
  SKIP_WITHOUT_GPU();
  Graph g = road_grid(80, 9);
  EngineOptions options;
  options.budget = MemoryBudget(64 * 1024);  // far below the hierarchy's copy
  Cch index(g, cch_order(g));
  index.customize(g);
  options.road_index = &index;
  auto engine = gpu_cch().create(g, options);
  EXPECT_TRUE(testing::solve_is_out_of_memory(*engine, 0));
}

// Distances only take wide sweeps (up to 256 sources, fewer when gpu_routing.max_memory does not
// hold the table) and come back through the pinned buffers once a solve's rows pass 8 MB: 600
// sources (two full sweeps and an uneven one) against the CPU's rows, full and compact, at the
// default width, at 64 a sweep, and under a budget that halves the width.
TEST(GpuCch, WideSweepsAndStagedRowsEqualTheCpu) {
  SKIP_WITHOUT_GPU();
  Graph g = road_grid(120, 3);
  Cch index(g, cch_order(g));
  index.customize(g);
  const std::size_t n = static_cast<std::size_t>(g.vertex_count());
  const auto sources = spread_sources(g.vertex_count(), 600);
  EngineOptions cpu_options;
  cpu_options.road_index = &index;
  auto on_cpu = find_engine("cch", Device::kCpu)->create(g, cpu_options);
  Rows want = run(*on_cpu, g, sources, 600, false);
  const std::vector<VertexIndex> targets = spread_sources(g.vertex_count(), 1000);
  struct Mode {
    int width;
    std::size_t budget;
  };
  // 2 x n x 8 bytes a source of the sweep: the budget fits 64 beside the hierarchy, not 128.
  const std::size_t per_source = 2 * n * sizeof(double);
  for (const Mode mode : {Mode{0, 0}, Mode{64, 0}, Mode{0, 100 * per_source}}) {
    gpu::set_phast_sources_per_sweep(mode.width);
    EngineOptions options;
    options.road_index = &index;
    if (mode.budget > 0) options.budget = MemoryBudget(mode.budget);
    auto engine = gpu_cch().create(g, options);
    Rows got = run(*engine, g, sources, 600, false);
    for (std::size_t i = 0; i < sources.size() * n; ++i)
      ASSERT_EQ(got.distances[i], want.distances[i]) << "width " << mode.width << " cell " << i;
    const std::vector<double> compact = testing::solve_compact(*engine, sources, targets);
    for (std::size_t i = 0; i < sources.size(); ++i)
      for (std::size_t j = 0; j < targets.size(); ++j)
        ASSERT_EQ(compact[i * targets.size() + j],
                  want.distances[i * n + static_cast<std::size_t>(targets[j])])
            << "width " << mode.width << " source " << i;
  }
  gpu::set_phast_sources_per_sweep(0);
}

// Service areas (solve_areas): whole sweeps cut to the distance on the device, counted, laid out
// and written there; each source's area equals the CPU index's rows cut to the distance (the
// default solve_areas), bit for bit: random graphs (ties, zero costs, parts out of reach,
// duplicates) and the road grid in sweeps of every width (one sweep, 64 sources a sweep: ten),
// distances from none (negative) to every vertex; areas appended after what the lists held.
TEST(GpuCch, ServiceAreasEqualTheCpuRowsCutToTheDistance) {
  SKIP_WITHOUT_GPU();
  const EngineInfo* cpu = find_engine("cch", Device::kCpu);
  ASSERT_NE(cpu, nullptr);
  auto check = [&](const Graph& g, const EngineOptions& options,
                   const std::vector<VertexIndex>& sources, const std::string& what) {
    auto on_gpu = gpu_cch().create(g, options);
    auto on_cpu = cpu->create(g, options);
    for (const double bound : {-1.0, 0.0, 25.0, 140.0, 1e300, kInfinity}) {
      AreaLists got, want;
      // Something before: areas are appended, their ends continuing from it.
      got.vertices = {0};
      got.distances = {0.0};
      got.ends = {1};
      want = got;
      on_gpu->solve_areas(sources.data(), static_cast<int>(sources.size()), bound, got);
      on_cpu->solve_areas(sources.data(), static_cast<int>(sources.size()), bound, want);
      ASSERT_EQ(got.ends.size(), sources.size() + 1) << what;
      ASSERT_EQ(got.vertices.size(), static_cast<std::size_t>(got.ends.back())) << what;
      const auto got_areas = testing::sorted_areas(got);
      const auto want_areas = testing::sorted_areas(want);
      for (std::size_t i = 0; i < got_areas.size(); ++i)
        ASSERT_EQ(got_areas[i], want_areas[i]) << what << ", bound " << bound << ", area " << i;
    }
  };
  for (unsigned seed = 1; seed <= 12; ++seed) {
    RandomGraphSpec spec;
    spec.vertices = 50 + static_cast<int>(seed * 37 % 400);
    spec.edges = spec.vertices * 3;
    spec.integer_weights = seed % 2 == 0;
    spec.zero_weights = seed % 5 == 0;
    spec.max_weight = seed % 3 == 0 ? 3 : 100;
    spec.components = 1 + static_cast<int>(seed % 3);
    EdgeTable t = testing::random_edges(spec, seed);
    Graph g = build_graph(t.view(), seed % 2 == 1);
    ensure_reverse(g);
    auto sources = spread_sources(g.vertex_count(), 40);
    sources.push_back(sources.front());  // a duplicate
    check(g, EngineOptions{}, sources, testing::describe(spec, seed));
  }
  Graph g = road_grid(120, 5);
  Cch index(g, cch_order(g));
  index.customize(g);
  EngineOptions options;
  options.road_index = &index;
  const auto sources = spread_sources(g.vertex_count(), 600);
  for (const int width : {0, 64}) {
    gpu::set_phast_sources_per_sweep(width);
    check(g, options, sources, "road grid, width " + std::to_string(width));
  }
  gpu::set_phast_sources_per_sweep(0);
}

// A cost matrix's sweeps skip the ranks outside its targets' closure (RPHAST) while the closure
// holds at most half of them: one target, a few, a corner, duplicates, and a set too large to
// restrict; sources in batches of 1, 17, 300 and 1100 (above a restricted sweep's 1024), the
// targets kept for the next batch or changed between batches; the layouts without a bottom or
// with one group. Every cell equals the CPU's row bit for bit, and the unrestricted sweep's.
// (Restricted here from one source a solve; the default threshold is tested below.)
TEST(GpuCch, RestrictedSweepsForCostMatricesEqualTheCpu) {
  SKIP_WITHOUT_GPU();
  gpu::set_phast_restrict_from_sources(1);
  Graph g = road_grid(110, 13);
  Cch index(g, cch_order(g));
  index.customize(g);
  const std::size_t n = static_cast<std::size_t>(g.vertex_count());
  const auto sources = spread_sources(g.vertex_count(), 1100);
  EngineOptions cpu_options;
  cpu_options.road_index = &index;
  auto on_cpu = find_engine("cch", Device::kCpu)->create(g, cpu_options);
  Rows want = run(*on_cpu, g, sources, 1100, false);
  const VertexIndex last = g.vertex_count() - 1;
  struct Targets {
    std::vector<VertexIndex> ids;
    bool restricted;
  };
  std::vector<Targets> sets = {{{last / 2}, true},
                               {{0, 5, 5, last, 0, 3000 % (last + 1)}, true},
                               {spread_sources(g.vertex_count(), 40), true},
                               {spread_sources(g.vertex_count(), 6000), false}};
  std::vector<VertexIndex> corner;
  for (VertexIndex v = 0; v < 30; ++v) corner.push_back(v);
  sets.push_back({corner, true});
  for (const int subtree : {-1, 0, 1000000}) {
    gpu::set_phast_subtree_vertices(subtree);
    for (const bool restrict : {true, false}) {
      gpu::set_phast_restrict(restrict);
      EngineOptions options;
      options.road_index = &index;
      auto engine = gpu_cch().create(g, options);
      for (const Targets& targets : sets) {
        for (const int batch : {1, 17, 300, 1100}) {
          const std::size_t width = targets.ids.size();
          std::vector<double> got(sources.size() * width, -1.0);
          for (std::size_t first = 0; first < sources.size(); first += batch) {
            SolveRequest request;
            request.sources = sources.data() + first;
            request.source_count =
                static_cast<int>(std::min<std::size_t>(batch, sources.size() - first));
            request.targets = targets.ids.data();
            request.target_count = static_cast<int>(width);
            request.compact_targets = true;
            request.distances = got.data() + first * width;
            engine->solve(request);
          }
          const std::string what =
              "subtrees " + std::to_string(subtree) + ", " + (restrict ? "restricted" : "full") +
              ", " + std::to_string(width) + " targets, batches of " + std::to_string(batch);
          for (std::size_t i = 0; i < sources.size(); ++i)
            for (std::size_t j = 0; j < width; ++j)
              ASSERT_EQ(got[i * width + j],
                        want.distances[i * n + static_cast<std::size_t>(targets.ids[j])])
                  << what << ", source " << i << ", target " << j;
          const bool noted = engine->report().notes.find("RPHAST") != std::string::npos;
          EXPECT_EQ(noted, restrict && targets.restricted)
              << what << ": " << engine->report().notes;
        }
      }
    }
  }
  gpu::set_phast_subtree_vertices(-1);
  gpu::set_phast_restrict(true);
  gpu::set_phast_restrict_from_sources(0);
}

// By default a solve restricts its sweeps from 512 sources (laying the closure out costs more
// than a few sweeps save): a solve of 100 sources sweeps the whole hierarchy; one of 600 with
// the same targets then restricts them, and a later small solve with those targets keeps the
// restricted layout. Every cell as the CPU's.
TEST(GpuCch, SweepsAreRestrictedFromManySourcesAndTheLayoutIsKept) {
  SKIP_WITHOUT_GPU();
  Graph g = road_grid(90, 17);
  Cch index(g, cch_order(g));
  index.customize(g);
  const std::size_t n = static_cast<std::size_t>(g.vertex_count());
  EngineOptions options;
  options.road_index = &index;
  auto engine = gpu_cch().create(g, options);
  const std::vector<VertexIndex> targets = spread_sources(g.vertex_count(), 25);
  std::vector<double> want(n);
  for (const int sources_count : {100, 600, 7}) {
    const auto sources = spread_sources(g.vertex_count(), sources_count);
    const std::vector<double> got = testing::solve_compact(*engine, sources, targets);
    const bool noted = engine->report().notes.find("RPHAST") != std::string::npos;
    EXPECT_EQ(noted, sources_count != 100) << sources_count << ": " << engine->report().notes;
    for (std::size_t i = 0; i < sources.size(); ++i) {
      index.one_to_all(sources[i], want.data());
      for (std::size_t j = 0; j < targets.size(); ++j)
        ASSERT_EQ(got[i * targets.size() + j], want[static_cast<std::size_t>(targets[j])])
            << sources_count << " sources, source " << i << ", target " << j;
    }
  }
}

// Unreachable targets: a graph of three components (zero costs among them), the targets in each.
TEST(GpuCch, RestrictedSweepsLeaveUnreachableTargetsInfinite) {
  SKIP_WITHOUT_GPU();
  RandomGraphSpec spec;
  spec.vertices = 3000;
  spec.edges = 9000;
  spec.components = 3;
  spec.zero_weights = true;
  spec.integer_weights = true;  // the reference's sums are then exact
  EdgeTable t = testing::random_edges(spec, 77);
  Graph g = build_graph(t.view(), true);
  ensure_reverse(g);
  Cch index(g, cch_order(g));
  index.customize(g);
  EngineOptions options;
  options.road_index = &index;
  gpu::set_phast_restrict_from_sources(1);
  auto engine = gpu_cch().create(g, options);
  const auto sources = spread_sources(g.vertex_count(), 50);
  const VertexIndex n = g.vertex_count();
  const std::vector<VertexIndex> targets = {1, 2, 3, n / 2, n - 1, 2, n / 4};
  const std::vector<double> got = testing::solve_compact(*engine, sources, targets);
  EXPECT_NE(engine->report().notes.find("RPHAST"), std::string::npos) << engine->report().notes;
  int unreachable = 0;
  for (std::size_t i = 0; i < sources.size(); ++i) {
    const auto reference = reference_dijkstra(g.forward, sources[i]);
    for (std::size_t j = 0; j < targets.size(); ++j) {
      const double d = reference[static_cast<std::size_t>(targets[j])];
      unreachable += d == kInfinity;
      ASSERT_EQ(got[i * targets.size() + j], d) << "source " << i << " target " << targets[j];
    }
  }
  EXPECT_GT(unreachable, 0);  // the components keep some targets out of reach
  gpu::set_phast_restrict_from_sources(0);
}

}  // namespace
}  // namespace gpu_routing
