// Service areas (cpu/service_area.hpp) against the reference Dijkstra: the vertices within the
// distance and their costs exactly, each tree arc the predecessor rule's on the whole row, the
// rows in pgr_drivingDistance's order; equicost's nearest start. Both ways of finding the areas:
// Dijkstra bounded by the distance, and an engine's areas (ShortestPathEngine::solve_areas, here
// the CPU engines' default: whole rows cut to the distance; the GPU's own in gpu_cch_test).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <string>
#include <vector>

#include "base/predecessors.hpp"
#include "cpu/service_area.hpp"
#include "cpu/sssp_dijkstra.hpp"
#include "engine/engine.hpp"
#include "test_graphs.hpp"

namespace gpu_routing {
namespace {

using testing::RandomGraphSpec;

// The ways areas are found: "" Dijkstra bounded by the distance, otherwise that CPU engine's
// areas.
const std::vector<std::string> kAreaSources = {"", "dijkstra", "cch"};

std::unique_ptr<ShortestPathEngine> area_engine(const std::string& name, const Graph& g) {
  if (name.empty()) return nullptr;
  const EngineInfo* info = find_engine(name, Device::kCpu);
  EXPECT_NE(info, nullptr) << name;
  return info == nullptr ? nullptr : info->create(g, EngineOptions());
}

// The rows one start should have: the reference row within `distance`, the rule's arcs.
void expect_area(const Graph& g, VertexIndex start, int position, double distance,
                 const std::vector<ServiceAreaRow>& rows, std::size_t& at, const std::string& what,
                 bool exact = true) {
  ASSERT_LT(at, rows.size()) << what << ": the root row is missing";
  EXPECT_EQ(rows[at].start, position) << what;
  EXPECT_EQ(rows[at].vertex, start) << what << ": the root row comes first";
  EXPECT_EQ(rows[at].arc, kNoArc) << what;
  EXPECT_EQ(rows[at].agg_cost, 0.0) << what;
  ++at;
  if (start == kNoVertex) return;
  const std::vector<double> want = reference_dijkstra(g.forward, start);
  std::vector<ArcIndex> rule(static_cast<std::size_t>(g.vertex_count()));
  compute_predecessors(g.reverse, want.data(), start, rule.data());
  std::vector<VertexIndex> inside;
  for (VertexIndex v = 0; v < g.vertex_count(); ++v)
    if (v != start && want[static_cast<std::size_t>(v)] <= distance &&
        want[static_cast<std::size_t>(v)] < kInfinity)
      inside.push_back(v);
  std::sort(inside.begin(), inside.end(), [&want](VertexIndex a, VertexIndex b) {
    const double x = want[static_cast<std::size_t>(a)], y = want[static_cast<std::size_t>(b)];
    return x != y ? x < y : a < b;
  });
  for (VertexIndex v : inside) {
    ASSERT_LT(at, rows.size()) << what << ": vertex " << v << " is missing";
    const ServiceAreaRow& row = rows[at++];
    EXPECT_EQ(row.start, position) << what;
    ASSERT_EQ(row.vertex, v) << what << ": rows out of order or a vertex missing";
    if (exact)
      EXPECT_EQ(row.agg_cost, want[static_cast<std::size_t>(v)]) << what << ", vertex " << v;
    else
      EXPECT_NEAR(row.agg_cost, want[static_cast<std::size_t>(v)],
                  1e-9 * want[static_cast<std::size_t>(v)])
          << what << ", vertex " << v;
    EXPECT_EQ(row.arc, rule[static_cast<std::size_t>(v)]) << what << ", vertex " << v;
  }
}

TEST(ServiceArea, MatchesTheReferenceOnRandomGraphs) {
  int checked = 0;
  for (unsigned seed = 1; seed <= 12; ++seed) {
    RandomGraphSpec spec;
    spec.vertices = 400;
    spec.edges = 1200;
    spec.integer_weights = seed % 3 != 0;
    spec.zero_weights = seed % 4 == 1;  // zero-cost ties: the rule's layered stage
    spec.components = 1 + static_cast<int>(seed % 3);
    spec.max_weight = seed % 2 == 0 ? 10 : 1000;
    const auto table = testing::random_edges(spec, seed);
    Graph g = build_graph(table.view(), seed % 2 == 0);
    ensure_reverse(g);
    const VertexIndex n = g.vertex_count();
    // Duplicates and a start outside the graph, in no particular order.
    const std::vector<VertexIndex> starts = {static_cast<VertexIndex>(seed % n), kNoVertex,
                                             static_cast<VertexIndex>((seed * 7) % n),
                                             static_cast<VertexIndex>(seed % n)};
    for (const std::string& source : kAreaSources) {
      const std::unique_ptr<ShortestPathEngine> engine = area_engine(source, g);
      // The road index sums fractional weights in another order than Dijkstra (cch.hpp): its
      // distances may differ in the last bits; whole numbers are exact in any order.
      const bool exact = source != "cch" || spec.integer_weights;
      for (double distance : {0.0, 3.0, spec.max_weight * 2.5, kInfinity}) {
        for (int threads : {1, 3}) {
          ServiceAreaSearch search(g, distance, threads, engine.get());
          std::vector<ServiceAreaRow> rows;
          search.areas(starts.data(), static_cast<int>(starts.size()), 0, rows, CancelToken());
          std::size_t at = 0;
          for (std::size_t i = 0; i < starts.size(); ++i)
            expect_area(g, starts[i], static_cast<int>(i), distance, rows, at,
                        testing::describe(spec, seed) + ", areas by '" + source + "', distance " +
                            std::to_string(distance) + ", start " + std::to_string(i),
                        exact);
          EXPECT_EQ(at, rows.size()) << "rows beyond the areas";
          ++checked;
        }
      }
    }
  }
  EXPECT_EQ(checked, 12 * 3 * 4 * 2);
}

TEST(ServiceArea, NegativeDistanceHasNoRows) {
  const auto table = testing::random_edges(RandomGraphSpec(), 5);
  Graph g = build_graph(table.view(), true);
  ensure_reverse(g);
  for (const std::string& source : kAreaSources) {
    const std::unique_ptr<ShortestPathEngine> engine = area_engine(source, g);
    ServiceAreaSearch search(g, -1.0, 1, engine.get());
    std::vector<ServiceAreaRow> rows;
    const VertexIndex start = 0;
    search.areas(&start, 1, 0, rows, CancelToken());
    EXPECT_TRUE(rows.empty()) << source;
  }
}

TEST(ServiceArea, EquicostGivesEachVertexToItsNearestStart) {
  for (unsigned seed = 1; seed <= 8; ++seed) {
    RandomGraphSpec spec;
    spec.vertices = 300;
    spec.edges = 900;
    spec.max_weight = 5;  // many ties between starts
    spec.zero_weights = seed % 3 == 0;
    const auto table = testing::random_edges(spec, seed);
    Graph g = build_graph(table.view(), seed % 2 == 0);
    ensure_reverse(g);
    const VertexIndex n = g.vertex_count();
    const std::vector<VertexIndex> starts = {
        static_cast<VertexIndex>(seed % n), static_cast<VertexIndex>((seed * 11) % n), kNoVertex,
        static_cast<VertexIndex>((seed * 29) % n), static_cast<VertexIndex>(seed % n)};
    const double distance = 12;
    const std::string& source = kAreaSources[seed % kAreaSources.size()];
    const std::unique_ptr<ShortestPathEngine> engine = area_engine(source, g);
    ServiceAreaSearch search(g, distance, 2, engine.get());
    std::vector<ServiceAreaRow> rows;
    search.nearest_areas(starts.data(), static_cast<int>(starts.size()), rows, CancelToken(),
                         MemoryBudget());
    std::vector<std::vector<double>> want;
    for (VertexIndex s : starts)
      want.push_back(s == kNoVertex ? std::vector<double>(static_cast<std::size_t>(n), kInfinity)
                                    : reference_dijkstra(g.forward, s));
    std::vector<char> is_start(static_cast<std::size_t>(n), 0);
    for (VertexIndex s : starts)
      if (s != kNoVertex) is_start[static_cast<std::size_t>(s)] = 1;
    // Every start has its root row, in order; every other vertex within reach of some start
    // appears once, in the block of the smallest (cost, position).
    std::map<VertexIndex, int> owner;
    int last_start = -1;
    int roots = 0;
    for (const ServiceAreaRow& row : rows) {
      ASSERT_GE(row.start, last_start) << "blocks in the order of the starts";
      last_start = row.start;
      if (row.arc == kNoArc) {
        ++roots;
        EXPECT_EQ(row.vertex, starts[static_cast<std::size_t>(row.start)]);
        continue;
      }
      ASSERT_EQ(owner.count(row.vertex), 0u) << "vertex " << row.vertex << " twice";
      owner[row.vertex] = row.start;
    }
    EXPECT_EQ(roots, static_cast<int>(starts.size()));
    for (VertexIndex v = 0; v < n; ++v) {
      if (is_start[static_cast<std::size_t>(v)]) {
        EXPECT_EQ(owner.count(v), 0u) << "a start's vertex in another start's area";
        continue;
      }
      int best = -1;
      for (std::size_t i = 0; i < starts.size(); ++i)
        if (want[i][static_cast<std::size_t>(v)] <= distance &&
            (best < 0 || want[i][static_cast<std::size_t>(v)] <
                             want[static_cast<std::size_t>(best)][static_cast<std::size_t>(v)]))
          best = static_cast<int>(i);
      if (best < 0) {
        EXPECT_EQ(owner.count(v), 0u) << "vertex " << v << " is out of every area";
      } else {
        ASSERT_EQ(owner.count(v), 1u) << "seed " << seed << ": vertex " << v << " missing";
        EXPECT_EQ(owner[v], best) << "seed " << seed << ": vertex " << v;
      }
    }
  }
}

TEST(ServiceArea, CancelStopsTheSearch) {
  RandomGraphSpec spec;
  spec.vertices = 20000;
  spec.edges = 80000;
  const auto table = testing::random_edges(spec, 3);
  Graph g = build_graph(table.view(), true);
  ensure_reverse(g);
  std::atomic<bool> cancel{true};
  ServiceAreaSearch search(g, 1e12, 2);
  std::vector<ServiceAreaRow> rows;
  const std::vector<VertexIndex> starts = {0, 1, 2, 3};
  EXPECT_THROW(search.areas(starts.data(), 4, 0, rows, CancelToken(nullptr, &cancel)), Cancelled);
}

// The workers a call's threads made are kept for the next call as far as the allowance (the
// session's retained memory) goes, two at least; lowering it frees the rest at once, and a call
// takes kept workers before making new ones.
TEST(ServiceArea, KeptWorkersFollowTheAllowance) {
  const auto table = testing::grid_edges(100, 100, 9, 4);
  Graph g = build_graph(table.view(), true);
  ensure_reverse(g);
  std::vector<VertexIndex> starts;
  for (int i = 0; i < 64; ++i) starts.push_back(static_cast<VertexIndex>(i * 97 % 10000));
  ServiceAreaSearch::set_kept_worker_bytes(0);
  EXPECT_LE(ServiceAreaSearch::kept_worker_count(), ServiceAreaSearch::kMinKeptWorkers);
  ServiceAreaSearch::set_kept_worker_bytes(std::size_t{1} << 30);
  for (int call = 0; call < 3; ++call) {
    ServiceAreaSearch search(g, 1e12, 4);  // every vertex, a few milliseconds an area
    std::vector<ServiceAreaRow> rows;
    search.areas(starts.data(), static_cast<int>(starts.size()), 0, rows, CancelToken());
    EXPECT_EQ(rows.size(), starts.size() * 10000u);
  }
  // Four threads' workers kept (two of them may be older ones of this graph), never more.
  EXPECT_GT(ServiceAreaSearch::kept_worker_count(), ServiceAreaSearch::kMinKeptWorkers);
  EXPECT_LE(ServiceAreaSearch::kept_worker_count(), ServiceAreaSearch::kMinKeptWorkers + 4);
  ServiceAreaSearch::set_kept_worker_bytes(0);
  EXPECT_EQ(ServiceAreaSearch::kept_worker_count(), ServiceAreaSearch::kMinKeptWorkers);
}

}  // namespace
}  // namespace gpu_routing
