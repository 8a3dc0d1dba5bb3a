// The many-source GPU engines (multi_source, blocked_fw, floyd_warshall, rkleene here, and every
// other GPU engine with many_source = true) against the reference Dijkstra: random graphs of many
// sizes (not only multiples of 32 or of the 128 tile), integer and real weights, unreachable
// pairs, parallel edges, self loops, zero weights, both directions; odd source batches; paths
// equal to compute_predecessors(); the dense number modes forced; blocked_fw over row bands (on
// one GPU, bands sharing it); budget refusal; cancel.
// Every test skips itself where no GPU is usable.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "../../kernels/apsp_engines.cuh"
#include "engine/engine.hpp"
#include "engine/gpu.hpp"
#include "base/predecessors.hpp"
#include "cpu/sssp_dijkstra.hpp"
#include "gpu_testing.hpp"
#include "test_graphs.hpp"

namespace gpu_routing {
namespace {

using gpu::apsp::DenseAlgorithm;
using gpu::apsp::DenseMode;
using testing::EdgeTable;
using testing::RandomGraphSpec;

std::vector<const EngineInfo*> many_source_gpu_engines() {
  std::vector<const EngineInfo*> engines;
  for (const auto& info : gpu_engine_table())
    if (info.many_source) engines.push_back(&info);
  return engines;
}

std::vector<VertexIndex> pick_sources(VertexIndex n, int wanted, unsigned seed) {
  std::vector<VertexIndex> sources;
  if (n <= wanted) {
    for (VertexIndex v = 0; v < n; ++v) sources.push_back(v);
    return sources;
  }
  std::mt19937 rng(seed);
  for (int i = 0; i < wanted; ++i) sources.push_back(static_cast<VertexIndex>(rng() % unsigned(n)));
  sources.push_back(n - 1);
  sources.push_back(0);
  return sources;
}

// Runs `sources` through the engine in batches of `batch` and returns the rows.
std::vector<double> run_engine(ShortestPathEngine& engine, const Graph& g,
                               const std::vector<VertexIndex>& sources, int batch,
                               std::vector<ArcIndex>* predecessors = nullptr) {
  const std::size_t n = static_cast<std::size_t>(g.vertex_count());
  std::vector<double> rows(sources.size() * n, -1.0);  // poisoned: every entry must be written
  if (predecessors != nullptr) predecessors->assign(sources.size() * n, -7);
  for (std::size_t first = 0; first < sources.size(); first += static_cast<std::size_t>(batch)) {
    SolveRequest request;
    request.sources = sources.data() + first;
    request.source_count = static_cast<int>(std::min(sources.size() - first, std::size_t(batch)));
    request.distances = rows.data() + first * n;
    if (predecessors != nullptr) request.predecessor_arcs = predecessors->data() + first * n;
    engine.solve(request);
  }
  return rows;
}

::testing::AssertionResult matches_reference(const EngineInfo& info, const Graph& g,
                                             const std::vector<VertexIndex>& sources,
                                             const std::vector<double>& rows) {
  const std::size_t n = static_cast<std::size_t>(g.vertex_count());
  for (std::size_t i = 0; i < sources.size(); ++i) {
    auto want = reference_dijkstra(g.forward, sources[i]);
    // The dense engines and the road index sum fractional costs in another order than Dijkstra.
    auto result = ((info.dense || std::string(info.name) == "cch") && !g.integer_weights)
                      ? testing::near_distances(rows.data() + i * n, want, 1e-9)
                      : testing::same_distances(rows.data() + i * n, want);
    if (!result)
      return result << " (engine " << info.name << ", source index " << sources[i] << ")";
  }
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult matches_rule(const EngineInfo& info, const Graph& g,
                                        const std::vector<VertexIndex>& sources,
                                        const std::vector<double>& rows,
                                        const std::vector<ArcIndex>& predecessors) {
  const std::size_t n = static_cast<std::size_t>(g.vertex_count());
  std::vector<ArcIndex> want(n);
  for (std::size_t i = 0; i < sources.size(); ++i) {
    auto reference = reference_dijkstra(g.forward, sources[i]);
    compute_predecessors(g.reverse, reference.data(), sources[i], want.data());
    for (std::size_t v = 0; v < n; ++v)
      if (predecessors[i * n + v] != want[v])
        return ::testing::AssertionFailure()
               << "engine " << info.name << ", source " << sources[i] << ", vertex " << v
               << ": predecessor arc " << predecessors[i * n + v] << ", want " << want[v]
               << " (distance " << rows[i * n + v] << ")";
  }
  return ::testing::AssertionSuccess();
}

const int kSizes[] = {1, 2, 31, 33, 63, 65, 100, 127, 129, 257, 300};

TEST(GpuApspTable, EnginesAreListed) {
  for (const char* name : {"multi_source", "blocked_fw", "floyd_warshall", "rkleene"}) {
    const EngineInfo* info = find_engine(name, Device::kGpu);
    ASSERT_NE(info, nullptr) << name;
    EXPECT_TRUE(info->many_source) << name;
    EXPECT_FALSE(info->single_source) << name;
    EXPECT_EQ(info->dense, std::string(name) != "multi_source") << name;
  }
}

TEST(GpuApsp, EveryManySourceEngineMatchesReferenceDijkstra) {
  SKIP_WITHOUT_GPU();
  unsigned seed = 100;
  for (int size : kSizes) {
    for (bool integer : {true, false}) {
      for (bool directed : {true, false}) {
        ++seed;
        RandomGraphSpec spec;
        spec.vertices = size;
        spec.edges = size * (seed % 3 == 0 ? 8 : 3);
        spec.integer_weights = integer;
        spec.zero_weights = seed % 2 == 0;
        spec.components = 1 + static_cast<int>(seed % 3);  // unreachable pairs
        spec.sparse_ids = seed % 5 == 0;
        EdgeTable table = testing::random_edges(spec, seed);
        Graph g = build_graph(table.view(), directed);
        if (g.vertex_count() == 0) continue;
        auto sources = pick_sources(g.vertex_count(), 70, seed);
        for (const EngineInfo* info : many_source_gpu_engines()) {
          EngineOptions options;
          auto engine = info->create(g, options);
          const int batch = seed % 2 == 0 ? 37 : engine->preferred_batch_size();
          auto rows = run_engine(*engine, g, sources, std::max(1, batch));
          ASSERT_TRUE(matches_reference(*info, g, sources, rows))
              << testing::describe(spec, seed) << (directed ? " directed" : " undirected")
              << " batch " << batch;
        }
      }
    }
  }
}

TEST(GpuApsp, LargerGraphsAndUnevenRecursion) {
  SKIP_WITHOUT_GPU();
  for (int size : {513, 1000, 1100}) {
    RandomGraphSpec spec;
    spec.vertices = size;
    spec.edges = size * 4;
    spec.max_weight = size;
    spec.components = size == 1000 ? 2 : 1;
    EdgeTable table = testing::random_edges(spec, unsigned(size));
    Graph g = build_graph(table.view(), true);
    auto sources = pick_sources(g.vertex_count(), 64, unsigned(size));
    for (const char* name : {"multi_source", "blocked_fw", "rkleene", "floyd_warshall"}) {
      const EngineInfo* info = find_engine(name, Device::kGpu);
      ASSERT_NE(info, nullptr);
      auto engine = info->create(g, EngineOptions{});
      auto rows = run_engine(*engine, g, sources, 29);
      ASSERT_TRUE(matches_reference(*info, g, sources, rows)) << "V=" << size;
    }
  }
}

TEST(GpuApsp, PredecessorsFollowTheCpuRuleExactly) {
  SKIP_WITHOUT_GPU();
  unsigned seed = 500;
  for (int size : {1, 2, 33, 100, 129, 257}) {
    for (int max_weight : {1, 3, 50}) {
      for (bool directed : {true, false}) {
        ++seed;
        RandomGraphSpec spec;
        spec.vertices = size;
        spec.edges = size * 4;
        spec.zero_weights = true;  // zero-cost ties: kPendingArc and the layered stage
        spec.max_weight = max_weight;
        spec.components = 1 + static_cast<int>(seed % 2);
        EdgeTable table = testing::random_edges(spec, seed);
        Graph g = build_graph(table.view(), directed);
        if (g.vertex_count() == 0) continue;
        ensure_reverse(g);
        auto sources = pick_sources(g.vertex_count(), 40, seed);
        for (const EngineInfo* info : many_source_gpu_engines()) {
          auto engine = info->create(g, EngineOptions{});
          std::vector<ArcIndex> predecessors;
          auto rows = run_engine(*engine, g, sources, 33, &predecessors);
          ASSERT_TRUE(matches_reference(*info, g, sources, rows)) << testing::describe(spec, seed);
          ASSERT_TRUE(matches_rule(*info, g, sources, rows, predecessors))
              << testing::describe(spec, seed);
        }
      }
    }
  }
}

TEST(GpuApspDense, AutomaticModeChoice) {
  RandomGraphSpec spec;
  spec.vertices = 300;
  spec.edges = 1200;
  spec.max_weight = 100;  // 299 * 100 = 29900 <= 32766
  Graph small = build_graph(testing::random_edges(spec, 1).view(), true);
  EXPECT_EQ(gpu::apsp::resolve_dense_mode(small, DenseMode::kAuto), DenseMode::kInt16x2);
  spec.max_weight = 1000;
  Graph wide = build_graph(testing::random_edges(spec, 1).view(), true);
  EXPECT_EQ(gpu::apsp::resolve_dense_mode(wide, DenseMode::kAuto), DenseMode::kInt32);
  EXPECT_THROW(gpu::apsp::resolve_dense_mode(wide, DenseMode::kInt16x2), RoutingError);
  spec.integer_weights = false;
  Graph real = build_graph(testing::random_edges(spec, 1).view(), true);
  EXPECT_EQ(gpu::apsp::resolve_dense_mode(real, DenseMode::kAuto), DenseMode::kFloat64);
  EXPECT_THROW(gpu::apsp::resolve_dense_mode(real, DenseMode::kInt32), RoutingError);
  EXPECT_THROW(gpu::apsp::resolve_dense_mode(real, DenseMode::kInt16x2), RoutingError);
}

// A random graph whose distances fit every dense mode (int16x2 included): `degree` arcs a vertex,
// zero weights and a second component (unreachable pairs) in every other seed.
RandomGraphSpec int16_graph_spec(int size, int degree, unsigned seed) {
  RandomGraphSpec spec;
  spec.vertices = size;
  spec.edges = size * degree;
  spec.max_weight = 32766 / size;
  spec.zero_weights = seed % 2 == 0;
  spec.components = 1 + static_cast<int>(seed % 2);
  return spec;
}

TEST(GpuApspDense, EveryModeAndKernelVariantIsExact) {
  SKIP_WITHOUT_GPU();
  unsigned seed = 900;
  for (int size : {100, 257, 300, 385}) {
    ++seed;
    const RandomGraphSpec spec = int16_graph_spec(size, 5, seed);
    Graph g = build_graph(testing::random_edges(spec, seed).view(), seed % 3 != 0);
    auto sources = pick_sources(g.vertex_count(), 50, seed);
    for (DenseMode mode : {DenseMode::kInt16x2, DenseMode::kInt32, DenseMode::kFloat64}) {
      for (DenseAlgorithm algorithm :
           {DenseAlgorithm::kBlocked, DenseAlgorithm::kRecursiveKleene, DenseAlgorithm::kNaive}) {
        // (variant, small_tiles): every 128-row kernel alone, the 64-row one alone, and the mix.
        std::vector<std::pair<int, int>> shapes = {{0, -1}};
        if (algorithm != DenseAlgorithm::kNaive) {
          shapes.push_back({0, 1});
          for (int v = 0; v < gpu::apsp::dense_product_variant_count(mode); ++v)
            shapes.push_back({v, 0});
        }
        for (auto [variant, small_tiles] : shapes) {
          gpu::apsp::DenseTuning tuning;
          tuning.mode = mode;
          tuning.product_variant = variant;
          tuning.small_tiles = small_tiles;
          auto engine = gpu::apsp::create_dense_engine(g, EngineOptions{}, algorithm, tuning);
          auto rows = run_engine(*engine, g, sources, 41);
          EngineInfo info = *find_engine(engine->name(), Device::kGpu);
          ASSERT_TRUE(matches_reference(info, g, sources, rows))
              << testing::describe(spec, seed) << " mode " << gpu::apsp::dense_mode_name(mode)
              << " variant " << gpu::apsp::dense_product_variant_name(mode, variant)
              << " small tiles " << small_tiles;
        }
      }
    }
  }
}

TEST(GpuApspDense, Int32WhereInt16DoesNotFitAndRepeatedSolves) {
  SKIP_WITHOUT_GPU();
  RandomGraphSpec spec;
  spec.vertices = 260;
  spec.edges = 260 * 6;
  spec.max_weight = 100000;
  Graph g = build_graph(testing::random_edges(spec, 77).view(), true);
  for (DenseAlgorithm algorithm : {DenseAlgorithm::kBlocked, DenseAlgorithm::kRecursiveKleene}) {
    gpu::apsp::DenseTuning tuning;
    tuning.mode = DenseMode::kInt16x2;
    EXPECT_THROW(gpu::apsp::create_dense_engine(g, EngineOptions{}, algorithm, tuning),
                 RoutingError);
    tuning.mode = DenseMode::kInt32;
    auto engine = gpu::apsp::create_dense_engine(g, EngineOptions{}, algorithm, tuning);
    std::vector<VertexIndex> sources = {5, 5, 0, 259, 17};  // a source twice
    EngineInfo info = *find_engine(engine->name(), Device::kGpu);
    for (int call = 0; call < 2; ++call) {  // the second call copies rows of the closed matrix
      auto rows = run_engine(*engine, g, sources, 3);
      ASSERT_TRUE(matches_reference(info, g, sources, rows)) << "call " << call;
    }
  }
}

TEST(GpuApsp, BudgetRefusalNamesTheSize) {
  SKIP_WITHOUT_GPU();
  RandomGraphSpec spec;
  spec.vertices = 300;
  spec.edges = 1200;
  Graph g = build_graph(testing::random_edges(spec, 3).view(), true);
  EngineOptions options;
  options.budget = MemoryBudget(4096);
  for (const char* name : {"multi_source", "blocked_fw", "floyd_warshall", "rkleene"}) {
    auto engine = find_engine(name, Device::kGpu)->create(g, options);
    std::vector<VertexIndex> sources = {0, 1, 2};
    try {
      run_engine(*engine, g, sources, 3);
      ADD_FAILURE() << name << " ran past a 4 kB budget";
    } catch (const RoutingError& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kOutOfMemory) << name;
      const std::string message = e.what();
      EXPECT_NE(message.find("needs"), std::string::npos) << message;
      EXPECT_NE(message.find(name), std::string::npos) << message;
      EXPECT_TRUE(message.find(" kB") != std::string::npos ||
                  message.find(" MB") != std::string::npos)
          << message;
    }
  }
}

std::atomic<int> g_polls_before_cancel{0};
bool cancel_after_some_polls() {
  return g_polls_before_cancel.fetch_sub(1) <= 0;
}
bool always_cancel() {
  return true;
}

// A long ring: thousands of dependent rounds for multi_source, thousands of k for the naive
// Floyd-Warshall, many block rows (24) for the blocked engines; and 64 of its vertices as sources.
Graph cancel_ring() {
  EdgeTable ring;
  const int n = 3000;
  for (int v = 0; v < n; ++v) ring.add(v, (v + 1) % n, 1 + v % 7);
  return build_graph(ring.view(), true);
}
std::vector<VertexIndex> cancel_ring_sources() {
  std::vector<VertexIndex> sources;
  for (int i = 0; i < 64; ++i) sources.push_back(i * 40);
  return sources;
}

TEST(GpuApsp, CancelStopsEveryEngine) {
  SKIP_WITHOUT_GPU();
  Graph g = cancel_ring();
  std::vector<VertexIndex> sources = cancel_ring_sources();
  for (const char* name : {"multi_source", "blocked_fw", "floyd_warshall", "rkleene"}) {
    for (bool immediately : {true, false}) {
      g_polls_before_cancel = 2;
      EngineOptions options;
      options.cancel = CancelToken(immediately ? always_cancel : cancel_after_some_polls);
      auto engine = find_engine(name, Device::kGpu)->create(g, options);
      EXPECT_THROW(run_engine(*engine, g, sources, 64), Cancelled) << name;
    }
  }
}

// ---- blocked_fw over row bands (DenseTuning::devices). Bands beyond the visible GPUs share them
// round-robin, so these run the distributed path, its pivot copies and event ordering on one GPU.

std::unique_ptr<ShortestPathEngine> banded_blocked_fw(const Graph& g, DenseMode mode, int devices,
                                                      const EngineOptions& options = {}) {
  gpu::apsp::DenseTuning tuning;
  tuning.mode = mode;
  tuning.devices = devices;
  return gpu::apsp::create_dense_engine(g, options, DenseAlgorithm::kBlocked, tuning);
}

// `spec`'s random graph with a zero-cost self loop on every vertex, so that V is exactly
// spec.vertices (a vertex no random edge touches would otherwise be missing) and no distance
// changes. Needs plain ids (spec.sparse_ids false).
Graph graph_with_every_vertex(const RandomGraphSpec& spec, unsigned seed, bool directed) {
  EdgeTable table = testing::random_edges(spec, seed);
  for (int v = 1; v <= spec.vertices; ++v) table.add(v, v, 0.0);
  Graph g = build_graph(table.view(), directed);
  EXPECT_EQ(g.vertex_count(), spec.vertices);
  return g;
}

// Random sources plus the rows on either side of every tile (and so band) boundary and the
// padded edge.
std::vector<VertexIndex> band_edge_sources(VertexIndex n, unsigned seed) {
  auto sources = pick_sources(n, 40, seed);
  for (VertexIndex edge = 128; edge <= n; edge += 128)
    for (VertexIndex v : {edge - 1, edge})
      if (v < n) sources.push_back(v);
  sources.push_back(n - 1);
  return sources;
}

TEST(GpuApspDenseBands, MatchReferenceInEveryMode) {
  SKIP_WITHOUT_GPU();
  const EngineInfo info = *find_engine("blocked_fw", Device::kGpu);
  unsigned seed = 1300;
  for (int size : {130, 256, 300, 517, 1000}) {
    ++seed;
    const RandomGraphSpec spec = int16_graph_spec(size, 4, seed);
    Graph g = graph_with_every_vertex(spec, seed, seed % 3 != 0);
    auto sources = band_edge_sources(g.vertex_count(), seed);
    for (DenseMode mode : {DenseMode::kInt16x2, DenseMode::kInt32, DenseMode::kFloat64}) {
      for (int devices : {2, 3}) {
        auto engine = banded_blocked_fw(g, mode, devices);
        auto rows = run_engine(*engine, g, sources, 23);
        ASSERT_TRUE(matches_reference(info, g, sources, rows))
            << testing::describe(spec, seed) << " mode " << gpu::apsp::dense_mode_name(mode)
            << " devices " << devices << " on " << engine->report().device_name;
      }
    }
  }
}

TEST(GpuApspDenseBands, UnreachablePairsAcrossBands) {
  SKIP_WITHOUT_GPU();
  // Two components of 300 vertices each, the boundary inside the middle one of 3 bands (rows 0-127,
  // 128-383, 384-639): about half of every row is unreachable.
  const EngineInfo info = *find_engine("blocked_fw", Device::kGpu);
  RandomGraphSpec spec;
  spec.vertices = 600;
  spec.edges = 600 * 3;
  spec.max_weight = 50;
  spec.components = 2;
  Graph g = graph_with_every_vertex(spec, 1401, true);
  std::vector<VertexIndex> sources;
  for (VertexIndex v = 0; v < g.vertex_count(); ++v) sources.push_back(v);  // all pairs
  for (DenseMode mode : {DenseMode::kInt16x2, DenseMode::kInt32, DenseMode::kFloat64}) {
    auto engine = banded_blocked_fw(g, mode, 3);
    auto rows = run_engine(*engine, g, sources, g.vertex_count());
    ASSERT_TRUE(matches_reference(info, g, sources, rows)) << gpu::apsp::dense_mode_name(mode);
    EXPECT_NE(std::find(rows.begin(), rows.end(), kInfinity), rows.end());
  }
}

TEST(GpuApspDenseBands, RealWeightsInFloat64) {
  SKIP_WITHOUT_GPU();
  const EngineInfo info = *find_engine("blocked_fw", Device::kGpu);
  unsigned seed = 1500;
  for (int size : {130, 300, 517}) {
    ++seed;
    RandomGraphSpec spec;
    spec.vertices = size;
    spec.edges = size * 5;
    spec.integer_weights = false;
    spec.components = 1 + static_cast<int>(seed % 2);
    Graph g = build_graph(testing::random_edges(spec, seed).view(), true);
    auto sources = band_edge_sources(g.vertex_count(), seed);
    for (int devices : {2, 3}) {
      auto engine = banded_blocked_fw(g, DenseMode::kAuto, devices);  // real weights: float64
      auto rows = run_engine(*engine, g, sources, 31);
      ASSERT_TRUE(matches_reference(info, g, sources, rows))  // within 1e-9, as on one GPU
          << testing::describe(spec, seed) << " devices " << devices;
    }
  }
}

// With integer weights every value is exact, so the bands must reproduce the one-GPU rows bit for
// bit in every mode. Real weights (float64): in the in-place phase-2 panels a 64-row CTA may read
// values its neighbour is rewriting, which the closed diagonal tile makes harmless only up to
// rounding (see apsp_dense.cu), so those rows agree to 1e-12 rather than to the bit.
TEST(GpuApspDenseBands, TwoBandsGiveTheSameRowsAsOne) {
  SKIP_WITHOUT_GPU();
  for (bool integer : {true, false}) {
    RandomGraphSpec spec;
    spec.vertices = 517;
    spec.edges = 517 * 4;
    spec.integer_weights = integer;
    spec.max_weight = 60;  // 516 * 60 <= 32766: int16x2 applies
    spec.components = 2;
    Graph g = graph_with_every_vertex(spec, 1601, true);
    const std::size_t n = static_cast<std::size_t>(g.vertex_count());
    std::vector<VertexIndex> sources;
    for (VertexIndex v = 0; v < g.vertex_count(); ++v) sources.push_back(v);
    std::vector<DenseMode> modes = {DenseMode::kFloat64};
    if (integer) modes = {DenseMode::kInt16x2, DenseMode::kInt32, DenseMode::kFloat64};
    for (DenseMode mode : modes) {
      auto one = banded_blocked_fw(g, mode, 1);
      auto two = banded_blocked_fw(g, mode, 2);
      auto automatic = banded_blocked_fw(g, mode, 0);  // V below the threshold: one GPU
      EXPECT_EQ(one->report().device_name.find("row bands"), std::string::npos)
          << one->report().device_name;
      EXPECT_EQ(automatic->report().device_name.find("row bands"), std::string::npos)
          << automatic->report().device_name;
      EXPECT_NE(two->report().device_name.find("2 row bands"), std::string::npos)
          << two->report().device_name;
      EXPECT_NE(two->report().notes.find("2 row bands on"), std::string::npos)
          << two->report().notes;
      auto rows_one = run_engine(*one, g, sources, 200);
      auto rows_two = run_engine(*two, g, sources, 200);
      ASSERT_EQ(rows_one.size(), rows_two.size());
      for (std::size_t row = 0; row < sources.size(); ++row) {
        const double* got = rows_two.data() + row * n;
        std::vector<double> want(rows_one.begin() + std::ptrdiff_t(row * n),
                                 rows_one.begin() + std::ptrdiff_t((row + 1) * n));
        auto same = integer ? testing::same_distances(got, want)
                            : testing::near_distances(got, want, 1e-12);
        ASSERT_TRUE(same) << "row " << row << ", mode " << gpu::apsp::dense_mode_name(mode)
                          << (integer ? ", integer weights" : ", real weights");
      }
    }
  }
}

TEST(GpuApspDenseBands, BudgetCountsTheMatrixOnce) {
  SKIP_WITHOUT_GPU();
  RandomGraphSpec spec;
  spec.vertices = 1000;
  spec.edges = 4000;
  spec.max_weight = 1000;  // int32: the padded 1024 x 1024 matrix is 4 MiB
  Graph g = graph_with_every_vertex(spec, 5, true);
  std::vector<VertexIndex> sources = {0, 999};
  {
    EngineOptions options;
    options.budget = MemoryBudget(std::size_t{6} << 20);  // the matrix once fits, twice would not
    auto engine = banded_blocked_fw(g, DenseMode::kInt32, 2, options);
    EXPECT_NO_THROW(run_engine(*engine, g, sources, 2));
  }
  EngineOptions options;
  options.budget = MemoryBudget(std::size_t{3} << 20);  // less than the matrix
  auto engine = banded_blocked_fw(g, DenseMode::kInt32, 2, options);
  try {
    run_engine(*engine, g, sources, 2);
    ADD_FAILURE() << "blocked_fw in two bands ran past a 3 MB budget";
  } catch (const RoutingError& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kOutOfMemory);
    const std::string message = e.what();
    EXPECT_NE(message.find("blocked_fw"), std::string::npos) << message;
    EXPECT_NE(message.find("needs"), std::string::npos) << message;
    EXPECT_NE(message.find("row bands"), std::string::npos) << message;
  }
}

TEST(GpuApspDenseBands, CancelStopsTheBands) {
  SKIP_WITHOUT_GPU();
  // The ring of CancelStopsEveryEngine: 24 block rows, 3 bands.
  Graph g = cancel_ring();
  std::vector<VertexIndex> sources = cancel_ring_sources();
  for (bool immediately : {true, false}) {
    g_polls_before_cancel = 2;
    EngineOptions options;
    options.cancel = CancelToken(immediately ? always_cancel : cancel_after_some_polls);
    auto engine = banded_blocked_fw(g, DenseMode::kAuto, 3, options);
    EXPECT_THROW(run_engine(*engine, g, sources, 64), Cancelled)
        << (immediately ? "immediately" : "after some polls");
  }
  // Not cancelled, three bands close the whole ring.
  auto engine = banded_blocked_fw(g, DenseMode::kAuto, 3);
  auto rows = run_engine(*engine, g, sources, 64);
  ASSERT_TRUE(matches_reference(*find_engine("blocked_fw", Device::kGpu), g, sources, rows));
}

TEST(GpuApspMultiSource, SeveralWorkersGroupsAndBlockSizes) {
  SKIP_WITHOUT_GPU();
  RandomGraphSpec spec;
  spec.vertices = 450;
  spec.edges = 1800;
  spec.zero_weights = true;
  spec.max_weight = 4;
  spec.components = 2;
  Graph g = build_graph(testing::random_edges(spec, 11).view(), false);
  ensure_reverse(g);
  auto sources = pick_sources(g.vertex_count(), 230, 11);
  const EngineInfo info = *find_engine("multi_source", Device::kGpu);
  for (int workers : {1, 3}) {
    for (int groups : {1, 3}) {
      for (int block_size : {32, 256, 1024}) {
        gpu::apsp::MultiSourceTuning tuning;
        tuning.workers = workers;
        tuning.groups_per_launch = groups;
        EngineOptions options;
        options.block_size = block_size;
        auto engine = gpu::apsp::create_multi_source_engine(g, options, tuning);
        std::vector<ArcIndex> predecessors;
        auto rows = run_engine(*engine, g, sources, 101, &predecessors);
        ASSERT_TRUE(matches_reference(info, g, sources, rows))
            << workers << " workers, " << groups << " groups, block " << block_size;
        ASSERT_TRUE(matches_rule(info, g, sources, rows, predecessors));
      }
    }
  }
}

TEST(GpuApspMultiSource, RacingUpdatesAndLongChains) {
  SKIP_WITHOUT_GPU();
  const EngineInfo info = *find_engine("multi_source", Device::kGpu);
  // Seed 001's counterexample: n - 2 threads race to lower dist[n - 1] in one round.
  for (int n : {34, 1000}) {
    Graph g = build_graph(testing::counterexample_edges(n).view(), true);
    auto engine = info.create(g, EngineOptions{});
    auto sources = pick_sources(g.vertex_count(), 40, unsigned(n));
    auto rows = run_engine(*engine, g, sources, 40);
    ASSERT_TRUE(matches_reference(info, g, sources, rows)) << "counterexample n=" << n;
  }
  // A ring: one vertex per round, many graph replays before convergence.
  EdgeTable ring;
  for (int v = 0; v < 2000; ++v) ring.add(v, (v + 1) % 2000, 1 + v % 5);
  Graph g = build_graph(ring.view(), true);
  auto engine = info.create(g, EngineOptions{});
  auto sources = pick_sources(g.vertex_count(), 33, 5);
  auto rows = run_engine(*engine, g, sources, 35);
  ASSERT_TRUE(matches_reference(info, g, sources, rows)) << "ring";
  EXPECT_GE(engine->report().rounds, 2000);
}

// A short run over every engine of this file with predecessors, for compute-sanitizer.
TEST(GpuApspSanitizer, SmallGraphsEveryEngine) {
  SKIP_WITHOUT_GPU();
  for (int size : {65, 129}) {
    RandomGraphSpec spec;
    spec.vertices = size;
    spec.edges = size * 4;
    spec.zero_weights = true;
    spec.max_weight = 3;
    Graph g = build_graph(testing::random_edges(spec, unsigned(size)).view(), true);
    ensure_reverse(g);
    auto sources = pick_sources(g.vertex_count(), 40, 1);
    for (const char* name : {"multi_source", "blocked_fw", "floyd_warshall", "rkleene"}) {
      const EngineInfo info = *find_engine(name, Device::kGpu);
      for (DenseMode mode : {DenseMode::kInt16x2, DenseMode::kInt32, DenseMode::kFloat64}) {
        if (!info.dense && mode != DenseMode::kInt16x2) continue;
        gpu::apsp::DenseTuning tuning;
        tuning.mode = mode;
        auto engine = info.dense
                          ? gpu::apsp::create_dense_engine(
                                g, EngineOptions{},
                                std::string(name) == "blocked_fw" ? DenseAlgorithm::kBlocked
                                : std::string(name) == "rkleene"  ? DenseAlgorithm::kRecursiveKleene
                                                                  : DenseAlgorithm::kNaive,
                                tuning)
                          : info.create(g, EngineOptions{});
        std::vector<ArcIndex> predecessors;
        auto rows = run_engine(*engine, g, sources, 19, &predecessors);
        ASSERT_TRUE(matches_reference(info, g, sources, rows)) << name;
        ASSERT_TRUE(matches_rule(info, g, sources, rows, predecessors)) << name;
      }
    }
  }
}

}  // namespace
}  // namespace gpu_routing
