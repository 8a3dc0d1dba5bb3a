// The plain C++ core: id mapping, graph building, Dijkstra, the predecessor rule, and every CPU
// engine against the reference Dijkstra on hundreds of random graphs.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <set>
#include <thread>
#include <tuple>

#include "engine/engine.hpp"
#include "choice/engine_select.hpp"
#include "base/predecessors.hpp"
#include "call/routing_call.hpp"
#include "cpu/sssp_dijkstra.hpp"
#include "road_index/cch.hpp"
#include "cost_array_testing.hpp"
#include "test_graphs.hpp"

namespace gpu_routing {
namespace {

using testing::EdgeTable;
using testing::RandomGraphSpec;

TEST(IdMap, DenseAndSparseIdsMapInAscendingOrder) {
  for (bool sparse : {false, true}) {
    std::vector<std::int64_t> a, b;
    std::set<std::int64_t> all;
    std::mt19937_64 rng(7);
    for (int i = 0; i < 5000; ++i) {
      std::int64_t x =
          sparse ? static_cast<std::int64_t>(rng()) : static_cast<std::int64_t>(rng() % 3000) - 100;
      std::int64_t y =
          sparse ? static_cast<std::int64_t>(rng()) : static_cast<std::int64_t>(rng() % 3000) - 100;
      a.push_back(x);
      b.push_back(y);
      all.insert(x);
      all.insert(y);
    }
    auto ids = sorted_unique_ids(a.data(), b.data(), a.size());
    EXPECT_EQ(std::vector<std::int64_t>(all.begin(), all.end()), ids);
  }
}

TEST(IdMap, ExtremeIds) {
  std::vector<std::int64_t> a = {std::numeric_limits<std::int64_t>::max(), 0, -1};
  std::vector<std::int64_t> b = {std::numeric_limits<std::int64_t>::min(), 5,
                                 std::numeric_limits<std::int64_t>::max()};
  auto ids = sorted_unique_ids(a.data(), b.data(), a.size());
  std::vector<std::int64_t> want = {std::numeric_limits<std::int64_t>::min(), -1, 0, 5,
                                    std::numeric_limits<std::int64_t>::max()};
  EXPECT_EQ(want, ids);
  IdMap map(ids);
  EXPECT_EQ(map.find(std::numeric_limits<std::int64_t>::max()), 4);
  EXPECT_EQ(map.find(3), kNoVertex);
}

// find() answers as a binary search would, for every id and for ids that are not there: on ids
// numbered densely from 1, densely from a negative id, densely with holes (each hole shifts the
// ids after it off their offsets), and spread over the whole range.
TEST(IdMap, FindMatchesABinarySearch) {
  std::mt19937_64 rng(11);
  for (int shape = 0; shape < 4; ++shape) {
    std::vector<std::int64_t> ids;
    for (std::int64_t i = 0; i < 3000; ++i) {
      if (shape == 2 && rng() % 50 == 0) continue;  // holes
      ids.push_back(shape == 3 ? static_cast<std::int64_t>(rng())
                               : (shape == 1 ? i - 1500 : i + 1));
    }
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    const IdMap map{GraphArray<std::int64_t>(std::vector<std::int64_t>(ids))};
    auto reference = [&](std::int64_t id) {
      auto it = std::lower_bound(ids.begin(), ids.end(), id);
      return it == ids.end() || *it != id ? kNoVertex : static_cast<VertexIndex>(it - ids.begin());
    };
    for (std::size_t i = 0; i < ids.size(); ++i)
      ASSERT_EQ(map.find(ids[i]), static_cast<VertexIndex>(i))
          << "shape " << shape << ", id " << ids[i];
    for (int q = 0; q < 5000; ++q) {
      const std::int64_t id = q % 2 == 0 ? static_cast<std::int64_t>(rng())
                                         : static_cast<std::int64_t>(rng() % 8000) - 4000;
      ASSERT_EQ(map.find(id), reference(id)) << "shape " << shape << ", id " << id;
    }
  }
}

TEST(BuildGraph, DirectedAndUndirectedFollowPgRoutingRules) {
  EdgeTable t;
  t.with_reverse = true;
  t.add(10, 20, 1, -1);                                       // 10->20 only
  t.add(20, 30, -1, 2);                                       // 30->20 only
  t.add(30, 40, -1, -1);                                      // nothing: 40 is no vertex
  t.add(10, 30, std::numeric_limits<double>::infinity(), 5);  // +inf is absent: 30->10 only
  Graph directed = build_graph(t.view(), true);
  EXPECT_EQ(directed.vertex_count(), 3);
  EXPECT_EQ(directed.vertices.find(40), kNoVertex);
  EXPECT_EQ(directed.arc_count(), 3);
  Graph undirected = build_graph(t.view(), false);
  EXPECT_EQ(undirected.arc_count(), 6);
  auto d = reference_dijkstra(directed.forward, directed.vertices.find(30));
  EXPECT_EQ(d[static_cast<std::size_t>(directed.vertices.find(10))], 5);
  EXPECT_EQ(d[static_cast<std::size_t>(directed.vertices.find(20))], 2);
}

TEST(BuildGraph, EmptyAndSingleVertex) {
  EdgeTable none;
  Graph g = build_graph(none.view(), true);
  EXPECT_EQ(g.vertex_count(), 0);
  EdgeTable loop;
  loop.add(7, 7, 3);
  Graph one = build_graph(loop.view(), true);
  EXPECT_EQ(one.vertex_count(), 1);
  auto d = reference_dijkstra(one.forward, 0);
  EXPECT_EQ(d[0], 0);
}

TEST(Dijkstra, MatchesReferenceOnRandomGraphs) {
  int checked = 0;
  for (unsigned seed = 1; seed <= 200; ++seed) {
    RandomGraphSpec spec;
    spec.vertices = 1 + static_cast<int>(seed * 37 % 400);
    spec.edges = static_cast<int>(seed * 101 % 2000);
    spec.integer_weights = seed % 2 == 0;
    spec.zero_weights = seed % 5 == 0;
    spec.components = 1 + static_cast<int>(seed % 3);
    spec.sparse_ids = seed % 7 == 0;
    EdgeTable t = testing::random_edges(spec, seed);
    for (bool directed : {true, false}) {
      Graph g = build_graph(t.view(), directed);
      if (g.vertex_count() == 0) continue;
      DijkstraWorkspace ws(g.vertex_count());
      std::vector<double> got(static_cast<std::size_t>(g.vertex_count()));
      for (VertexIndex s : {VertexIndex{0}, g.vertex_count() / 2, g.vertex_count() - 1}) {
        ws.run(g.forward, s, got.data(), nullptr, 0, {});
        auto want = reference_dijkstra(g.forward, s);
        ASSERT_TRUE(testing::same_distances(got.data(), want)) << testing::describe(spec, seed);
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 1000);
}

TEST(Dijkstra, EarlyStopKeepsTargetsAndTheirPathsExact) {
  for (unsigned seed = 1; seed <= 60; ++seed) {
    RandomGraphSpec spec;
    spec.vertices = 300;
    spec.edges = 1200;
    spec.zero_weights = seed % 3 == 0;
    EdgeTable t = testing::random_edges(spec, seed);
    Graph g = build_graph(t.view(), true);
    ensure_reverse(g);
    DijkstraWorkspace ws(g.vertex_count());
    std::vector<double> partial(static_cast<std::size_t>(g.vertex_count()));
    std::vector<VertexIndex> targets = {5, 17, 42};
    ws.run(g.forward, 0, partial.data(), targets.data(), 3, {});
    auto full = reference_dijkstra(g.forward, 0);
    std::vector<ArcIndex> pred(static_cast<std::size_t>(g.vertex_count()));
    compute_predecessors(g.reverse, full.data(), 0, pred.data());
    for (VertexIndex target : targets) {
      ASSERT_EQ(partial[static_cast<std::size_t>(target)], full[static_cast<std::size_t>(target)]);
      EXPECT_EQ(trace_path(g.reverse, partial.data(), 0, target),
                path_from_predecessors(g.reverse, pred.data(), 0, target))
          << "seed " << seed << " target " << target;
    }
  }
}

// Dial's buckets (whole-number weights up to 131071) against the reference: every source kind,
// zero weights, parallel arcs, unreachable parts, both directions, wide and narrow weight ranges,
// early stops; and the heap workspace on the same graphs agrees.
TEST(Dijkstra, BucketsMatchTheReferenceAndTheHeap) {
  int checked = 0;
  for (unsigned seed = 1; seed <= 120; ++seed) {
    RandomGraphSpec spec;
    spec.vertices = 20 + static_cast<int>(seed * 7 % 400);
    spec.edges = spec.vertices * static_cast<int>(1 + seed % 5);
    spec.zero_weights = seed % 3 == 0;
    spec.max_weight = seed % 4 == 0 ? 131071 : static_cast<int>(1 + seed % 150);
    spec.components = 1 + static_cast<int>(seed % 3);
    EdgeTable t = testing::random_edges(spec, seed);
    Graph g = build_graph(t.view(), seed % 2 == 0);
    if (g.vertex_count() == 0) continue;
    ASSERT_TRUE(g.integer_weights);
    DijkstraWorkspace buckets(g.vertex_count(), g.max_weight);
    DijkstraWorkspace heap(g.vertex_count());
    ASSERT_TRUE(buckets.uses_buckets());
    ASSERT_FALSE(heap.uses_buckets());
    std::vector<double> got(static_cast<std::size_t>(g.vertex_count()));
    std::vector<double> from_heap(got.size());
    for (VertexIndex s : {VertexIndex{0}, g.vertex_count() / 3, g.vertex_count() - 1}) {
      const auto settled = buckets.run(g.forward, s, got.data(), nullptr, 0, {});
      auto want = reference_dijkstra(g.forward, s);
      ASSERT_TRUE(testing::same_distances(got.data(), want)) << testing::describe(spec, seed);
      EXPECT_EQ(settled, heap.run(g.forward, s, from_heap.data(), nullptr, 0, {}));
      ASSERT_TRUE(testing::same_distances(from_heap.data(), want));
      // Early stop: the targets exact, as with the heap.
      std::vector<VertexIndex> targets = {g.vertex_count() - 1, g.vertex_count() / 2};
      buckets.run(g.forward, s, got.data(), targets.data(), 2, {});
      for (VertexIndex target : targets)
        ASSERT_EQ(got[static_cast<std::size_t>(target)], want[static_cast<std::size_t>(target)])
            << testing::describe(spec, seed);
      ++checked;
    }
  }
  EXPECT_GT(checked, 300);
  // Beyond 131071, or fractional weights: the heap.
  EXPECT_FALSE(DijkstraWorkspace(10, 131072.0).uses_buckets());
  EXPECT_FALSE(DijkstraWorkspace(10, -1.0).uses_buckets());
}

// Engines give their workspaces back for the next engine of the process: one kept from an
// early stop, and one from a cancelled search, answer the next source exactly; at most two are
// kept, and none of a graph over kPooledWorkspaceVertices.
namespace {
int g_polls = 0;
// run()'s first poll is at its start: the second is the first one mid-search.
bool cancel_on_second_poll() {
  return ++g_polls > 1;
}
}  // namespace

TEST(Dijkstra, PooledWorkspacesAreCleanAndExact) {
  clear_dijkstra_workspace_pool();           // earlier tests' engines gave theirs back
  for (double max_weight : {100.0, -1.0}) {  // Dial's buckets, the heap
    RandomGraphSpec spec;
    spec.vertices = 70000;  // over the 65536 settled vertices between cancel checks
    spec.edges = 280000;
    spec.max_weight = 100;
    EdgeTable t = testing::random_edges(spec, 7);
    Graph g = build_graph(t.view(), true);
    const VertexIndex n = g.vertex_count();
    std::vector<double> got(static_cast<std::size_t>(n));
    std::vector<VertexIndex> targets = {n / 2, n - 1};

    auto ws = take_dijkstra_workspace(n, max_weight);
    ASSERT_EQ(ws->uses_buckets(), max_weight > 0);
    ws->run(g.forward, 0, got.data(), targets.data(), 2, {});
    DijkstraWorkspace* kept = ws.get();
    give_back_dijkstra_workspace(std::move(ws));
    ASSERT_EQ(pooled_dijkstra_workspaces(), 1u);
    ws = take_dijkstra_workspace(n, max_weight);
    EXPECT_EQ(ws.get(), kept);
    EXPECT_EQ(pooled_dijkstra_workspaces(), 0u);
    ws->run(g.forward, 3, got.data(), nullptr, 0, {});
    ASSERT_TRUE(testing::same_distances(got.data(), reference_dijkstra(g.forward, 3)));

    // Cancelled with targets marked: the farthest vertex, so that the search runs past the
    // first cancel check.
    const auto from_5 = reference_dijkstra(g.forward, 5);
    VertexIndex farthest = 5;
    for (VertexIndex v = 0; v < n; ++v)
      if (from_5[static_cast<std::size_t>(v)] < kInfinity &&
          from_5[static_cast<std::size_t>(v)] > from_5[static_cast<std::size_t>(farthest)])
        farthest = v;
    std::vector<VertexIndex> far_targets = {farthest, n / 3};
    g_polls = 0;
    EXPECT_THROW(ws->run(g.forward, 5, got.data(), far_targets.data(), 2,
                         CancelToken(&cancel_on_second_poll)),
                 Cancelled);
    EXPECT_EQ(g_polls, 2);  // cancelled mid-search, not at its start
    EXPECT_TRUE(ws->clean());
    give_back_dijkstra_workspace(std::move(ws));
    ws = take_dijkstra_workspace(n, max_weight);
    EXPECT_EQ(ws.get(), kept);
    ws->run(g.forward, 5, got.data(), nullptr, 0, {});
    ASSERT_TRUE(testing::same_distances(got.data(), from_5));
    // The cancelled run's marks were cleared: a stop at the farthest vertex again (left marked,
    // it would not count, and the search would stop at the nearer target) settles what a new
    // workspace's does, with both targets exact.
    std::vector<VertexIndex> again = {n / 2, farthest};
    std::vector<double> fresh(got.size());
    EXPECT_EQ(
        ws->run(g.forward, 5, got.data(), again.data(), 2, {}),
        DijkstraWorkspace(n, max_weight).run(g.forward, 5, fresh.data(), again.data(), 2, {}));
    for (VertexIndex target : again)
      EXPECT_EQ(got[static_cast<std::size_t>(target)], from_5[static_cast<std::size_t>(target)]);

    give_back_dijkstra_workspace(std::move(ws));  // pool: kept
    // Another ring (or the heap against a ring) is another workspace.
    const double other_weight = max_weight > 0 ? 1000.0 : 50.0;
    auto other = take_dijkstra_workspace(n, other_weight);
    EXPECT_NE(other.get(), kept);
    EXPECT_EQ(pooled_dijkstra_workspaces(), 1u);
    give_back_dijkstra_workspace(std::move(other));                    // kept, other
    give_back_dijkstra_workspace(take_dijkstra_workspace(100, -1.0));  // other, small
    EXPECT_EQ(pooled_dijkstra_workspaces(), 2u);
    take_dijkstra_workspace(n, max_weight);  // kept went: a new one, the two stay
    EXPECT_EQ(pooled_dijkstra_workspaces(), 2u);
    give_back_dijkstra_workspace(take_dijkstra_workspace(kPooledWorkspaceVertices + 1, -1.0));
    EXPECT_EQ(pooled_dijkstra_workspaces(), 2u);  // too large to keep: other, small still
    take_dijkstra_workspace(100, -1.0);
    take_dijkstra_workspace(n, other_weight);
    EXPECT_EQ(pooled_dijkstra_workspaces(), 0u);
  }
}

TEST(Predecessors, FormATreeOfTightArcsEvenWithZeroWeights) {
  for (unsigned seed = 1; seed <= 150; ++seed) {
    RandomGraphSpec spec;
    spec.vertices = 50 + static_cast<int>(seed % 200);
    spec.edges = spec.vertices * 4;
    spec.zero_weights = true;
    spec.max_weight = static_cast<int>(1 + seed % 3);  // many zero-cost arcs and ties
    EdgeTable t = testing::random_edges(spec, seed);
    Graph g = build_graph(t.view(), seed % 2 == 0);
    ensure_reverse(g);
    auto dist = reference_dijkstra(g.forward, 0);
    std::vector<ArcIndex> pred(static_cast<std::size_t>(g.vertex_count()));
    compute_predecessors(g.reverse, dist.data(), 0, pred.data());
    ASSERT_TRUE(testing::valid_predecessors(g, dist.data(), pred.data(), 0))
        << testing::describe(spec, seed);
    for (VertexIndex v = 0; v < g.vertex_count(); ++v) {
      auto path = path_from_predecessors(g.reverse, pred.data(), 0, v);  // throws on a cycle
      double sum = 0;
      for (ArcIndex a : path) sum += g.reverse.weights[static_cast<std::size_t>(a)];
      if (dist[static_cast<std::size_t>(v)] < kInfinity) {
        ASSERT_EQ(sum, dist[static_cast<std::size_t>(v)]);
        ASSERT_EQ(trace_path(g.reverse, dist.data(), 0, v), path);
      }
    }
  }
}

TEST(Predecessors, ParallelEdgesPickTheCheapestThenSmallestId) {
  EdgeTable t;
  t.add(1, 2, 5);  // id 1
  t.add(1, 2, 3);  // id 2: cheaper
  t.add(1, 2, 3);  // id 3: as cheap, larger id
  Graph g = build_graph(t.view(), true);
  ensure_reverse(g);
  auto dist = reference_dijkstra(g.forward, 0);
  auto path = trace_path(g.reverse, dist.data(), 0, 1);
  ASSERT_EQ(path.size(), 1u);
  EXPECT_EQ(g.reverse.edge_ids[static_cast<std::size_t>(path[0])], 2);
}

// Runs `engine` on `sources` and compares each row with the reference Dijkstra.
void expect_engine_matches_reference(const EngineInfo& info, Graph& g,
                                     const std::vector<VertexIndex>& sources, bool exact,
                                     const std::string& what) {
  ensure_reverse(g);
  EngineOptions options;
  options.threads = 2;
  auto engine = info.create(g, options);
  const std::size_t n = static_cast<std::size_t>(g.vertex_count());
  std::vector<double> dist(sources.size() * n);
  std::vector<ArcIndex> pred(sources.size() * n);
  SolveRequest request;
  request.sources = sources.data();
  request.source_count = static_cast<int>(sources.size());
  request.distances = dist.data();
  request.predecessor_arcs = pred.data();
  engine->solve(request);
  for (std::size_t i = 0; i < sources.size(); ++i) {
    auto want = reference_dijkstra(g.forward, sources[i]);
    const double* row = dist.data() + i * n;
    if (exact) {
      ASSERT_TRUE(testing::same_distances(row, want)) << info.name << " " << what;
      ASSERT_TRUE(testing::valid_predecessors(g, row, pred.data() + i * n, sources[i]))
          << info.name << " " << what;
      std::vector<ArcIndex> rule(n);
      compute_predecessors(g.reverse, want.data(), sources[i], rule.data());
      ASSERT_TRUE(
          std::equal(rule.begin(), rule.end(), pred.begin() + static_cast<std::ptrdiff_t>(i * n)))
          << info.name << ": predecessors differ from the rule " << what;
    } else {
      ASSERT_TRUE(testing::near_distances(row, want, 1e-9)) << info.name << " " << what;
    }
  }
}

TEST(CpuEngines, EveryEngineMatchesTheReference) {
  for (const auto& info : cpu_engine_table()) {
    for (unsigned seed = 1; seed <= 120; ++seed) {
      RandomGraphSpec spec;
      spec.vertices = 1 + static_cast<int>(seed * 13 % 150);
      spec.edges = static_cast<int>(seed * 29 % 700);
      spec.integer_weights = seed % 3 != 0;
      spec.components = 1 + static_cast<int>(seed % 2);
      EdgeTable t = testing::random_edges(spec, seed);
      Graph g = build_graph(t.view(), seed % 2 == 0);
      if (g.vertex_count() == 0) continue;
      std::vector<VertexIndex> sources;
      for (VertexIndex s = 0; s < g.vertex_count(); s += 1 + g.vertex_count() / 7)
        sources.push_back(s);
      // Dijkstra sums in path order like the reference: exact for real weights too.
      bool exact = spec.integer_weights || std::string(info.name) == "dijkstra";
      expect_engine_matches_reference(info, g, sources, exact, testing::describe(spec, seed));
    }
  }
}

// The road index's cost-matrix rows: a few targets are answered by one hierarchy query each, many
// by a sweep; both must equal the reference's columns, repeated solves reuse the index.
TEST(CpuEngines, RoadIndexCompactRowsMatchTheReference) {
  const EngineInfo* info = find_engine("cch", Device::kCpu);
  ASSERT_NE(info, nullptr);
  for (unsigned seed = 1; seed <= 12; ++seed) {
    RandomGraphSpec spec;
    spec.vertices = 40 + static_cast<int>(seed * 17 % 200);
    spec.edges = spec.vertices * 3;
    spec.integer_weights = true;
    spec.components = 1 + static_cast<int>(seed % 3);
    EdgeTable t = testing::random_edges(spec, seed);
    Graph g = build_graph(t.view(), seed % 2 == 0);
    EngineOptions options;
    options.threads = 2;
    auto engine = info->create(g, options);
    const std::size_t n = static_cast<std::size_t>(g.vertex_count());
    std::vector<VertexIndex> sources;
    for (VertexIndex s = 0; s < g.vertex_count(); s += 1 + g.vertex_count() / 9)
      sources.push_back(s);
    for (const int target_count : {1, 5, 32, 80}) {
      std::vector<VertexIndex> targets;
      for (int k = 0; k < target_count; ++k)
        targets.push_back(static_cast<VertexIndex>((k * 37 + static_cast<int>(seed)) % n));
      std::vector<double> rows(sources.size() * targets.size());
      SolveRequest request;
      request.sources = sources.data();
      request.source_count = static_cast<int>(sources.size());
      request.targets = targets.data();
      request.target_count = target_count;
      request.compact_targets = true;
      request.distances = rows.data();
      engine->solve(request);
      for (std::size_t i = 0; i < sources.size(); ++i) {
        const auto want = reference_dijkstra(g.forward, sources[i]);
        for (std::size_t k = 0; k < targets.size(); ++k)
          ASSERT_EQ(rows[i * targets.size() + k], want[static_cast<std::size_t>(targets[k])])
              << testing::describe(spec, seed) << " targets " << target_count << " source "
              << sources[i] << " target " << targets[k];
      }
    }
    EXPECT_NE(engine->report().notes.find("road index built"), std::string::npos);
  }
}

// Rows apart by more than their width (room for a tuple's header before each, as a cost array
// call leaves): the road index writes each row, full or compact, where the stride puts it, equal
// to the reference, and leaves the room between rows as it was.
TEST(CpuEngines, RoadIndexRowsLandAtTheirStride) {
  const EngineInfo* info = find_engine("cch", Device::kCpu);
  ASSERT_NE(info, nullptr);
  ASSERT_TRUE(info->create(build_graph(testing::grid_edges(3, 3, 5, 1).view(), true), {})
                  ->supports_row_stride());
  constexpr std::size_t kRoom = 7;
  constexpr double kUntouched = -12345.0;
  for (unsigned seed = 1; seed <= 6; ++seed) {
    RandomGraphSpec spec;
    spec.vertices = 60 + static_cast<int>(seed * 31 % 200);
    spec.edges = spec.vertices * 3;
    spec.components = 1 + static_cast<int>(seed % 3);
    EdgeTable t = testing::random_edges(spec, seed);
    Graph g = build_graph(t.view(), seed % 2 == 0);
    const std::size_t n = static_cast<std::size_t>(g.vertex_count());
    std::vector<VertexIndex> sources;
    for (VertexIndex s = 0; s < g.vertex_count(); s += 1 + g.vertex_count() / 40)
      sources.push_back(s);
    for (const int threads : {1, 2}) {
      EngineOptions options;
      options.threads = threads;
      auto engine = info->create(g, options);
      for (const int target_count : {0, 3, 50}) {  // 0: full rows
        std::vector<VertexIndex> targets;
        for (int k = 0; k < target_count; ++k)
          targets.push_back(static_cast<VertexIndex>((k * 37 + static_cast<int>(seed)) % n));
        const std::size_t width = target_count > 0 ? targets.size() : n;
        const std::size_t stride = kRoom + width;
        std::vector<double> rows(sources.size() * stride, kUntouched);
        SolveRequest request;
        request.sources = sources.data();
        request.source_count = static_cast<int>(sources.size());
        if (target_count > 0) {
          request.targets = targets.data();
          request.target_count = target_count;
          request.compact_targets = true;
        }
        request.distances = rows.data() + kRoom;
        request.row_stride = stride;
        engine->solve(request);
        for (std::size_t i = 0; i < sources.size(); ++i) {
          const auto want = reference_dijkstra(g.forward, sources[i]);
          const double* room = rows.data() + i * stride;
          for (std::size_t k = 0; k < kRoom; ++k)
            ASSERT_EQ(room[k], kUntouched) << testing::describe(spec, seed) << " row " << i;
          for (std::size_t k = 0; k < width; ++k) {
            const auto column = static_cast<std::size_t>(target_count > 0 ? targets[k] : k);
            if (spec.integer_weights || want[column] == kInfinity)
              ASSERT_EQ(room[kRoom + k], want[column])
                  << testing::describe(spec, seed) << " source " << sources[i] << " column " << k;
            else
              ASSERT_NEAR(room[kRoom + k], want[column], 1e-9 * std::max(1.0, want[column]));
          }
        }
      }
    }
  }
}

// The road index's sweeps: whole rows (with predecessors) and the columns of more targets than
// buckets take, in groups of 8 sources a sweep: source counts that are no multiple of 8,
// repeated sources, groups one a thread and groups left over on every thread by the sweep plan
// (1, 2, 3 and 8 threads on a grid large enough to go on threads). Rows bit-identical to the
// hierarchy's one_to_all, predecessors the rule's on them.
TEST(CpuEngines, RoadIndexSweepsMatchOneToAll) {
  const EngineInfo* info = find_engine("cch", Device::kCpu);
  ASSERT_NE(info, nullptr);
  // 12100 vertices: 17 sources go on 8 threads, 42 on fewer (50: 6 groups one a thread, then 2
  // sources on every thread).
  EdgeTable t = testing::grid_edges(110, 110, 3, 7);
  for (bool directed : {true, false}) {
    Graph g = build_graph(t.view(), directed);
    ensure_reverse(g);
    const VertexIndex n = g.vertex_count();
    const auto width = static_cast<std::size_t>(n);
    std::string note;
    const Cch cch = make_road_index(g, CancelToken(), 1, &note);
    CchWorkspace workspace;
    std::vector<VertexIndex> all_sources;
    for (int i = 0; i < 50; ++i) all_sources.push_back(static_cast<VertexIndex>((i * 577) % n));
    all_sources[5] = all_sources[4];
    std::vector<VertexIndex> targets;  // past the buckets' limit, repeated
    for (int j = 0; j < 8200; ++j) targets.push_back(static_cast<VertexIndex>((j * 31) % n));
    for (int threads : {1, 2, 3, 8}) {
      EngineOptions options;
      options.threads = threads;
      auto engine = info->create(g, options);
      for (int count : {1, 7, 17, 21, 42, 50}) {
        const std::string what = std::string(directed ? "directed" : "undirected") + ", " +
                                 std::to_string(threads) + " threads, " + std::to_string(count) +
                                 " sources";
        std::vector<double> want(static_cast<std::size_t>(count) * width);
        for (int i = 0; i < count; ++i)
          cch.one_to_all(all_sources[static_cast<std::size_t>(i)],
                         want.data() + static_cast<std::size_t>(i) * width, workspace);
        std::vector<double> rows(want.size(), -1.0);
        std::vector<ArcIndex> pred(want.size());
        SolveRequest request;
        request.sources = all_sources.data();
        request.source_count = count;
        request.distances = rows.data();
        request.predecessor_arcs = pred.data();
        engine->solve(request);
        ASSERT_EQ(std::memcmp(rows.data(), want.data(), want.size() * sizeof(double)), 0) << what;
        std::vector<ArcIndex> rule(width);
        for (int i = 0; i < count; ++i) {
          const std::size_t at = static_cast<std::size_t>(i) * width;
          compute_predecessors(g.reverse, want.data() + at,
                               all_sources[static_cast<std::size_t>(i)], rule.data());
          ASSERT_TRUE(
              std::equal(rule.begin(), rule.end(), pred.begin() + static_cast<std::ptrdiff_t>(at)))
              << what << ", source " << i;
        }
        // Compact rows of many targets.
        std::vector<double> cells(static_cast<std::size_t>(count) * targets.size(), -1.0);
        SolveRequest columns;
        columns.sources = all_sources.data();
        columns.source_count = count;
        columns.targets = targets.data();
        columns.target_count = static_cast<int>(targets.size());
        columns.compact_targets = true;
        columns.distances = cells.data();
        engine->solve(columns);
        for (int i = 0; i < count; ++i)
          for (std::size_t j = 0; j < targets.size(); ++j)
            ASSERT_EQ(
                cells[static_cast<std::size_t>(i) * targets.size() + j],
                want[static_cast<std::size_t>(i) * width + static_cast<std::size_t>(targets[j])])
                << what << ", source " << i << ", target " << targets[j];
      }
    }
  }
}

TEST(CpuEngines, CancelStopsAComputation) {
  EdgeTable t = testing::grid_edges(200, 200, 10, 3);
  Graph g = build_graph(t.view(), true);
  ensure_reverse(g);
  for (const auto& info : cpu_engine_table()) {
    if (info.dense) continue;  // 40k vertices: the dense matrix is 12.8 GB
    EngineOptions options;
    options.cancel = CancelToken([] { return true; });
    auto engine = info.create(g, options);
    std::vector<double> dist(static_cast<std::size_t>(g.vertex_count()) * 4);
    std::vector<VertexIndex> sources = {0, 1, 2, 3};
    SolveRequest request;
    request.sources = sources.data();
    request.source_count = 4;
    request.distances = dist.data();
    EXPECT_THROW(engine->solve(request), Cancelled) << info.name;
  }
}

// cch named on a kept graph whose road index is not ready: the engine auto picks answers, and
// the reason says why; with the index ready, cch itself.
TEST(EngineSelect, CchWithItsIndexNotReadyAnswersAsAuto) {
  gpu::Availability none;
  none.reason = "test: no GPU";
  ProblemShape shape;
  shape.vertices = 1000;
  shape.arcs = 4000;
  shape.road_index_pending = true;
  const auto pending = select_engine(DeviceSetting::kCpu, "cch", shape, none);
  EXPECT_STREQ(pending.engine->name, "dijkstra");
  EXPECT_NE(pending.reason.find("road index is not ready"), std::string::npos) << pending.reason;
  shape.road_index_pending = false;
  shape.road_index = true;
  EXPECT_STREQ(select_engine(DeviceSetting::kCpu, "cch", shape, none).engine->name, "cch");
}

TEST(EngineSelect, NamesDevicesAndErrors) {
  gpu::Availability none;
  none.reason = "test: no GPU";
  ProblemShape shape;
  shape.vertices = 1000;
  shape.arcs = 4000;
  auto s = select_engine(DeviceSetting::kAuto, "auto", shape, none);
  EXPECT_STREQ(s.engine->name, "dijkstra");
  EXPECT_EQ(s.engine->device, Device::kCpu);
  EXPECT_THROW(select_engine(DeviceSetting::kGpu, "auto", shape, none), RoutingError);
  EXPECT_THROW(select_engine(DeviceSetting::kAuto, "no_such_engine", shape, none), RoutingError);
  shape.many_source = true;
  shape.all_pairs = true;
  shape.arcs = 200000;
  EXPECT_STREQ(select_engine(DeviceSetting::kCpu, "auto", shape, none).engine->name, "blocked_fw");
  EXPECT_STREQ(select_engine(DeviceSetting::kCpu, "floyd_warshall", shape, none).engine->name,
               "floyd_warshall");
  shape.many_source = false;
  try {
    select_engine(DeviceSetting::kCpu, "blocked_fw", shape, none);
    FAIL() << "blocked_fw accepted as a single-source engine";
  } catch (const RoutingError& e) {
    EXPECT_NE(std::string(e.what()).find("many-source"), std::string::npos) << e.what();
  }
}

// auto on a kept graph with a current road index: the CPU's cch (buckets for cost matrices), the
// GPU's cch for many sources of whole rows where the backend may use a GPU itself.
TEST(EngineSelect, AutoWithTheRoadIndex) {
  gpu::Availability none;
  none.reason = "test: no GPU";
  ProblemShape shape;
  shape.vertices = 264346;
  shape.arcs = 730100;
  shape.road_index = true;
  shape.many_source = true;
  shape.source_count = 1000;
  auto s = select_engine(DeviceSetting::kAuto, "auto", shape, none);
  EXPECT_STREQ(s.engine->name, "cch");
  EXPECT_EQ(s.engine->device, Device::kCpu);
  EXPECT_EQ(s.reason, "auto: the kept graph's road index is current");
  if (find_engine("cch", Device::kGpu) == nullptr) GTEST_SKIP() << "a build without CUDA";
  gpu::Availability gpu;
  gpu.usable = true;  // selection only: nothing runs
  s = select_engine(DeviceSetting::kAuto, "auto", shape, gpu);
  EXPECT_EQ(s.engine->device, Device::kGpu);
  EXPECT_STREQ(s.engine->name, "cch");
  EXPECT_NE(s.reason.find("PHAST on the GPU"), std::string::npos) << s.reason;
  shape.compact_targets = true;  // a cost matrix: buckets on the CPU
  EXPECT_EQ(select_engine(DeviceSetting::kAuto, "auto", shape, gpu).engine->device, Device::kCpu);
  shape.compact_targets = false;
  shape.source_count = kAutoIndexMaxSourcesBeforeGpu - 1;
  EXPECT_EQ(select_engine(DeviceSetting::kAuto, "auto", shape, gpu).engine->device, Device::kCpu);
  shape.source_count = 1000;
  // device = gpu: the GPU's cch.
  s = select_engine(DeviceSetting::kGpu, "auto", shape, gpu);
  EXPECT_STREQ(s.engine->name, "cch");
  EXPECT_EQ(s.engine->device, Device::kGpu);
}

// One call's rows, on the CPU: a cost matrix whose targets are all outside the graph gives no
// rows and computes nothing, the same call with a known target gives its row.
TEST(RoutingCall, CostMatrixWithOnlyUnknownTargetsIsEmpty) {
  EdgeTable table;
  table.add(1, 2, 1.0);
  table.add(2, 3, 2.0);
  gpu::Availability no_gpu;
  no_gpu.reason = "test: CPU only";
  CallOptions options;
  options.device = DeviceSetting::kCpu;
  options.many_source = true;
  const std::int64_t sources[] = {1};
  for (std::int64_t target : {999, 3}) {
    RoutingCall call(CallKind::kCostMatrix, table.view(), options, no_gpu);
    call.set_sources(sources, 1);
    call.set_targets(&target, 1);
    call.prepare();
    ResultBatch batch;
    std::size_t rows = 0;
    while (call.next_batch(batch)) {
      rows += batch.rows();
      if (batch.rows() > 0) {
        EXPECT_EQ(batch.agg_cost[0], 3.0);
      }
    }
    EXPECT_EQ(rows, target == 3 ? 1u : 0u) << "target " << target;
    EXPECT_EQ(call.summary().algorithm.empty(), target == 999) << "target " << target;
  }
}

// Cost arrays written where the caller wants them (CallOptions::row_destinations, as the
// backend gives each batch's tuples): the road index writes them there itself, full rows (trees)
// and columns in ascending id order as it solves them, columns in another order, repeated or not
// in the graph gathered from a scratch of its thread (row_columns). A batch the caller declines
// goes to the call's own buffers. Every row equals the one a call without destinations returns,
// bit for bit. Columns every 61 ids are few (buckets), every 5 past an eighth of the graph
// (sweeps); one source to one target repeated takes the point-to-point query.
TEST(RoutingCall, CostArraysWrittenWhereTheCallerAsks) {
  gpu::Availability no_gpu;
  no_gpu.reason = "test: CPU only";
  EdgeTable t = testing::grid_edges(40, 40, 5, 3);
  for (const std::int64_t column_step : {61, 5, 0}) {
    testing::CostArrayIds ids =
        testing::cost_array_ids(1600, 37, column_step > 0 ? column_step : 61);
    if (column_step == 0) {
      ids.sources = {1};
      ids.ascending = {7};
      ids.mixed = {7, 7, 99999};
    }
    const std::vector<std::int64_t>& sources = ids.sources;
    for (const std::vector<std::int64_t>* given : {&ids.ascending, &ids.mixed, &ids.sources}) {
      const bool whole_rows = given == &ids.sources;
      for (const int threads : {1, 2}) {
        for (const int decline_every : {0, 2}) {
          CallOptions options;
          options.device = DeviceSetting::kCpu;
          options.many_source = true;
          options.apsp_algorithm = "cch";
          options.cost_arrays = true;
          options.engine.threads = threads;
          const testing::CostArrayRuns runs = testing::run_with_and_without_destinations(
              t.view(), options, no_gpu, sources, whole_rows ? nullptr : given, decline_every);
          const auto& want = runs.want;
          const auto& got = runs.got;
          EXPECT_EQ(runs.summary.algorithm, "cch");
          EXPECT_TRUE(runs.engine_wrote_rows);
          ASSERT_EQ(want.size(), sources.size());
          ASSERT_EQ(got.size(), want.size());
          for (std::size_t r = 0; r < want.size(); ++r)
            ASSERT_EQ(got[r], want[r])
                << "row " << r << (whole_rows ? " (trees)" : " (columns)") << " threads " << threads
                << " decline " << decline_every << " column step " << column_step;
          EXPECT_GT(runs.asked, 0);
          EXPECT_GT(runs.pooled_rows, 0u);
          EXPECT_EQ(runs.declined > 0, decline_every > 0 && runs.asked >= decline_every);
        }
      }
    }
  }
}

// A call's batches run on a thread borrowed from the process's pool: a later call gets the same
// thread back (no thread made per call), calls that overlap get threads of their own, what a job
// throws reaches get(), a destructor waits for a job in flight, and a forked child makes its own.
TEST(BatchThread, ReusesItsThreadAndWaitsForAJobInFlight) {
  auto thread_of_a_job = [] {
    BatchThread batches;
    std::thread::id id;
    batches.start([&] { id = std::this_thread::get_id(); });
    batches.get();
    return id;
  };
  const std::thread::id first = thread_of_a_job();
  EXPECT_NE(first, std::this_thread::get_id());
  EXPECT_EQ(thread_of_a_job(), first);

  {
    BatchThread a, b;
    std::thread::id id_a, id_b;
    a.start([&] { id_a = std::this_thread::get_id(); });
    b.start([&] {
      id_b = std::this_thread::get_id();
      throw RoutingError(ErrorKind::kInternal, "from the job");
    });
    a.get();
    EXPECT_THROW(b.get(), RoutingError);
    EXPECT_NE(id_a, id_b);
    EXPECT_FALSE(b.valid());
  }

  std::atomic<bool> finished{false};
  {
    BatchThread batches;
    batches.start([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      finished = true;
    });
  }
  EXPECT_TRUE(finished.load());

  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    const std::thread::id id = thread_of_a_job();
    _exit(id != std::thread::id() && id != std::this_thread::get_id() ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status;
}

TEST(MemoryBudget, RefusesWithTheSize) {
  MemoryBudget budget(1 << 20);
  EXPECT_NO_THROW(budget.require(1000, "x"));
  try {
    budget.require(std::size_t{3} << 30, "the all-pairs result");
    FAIL();
  } catch (const RoutingError& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kOutOfMemory);
    EXPECT_NE(std::string(e.what()).find("3.0 GB"), std::string::npos) << e.what();
  }
}

// The build's arrays are advised to huge pages before they are written: they must still be
// value-initialized and whole (the advice is a hint; reserve, advise, resize must not lose any
// element), and the advice must take any range: null, small, unaligned, a tail past a 2 MB edge.
TEST(HugePageVector, ValueInitializedAndWhole) {
  EXPECT_TRUE(huge_page_vector<double>(0).empty());
  const auto small = huge_page_vector<std::int64_t>(3);
  EXPECT_EQ(small, std::vector<std::int64_t>(3, 0));
  const std::size_t n = (std::size_t{48} << 20) / sizeof(std::uint32_t) + 7;  // 48 MB and a tail
  auto big = huge_page_vector<std::uint32_t>(n);
  ASSERT_EQ(big.size(), n);
  EXPECT_EQ(std::count(big.begin(), big.end(), 0u), static_cast<std::ptrdiff_t>(n));
  for (std::size_t i = 0; i < n; i += 4099) big[i] = static_cast<std::uint32_t>(i);
  for (std::size_t i = 0; i < n; i += 4099) ASSERT_EQ(big[i], static_cast<std::uint32_t>(i));
  advise_huge_pages(nullptr, std::size_t{64} << 20);
  advise_huge_pages(big.data() + 1, 100);
  advise_huge_pages(big.data() + 1, (n - 2) * sizeof(std::uint32_t));
  EXPECT_EQ(big[n - 1], 0u);
}

// The boundaries the graph arrays' advice and the result store's blocks are placed on.
TEST(HugePageVector, BoundariesRoundToTwoMegabytes) {
  constexpr std::uintptr_t kTwo = std::uintptr_t{2} << 20;
  EXPECT_EQ(kHugePageBytes, std::size_t{2} << 20);
  EXPECT_EQ(huge_page_ceil(0), 0u);
  EXPECT_EQ(huge_page_ceil(1), kTwo);
  EXPECT_EQ(huge_page_ceil(kTwo), kTwo);
  EXPECT_EQ(huge_page_ceil(kTwo + 1), 2 * kTwo);
  EXPECT_EQ(huge_page_floor(kTwo - 1), 0u);
  EXPECT_EQ(huge_page_floor(3 * kTwo + 4096), 3 * kTwo);
  EXPECT_EQ(huge_page_floor(3 * kTwo), 3 * kTwo);
}

// A kept graph is one flat image in shared memory: the view must be the graph, array for array,
// and a RoutingCall on it must give the rows one on a freshly built graph gives.
TEST(GraphImage, ViewEqualsTheBuiltGraphAndServesTheSameRows) {
  RandomGraphSpec spec;
  spec.vertices = 300;
  spec.edges = 1200;
  spec.sparse_ids = true;
  spec.zero_weights = true;
  spec.components = 2;
  for (bool directed : {true, false}) {
    EdgeTable table = testing::random_edges(spec, directed ? 7 : 8);
    Graph built = build_graph(table.view(), directed);
    ensure_reverse(built);
    // 8-byte aligned storage, as dynamic shared memory is.
    std::vector<std::uint64_t> storage((graph_image_bytes(built) + 7) / 8);
    write_graph_image(built, storage.data());
    Graph view = view_graph_image(storage.data(), storage.size() * 8);
    ASSERT_EQ(view.vertex_count(), built.vertex_count());
    ASSERT_EQ(view.arc_count(), built.arc_count());
    EXPECT_EQ(view.directed, built.directed);
    EXPECT_EQ(view.integer_weights, built.integer_weights);
    EXPECT_EQ(view.max_weight, built.max_weight);
    EXPECT_EQ(view.min_weight, built.min_weight);
    EXPECT_TRUE(has_reverse(view));
    auto same = [](const auto& a, const auto& b) {
      return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin());
    };
    EXPECT_TRUE(same(view.vertices.ids(), built.vertices.ids()));
    for (const CsrGraph* pair : {&view.forward, &view.reverse}) {
      const CsrGraph& other = pair == &view.forward ? built.forward : built.reverse;
      EXPECT_TRUE(same(pair->row_offsets, other.row_offsets));
      EXPECT_TRUE(same(pair->heads, other.heads));
      EXPECT_TRUE(same(pair->weights, other.weights));
      EXPECT_TRUE(same(pair->edge_ids, other.edge_ids));
    }
    // The view points into the image: nothing was copied.
    EXPECT_GE(reinterpret_cast<const char*>(view.forward.heads.data()),
              reinterpret_cast<const char*>(storage.data()));

    gpu::Availability no_gpu;
    no_gpu.reason = "test: CPU only";
    CallOptions options;
    options.device = DeviceSetting::kCpu;
    options.directed = directed;
    options.many_source = true;
    std::vector<std::int64_t> sources(table.sources.begin(), table.sources.begin() + 5);
    std::vector<std::int64_t> targets(table.targets.begin() + 5, table.targets.begin() + 40);
    auto rows_of = [&](RoutingCall& call) {
      call.set_sources(sources.data(), sources.size());
      call.set_targets(targets.data(), targets.size());
      call.prepare();
      std::vector<std::tuple<std::int64_t, std::int64_t, std::int64_t, std::int64_t, double>> rows;
      ResultBatch batch;
      while (call.next_batch(batch))
        for (std::size_t r = 0; r < batch.rows(); ++r)
          rows.emplace_back(batch.start_vid[r], batch.end_vid[r], batch.node[r], batch.edge[r],
                            batch.agg_cost[r]);
      return rows;
    };
    RoutingCall fresh(CallKind::kPaths, table.view(), options, no_gpu);
    RoutingCall kept(CallKind::kPaths, view, options, no_gpu);
    auto expected = rows_of(fresh);
    EXPECT_FALSE(expected.empty());
    EXPECT_EQ(rows_of(kept), expected) << (directed ? "directed" : "undirected");
  }
}

// gpu_path on the road index: a source's few paths are traced from distances the index settles one
// by one (RoutingCall::emit_settled_path_rows: one round, the settling), many targets from a whole
// sweep (one round), and where settling gives up (zero-cost ties, or a quarter of a small random
// graph settled) from the sweep after it (two rounds). Every way gives Dijkstra's rows, the
// predecessor rule's paths.
TEST(RoutingCall, RoadIndexPathsAreDijkstrasWithFewOrManyTargets) {
  gpu::Availability no_gpu;
  no_gpu.reason = "test: CPU only";
  std::vector<std::pair<std::string, EdgeTable>> graphs;
  for (unsigned seed = 1; seed <= 4; ++seed)  // ties: weights 1..3 on most of them
    graphs.emplace_back("grid 80 x 80, seed " + std::to_string(seed),
                        testing::grid_edges(80, 80, seed == 4 ? 100 : 3, seed));
  for (unsigned seed = 1; seed <= 8; ++seed) {
    testing::RandomGraphSpec spec;
    spec.vertices = 60 + static_cast<int>(seed * 29 % 140);
    spec.edges = spec.vertices * 3;
    spec.zero_weights = seed % 3 == 0;
    spec.max_weight = seed % 4 == 0 ? 3 : 50;
    graphs.emplace_back(testing::describe(spec, seed), testing::random_edges(spec, seed));
  }
  int settled_calls = 0;
  for (const auto& [what, table] : graphs) {
    for (bool directed : {true, false}) {
      for (std::size_t target_count : {std::size_t{1}, std::size_t{5}, std::size_t{40}}) {
        std::vector<std::int64_t> targets;
        for (std::size_t j = 0; j < target_count; ++j)
          targets.push_back(table.targets[(j * 7919 + 13) % table.targets.size()]);
        const std::int64_t source = table.sources[target_count % table.sources.size()];
        std::int64_t rounds = 0;
        auto rows_of = [&](const char* engine) {
          CallOptions options;
          options.device = DeviceSetting::kCpu;
          options.sssp_algorithm = engine;
          options.directed = directed;
          RoutingCall call(CallKind::kPaths, table.view(), options, no_gpu);
          call.set_sources(&source, 1);
          call.set_targets(targets.data(), targets.size());
          call.prepare();
          std::vector<std::tuple<std::int64_t, std::int64_t, std::int64_t, double>> rows;
          ResultBatch batch;
          while (call.next_batch(batch))
            for (std::size_t r = 0; r < batch.rows(); ++r)
              rows.emplace_back(batch.end_vid[r], batch.node[r], batch.edge[r], batch.agg_cost[r]);
          rounds = call.summary().rounds;
          return rows;
        };
        const auto expected = rows_of("dijkstra");
        const auto by_index = rows_of("cch");
        EXPECT_EQ(by_index, expected)
            << what << (directed ? " directed, " : " undirected, ") << target_count << " targets";
        if (target_count <= 16 && rounds == 1) ++settled_calls;
      }
    }
  }
  // The grids' few-target calls (16 of them) went by settling, not by the sweep after it.
  EXPECT_GE(settled_calls, 12);
}

TEST(GraphImage, RefusesWhatIsNotAnImage) {
  std::vector<std::uint64_t> junk(16, 0x1234);
  EXPECT_THROW(view_graph_image(junk.data(), junk.size() * 8), RoutingError);
  EXPECT_THROW(view_graph_image(junk.data(), 4), RoutingError);
}

}  // namespace
}  // namespace gpu_routing
