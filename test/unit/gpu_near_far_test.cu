// The near_far engine against the reference Dijkstra: exact distances and exact predecessors
// (the rule of predecessors.hpp) on hundreds of random graphs, one source and batches, every
// code path forced by its knob (grid alone, block 0 alone, chunks of huge vertices, tiny and huge
// deltas, block per source), repeated runs, cancel, budget. Each test skips without a GPU.
//
// GPU_ROUTING_TEST_SEEDS lowers the number of random graphs (for compute-sanitizer runs).
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <memory>
#include <numeric>
#include <vector>

#include "../../kernels/near_far.cuh"
#include "engine/engine.hpp"
#include "engine/gpu.hpp"
#include "base/predecessors.hpp"
#include "cpu/sssp_dijkstra.hpp"
#include "gpu_testing.hpp"
#include "test_graphs.hpp"

namespace gpu_routing {
namespace {

using gpu::NearFarConfig;
using testing::EdgeTable;
using testing::RandomGraphSpec;

unsigned seed_count(unsigned fallback) {
  const char* text = std::getenv("GPU_ROUTING_TEST_SEEDS");
  if (text == nullptr) return fallback;
  const long value = std::strtol(text, nullptr, 10);
  return value > 0 ? static_cast<unsigned>(value) : fallback;
}

// Every code path of the engine, selected by seed.
NearFarConfig config_for(unsigned variant) {
  NearFarConfig c;
  // Both local queue layouts on every other variant (local_hops 0 has no queue at all), and deep
  // hops on narrow frontiers sometimes forced on every round, sometimes off.
  c.block_local_hops = (variant / 8) % 2 == 0;
  c.batch_block_local_hops = (variant / 8) % 2 == 1;
  if ((variant / 16) % 3 == 1) c.deep_frontier = 1 << 30;
  if ((variant / 16) % 3 == 2) c.deep_frontier = 0;
  if (variant % 5 == 0) c.deep_local_hops = 1 + static_cast<int>(variant % 7);
  switch (variant % 8) {
    case 0:
      break;  // defaults
    case 1:
      c.small_frontier = 0;  // the whole grid every round
      c.local_hops = 0;
      c.grid_wide_registers = false;
      break;
    case 2:
      c.small_frontier = 1 << 20;  // block 0 alone nearly always
      c.small_far_pile = 1 << 20;
      c.block_stretch_rounds = 7;
      c.local_hops = 1;
      c.precheck = true;
      break;
    case 3:
      c.delta_scale = 0.01;  // many buckets, long far piles
      c.local_hops = 2;
      break;
    case 4:
      c.delta_scale = 1000;  // one bucket: Bellman-Ford
      break;
    case 5:
      c.huge_degree = 3;  // most vertices queued as chunks of 2 arcs
      c.chunk_arcs = 2;
      c.local_hops = 3;
      break;
    case 6:
      c.precheck = true;
      c.grid_wide_registers = false;
      c.grid_block_size = 64;
      c.grid_blocks_per_sm = 1;
      c.local_hops = 0;
      break;
    case 7:
      c.delta = 1e-9;  // tiny fixed delta: thresholds jump by the far minimum
      c.huge_degree = 40;
      c.chunk_arcs = 33;
      c.local_hops = 16;
      c.batch_block_size = 512;  // 48 kB of local queues plus the static shared memory
      break;
  }
  return c;
}

Graph build(const EdgeTable& table, bool directed) {
  Graph g = build_graph(table.view(), directed);
  ensure_reverse(g);
  return g;
}

// Solves `sources` in one request (with predecessors unless targets are given) and checks every
// row against the reference.
::testing::AssertionResult check_solve(ShortestPathEngine& engine, const Graph& g,
                                       const std::vector<VertexIndex>& sources,
                                       bool with_predecessors = true) {
  const std::size_t n = static_cast<std::size_t>(g.vertex_count());
  std::vector<double> distances(sources.size() * n, -1.0);
  std::vector<ArcIndex> predecessors(sources.size() * n, -7);
  SolveRequest request;
  request.sources = sources.data();
  request.source_count = static_cast<int>(sources.size());
  request.distances = distances.data();
  request.predecessor_arcs = with_predecessors ? predecessors.data() : nullptr;
  engine.solve(request);
  std::vector<ArcIndex> want_predecessors(n);
  for (std::size_t i = 0; i < sources.size(); ++i) {
    const std::vector<double> want = reference_dijkstra(g.forward, sources[i]);
    const double* got = distances.data() + i * n;
    auto same = testing::same_distances(got, want);
    if (!same) return same << " (source " << sources[i] << ", row " << i << ")";
    if (!with_predecessors) continue;
    compute_predecessors(g.reverse, want.data(), sources[i], want_predecessors.data());
    for (std::size_t v = 0; v < n; ++v)
      if (predecessors[i * n + v] != want_predecessors[v])
        return ::testing::AssertionFailure()
               << "source " << sources[i] << " vertex " << v << ": predecessor arc "
               << predecessors[i * n + v] << ", want " << want_predecessors[v];
  }
  return ::testing::AssertionSuccess();
}

RandomGraphSpec spec_for(unsigned seed) {
  RandomGraphSpec spec;
  const int sizes[] = {1, 2, 3, 7, 31, 64, 100, 257, 600, 1500};
  spec.vertices = sizes[seed % 10];
  spec.edges = spec.vertices * static_cast<int>(1 + seed % 6);
  if (seed % 13 == 0) spec.edges = spec.vertices * 40;  // dense: warp-wide vertices
  spec.integer_weights = seed % 3 != 0;
  spec.zero_weights = seed % 4 == 0;
  spec.max_weight = seed % 5 == 0 ? 3 : 1000;
  spec.components = 1 + static_cast<int>(seed % 4);
  spec.parallel_edges = seed % 2 == 0;
  spec.self_loops = seed % 3 == 1;
  spec.with_reverse = seed % 5 != 1;
  return spec;
}

std::vector<VertexIndex> some_sources(const Graph& g, unsigned seed, int count) {
  std::vector<VertexIndex> sources;
  const VertexIndex n = g.vertex_count();
  for (int i = 0; i < count && n > 0; ++i)
    sources.push_back(static_cast<VertexIndex>((seed * 7919u + static_cast<unsigned>(i) * 104729u) %
                                               static_cast<unsigned>(n)));
  return sources;
}

TEST(NearFar, IsInTheEngineTable) {
  const EngineInfo* info = find_engine("near_far", Device::kGpu);
  ASSERT_NE(info, nullptr);
  EXPECT_TRUE(info->single_source);
  EXPECT_TRUE(info->many_source);
  EXPECT_FALSE(info->dense);
}

TEST(NearFar, SingleSourceMatchesReferenceOnRandomGraphs) {
  SKIP_WITHOUT_GPU();
  const unsigned seeds = seed_count(240);
  int checked = 0;
  for (unsigned seed = 1; seed <= seeds; ++seed) {
    const RandomGraphSpec spec = spec_for(seed);
    const bool directed = seed % 2 == 1;
    Graph g = build(testing::random_edges(spec, seed), directed);
    if (g.vertex_count() == 0) continue;
    auto engine = gpu::make_near_far_engine(g, EngineOptions{}, config_for(seed));
    for (VertexIndex source : some_sources(g, seed, 3)) {
      ASSERT_TRUE(check_solve(*engine, g, {source}))
          << testing::describe(spec, seed) << (directed ? " directed" : " undirected")
          << " variant " << seed % 8;
      ++checked;
    }
  }
  EXPECT_GT(checked, static_cast<int>(seeds));
}

TEST(NearFar, ManySourcesMatchReferenceInBothBatchModes) {
  SKIP_WITHOUT_GPU();
  const unsigned seeds = seed_count(120);
  const NearFarConfig::Batch modes[] = {NearFarConfig::Batch::kBlockPerSource,
                                        NearFarConfig::Batch::kGridPerSource,
                                        NearFarConfig::Batch::kAuto};
  for (unsigned seed = 1; seed <= seeds; ++seed) {
    const RandomGraphSpec spec = spec_for(seed + 1000);
    const bool directed = seed % 2 == 0;
    Graph g = build(testing::random_edges(spec, seed + 1000), directed);
    if (g.vertex_count() == 0) continue;
    NearFarConfig config = config_for(seed);
    config.batch = modes[seed % 3];
    if (seed % 4 == 1) config.batch_block_size = 32 * (1 + seed % 9);  // odd block sizes
    auto engine = gpu::make_near_far_engine(g, EngineOptions{}, config);
    // Counts that are multiples of nothing, sometimes more than the vertices (repeats).
    const int counts[] = {2, 3, 13, 37, 101};
    const int count = counts[seed % 5];
    ASSERT_TRUE(check_solve(*engine, g, some_sources(g, seed, count)))
        << testing::describe(spec, seed + 1000) << " variant " << seed % 8 << " batch mode "
        << seed % 3;
  }
}

TEST(NearFar, AllSourcesOfSmallGraphs) {
  SKIP_WITHOUT_GPU();
  for (unsigned seed = 1; seed <= seed_count(30); ++seed) {
    RandomGraphSpec spec = spec_for(seed + 5000);
    spec.vertices = 50 + static_cast<int>(seed % 7) * 13;
    spec.edges = spec.vertices * 3;
    Graph g = build(testing::random_edges(spec, seed + 5000), seed % 2 == 0);
    std::vector<VertexIndex> all(static_cast<std::size_t>(g.vertex_count()));
    std::iota(all.begin(), all.end(), 0);
    NearFarConfig config = config_for(seed);
    config.batch = NearFarConfig::Batch::kBlockPerSource;
    auto engine = gpu::make_near_far_engine(g, EngineOptions{}, config);
    ASSERT_TRUE(check_solve(*engine, g, all)) << testing::describe(spec, seed + 5000);
  }
}

TEST(NearFar, GridGraph) {
  SKIP_WITHOUT_GPU();
  Graph g = build(testing::grid_edges(97, 131, 100, 5), false);
  for (unsigned variant = 0; variant < 8; ++variant) {
    NearFarConfig config = config_for(variant);
    config.batch =
        variant % 2 == 0 ? NearFarConfig::Batch::kBlockPerSource : NearFarConfig::Batch::kAuto;
    auto engine = gpu::make_near_far_engine(g, EngineOptions{}, config);
    ASSERT_TRUE(check_solve(*engine, g, {0})) << "variant " << variant;
    ASSERT_TRUE(check_solve(*engine, g, {g.vertex_count() / 2, 17, g.vertex_count() - 1, 4000}))
        << "variant " << variant;
  }
}

TEST(NearFar, HubWithThousandsOfArcs) {
  SKIP_WITHOUT_GPU();
  // Star plus ring: the hub has more arcs than huge_degree, so it is queued in chunks.
  EdgeTable t;
  const int leaves = 5000;
  for (int i = 1; i <= leaves; ++i) t.add(0, i, 1 + (i * 37) % 1000);
  for (int i = 1; i <= leaves; ++i) t.add(i, i % leaves + 1, 1 + (i * 11) % 50);
  Graph g = build(t, true);
  for (unsigned variant : {0u, 1u, 2u, 5u}) {
    NearFarConfig config = config_for(variant);
    config.batch = NearFarConfig::Batch::kBlockPerSource;
    auto engine = gpu::make_near_far_engine(g, EngineOptions{}, config);
    ASSERT_TRUE(check_solve(*engine, g, {0})) << "variant " << variant;
    ASSERT_TRUE(check_solve(*engine, g, {0, 3, 0, 4999})) << "variant " << variant;
  }
}

TEST(NearFar, SeedOneCounterexample) {
  SKIP_WITHOUT_GPU();
  Graph g = build(testing::counterexample_edges(300), true);
  auto engine = gpu::make_near_far_engine(g, EngineOptions{}, NearFarConfig{});
  EXPECT_TRUE(check_solve(*engine, g, {0}));
  EXPECT_TRUE(check_solve(*engine, g, {0, 1, 2}));
}

TEST(NearFar, EdgeCases) {
  SKIP_WITHOUT_GPU();
  {  // one vertex: a self loop
    EdgeTable t;
    t.add(7, 7, 3);
    Graph g = build(t, true);
    auto engine = gpu::make_near_far_engine(g, EngineOptions{}, NearFarConfig{});
    EXPECT_TRUE(check_solve(*engine, g, {0}));
    EXPECT_TRUE(check_solve(*engine, g, {0, 0, 0}));
  }
  {  // no arcs at all: no vertices, nothing to do
    EdgeTable t;
    t.add(1, 2, -1);
    Graph g = build(t, true);
    auto engine = gpu::make_near_far_engine(g, EngineOptions{}, NearFarConfig{});
    SolveRequest request;
    engine->solve(request);
  }
  {  // every weight zero
    EdgeTable t;
    for (int i = 1; i < 500; ++i) t.add(i, i + 1, 0, 0);
    t.add(3, 400, 0);
    Graph g = build(t, true);
    auto engine = gpu::make_near_far_engine(g, EngineOptions{}, NearFarConfig{});
    EXPECT_TRUE(check_solve(*engine, g, {0}));
    EXPECT_TRUE(check_solve(*engine, g, {0, 250, 499}));
  }
  {  // weights whose sums overflow to +inf, and tiny ones
    EdgeTable t;
    t.add(1, 2, 1e308);
    t.add(2, 3, 1e308);
    t.add(1, 4, 1e-300);
    t.add(4, 3, 5e-324);
    t.add(3, 5, 1e308);
    t.add(5, 6, 1e308);
    Graph g = build(t, true);
    auto engine = gpu::make_near_far_engine(g, EngineOptions{}, NearFarConfig{});
    EXPECT_TRUE(check_solve(*engine, g, {0}));
    EXPECT_TRUE(check_solve(*engine, g, {0, 1, 2, 3}));
  }
  {  // an invalid source
    EdgeTable t;
    t.add(1, 2, 1);
    Graph g = build(t, true);
    auto engine = gpu::make_near_far_engine(g, EngineOptions{}, NearFarConfig{});
    std::vector<VertexIndex> sources = {5};
    std::vector<double> distances(2);
    SolveRequest request;
    request.sources = sources.data();
    request.source_count = 1;
    request.distances = distances.data();
    try {
      engine->solve(request);
      ADD_FAILURE() << "no error for an invalid source";
    } catch (const RoutingError& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kInvalidParameter);
    }
  }
}

TEST(NearFar, TargetsGiveExactTargetColumns) {
  SKIP_WITHOUT_GPU();
  for (unsigned seed = 1; seed <= seed_count(40); ++seed) {
    RandomGraphSpec spec = spec_for(seed + 7000);
    spec.vertices = 300 + static_cast<int>(seed) * 17;
    spec.edges = spec.vertices * 3;
    Graph g = build(testing::random_edges(spec, seed + 7000), seed % 2 == 0);
    const std::size_t n = static_cast<std::size_t>(g.vertex_count());
    NearFarConfig config = config_for(seed);
    config.batch = seed % 2 == 0 ? NearFarConfig::Batch::kBlockPerSource
                                 : NearFarConfig::Batch::kGridPerSource;
    auto engine = gpu::make_near_far_engine(g, EngineOptions{}, config);
    const std::vector<VertexIndex> sources = some_sources(g, seed, 1 + static_cast<int>(seed % 5));
    const std::vector<VertexIndex> targets =
        some_sources(g, seed + 99, 1 + static_cast<int>(seed % 11));
    std::vector<double> distances(sources.size() * n, -1.0);
    SolveRequest request;
    request.sources = sources.data();
    request.source_count = static_cast<int>(sources.size());
    request.targets = targets.data();
    request.target_count = static_cast<int>(targets.size());
    request.distances = distances.data();
    engine->solve(request);
    for (std::size_t i = 0; i < sources.size(); ++i) {
      const std::vector<double> want = reference_dijkstra(g.forward, sources[i]);
      for (VertexIndex t : targets)
        ASSERT_EQ(distances[i * n + static_cast<std::size_t>(t)], want[static_cast<std::size_t>(t)])
            << testing::describe(spec, seed + 7000) << " source " << sources[i] << " target " << t;
      for (std::size_t v = 0; v < n; ++v)
        ASSERT_GE(distances[i * n + v], want[v]) << "entries must be upper bounds";
    }
  }
}

// Several engines share each many-source solve (one per GPU; on a machine with one GPU they share
// it round robin, which runs the same split): rows, predecessors and compact target columns must
// be those of one engine.
TEST(NearFar, ManySourcesSplitOverSeveralEngines) {
  SKIP_WITHOUT_GPU();
  for (unsigned seed = 1; seed <= seed_count(24); ++seed) {
    const RandomGraphSpec spec = spec_for(seed + 9000);
    const bool directed = seed % 2 == 1;
    Graph g = build(testing::random_edges(spec, seed + 9000), directed);
    if (g.vertex_count() == 0) continue;
    NearFarConfig config = config_for(seed);
    config.devices = 2 + static_cast<int>(seed % 3);
    auto engine = gpu::make_near_far_engine(g, EngineOptions{}, config);
    const int counts[] = {1, 2, 5, 37, 101};
    const int count = counts[seed % 5];
    ASSERT_TRUE(check_solve(*engine, g, some_sources(g, seed, count)))
        << testing::describe(spec, seed + 9000) << " engines " << config.devices;
    if (g.vertex_count() < 2) continue;
    // Compact target columns, split the same way.
    const std::vector<VertexIndex> sources = some_sources(g, seed + 1, 7);
    const std::vector<VertexIndex> targets = some_sources(g, seed + 2, 5);
    const std::vector<double> compact = testing::solve_compact(*engine, sources, targets);
    for (std::size_t i = 0; i < sources.size(); ++i) {
      const std::vector<double> want = reference_dijkstra(g.forward, sources[i]);
      for (std::size_t j = 0; j < targets.size(); ++j)
        ASSERT_EQ(compact[i * targets.size() + j], want[static_cast<std::size_t>(targets[j])])
            << testing::describe(spec, seed + 9000) << " source " << sources[i] << " target "
            << targets[j];
    }
  }
}

// A cost matrix whose targets are all outside the graph reaches the engine as compact rows of
// width zero (pgTAP's no_crash found the copy of whole rows into that empty buffer).
TEST(NearFar, CompactRowsOfNoTargetsAreEmpty) {
  SKIP_WITHOUT_GPU();
  RandomGraphSpec spec = spec_for(42);
  spec.vertices = 200;
  spec.edges = 600;
  Graph g = build(testing::random_edges(spec, 42), true);
  for (int engines : {1, 2}) {
    NearFarConfig config;
    config.devices = engines;
    auto engine = gpu::make_near_far_engine(g, EngineOptions{}, config);
    const std::vector<VertexIndex> sources = {0, 5, 9};
    SolveRequest request;
    request.sources = sources.data();
    request.source_count = static_cast<int>(sources.size());
    request.compact_targets = true;
    request.target_count = 0;
    request.distances = nullptr;
    EXPECT_NO_THROW(engine->solve(request)) << engines << " engines";
    // The engine still answers afterwards.
    EXPECT_TRUE(check_solve(*engine, g, sources)) << engines << " engines";
  }
}

TEST(NearFar, RepeatedRunsGiveTheSameAnswer) {
  SKIP_WITHOUT_GPU();
  RandomGraphSpec spec;
  spec.vertices = 20000;
  spec.edges = 60000;
  spec.integer_weights = false;
  Graph g = build(testing::random_edges(spec, 77), false);
  for (unsigned variant = 0; variant < 3; ++variant) {
    NearFarConfig config = config_for(variant);
    config.batch = NearFarConfig::Batch::kBlockPerSource;
    auto engine = gpu::make_near_far_engine(g, EngineOptions{}, config);
    for (int run = 0; run < 12; ++run) {
      ASSERT_TRUE(check_solve(*engine, g, {static_cast<VertexIndex>(run * 1531 % 20000)}))
          << "variant " << variant << " run " << run;
      if (run % 4 == 0)
        ASSERT_TRUE(
            check_solve(*engine, g, some_sources(g, static_cast<unsigned>(run), 19), run % 8 == 0))
            << "variant " << variant << " run " << run;
    }
  }
}

std::atomic<int> g_cancel_after{-1};
bool cancel_poll() {
  const int left = g_cancel_after.load();
  if (left < 0) return false;
  if (left == 0) return true;
  g_cancel_after.store(left - 1);
  return false;
}

TEST(NearFar, CancelStopsTheSearchAndTheEngineRecovers) {
  SKIP_WITHOUT_GPU();
  Graph g = build(testing::grid_edges(700, 700, 100, 3), false);
  EngineOptions options;
  options.cancel = CancelToken(cancel_poll);
  for (auto mode : {NearFarConfig::Batch::kGridPerSource, NearFarConfig::Batch::kBlockPerSource}) {
    NearFarConfig config;
    config.batch = mode;
    auto engine = gpu::make_near_far_engine(g, options, config);
    const std::size_t n = static_cast<std::size_t>(g.vertex_count());
    std::vector<VertexIndex> sources = {0, 1, 2, 3};
    std::vector<double> distances(sources.size() * n);
    SolveRequest request;
    request.sources = sources.data();
    request.source_count = mode == NearFarConfig::Batch::kGridPerSource ? 1 : 4;
    request.distances = distances.data();
    g_cancel_after = 0;  // cancelled before anything starts
    EXPECT_THROW(engine->solve(request), Cancelled);
    g_cancel_after = 1;  // cancelled while the kernel runs
    EXPECT_THROW(engine->solve(request), Cancelled);
    g_cancel_after = -1;
    EXPECT_TRUE(check_solve(*engine, g, {12345}, false));
    EXPECT_TRUE(check_solve(*engine, g, {0, 490000 - 1, 777}, false));
  }
}

TEST(NearFar, TinyBudgetIsOutOfMemory) {
  SKIP_WITHOUT_GPU();
  Graph g = build(testing::grid_edges(50, 50, 10, 1), false);
  EngineOptions options;
  options.budget = MemoryBudget(4096);
  auto engine = gpu::make_near_far_engine(g, options, NearFarConfig{});
  EXPECT_TRUE(testing::solve_is_out_of_memory(*engine, 0)) << "a 4 kB budget";
}

TEST(NearFar, ReportsDeviceAndBatchSize) {
  SKIP_WITHOUT_GPU();
  Graph g = build(testing::grid_edges(40, 40, 10, 1), false);
  auto engine = find_engine("near_far", Device::kGpu)->create(g, EngineOptions{});
  EXPECT_GE(engine->preferred_batch_size(), 32);
  EXPECT_TRUE(check_solve(*engine, g, {5}));
  EXPECT_FALSE(engine->report().device_name.empty());
  EXPECT_GT(engine->report().rounds, 0);
  EXPECT_FALSE(engine->report().notes.empty());
}

}  // namespace
}  // namespace gpu_routing
