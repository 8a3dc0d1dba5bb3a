// Every single-source GPU engine (and the many-source harish and concurrent) against the reference
// Dijkstra: distances bit for bit, predecessors exactly as compute_predecessors() gives them.
// Each test skips itself where no GPU is usable.
//
// GPU_ROUTING_TEST_GRAPHS=N (default 150) sets how many random graphs each engine sees; the
// sanitizer runs on the GPU machine use a handful.
#include <gtest/gtest.h>

#include <cstdlib>
#include <set>
#include <string>
#include <vector>

#include "../../kernels/gpu_engines.hpp"
#include "../../kernels/predecessors_gpu.cuh"
#include "../../kernels/sssp_tuning.hpp"
#include "engine/engine.hpp"
#include "engine/gpu.hpp"
#include "base/predecessors.hpp"
#include "cpu/sssp_dijkstra.hpp"
#include "gpu_testing.hpp"
#include "test_graphs.hpp"

namespace gpu_routing {
namespace {

using testing::EdgeTable;
using testing::RandomGraphSpec;

int random_graph_count() {
  const char* text = std::getenv("GPU_ROUTING_TEST_GRAPHS");
  int count = text != nullptr ? std::atoi(text) : 150;
  return count > 0 ? count : 150;
}

bool is_many_source_under_test(const EngineInfo& info) {
  const std::string name = info.name;
  return name == "harish" || name == "concurrent";
}

// Every GPU single-source engine (near_far too once it is in the table), harish and concurrent.
// GPU_ROUTING_PLAIN_LAUNCHES=1 makes this family launch rounds as plain kernels from the start:
// compute-sanitizer's racecheck stops the process on CUDA graphs with conditional loop nodes
// (seen on an H200 with CUDA 13.0), so racecheck runs the kernels this way.
const bool kPlainLaunchesFromEnvironment = [] {
  const char* plain = std::getenv("GPU_ROUTING_PLAIN_LAUNCHES");
  if (plain != nullptr && std::string(plain) == "1") gpu::set_plain_round_launches(true);
  return plain != nullptr;
}();

// GPU_ROUTING_TEST_ENGINES=name,name limits the engines (to run a sanitizer engine by engine).
std::vector<const EngineInfo*> engines_under_test() {
  const char* only = std::getenv("GPU_ROUTING_TEST_ENGINES");
  std::vector<const EngineInfo*> engines;
  for (const auto& info : gpu_engine_table()) {
    if (!info.single_source && !is_many_source_under_test(info)) continue;
    // The road index sums fractional costs in another order than Dijkstra (not bit for bit):
    // gpu_cch_test.cu compares it with the CPU's cch, which it equals bit for bit.
    if (std::string(info.name) == "cch") continue;
    if (only != nullptr && *only != '\0' &&
        ("," + std::string(only) + ",").find("," + std::string(info.name) + ",") ==
            std::string::npos)
      continue;
    engines.push_back(&info);
  }
  return engines;
}

::testing::AssertionResult compare_with_reference(const EngineInfo& info, const Graph& g,
                                                  const std::vector<VertexIndex>& sources,
                                                  const EngineOptions& options,
                                                  ShortestPathEngine* reuse) {
  std::unique_ptr<ShortestPathEngine> owned;
  ShortestPathEngine* engine = reuse;
  if (engine == nullptr) {
    owned = info.create(g, options);
    engine = owned.get();
  }
  const std::size_t n = static_cast<std::size_t>(g.vertex_count());
  std::vector<double> dist(sources.size() * n, -1.0);
  std::vector<ArcIndex> pred(sources.size() * n, -7);
  SolveRequest request;
  request.sources = sources.data();
  request.source_count = static_cast<int>(sources.size());
  request.distances = dist.data();
  request.predecessor_arcs = pred.data();
  engine->solve(request);
  for (std::size_t i = 0; i < sources.size(); ++i) {
    auto want = reference_dijkstra(g.forward, sources[i]);
    auto same = testing::same_distances(dist.data() + i * n, want);
    if (!same) return same << " (" << info.name << ", source " << sources[i] << ")";
    std::vector<ArcIndex> rule(n);
    compute_predecessors(g.reverse, want.data(), sources[i], rule.data());
    for (std::size_t v = 0; v < n; ++v)
      if (pred[i * n + v] != rule[v])
        return ::testing::AssertionFailure()
               << info.name << ", source " << sources[i] << ": predecessor of vertex index " << v
               << " is arc " << pred[i * n + v] << ", the rule says " << rule[v];
  }
  return ::testing::AssertionSuccess();
}

// Runs `info` on `sources` and compares every row with the reference; an exception is a failure.
::testing::AssertionResult matches_reference(const EngineInfo& info, const Graph& g,
                                             const std::vector<VertexIndex>& sources,
                                             const EngineOptions& options = {},
                                             ShortestPathEngine* reuse = nullptr) {
  try {
    return compare_with_reference(info, g, sources, options, reuse);
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << info.name << " threw: " << e.what();
  }
}

// One failure per engine and test: an engine that failed is not run again in that test, and
// the other engines' results still show.
class EngineFailures {
 public:
  bool failed(const EngineInfo& info) const { return names_.count(info.name) != 0; }
  void expect(const EngineInfo& info, const ::testing::AssertionResult& result,
              const std::string& context) {
    if (result) return;
    names_.insert(info.name);
    ADD_FAILURE() << result.message() << " [" << context << "]";
  }

 private:
  std::set<std::string> names_;
};

Graph make_graph(const EdgeTable& table, bool directed) {
  Graph g = build_graph(table.view(), directed);
  ensure_reverse(g);
  return g;
}

std::vector<VertexIndex> some_sources(const Graph& g) {
  std::vector<VertexIndex> sources = {0};
  if (g.vertex_count() > 2) sources.push_back(g.vertex_count() / 2);
  if (g.vertex_count() > 1) sources.push_back(g.vertex_count() - 1);
  return sources;
}

TEST(GpuSssp, EngineTableHasTheFamily) {
  std::vector<std::string> want = {
      "frontier", "frontier_pred", "frontier_matrix", "frontier_pred_matrix",
      "crauser",  "bellman_ford",  "harish",          "concurrent"};
  for (const auto& name : want) {
    const EngineInfo* info = find_engine(name, Device::kGpu);
    ASSERT_NE(info, nullptr) << name;
    EXPECT_EQ(info->single_source, !is_many_source_under_test(*info)) << name;
    EXPECT_EQ(info->many_source, is_many_source_under_test(*info)) << name;
  }
}

void check_random_graphs(int graphs) {
  EngineFailures failures;
  int checked = 0;
  for (unsigned seed = 1; seed <= static_cast<unsigned>(graphs); ++seed) {
    RandomGraphSpec spec;
    spec.vertices = 1 + static_cast<int>(seed * 37 % 300);
    spec.edges = static_cast<int>(seed * 101 % 1500);
    spec.integer_weights = seed % 2 == 0;
    spec.zero_weights = seed % 5 == 0;
    spec.max_weight = seed % 7 == 0 ? 3 : 100;  // few distinct weights: many ties
    spec.components = 1 + static_cast<int>(seed % 3);
    spec.parallel_edges = seed % 4 != 0;
    spec.self_loops = seed % 3 != 0;
    spec.with_reverse = seed % 6 != 0;
    spec.sparse_ids = seed % 9 == 0;
    EdgeTable t = testing::random_edges(spec, seed);
    Graph g = make_graph(t, seed % 2 == 1);
    if (g.vertex_count() == 0) continue;
    auto sources = some_sources(g);
    for (const EngineInfo* info : engines_under_test()) {
      if (failures.failed(*info)) continue;
      failures.expect(*info, matches_reference(*info, g, sources), testing::describe(spec, seed));
      ++checked;
    }
  }
  EXPECT_GT(checked, graphs);
}

TEST(GpuSssp, EveryEngineMatchesTheReferenceOnRandomGraphs) {
  SKIP_WITHOUT_GPU();
  check_random_graphs(random_graph_count());
}

// Several rounds per iteration of the batch graph's loop: the search may end, or the batch's
// round budget run out, in the middle of an iteration.
TEST(GpuSssp, SeveralRoundsPerGraphIterationMatchTheReference) {
  SKIP_WITHOUT_GPU();
  for (int rounds : {3, 4}) {
    gpu::set_rounds_per_graph_iteration(rounds);
    check_random_graphs(std::max(3, random_graph_count() / 5));
    EdgeTable chain;  // 2000 rounds: several batches
    for (int v = 1; v < 2000; ++v) chain.add(v, v + 1, v % 3);
    Graph g = make_graph(chain, true);
    for (const EngineInfo* info : engines_under_test())
      EXPECT_TRUE(matches_reference(*info, g, {0, 1000})) << rounds << " rounds per iteration";
  }
  gpu::set_rounds_per_graph_iteration(0);
}

// The path drivers without conditional graph nodes take: rounds as plain kernel launches.
TEST(GpuSssp, PlainRoundLaunchesMatchTheReferenceToo) {
  SKIP_WITHOUT_GPU();
  gpu::set_plain_round_launches(true);
  check_random_graphs(std::max(3, random_graph_count() / 5));
  gpu::set_plain_round_launches(kPlainLaunchesFromEnvironment);
}

TEST(GpuSssp, DenseGraphsAndTheMatrixSwitch) {
  SKIP_WITHOUT_GPU();
  EngineFailures failures;
  for (int n : {2, 33, 97, 130}) {
    EdgeTable t;
    std::mt19937 rng(static_cast<unsigned>(n));
    for (int s = 1; s <= n; ++s)
      for (int d = 1; d <= n; ++d)
        if (rng() % 3 != 0) t.add(s, d, static_cast<double>(rng() % 4));  // zeros and ties
    for (bool directed : {true, false}) {
      Graph g = make_graph(t, directed);
      for (const EngineInfo* info : engines_under_test())
        if (!failures.failed(*info))
          failures.expect(*info, matches_reference(*info, g, some_sources(g)),
                          "n=" + std::to_string(n));
      for (const char* name : {"frontier", "frontier_pred"}) {
        auto engine = find_engine(name, Device::kGpu)->create(g, {});
        EXPECT_NE(engine->report().notes.find("adjacency matrix"), std::string::npos)
            << name << ": " << engine->report().notes;
      }
    }
  }
}

TEST(GpuSssp, HeavyVerticesAndLongChains) {
  SKIP_WITHOUT_GPU();
  // A hub with 700 arcs out and in (the warp-wide paths), and a 600-vertex chain (many rounds).
  EdgeTable t;
  std::mt19937 rng(5);
  for (int v = 2; v <= 700; ++v) {
    t.add(1, v, static_cast<double>(1 + rng() % 50));
    t.add(v, 1, static_cast<double>(rng() % 50));
  }
  for (int v = 701; v < 1300; ++v) t.add(v, v + 1, static_cast<double>(rng() % 3));
  t.add(1, 701, 2);
  t.add(1300, 1, 1);
  EngineFailures failures;
  for (bool directed : {true, false}) {
    Graph g = make_graph(t, directed);
    for (const EngineInfo* info : engines_under_test())
      if (!failures.failed(*info))
        failures.expect(*info, matches_reference(*info, g, {0, 5, 700, 1299}),
                        directed ? "directed" : "undirected");
  }
}

TEST(GpuSssp, OneVertexAndNoArcs) {
  SKIP_WITHOUT_GPU();
  EdgeTable loop;
  loop.add(7, 7, 3);
  EdgeTable unusable_reverse;  // two vertices, no arc from the second
  unusable_reverse.add(1, 2, 4);
  EdgeTable isolated;  // vertices whose only arcs are self loops
  isolated.add(1, 1, 0);
  isolated.add(2, 2, 5);
  isolated.add(3, 3, 1);
  EngineFailures failures;
  for (const EdgeTable* t : {&loop, &unusable_reverse, &isolated}) {
    Graph g = make_graph(*t, true);
    std::vector<VertexIndex> all;
    for (VertexIndex v = 0; v < g.vertex_count(); ++v) all.push_back(v);
    for (const EngineInfo* info : engines_under_test())
      if (!failures.failed(*info))
        failures.expect(*info, matches_reference(*info, g, all),
                        std::to_string(g.vertex_count()) + " vertices");
  }
}

TEST(GpuSssp, BlockSizesAndStreams) {
  SKIP_WITHOUT_GPU();
  RandomGraphSpec spec;
  spec.vertices = 1000;
  spec.edges = 5000;
  spec.zero_weights = true;
  EdgeTable t = testing::random_edges(spec, 77);
  Graph g = make_graph(t, true);
  std::vector<VertexIndex> sources = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  EngineFailures failures;
  for (int block : {32, 64, 96, 100, 192, 512, 1024, 5000}) {
    EngineOptions options;
    options.block_size = block;
    // This family's relax kernels take any block size (rounded to whole warps); other engines
    // may refuse sizes their kernels cannot run.
    for (const EngineInfo& info : gpu::dijkstra_family_engines())
      if (!failures.failed(info))
        failures.expect(info, matches_reference(info, g, sources, options),
                        "block " + std::to_string(block));
  }
  for (int streams : {1, 2, 3, 7, 16}) {
    EngineOptions options;
    options.streams = streams;
    ASSERT_TRUE(matches_reference(*find_engine("concurrent", Device::kGpu), g, sources, options))
        << streams << " streams";
  }
}

// Seed 001 s. 4.3: n-2 frontier vertices race to lower dist[n-1]; a lost update shows as a
// result that changes between runs.
// harish and concurrent share many-source solves over every visible GPU; several engines on one
// GPU run the same split. Rows and predecessors must be those of the reference.
TEST(GpuSssp, ManySourceEnginesSplitOverSeveralEngines) {
  SKIP_WITHOUT_GPU();
  for (unsigned seed = 1; seed <= 6; ++seed) {
    RandomGraphSpec spec;
    spec.vertices = 50 + static_cast<int>(seed) * 37;
    spec.edges = spec.vertices * 3;
    spec.integer_weights = seed % 2 == 0;
    spec.components = 1 + static_cast<int>(seed % 3);
    Graph g = make_graph(testing::random_edges(spec, seed + 300), seed % 2 == 1);
    std::vector<VertexIndex> sources;
    for (int i = 0; i < 7; ++i)
      sources.push_back(static_cast<VertexIndex>((seed * 31 + static_cast<unsigned>(i) * 17) %
                                                 static_cast<unsigned>(g.vertex_count())));
    for (const char* name : {"harish", "concurrent"}) {
      const EngineInfo* info = find_engine(name, Device::kGpu);
      ASSERT_NE(info, nullptr);
      for (int engines : {2, 3}) {
        auto engine = gpu::make_dijkstra_family_engine(g, {}, name, engines);
        EXPECT_STREQ(engine->name(), name);
        ASSERT_TRUE(matches_reference(*info, g, sources, {}, engine.get()))
            << testing::describe(spec, seed + 300) << " engines " << engines;
        // One source goes to device 0's engine alone.
        ASSERT_TRUE(matches_reference(*info, g, {sources[0]}, {}, engine.get()));
      }
    }
  }
}

TEST(GpuSssp, CounterexampleGraphGivesTheSameAnswer100Times) {
  SKIP_WITHOUT_GPU();
  EdgeTable t = testing::counterexample_edges(1024);
  EngineFailures failures;
  for (bool directed : {true, false}) {
    Graph g = make_graph(t, directed);
    ASSERT_EQ(reference_dijkstra(g.forward, 0)[1023], 2.0);
    for (const EngineInfo* info : engines_under_test()) {
      if (failures.failed(*info)) continue;
      std::unique_ptr<ShortestPathEngine> engine;
      try {
        engine = info->create(g, {});
      } catch (const std::exception& e) {
        failures.expect(*info, ::testing::AssertionFailure() << e.what(), "create");
        continue;
      }
      for (int run = 0; run < 100 && !failures.failed(*info); ++run)
        failures.expect(
            *info, matches_reference(*info, g, {0}, {}, engine.get()),
            std::string(directed ? "directed" : "undirected") + ", run " + std::to_string(run));
    }
  }
}

bool g_cancel_now = false;

TEST(GpuSssp, CancelThrowsAndTheEngineStaysUsable) {
  SKIP_WITHOUT_GPU();
  EdgeTable t = testing::grid_edges(150, 150, 10, 3);
  Graph g = make_graph(t, true);
  for (const EngineInfo* info : engines_under_test()) {
    if (info->dense) continue;  // 22,500^2 doubles
    EngineOptions options;
    options.cancel = CancelToken([] { return g_cancel_now; });
    std::unique_ptr<ShortestPathEngine> engine;
    try {
      engine = info->create(g, options);
    } catch (const std::exception& e) {
      ADD_FAILURE() << info->name << ": " << e.what();
      continue;
    }
    std::vector<VertexIndex> sources = {0, 1, 2, 3};
    std::vector<double> dist(sources.size() * static_cast<std::size_t>(g.vertex_count()));
    SolveRequest request;
    request.sources = sources.data();
    request.source_count = static_cast<int>(sources.size());
    request.distances = dist.data();
    g_cancel_now = true;
    EXPECT_THROW(engine->solve(request), Cancelled) << info->name;
    g_cancel_now = false;
    EXPECT_TRUE(matches_reference(*info, g, {5, 22499}, options, engine.get())) << info->name;
  }
}

TEST(GpuSssp, BudgetAndMatrixSizeRefusals) {
  SKIP_WITHOUT_GPU();
  EdgeTable t = testing::grid_edges(30, 30, 10, 3);
  Graph g = make_graph(t, true);
  for (const EngineInfo* info : engines_under_test()) {
    EngineOptions options;
    options.budget = MemoryBudget(1000);
    try {
      auto engine = info->create(g, options);
      std::vector<double> dist(static_cast<std::size_t>(g.vertex_count()));
      VertexIndex source = 0;
      SolveRequest request;
      request.sources = &source;
      request.source_count = 1;
      request.distances = dist.data();
      engine->solve(request);
      ADD_FAILURE() << info->name << " ran within a 1000-byte budget";
    } catch (const RoutingError& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kOutOfMemory) << info->name;
      EXPECT_NE(std::string(e.what()).find("needs"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("max_memory"), std::string::npos) << e.what();
    }
  }
  // 200,000^2 doubles (320 GB) fit no device.
  EdgeTable ring;
  for (int v = 0; v < 200000; ++v) ring.add(v, (v + 1) % 200000, 1);
  Graph big = make_graph(ring, true);
  for (const char* name : {"frontier_matrix", "frontier_pred_matrix"}) {
    try {
      auto engine = find_engine(name, Device::kGpu)->create(big, {});
      ADD_FAILURE() << name << " accepted a 200000 x 200000 matrix";
    } catch (const RoutingError& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kOutOfMemory);
      EXPECT_NE(std::string(e.what()).find("200000 x 200000"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("GB"), std::string::npos) << e.what();
    }
  }
  // frontier is not dense there: it takes the lists.
  auto frontier = find_engine("frontier", Device::kGpu)->create(big, {});
  EXPECT_EQ(frontier->report().notes.find("adjacency matrix"), std::string::npos);
}

// This family's reports (other engines keep their own conventions).
TEST(GpuSssp, ReportSaysWhatRan) {
  SKIP_WITHOUT_GPU();
  EdgeTable t = testing::grid_edges(40, 40, 10, 9);
  Graph g = make_graph(t, true);
  for (const EngineInfo& family_info : gpu::dijkstra_family_engines()) {
    const EngineInfo* info = &family_info;
    auto engine = info->create(g, {});
    ASSERT_TRUE(matches_reference(*info, g, {0, 100}, {}, engine.get()));
    const EngineReport& report = engine->report();
    EXPECT_NE(report.device_name.find("(device 0)"), std::string::npos) << report.device_name;
    EXPECT_GT(report.rounds, 0) << info->name;
    EXPECT_GE(report.compute_ms, 0) << info->name;
    EXPECT_GT(report.transfer_ms, 0) << info->name;
    EXPECT_GT(info->estimate_bytes(g, 1), static_cast<std::size_t>(g.arc_count()) * 12)
        << info->name;
  }
}

// The shared predecessor pass on its own (the one-call form other engines use).
TEST(GpuPredecessors, OneCallFormEqualsTheRule) {
  SKIP_WITHOUT_GPU();
  gpu::use_device(0);
  for (unsigned seed = 1; seed <= 40; ++seed) {
    RandomGraphSpec spec;
    spec.vertices = 50 + static_cast<int>(seed * 13 % 400);
    spec.edges = spec.vertices * 4;
    spec.zero_weights = true;
    spec.max_weight = 1 + static_cast<int>(seed % 3);
    EdgeTable t = testing::random_edges(spec, seed);
    Graph g = make_graph(t, seed % 2 == 0);
    const std::size_t n = static_cast<std::size_t>(g.vertex_count());
    gpu::Stream stream;
    gpu::DeviceCsr reverse;
    reverse.upload(g.reverse, true, stream.get());
    gpu::DeviceBuffer<double> distances(n);
    gpu::DeviceBuffer<ArcIndex> arcs(n);
    for (VertexIndex source : {VertexIndex{0}, g.vertex_count() - 1}) {
      auto want = reference_dijkstra(g.forward, source);
      distances.upload(want.data(), n, stream.get());
      std::vector<ArcIndex> got(n, -7), rule(n);
      compute_predecessors(g.reverse, want.data(), source, rule.data());
      gpu::compute_predecessors_on_device(reverse, distances.data(), source, arcs.data(),
                                          got.data(), seed % 2 ? want.data() : nullptr, g.reverse,
                                          stream.get());
      ASSERT_EQ(got, rule) << testing::describe(spec, seed);
    }
  }
}

}  // namespace
}  // namespace gpu_routing
