// The customizable contraction hierarchy against the reference Dijkstra: one-to-one distances,
// unpacked paths and PHAST one-to-all, on random graphs (directed and undirected, zero weights,
// parallel arcs, self loops, disconnected parts, sparse ids), a grid ordered by its coordinates,
// and re-customization after the weights change. Whole-number weights must match exactly; with
// fractional weights the hierarchy adds the same weights in another order, so 1e-9 relative.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <functional>
#include <numeric>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "road_index/cch.hpp"
#include "road_index/sweep_layout.hpp"
#include "base/parallel.hpp"
#include "base/predecessors.hpp"
#include "cpu/sssp_dijkstra.hpp"
#include "test_graphs.hpp"

namespace gpu_routing {
namespace {

using testing::EdgeTable;
using testing::RandomGraphSpec;

constexpr double kRealTolerance = 1e-9;

bool close_enough(double got, double want, bool exact) {
  if (exact || want == kInfinity || got == kInfinity) return got == want;
  return std::abs(got - want) <= kRealTolerance * std::max(1.0, std::abs(want));
}

std::vector<VertexIndex> arc_tails(const CsrGraph& forward) {
  std::vector<VertexIndex> tails(static_cast<std::size_t>(forward.arc_count()));
  for (VertexIndex v = 0; v < forward.vertex_count; ++v)
    for (ArcIndex a = forward.begin(v); a < forward.end(v); ++a)
      tails[static_cast<std::size_t>(a)] = v;
  return tails;
}

// The path is a chain of arcs of graph.forward from s to t whose weights add up to `want`, and
// it visits no vertex twice.
::testing::AssertionResult valid_path(const Graph& g, const std::vector<VertexIndex>& tails,
                                      const std::vector<ArcIndex>& path, VertexIndex s,
                                      VertexIndex t, double want, bool exact) {
  if (s == t || want == kInfinity) {
    if (!path.empty())
      return ::testing::AssertionFailure() << path.size() << " arcs where no path was due";
    return ::testing::AssertionSuccess();
  }
  if (path.empty()) return ::testing::AssertionFailure() << "no path to a reachable target";
  VertexIndex at = s;
  double sum = 0.0;
  for (ArcIndex a : path) {
    if (a < 0 || a >= g.arc_count()) return ::testing::AssertionFailure() << "arc " << a;
    if (tails[static_cast<std::size_t>(a)] != at)
      return ::testing::AssertionFailure() << "arc " << a << " does not leave vertex " << at;
    sum += g.forward.weights[static_cast<std::size_t>(a)];
    at = g.forward.heads[static_cast<std::size_t>(a)];
  }
  {
    // Simple too: a zero-cost cycle could in principle ride along in an unpacked shortcut, but
    // none has been seen (3.7 million paths on zero-heavy graphs, arbitrary orders included).
    std::vector<VertexIndex> seen = {s};
    for (ArcIndex a : path) seen.push_back(g.forward.heads[static_cast<std::size_t>(a)]);
    std::sort(seen.begin(), seen.end());
    if (std::adjacent_find(seen.begin(), seen.end()) != seen.end())
      return ::testing::AssertionFailure() << "path repeats a vertex";
  }
  if (at != t) return ::testing::AssertionFailure() << "path ends at " << at << ", not " << t;
  if (!close_enough(sum, want, exact))
    return ::testing::AssertionFailure() << "path costs " << sum << ", distance " << want;
  return ::testing::AssertionSuccess();
}

// Several sources: PHAST against Dijkstra for every vertex, and one-to-one distance and path to
// every target (through the Cch's own workspace and through a separate one).
void expect_matches_dijkstra(const Graph& g, Cch& cch, unsigned seed, const std::string& what) {
  const VertexIndex n = g.vertex_count();
  if (n == 0) return;
  const bool exact = g.integer_weights;
  const std::vector<VertexIndex> tails = arc_tails(g.forward);
  std::mt19937 rng(seed);
  std::vector<VertexIndex> sources = {0, n / 2, n - 1,
                                      static_cast<VertexIndex>(rng() % static_cast<unsigned>(n))};
  CchWorkspace workspace(n), settling(n);
  const CsrGraph reverse = reverse_graph(g.forward);
  std::vector<double> phast(static_cast<std::size_t>(n));
  for (VertexIndex s : sources) {
    const std::vector<double> want = reference_dijkstra(g.forward, s);
    std::fill(phast.begin(), phast.end(), -1.0);
    cch.one_to_all(s, phast.data());
    if (exact)
      ASSERT_TRUE(testing::same_distances(phast.data(), want)) << what << " source " << s;
    else
      ASSERT_TRUE(testing::near_distances(phast.data(), want, kRealTolerance))
          << what << " source " << s;
    // Distances settled one by one, in a random order of a random half of the vertices: the very
    // numbers of the sweep (the same sums, the same minimum), and the paths the rule traces from
    // them those it traces from the row, wherever no zero-cost tie needs the whole row.
    {
      std::vector<VertexIndex> asked(static_cast<std::size_t>(n));
      std::iota(asked.begin(), asked.end(), 0);
      std::shuffle(asked.begin(), asked.end(), rng);
      asked.resize(asked.size() / 2 + 1);
      cch.start_settling(s, settling);
      for (VertexIndex v : asked)
        ASSERT_EQ(cch.settled_distance(v, settling), phast[static_cast<std::size_t>(v)])
            << what << " " << s << "->" << v;
      std::vector<ArcIndex> traced;
      const auto settled_of = [&](VertexIndex v) { return cch.settled_distance(v, settling); };
      for (VertexIndex t : {VertexIndex{0}, n / 3, n - 1}) {
        if (trace_strict_path(reverse, settled_of, s, t, traced)) {
          ASSERT_EQ(traced, trace_path(reverse, phast.data(), s, t))
              << what << " " << s << "->" << t;
        }
      }
      EXPECT_LE(settling.settled_count(), static_cast<std::size_t>(n)) << what;
      cch.finish_settling(s, settling);
      ASSERT_EQ(settling.settled_count(), 0u);
    }
    for (VertexIndex t = 0; t < n; ++t) {
      const double expected = want[static_cast<std::size_t>(t)];
      const double got = cch.distance(s, t);
      ASSERT_TRUE(close_enough(got, expected, exact))
          << what << " " << s << "->" << t << ": got " << got << ", want " << expected;
      ASSERT_EQ(got, cch.distance(s, t, workspace)) << what;
      const std::vector<ArcIndex> path = cch.path(s, t);
      ASSERT_TRUE(valid_path(g, tails, path, s, t, expected, exact))
          << what << " " << s << "->" << t;
    }
  }
}

std::vector<VertexIndex> random_order(VertexIndex n, unsigned seed) {
  std::vector<VertexIndex> order(static_cast<std::size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), std::mt19937(seed));
  return order;
}

::testing::AssertionResult is_permutation_of_vertices(const std::vector<VertexIndex>& order,
                                                      VertexIndex n) {
  if (order.size() != static_cast<std::size_t>(n))
    return ::testing::AssertionFailure() << order.size() << " entries for " << n << " vertices";
  std::vector<char> seen(static_cast<std::size_t>(n), 0);
  for (VertexIndex v : order) {
    if (v < 0 || v >= n || seen[static_cast<std::size_t>(v)])
      return ::testing::AssertionFailure() << "vertex " << v << " out of range or repeated";
    seen[static_cast<std::size_t>(v)] = 1;
  }
  return ::testing::AssertionSuccess();
}

// Coordinates of grid_edges' vertices: id r * cols + c + 1 is index r * cols + c.
void grid_coordinates(int rows, int cols, std::vector<double>& x, std::vector<double>& y) {
  x.resize(static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols));
  y.resize(x.size());
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) {
      x[static_cast<std::size_t>(r * cols + c)] = c;
      y[static_cast<std::size_t>(r * cols + c)] = r;
    }
}

TEST(CchOrder, IsAPermutationWithAndWithoutCoordinates) {
  for (unsigned seed = 1; seed <= 30; ++seed) {
    RandomGraphSpec spec;
    spec.vertices = 1 + static_cast<int>(seed * 53 % 700);
    spec.edges = static_cast<int>(seed * 97 % 2500);
    spec.components = 1 + static_cast<int>(seed % 4);
    EdgeTable t = testing::random_edges(spec, seed);
    Graph g = build_graph(t.view(), seed % 2 == 0);
    EXPECT_TRUE(is_permutation_of_vertices(cch_order(g), g.vertex_count()))
        << testing::describe(spec, seed);
    // Arbitrary coordinates still give a valid order (only its quality depends on them).
    std::vector<double> x(static_cast<std::size_t>(g.vertex_count())), y(x.size());
    std::mt19937 rng(seed);
    for (auto& value : x) value = static_cast<double>(rng() % 50);
    for (auto& value : y) value = static_cast<double>(rng() % 50);
    EXPECT_TRUE(is_permutation_of_vertices(cch_order(g, x.data(), y.data()), g.vertex_count()));
  }
  Graph empty = build_graph(EdgeTable().view(), true);
  EXPECT_TRUE(cch_order(empty).empty());
  double coordinate = 0;
  EXPECT_THROW(cch_order(empty, &coordinate, nullptr), RoutingError);
}

// Ordering on several threads orders the sides of each bisection (and the components of a
// disconnected part) at once, each into an order of its own joined in the sequential order: the
// same order on any thread count, with coordinates, without (landmarks), and disconnected.
TEST(CchOrder, SameOnAnyThreadCount) {
  std::vector<std::pair<std::string, Graph>> graphs;
  graphs.emplace_back("grid 90 x 110",
                      build_graph(testing::grid_edges(90, 110, 20, 3).view(), true));
  for (unsigned seed : {4u, 5u}) {
    RandomGraphSpec spec;
    spec.vertices = 9000;
    spec.edges = 21000;
    spec.components = seed == 5 ? 7 : 1;
    graphs.emplace_back(testing::describe(spec, seed),
                        build_graph(testing::random_edges(spec, seed).view(), seed == 4));
  }
  for (const auto& [name, g] : graphs) {
    std::vector<double> x(static_cast<std::size_t>(g.vertex_count())), y(x.size());
    std::mt19937 rng(7);
    for (auto& value : x) value = static_cast<double>(rng() % 1000);
    for (auto& value : y) value = static_cast<double>(rng() % 1000);
    const std::vector<VertexIndex> landmarks = cch_order(g);
    const std::vector<VertexIndex> given = cch_order(g, x.data(), y.data());
    ASSERT_TRUE(is_permutation_of_vertices(landmarks, g.vertex_count())) << name;
    ASSERT_TRUE(is_permutation_of_vertices(given, g.vertex_count())) << name;
    for (int threads : {0, 2, 3, 4}) {  // 0: every core
      EXPECT_EQ(cch_order(g, nullptr, nullptr, CancelToken(), threads), landmarks)
          << name << ", " << threads << " threads, landmark coordinates";
      EXPECT_EQ(cch_order(g, x.data(), y.data(), CancelToken(), threads), given)
          << name << ", " << threads << " threads, given coordinates";
    }
  }
}

// A cancel that comes while tasks order the parts stops the ordering on every thread count.
TEST(CchOrder, CancelStopsParallelOrdering) {
  RandomGraphSpec spec;
  spec.vertices = 9000;
  spec.edges = 21000;
  Graph g = build_graph(testing::random_edges(spec, 6).view(), true);
  for (int threads : {1, 2, 4}) {
    for (int after : {1, 40, 400}) {
      std::atomic<int> countdown{after};
      const CancelToken later(
          [](const void* left) {
            return static_cast<std::atomic<int>*>(const_cast<void*>(left))->fetch_sub(1) <= 0;
          },
          &countdown);
      EXPECT_THROW(cch_order(g, nullptr, nullptr, later, threads), Cancelled)
          << threads << " threads, cancelled after " << after << " polls";
    }
  }
}

TEST(Cch, MatchesDijkstraOnRandomGraphs) {
  for (unsigned seed = 1; seed <= 36; ++seed) {
    RandomGraphSpec spec;
    spec.vertices = 20 + static_cast<int>(seed * 37 % 200);
    spec.edges = spec.vertices * static_cast<int>(1 + seed % 4);
    spec.integer_weights = seed % 4 != 1;
    spec.zero_weights = seed % 3 == 0;
    spec.max_weight = seed % 5 == 0 ? 3 : 100;  // few distinct weights: many ties
    spec.components = 1 + static_cast<int>(seed % 3);
    spec.sparse_ids = seed % 7 == 0;
    EdgeTable t = testing::random_edges(spec, seed);
    for (bool directed : {true, false}) {
      Graph g = build_graph(t.view(), directed);
      // Nested dissection mostly; an arbitrary order now and then, for other fill-in shapes.
      std::vector<VertexIndex> order =
          seed % 6 == 0 ? random_order(g.vertex_count(), seed) : cch_order(g);
      Cch cch(g, std::move(order));
      cch.customize(g);
      expect_matches_dijkstra(
          g, cch, seed, testing::describe(spec, seed) + (directed ? " directed" : " undirected"));
      if (HasFatalFailure()) return;
    }
  }
}

// A path's distances settle a small part of a city-sized hierarchy: on a 64 x 64 grid one
// vertex's distance settles its elimination-tree ancestors alone, far under the 4096 ranks a
// sweep pulls; the next source starts from a clean workspace.
TEST(Cch, SettlingTouchesOnlyWhatAnAskedDistanceNeeds) {
  EdgeTable t = testing::grid_edges(64, 64, 100, 7);
  const Graph g = build_graph(t.view(), true);
  Cch cch(g, cch_order(g));
  cch.customize(g);
  const VertexIndex n = g.vertex_count();
  CchWorkspace workspace(n);
  std::vector<double> row(static_cast<std::size_t>(n));
  for (VertexIndex s : {VertexIndex{0}, n / 2 + 17, n - 1}) {
    cch.one_to_all(s, row.data());
    cch.start_settling(s, workspace);
    const VertexIndex far = n - 1 - s;
    EXPECT_EQ(cch.settled_distance(far, workspace), row[static_cast<std::size_t>(far)]);
    EXPECT_LE(static_cast<int>(workspace.settled_count()), cch.elimination_tree_height());
    cch.finish_settling(s, workspace);
  }
}

// The targets' closure (RPHAST's restriction) is every rank reachable from the targets over
// upward arcs (each a rank's ancestor in the elimination tree): found here by a search over the
// arcs, against the engine's walk up the tree.
TEST(Cch, AncestorClosureIsWhatTheTargetsReachUpward) {
  for (unsigned seed = 1; seed <= 12; ++seed) {
    RandomGraphSpec spec;
    spec.vertices = 50 + static_cast<int>(seed * 53 % 500);
    spec.edges = spec.vertices * 3;
    spec.components = 1 + static_cast<int>(seed % 3);
    EdgeTable t = testing::random_edges(spec, seed);
    Graph g = build_graph(t.view(), seed % 2 == 0);
    if (g.vertex_count() == 0) continue;
    Cch cch(g, cch_order(g));
    const VertexIndex n = g.vertex_count();
    std::vector<VertexIndex> targets;
    for (VertexIndex v = static_cast<VertexIndex>(seed) % 7; v < n;
         v += 3 + static_cast<VertexIndex>(seed))
      targets.push_back(v);
    targets.push_back(targets.front());  // a repeated target counts once
    std::vector<char> seen(static_cast<std::size_t>(n), 0);
    std::vector<VertexIndex> stack;
    for (VertexIndex v : targets)
      stack.push_back(cch.rank_of_vertex()[static_cast<std::size_t>(v)]);
    VertexIndex ranks = 0;
    std::int64_t arcs = 0;
    while (!stack.empty()) {
      const VertexIndex r = stack.back();
      stack.pop_back();
      if (seen[static_cast<std::size_t>(r)]) continue;
      seen[static_cast<std::size_t>(r)] = 1;
      ++ranks;
      for (ArcIndex a = cch.arc_first()[static_cast<std::size_t>(r)];
           a < cch.arc_first()[static_cast<std::size_t>(r) + 1]; ++a, ++arcs)
        stack.push_back(cch.arc_head()[static_cast<std::size_t>(a)]);
    }
    const Cch::Closure closure =
        cch.ancestor_closure(targets.data(), static_cast<int>(targets.size()));
    EXPECT_EQ(closure.ranks, ranks) << testing::describe(spec, seed);
    EXPECT_EQ(closure.arcs, arcs) << testing::describe(spec, seed);
  }
}

// The GPU's sweep layout, checked on the CPU (sweep_on_host runs the device's steps in order):
// the full layout's sweep equals Cch::one_to_all bit for bit, with the default bottom, none and
// one group; a layout restricted to some targets' closure (RPHAST) gives the same distances at
// every kept rank, its seeds outside the closure dropped as the engine drops them; every kept
// rank's higher neighbours are kept; steps stay in the same order.
TEST(CchSweepLayout, FullAndRestrictedSweepsEqualOneToAll) {
  for (unsigned seed = 1; seed <= 10; ++seed) {
    RandomGraphSpec spec;
    spec.vertices = 100 + static_cast<int>(seed * 97 % 700);
    spec.edges = spec.vertices * 3;
    spec.integer_weights = seed % 2 == 0;
    spec.zero_weights = seed % 3 == 0;
    spec.components = 1 + static_cast<int>(seed % 2);
    EdgeTable t = testing::random_edges(spec, seed);
    Graph g = build_graph(t.view(), seed % 4 != 0);
    if (g.vertex_count() == 0) continue;
    Cch cch(g, cch_order(g));
    cch.customize(g);
    const VertexIndex n = g.vertex_count();
    const auto rank_of = cch.rank_of_vertex();
    CchWorkspace workspace(n);
    std::vector<double> want(static_cast<std::size_t>(n));
    for (const int subtree : {16, 0, 1 << 20}) {
      const SweepLayout full = make_sweep_layout(cch, subtree);
      ASSERT_EQ(full.first.size(), static_cast<std::size_t>(n) + 1);
      // The targets' closure (AncestorClosureIsWhatTheTargetsReachUpward checks it), by rank.
      std::vector<VertexIndex> targets;
      for (VertexIndex v = static_cast<VertexIndex>(seed) % 5; v < n; v += 9) targets.push_back(v);
      std::vector<char> keep;
      cch.ancestor_closure(targets.data(), static_cast<int>(targets.size()), &keep);
      const SweepLayout restricted = restrict_sweep_layout(full, keep);
      const auto kept = static_cast<std::size_t>(std::count(keep.begin(), keep.end(), 1));
      ASSERT_EQ(restricted.first.size(), kept + 1);
      ASSERT_EQ(restricted.step_first.back(), static_cast<VertexIndex>(kept));
      for (std::size_t s2 = 0; s2 + 1 < restricted.step_first.size(); ++s2)
        ASSERT_LT(restricted.step_first[s2], restricted.step_first[s2 + 1]);  // none empty
      for (VertexIndex source = 0; source < n; source += std::max<VertexIndex>(1, n / 7)) {
        std::vector<std::pair<VertexIndex, double>> reached, full_seeds, kept_seeds;
        cch.upward_search(source, reached, workspace);
        for (const auto& [rank, d] : reached) {
          full_seeds.emplace_back(full.position_of_rank[static_cast<std::size_t>(rank)], d);
          const VertexIndex p = restricted.position_of_rank[static_cast<std::size_t>(rank)];
          if (p >= 0) kept_seeds.emplace_back(p, d);
        }
        const std::vector<double> by_full = sweep_on_host(full, full_seeds);
        const std::vector<double> by_kept = sweep_on_host(restricted, kept_seeds);
        cch.one_to_all(source, want.data(), workspace);
        for (VertexIndex v = 0; v < n; ++v) {
          const auto rank = static_cast<std::size_t>(rank_of[static_cast<std::size_t>(v)]);
          ASSERT_EQ(by_full[static_cast<std::size_t>(
                        full.position_of_vertex[static_cast<std::size_t>(v)])],
                    want[static_cast<std::size_t>(v)])
              << testing::describe(spec, seed) << " subtrees " << subtree << " source " << source
              << " vertex " << v;
          const VertexIndex p = restricted.position_of_rank[rank];
          if (p >= 0) {
            ASSERT_EQ(by_kept[static_cast<std::size_t>(p)], want[static_cast<std::size_t>(v)])
                << testing::describe(spec, seed) << " subtrees " << subtree << " source " << source
                << " kept vertex " << v;
          }
        }
        for (VertexIndex v : targets)
          ASSERT_GE(
              restricted
                  .position_of_rank[static_cast<std::size_t>(rank_of[static_cast<std::size_t>(v)])],
              0);
      }
    }
  }
}

// Marks that leave out a kept rank's higher neighbour, or are not one per rank, are refused, not
// swept wrong.
TEST(CchSweepLayout, ARestrictionWithoutItsAncestorsIsRefused) {
  Graph g = build_graph(testing::grid_edges(12, 12, 5, 3).view(), true);
  Cch cch(g, cch_order(g));
  cch.customize(g);
  const SweepLayout full = make_sweep_layout(cch, 16);
  std::vector<char> keep(full.position_of_rank.size(), 0);
  keep[0] = 1;  // the lowest rank alone (its parent left out)
  EXPECT_THROW(restrict_sweep_layout(full, keep), RoutingError);
  keep.pop_back();
  EXPECT_THROW(restrict_sweep_layout(full, keep), RoutingError);
}

TEST(Cch, GridOrderedByCoordinates) {
  const int rows = 24, cols = 30;
  EdgeTable t = testing::grid_edges(rows, cols, 20, 5);
  std::vector<double> x, y;
  grid_coordinates(rows, cols, x, y);
  for (bool directed : {true, false}) {
    Graph g = build_graph(t.view(), directed);
    ASSERT_EQ(g.vertex_count(), rows * cols);
    std::vector<VertexIndex> order = cch_order(g, x.data(), y.data());
    ASSERT_TRUE(is_permutation_of_vertices(order, g.vertex_count()));
    Cch cch(g, std::move(order));
    cch.customize(g);
    expect_matches_dijkstra(g, cch, 11, directed ? "grid directed" : "grid undirected");

    // Nested dissection keeps the fill-in and the tree small; an arbitrary order does not.
    Cch arbitrary(g, random_order(g.vertex_count(), 3));
    EXPECT_LT(cch.arc_count(), 12 * g.vertex_count());
    EXPECT_LT(cch.arc_count() * 3, arbitrary.arc_count());
    EXPECT_LT(cch.elimination_tree_height(), g.vertex_count() / 4);
    Cch by_bfs(g, cch_order(g));
    EXPECT_LT(by_bfs.arc_count(), 14 * g.vertex_count());
    EXPECT_GT(cch.memory_bytes(), static_cast<std::size_t>(cch.arc_count()) * 24);
    EXPECT_GE(cch.build_ms(), 0.0);
    EXPECT_GE(cch.customization_ms(), 0.0);

    // The elimination tree: each rank's parent is its lowest upward neighbour, above it.
    const auto& parent = cch.elimination_tree_parent();
    ASSERT_EQ(parent.size(), static_cast<std::size_t>(g.vertex_count()));
    for (VertexIndex r = 0; r < g.vertex_count(); ++r)
      EXPECT_TRUE(parent[static_cast<std::size_t>(r)] == kNoVertex ||
                  parent[static_cast<std::size_t>(r)] > r);
  }
}

// The narrowest place is not where a median line falls: a 30 x 30 city and a 15 x 20 one joined
// by three bridges (paths of 5 vertices), so that the median along any direction crosses the big
// city (30 vertices or more), while the three bridges can be cut with 3 vertices. The top of the
// elimination tree (the ranks from the root down to its first branching) is a separator of the
// graph; it must be no larger than the bridges' cut and leave the small city whole on one side,
// with the coordinates and with the landmark coordinates made from the topology alone.
TEST(CchOrder, FlowCutFindsBridgesBetweenCities) {
  EdgeTable t;
  std::vector<std::pair<double, double>> at;  // by id - 1
  auto vertex = [&](double x, double y) {
    at.emplace_back(x, y);
    return static_cast<std::int64_t>(at.size());
  };
  auto city = [&](int rows, int cols, double x0) {
    std::vector<std::int64_t> ids;
    for (int r = 0; r < rows; ++r)
      for (int c = 0; c < cols; ++c) {
        ids.push_back(vertex(x0 + c, r));
        if (c > 0) t.add(ids[ids.size() - 2], ids.back(), 1 + (r * 7 + c) % 5, 1);
        if (r > 0) t.add(ids[ids.size() - 1 - static_cast<std::size_t>(cols)], ids.back(), 2, 3);
      }
    return ids;
  };
  const std::vector<std::int64_t> big = city(30, 30, 0), small = city(15, 20, 40);
  t.with_reverse = true;
  for (int bridge = 0; bridge < 3; ++bridge) {
    const int row = 2 + 5 * bridge;
    std::int64_t previous = big[static_cast<std::size_t>(row * 30 + 29)];
    for (int step = 1; step <= 5; ++step) {
      const std::int64_t next = vertex(29 + 10.0 * step / 6, row);
      t.add(previous, next, 4, 4);
      previous = next;
    }
    t.add(previous, small[static_cast<std::size_t>(row * 20)], 4, 4);
  }
  Graph g = build_graph(t.view(), true);
  ASSERT_EQ(g.vertex_count(), static_cast<VertexIndex>(at.size()));
  std::vector<double> x(at.size()), y(at.size());
  for (std::size_t id = 1; id <= at.size(); ++id) {
    const VertexIndex v = g.vertices.find(static_cast<std::int64_t>(id));
    x[static_cast<std::size_t>(v)] = at[id - 1].first;
    y[static_cast<std::size_t>(v)] = at[id - 1].second;
  }
  // With the cities' coordinates, and without (landmark coordinates from the topology).
  for (const bool with_coordinates : {true, false}) {
    SCOPED_TRACE(with_coordinates ? "coordinates" : "landmark coordinates");
    std::vector<VertexIndex> order =
        with_coordinates ? cch_order(g, x.data(), y.data()) : cch_order(g);
    ASSERT_TRUE(is_permutation_of_vertices(order, g.vertex_count()));
    Cch cch(g, std::move(order));

    const VertexIndex n = g.vertex_count();
    const auto& parent = cch.elimination_tree_parent();
    std::vector<std::vector<VertexIndex>> children(static_cast<std::size_t>(n));
    for (VertexIndex r = 0; r < n; ++r)
      if (parent[static_cast<std::size_t>(r)] != kNoVertex)
        children[static_cast<std::size_t>(parent[static_cast<std::size_t>(r)])].push_back(r);
    ASSERT_EQ(parent[static_cast<std::size_t>(n - 1)], kNoVertex);  // connected: one root
    int top = 1;
    VertexIndex branch = n - 1;
    while (children[static_cast<std::size_t>(branch)].size() == 1) {
      branch = children[static_cast<std::size_t>(branch)].front();
      ++top;
    }
    EXPECT_LE(top, 3);
    // Every child subtree of the branching rank is a side; the small city lies within one.
    std::vector<int> side(static_cast<std::size_t>(n), -1);
    const auto& branches = children[static_cast<std::size_t>(branch)];
    for (std::size_t k = 0; k < branches.size(); ++k)
      side[static_cast<std::size_t>(branches[k])] = static_cast<int>(k);
    for (VertexIndex r = branch - 1; r >= 0; --r)
      if (side[static_cast<std::size_t>(r)] < 0)
        side[static_cast<std::size_t>(r)] =
            side[static_cast<std::size_t>(parent[static_cast<std::size_t>(r)])];
    const auto side_of_id = [&](std::int64_t id) {
      return side[static_cast<std::size_t>(
          cch.rank_of_vertex()[static_cast<std::size_t>(g.vertices.find(id))])];
    };
    const int small_side = side_of_id(small.front());
    EXPECT_GE(small_side, 0);
    for (std::int64_t id : small) EXPECT_EQ(side_of_id(id), small_side);
    EXPECT_NE(side_of_id(big.front()), small_side);

    cch.customize(g);
    expect_matches_dijkstra(g, cch, 5, "two cities");
  }
}

// The flat image (what a kept graph's shared index holds): a view of it answers exactly as the
// Cch it was written from, refuses a graph of another topology and a damaged header, and cannot
// be customized again.
TEST(Cch, ImageViewAnswersAsTheOriginal) {
  for (unsigned seed = 1; seed <= 6; ++seed) {
    RandomGraphSpec spec;
    spec.vertices = 60 + static_cast<int>(seed * 23 % 150);
    spec.edges = spec.vertices * 3;
    spec.integer_weights = seed % 2 == 0;
    spec.components = 1 + static_cast<int>(seed % 2);
    EdgeTable t = testing::random_edges(spec, seed);
    Graph g = build_graph(t.view(), seed % 3 != 0);
    Cch original(g, cch_order(g));
    original.customize(g);
    std::vector<std::uint64_t> storage((original.image_bytes() + 7) / 8);
    original.write_image(storage.data());
    Cch view = Cch::view_image(storage.data(), original.image_bytes(), g);
    EXPECT_EQ(view.memory_bytes(), original.memory_bytes());
    EXPECT_EQ(view.elimination_tree_height(), original.elimination_tree_height());
    const auto n = static_cast<std::size_t>(g.vertex_count());
    std::vector<double> a(n), b(n);
    CchWorkspace workspace;
    for (VertexIndex s = 0; s < g.vertex_count(); s += 7) {
      original.one_to_all(s, a.data());
      view.one_to_all(s, b.data(), workspace);
      ASSERT_EQ(a, b) << testing::describe(spec, seed) << " source " << s;
      for (VertexIndex target = 0; target < g.vertex_count(); target += 11) {
        EXPECT_EQ(view.distance(s, target, workspace), original.distance(s, target));
        EXPECT_EQ(view.path(s, target, workspace), original.path(s, target));
      }
    }
    expect_matches_dijkstra(g, view, 3, "image view");
    EXPECT_THROW(view.customize(g), RoutingError);
    // Another topology: one arc fewer.
    EdgeTable fewer = t;
    fewer.ids.pop_back();
    fewer.sources.pop_back();
    fewer.targets.pop_back();
    fewer.costs.pop_back();
    if (!fewer.reverse_costs.empty()) fewer.reverse_costs.pop_back();
    Graph other = build_graph(fewer.view(), seed % 3 != 0);
    if (other.vertex_count() == g.vertex_count()) {
      EXPECT_THROW(Cch::view_image(storage.data(), original.image_bytes(), other), RoutingError);
    }
    EXPECT_THROW(Cch::view_image(storage.data(), original.image_bytes() - 8, g), RoutingError);
    storage[0] ^= 1;
    EXPECT_THROW(Cch::view_image(storage.data(), original.image_bytes(), g), RoutingError);
  }
}

// Many-to-many by buckets: every (source, target) cell equals the reference Dijkstra's distance,
// with repeated targets, a source among the targets, unreachable pairs, and the same buckets read
// by several sources.
TEST(Cch, BucketManyToManyMatchesDijkstra) {
  for (unsigned seed = 1; seed <= 10; ++seed) {
    RandomGraphSpec spec;
    spec.vertices = 30 + static_cast<int>(seed * 41 % 170);
    spec.edges = spec.vertices * 3;
    spec.integer_weights = seed % 3 != 0;
    spec.components = 1 + static_cast<int>(seed % 3);
    EdgeTable t = testing::random_edges(spec, seed);
    Graph g = build_graph(t.view(), seed % 2 == 0);
    Cch cch(g, cch_order(g));
    cch.customize(g);
    const VertexIndex n = g.vertex_count();
    std::vector<VertexIndex> targets;
    for (VertexIndex v = 0; v < n; v += 1 + n / 13) targets.push_back(v);
    targets.push_back(targets.front());  // repeated
    CchBuckets buckets;
    CchWorkspace workspace;
    cch.fill_buckets(targets.data(), static_cast<int>(targets.size()), buckets, workspace);
    std::vector<double> row(targets.size());
    for (VertexIndex s = 0; s < n; s += 1 + n / 9) {
      cch.row_from_buckets(s, buckets, row.data(), workspace);
      const auto want = reference_dijkstra(g.forward, s);
      for (std::size_t j = 0; j < targets.size(); ++j) {
        const double expected = want[static_cast<std::size_t>(targets[j])];
        if (spec.integer_weights || expected == kInfinity)
          ASSERT_EQ(row[j], expected)
              << testing::describe(spec, seed) << " " << s << " -> " << targets[j];
        else
          ASSERT_NEAR(row[j], expected, 1e-9 * std::max(1.0, expected))
              << testing::describe(spec, seed) << " " << s << " -> " << targets[j];
      }
    }
  }
}

// Few targets on a larger graph: the buckets are kept sparse (sorted by rank, met by a merge) and
// every cell still equals Dijkstra's; the same for as many targets as make them dense, and the
// same buckets object going from one form to the other.
TEST(Cch, SparseAndDenseBucketsMatchDijkstra) {
  for (unsigned seed = 1; seed <= 4; ++seed) {
    EdgeTable t = testing::grid_edges(40, 50, 9, seed);
    Graph g = build_graph(t.view(), seed % 2 == 0);
    Cch cch(g, cch_order(g));
    cch.customize(g);
    const VertexIndex n = g.vertex_count();
    CchBuckets buckets;
    CchWorkspace workspace;
    for (const int count : {1, 2, 5, 400}) {
      std::vector<VertexIndex> targets;
      for (int j = 0; j < count; ++j)
        targets.push_back(static_cast<VertexIndex>((j * 7919 + static_cast<int>(seed) * 31) % n));
      cch.fill_buckets(targets.data(), count, buckets, workspace);
      std::vector<double> row(targets.size());
      for (VertexIndex s = 0; s < n; s += 97) {
        cch.row_from_buckets(s, buckets, row.data(), workspace);
        const auto want = reference_dijkstra(g.forward, s);
        for (std::size_t j = 0; j < targets.size(); ++j)
          ASSERT_EQ(row[j], want[static_cast<std::size_t>(targets[j])])
              << "seed " << seed << ", " << count << " targets, " << s << " -> " << targets[j];
      }
    }
  }
}

// Buckets filled on several threads (each its own workspace) hold the same answers as on one:
// every cell equals Dijkstra's, on grids (dense buckets) and random graphs with zero-cost arcs,
// several parts and repeated targets; ranks whose distance to a target is not exact (stalled)
// are left out of the buckets without changing any cell.
// A graph for the bucket tests with its hierarchy customized: a rows x cols grid for seeds 1 and
// 2, otherwise a random graph of `vertices` with zero-cost arcs (even seeds), real weights (one
// seed in three) and up to three parts.
struct BucketCase {
  Graph graph;
  Cch cch;
  bool exact;  // whole-number weights: every cell is Dijkstra's bit for bit
};

BucketCase bucket_case(unsigned seed, int vertices, int rows, int cols) {
  RandomGraphSpec spec;
  spec.vertices = vertices;
  spec.edges = spec.vertices * 3;
  spec.zero_weights = seed % 2 == 0;
  spec.integer_weights = seed % 3 != 0;
  spec.components = 1 + static_cast<int>(seed % 3);
  EdgeTable t =
      seed <= 2 ? testing::grid_edges(rows, cols, 90, seed) : testing::random_edges(spec, seed);
  BucketCase c{build_graph(t.view(), seed % 2 == 0), Cch(), seed <= 2 || spec.integer_weights};
  c.cch = Cch(c.graph, cch_order(c.graph));
  c.cch.customize(c.graph);
  return c;
}

TEST(Cch, BucketsFilledOnThreadsMatchDijkstra) {
  for (unsigned seed = 1; seed <= 8; ++seed) {
    const BucketCase c = bucket_case(seed, 200 + static_cast<int>(seed * 97 % 400), 30, 40);
    const Graph& g = c.graph;
    const Cch& cch = c.cch;
    const VertexIndex n = g.vertex_count();
    std::vector<VertexIndex> targets;
    for (VertexIndex v = 0; v < n; v += 1 + n / 300) targets.push_back(v);
    targets.push_back(targets[targets.size() / 2]);  // repeated
    std::vector<std::unique_ptr<CchWorkspace>> owned;
    std::vector<CchWorkspace*> workspaces;
    for (int k = 0; k < 3; ++k) {
      owned.push_back(std::make_unique<CchWorkspace>());
      workspaces.push_back(owned.back().get());
    }
    for (const int threads : {1, 2, 3}) {
      CchBuckets buckets;
      cch.fill_buckets(targets.data(), static_cast<int>(targets.size()), buckets, workspaces.data(),
                       threads);
      std::vector<double> row(targets.size());
      for (VertexIndex s = 0; s < n; s += 1 + n / 60) {
        cch.row_from_buckets(s, buckets, row.data(), *workspaces[0]);
        const auto want = reference_dijkstra(g.forward, s);
        for (std::size_t j = 0; j < targets.size(); ++j) {
          const double expected = want[static_cast<std::size_t>(targets[j])];
          if (c.exact || expected == kInfinity)
            ASSERT_EQ(row[j], expected)
                << "seed " << seed << ", " << threads << " threads, " << s << " -> " << targets[j];
          else
            ASSERT_NEAR(row[j], expected, 1e-9 * std::max(1.0, expected))
                << "seed " << seed << ", " << threads << " threads, " << s << " -> " << targets[j];
        }
      }
    }
  }
}

// Buckets whose busiest ranks keep columns (a share of the targets each) give the same rows,
// bit for bit, as buckets with every entry scattered, and Dijkstra's distances: on grids and
// random graphs with zero-cost arcs, several parts (unreachable cells) and repeated targets, for
// groups of 1 to 8 sources read together, target counts around a column piece's width, and
// shares from "ranks every target reaches" to most ranks.
TEST(Cch, BucketColumnsMatchScatteredBuckets) {
  for (unsigned seed = 1; seed <= 6; ++seed) {
    const BucketCase c = bucket_case(seed, 400 + static_cast<int>(seed * 131 % 500), 40, 45);
    const Graph& g = c.graph;
    const Cch& cch = c.cch;
    const VertexIndex n = g.vertex_count();
    std::vector<std::unique_ptr<CchWorkspace>> owned;
    std::vector<CchWorkspace*> workspaces;
    for (int k = 0; k < 2; ++k) {
      owned.push_back(std::make_unique<CchWorkspace>());
      workspaces.push_back(owned.back().get());
    }
    const int piece = static_cast<int>(kBucketColumnPiece);
    for (const int count : {kBucketColumnTargets, 300, piece + 13}) {
      std::vector<VertexIndex> targets;
      for (int j = 0; j < count - 1; ++j)
        targets.push_back(static_cast<VertexIndex>((j * 7919 + static_cast<int>(seed) * 31) % n));
      targets.push_back(targets[targets.size() / 3]);  // repeated
      std::vector<VertexIndex> sources;
      for (VertexIndex s = 0; s < n; s += 1 + n / 40) sources.push_back(s);
      const auto rows_of = [&](int share, int group, std::size_t* columns) {
        CchBuckets buckets;
        cch.fill_buckets(targets.data(), count, buckets, workspaces.data(), 2, share);
        *columns = buckets.column_count();
        std::vector<double> matrix(sources.size() * static_cast<std::size_t>(count), -1.0);
        for (std::size_t first = 0; first < sources.size(); first += group) {
          const int in_group =
              static_cast<int>(std::min<std::size_t>(group, sources.size() - first));
          double* rows[8];
          for (int i = 0; i < in_group; ++i)
            rows[i] = matrix.data() + (first + static_cast<std::size_t>(i)) * count;
          cch.rows_from_buckets(sources.data() + first, in_group, rows, buckets, *workspaces[1]);
        }
        return matrix;
      };
      std::size_t columns = 0;
      const std::vector<double> scattered = rows_of(0, 1, &columns);
      ASSERT_EQ(columns, 0u);
      for (std::size_t i = 0; i < sources.size(); ++i) {
        const auto want = reference_dijkstra(g.forward, sources[i]);
        for (int j = 0; j < count; ++j) {
          const double got = scattered[i * static_cast<std::size_t>(count) + j];
          const double expected = want[static_cast<std::size_t>(targets[j])];
          if (c.exact || expected == kInfinity)
            ASSERT_EQ(got, expected)
                << "seed " << seed << ", " << sources[i] << " -> " << targets[j];
          else
            ASSERT_NEAR(got, expected, 1e-9 * std::max(1.0, expected))
                << "seed " << seed << ", " << sources[i] << " -> " << targets[j];
        }
      }
      std::size_t most_columns = 0;
      for (const int share : {1, 4, 64})
        for (const int group : {1, 3, 8}) {
          const std::vector<double> with_columns = rows_of(share, group, &columns);
          most_columns = std::max(most_columns, columns);
          ASSERT_EQ(0, std::memcmp(with_columns.data(), scattered.data(),
                                   scattered.size() * sizeof(double)))
              << "seed " << seed << ", " << count << " targets, share " << share << ", groups of "
              << group << ", " << columns << " columns";
        }
      // The columns were there to be tested: most of the ranks the targets reach at a 64th.
      EXPECT_GT(most_columns, 10u) << "seed " << seed << ", " << count << " targets";
    }
  }
}

// One workspace through every kind of query in turn: walks that prime only their own chains
// (distances, paths, buckets, upward searches) before and after the sweeps and the settling that
// fill whole arrays, on graphs with unreachable parts. Each answer is Dijkstra's.
TEST(Cch, OneWorkspaceServesEveryQueryInAnyOrder) {
  for (unsigned seed = 1; seed <= 6; ++seed) {
    RandomGraphSpec spec;
    spec.vertices = 300;
    spec.edges = 700;
    spec.components = 1 + static_cast<int>(seed % 3);
    EdgeTable t = testing::random_edges(spec, seed);
    Graph g = build_graph(t.view(), seed % 2 == 1);
    Cch cch(g, cch_order(g));
    cch.customize(g);
    const VertexIndex n = g.vertex_count();
    const bool exact = g.integer_weights;
    CchWorkspace workspace;
    CchBuckets buckets;
    std::mt19937 rng(seed);
    std::vector<double> sweep(static_cast<std::size_t>(n)), row(3);
    std::vector<std::pair<VertexIndex, double>> reached;
    for (int step = 0; step < 60; ++step) {
      const VertexIndex s = static_cast<VertexIndex>(rng() % static_cast<unsigned>(n));
      const VertexIndex v = static_cast<VertexIndex>(rng() % static_cast<unsigned>(n));
      const auto want = reference_dijkstra(g.forward, s);
      const std::string where = "seed " + std::to_string(seed) + ", step " + std::to_string(step) +
                                ", " + std::to_string(s) + " -> " + std::to_string(v);
      switch (step % 6) {
        case 0:
          ASSERT_TRUE(
              close_enough(cch.distance(s, v, workspace), want[static_cast<std::size_t>(v)], exact))
              << where;
          break;
        case 1: {
          double cost = 0;
          for (ArcIndex arc : cch.path(s, v, workspace))
            cost += g.forward.weights[static_cast<std::size_t>(arc)];
          if (want[static_cast<std::size_t>(v)] < kInfinity && s != v) {
            ASSERT_TRUE(close_enough(cost, want[static_cast<std::size_t>(v)], exact)) << where;
          }
          break;
        }
        case 2: {
          const VertexIndex targets[3] = {v, s, static_cast<VertexIndex>((v + 1) % n)};
          cch.fill_buckets(targets, 3, buckets, workspace);
          cch.row_from_buckets(s, buckets, row.data(), workspace);
          for (int j = 0; j < 3; ++j)
            ASSERT_TRUE(close_enough(row[static_cast<std::size_t>(j)],
                                     want[static_cast<std::size_t>(targets[j])], exact))
                << where << " (buckets)";
          break;
        }
        case 3:
          cch.one_to_all(s, sweep.data(), workspace);
          for (VertexIndex x = 0; x < n; ++x)
            ASSERT_TRUE(close_enough(sweep[static_cast<std::size_t>(x)],
                                     want[static_cast<std::size_t>(x)], exact))
                << where << " (sweep to " << x << ")";
          break;
        case 4:
          cch.start_settling(s, workspace);
          ASSERT_TRUE(close_enough(cch.settled_distance(v, workspace),
                                   want[static_cast<std::size_t>(v)], exact))
              << where << " (settled)";
          cch.finish_settling(s, workspace);
          break;
        default:
          cch.upward_search(s, reached, workspace);
          ASSERT_FALSE(reached.empty()) << where;
          ASSERT_EQ(reached.front().second, 0.0) << where;
          break;
      }
    }
  }
}

// The one-to-one search as it was before pruning: two whole walks up the elimination tree, each
// rank keeping the arc that last strictly improved it, then the lowest common ancestor with the
// strictly smallest total, its chains' arcs unpacked. Built from the public arrays alone.
struct FullWalkAnswer {
  double distance = kInfinity;
  std::vector<ArcIndex> path;
};

FullWalkAnswer full_walk_answer(const Cch& cch, VertexIndex s, VertexIndex t) {
  const CchSpan<VertexIndex> parent = cch.elimination_tree_parent();
  const CchSpan<ArcIndex> first = cch.arc_first();
  const CchSpan<VertexIndex> head = cch.arc_head();
  const auto n = static_cast<std::size_t>(cch.vertex_count());
  const VertexIndex source = cch.rank_of_vertex()[static_cast<std::size_t>(s)];
  const VertexIndex target = cch.rank_of_vertex()[static_cast<std::size_t>(t)];
  std::vector<double> forward(n, kInfinity), backward(n, kInfinity);
  std::vector<ArcIndex> forward_arc(n, kNoArc), backward_arc(n, kNoArc);
  const auto walk = [&](VertexIndex start, std::vector<double>& distance,
                        const CchSpan<double>& weights, std::vector<ArcIndex>& arc_of) {
    distance[static_cast<std::size_t>(start)] = 0.0;
    for (VertexIndex x = start; x != kNoVertex; x = parent[static_cast<std::size_t>(x)]) {
      const double here = distance[static_cast<std::size_t>(x)];
      if (here == kInfinity) continue;
      for (ArcIndex a = first[static_cast<std::size_t>(x)];
           a < first[static_cast<std::size_t>(x) + 1]; ++a) {
        const auto y = static_cast<std::size_t>(head[static_cast<std::size_t>(a)]);
        if (here + weights[static_cast<std::size_t>(a)] < distance[y]) {
          distance[y] = here + weights[static_cast<std::size_t>(a)];
          arc_of[y] = a;
        }
      }
    }
  };
  walk(source, forward, cch.upward_weights(), forward_arc);
  walk(target, backward, cch.downward_weights(), backward_arc);
  FullWalkAnswer answer;
  if (s == t) {
    answer.distance = 0.0;
    return answer;
  }
  std::vector<char> above_target(n, 0);
  for (VertexIndex y = target; y != kNoVertex; y = parent[static_cast<std::size_t>(y)])
    above_target[static_cast<std::size_t>(y)] = 1;
  VertexIndex meeting = kNoVertex;
  for (VertexIndex x = source; x != kNoVertex; x = parent[static_cast<std::size_t>(x)]) {
    const auto r = static_cast<std::size_t>(x);
    if (above_target[r] && forward[r] + backward[r] < answer.distance) {
      answer.distance = forward[r] + backward[r];
      meeting = x;
    }
  }
  if (meeting == kNoVertex) return answer;
  const auto lower_end = [&](ArcIndex arc) {
    return static_cast<VertexIndex>(std::upper_bound(first.begin(), first.end(), arc) -
                                    first.begin() - 1);
  };
  const auto arc_between = [&](VertexIndex lower, VertexIndex higher) {
    for (ArcIndex a = first[static_cast<std::size_t>(lower)];
         a < first[static_cast<std::size_t>(lower) + 1]; ++a)
      if (head[static_cast<std::size_t>(a)] == higher) return a;
    return kNoArc;
  };
  // A shortcut through middle m stands for m's arcs to both of its ends, in travel order.
  const std::function<void(ArcIndex, bool)> unpack = [&](ArcIndex arc, bool upward) {
    const std::int32_t via =
        (upward ? cch.upward_vias() : cch.downward_vias())[static_cast<std::size_t>(arc)];
    if (via >= 0) {
      answer.path.push_back(via);
      return;
    }
    const VertexIndex middle = -2 - via;
    const ArcIndex to_lower = arc_between(middle, lower_end(arc));
    const ArcIndex to_higher = arc_between(middle, head[static_cast<std::size_t>(arc)]);
    unpack(upward ? to_lower : to_higher, false);
    unpack(upward ? to_higher : to_lower, true);
  };
  std::vector<ArcIndex> up_arcs, down_arcs;
  for (VertexIndex x = meeting; x != source;) {
    up_arcs.push_back(forward_arc[static_cast<std::size_t>(x)]);
    x = lower_end(up_arcs.back());
  }
  for (VertexIndex x = meeting; x != target;) {
    down_arcs.push_back(backward_arc[static_cast<std::size_t>(x)]);
    x = lower_end(down_arcs.back());
  }
  std::reverse(up_arcs.begin(), up_arcs.end());
  for (ArcIndex arc : up_arcs) unpack(arc, true);
  for (ArcIndex arc : down_arcs) unpack(arc, false);
  return answer;
}

// A road-like network: a grid with holes, one-way streets, and costs from 0 to max_cost (with
// max_cost 2 most routes tie, and zero-cost streets chain into zero-cost detours).
EdgeTable street_grid(int rows, int cols, int max_cost, unsigned seed) {
  std::mt19937 rng(seed);
  EdgeTable table;
  table.with_reverse = true;
  const auto id = [&](int r, int c) { return static_cast<std::int64_t>(r) * cols + c + 1; };
  const auto street = [&](std::int64_t from, std::int64_t to) {
    if (rng() % 10 == 0) return;  // a hole
    const auto cost = [&] { return static_cast<double>(rng() % (max_cost + 1)); };
    const double there = cost();
    const double back = cost();
    switch (rng() % 8) {
      case 0:
        table.add(from, to, there, -1);
        break;
      case 1:
        table.add(from, to, -1, back);
        break;
      default:
        table.add(from, to, there, back);
    }
  };
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) {
      if (c + 1 < cols) street(id(r, c), id(r, c + 1));
      if (r + 1 < rows) street(id(r, c), id(r + 1, c));
    }
  return table;
}

// A hierarchy to test on: a graph and its contraction order.
struct HierarchyCase {
  std::string what;
  Graph graph;
  std::vector<VertexIndex> order;
};

// A street grid's order by its coordinates (holes may leave corner vertices out: each vertex's
// coordinates by its id).
std::vector<VertexIndex> street_order(const Graph& g, int rows, int cols) {
  std::vector<double> x, y;
  grid_coordinates(rows, cols, x, y);
  std::vector<double> gx(static_cast<std::size_t>(g.vertex_count())), gy(gx.size());
  for (VertexIndex v = 0; v < g.vertex_count(); ++v) {
    const auto cell = static_cast<std::size_t>(g.vertices.id(v) - 1);
    gx[static_cast<std::size_t>(v)] = x[cell];
    gy[static_cast<std::size_t>(v)] = y[cell];
  }
  return cch_order(g, gx.data(), gy.data());
}

// A random graph of `vertices` in `components` parts with zero weights (even seeds), real weights
// (one seed in four), many ties (max weight 2, one in three), under nested dissection or an
// arbitrary order.
HierarchyCase random_case(unsigned seed, int vertices, int components, bool arbitrary_order) {
  RandomGraphSpec spec;
  spec.vertices = vertices;
  spec.edges = spec.vertices * static_cast<int>(1 + seed % 3);
  spec.integer_weights = seed % 4 != 1;
  spec.zero_weights = seed % 2 == 0;
  spec.max_weight = seed % 3 == 0 ? 2 : 100;
  spec.components = components;
  EdgeTable t = testing::random_edges(spec, seed);
  Graph g = build_graph(t.view(), seed % 2 == 1);
  std::vector<VertexIndex> order =
      arbitrary_order ? random_order(g.vertex_count(), seed) : cch_order(g);
  return {testing::describe(spec, seed) + (arbitrary_order ? " random order" : ""), std::move(g),
          std::move(order)};
}

// The pruned, interleaved search gives exactly what the two whole walks gave: the same distance
// and the same path arc for arc (zero-cost ties, unreachable targets and s == t included), which
// is Dijkstra's distance; and the workspace is left as the next query expects, whether its arrays
// are kept filled (after a sweep) or primed per walk.
TEST(Cch, PrunedSearchAnswersAsTheWholeWalks) {
  std::vector<HierarchyCase> cases;
  for (unsigned seed = 1; seed <= 8; ++seed) {
    const int rows = 12 + static_cast<int>(seed % 3) * 7,
              cols = 15 + static_cast<int>(seed % 4) * 5;
    EdgeTable streets = street_grid(rows, cols, seed % 2 == 0 ? 2 : 50, seed);
    for (bool directed : {true, false}) {
      Graph g = build_graph(streets.view(), directed);
      std::vector<VertexIndex> order = street_order(g, rows, cols);
      cases.push_back(
          {"streets seed " + std::to_string(seed) + (directed ? " directed" : " undirected"),
           std::move(g), std::move(order)});
    }
  }
  for (unsigned seed = 1; seed <= 12; ++seed)
    cases.push_back(random_case(seed, 40 + static_cast<int>(seed * 41 % 300),
                                1 + static_cast<int>(seed % 3), seed % 4 == 0));
  for (HierarchyCase& c : cases) {
    const Graph& g = c.graph;
    const VertexIndex n = g.vertex_count();
    const bool exact = g.integer_weights;
    const std::vector<VertexIndex> tails = arc_tails(g.forward);
    Cch cch(g, std::move(c.order));
    cch.customize(g);
    CchWorkspace workspace;
    std::vector<double> sweep(static_cast<std::size_t>(n));
    std::mt19937 rng(static_cast<unsigned>(n));
    for (int round = 0; round < 12; ++round) {
      const auto s = static_cast<VertexIndex>(rng() % static_cast<unsigned>(n));
      const std::vector<double> want = reference_dijkstra(g.forward, s);
      // Every other round the forward array is kept filled from a sweep on: each query must then
      // put its chain back to +infinity, or the next sweep is wrong.
      if (round % 2 == 0) cch.one_to_all(s, sweep.data(), workspace);
      std::vector<VertexIndex> targets = {s};
      for (int k = 0; k < 24; ++k)
        targets.push_back(static_cast<VertexIndex>(rng() % static_cast<unsigned>(n)));
      for (VertexIndex t : targets) {
        const std::string where = c.what + ": " + std::to_string(s) + " -> " + std::to_string(t);
        const FullWalkAnswer whole = full_walk_answer(cch, s, t);
        const double got = cch.distance(s, t, workspace);
        ASSERT_EQ(got, whole.distance) << where;
        ASSERT_TRUE(close_enough(got, want[static_cast<std::size_t>(t)], exact))
            << where << ": got " << got << ", Dijkstra " << want[static_cast<std::size_t>(t)];
        const std::vector<ArcIndex> path = cch.path(s, t, workspace);
        ASSERT_EQ(path, whole.path) << where;
        ASSERT_TRUE(valid_path(g, tails, path, s, t, want[static_cast<std::size_t>(t)], exact))
            << where;
      }
      cch.one_to_all(s, sweep.data(), workspace);
      ASSERT_TRUE(exact ? testing::same_distances(sweep.data(), want)
                        : testing::near_distances(sweep.data(), want, kRealTolerance))
          << c.what << ": sweep from " << s << " after the queries";
    }
  }
}

// New weights on the same rows: the same Cch customized again answers for the new weights, and
// going back to the first weights gives the first answers again.
TEST(Cch, RecustomizationFollowsChangedWeights) {
  for (unsigned seed = 1; seed <= 8; ++seed) {
    RandomGraphSpec spec;
    spec.vertices = 150;
    spec.edges = 450;
    spec.components = 1 + static_cast<int>(seed % 2);
    EdgeTable first = testing::random_edges(spec, seed);
    EdgeTable second = first;
    std::mt19937 rng(seed + 1000);
    const bool real = seed % 2 == 0;
    auto new_weight = [&]() {
      return real ? std::uniform_real_distribution<double>(0.0, 50.0)(rng)
                  : static_cast<double>(rng() % 4);  // zero-cost arcs and many ties
    };
    // A usable direction stays usable (same topology), an unusable one stays unusable.
    for (auto& cost : second.costs)
      if (cost >= 0) cost = new_weight();
    for (auto& cost : second.reverse_costs)
      if (cost >= 0) cost = new_weight();
    for (bool directed : {true, false}) {
      const std::string what = testing::describe(spec, seed) + (directed ? " directed" : "");
      Graph g1 = build_graph(first.view(), directed);
      Graph g2 = build_graph(second.view(), directed);
      ASSERT_EQ(g1.arc_count(), g2.arc_count());
      Cch cch(g1, cch_order(g1));
      cch.customize(g1);
      expect_matches_dijkstra(g1, cch, seed, what + " first weights");
      cch.customize(g2);
      expect_matches_dijkstra(g2, cch, seed, what + " second weights");
      cch.customize(g1);
      expect_matches_dijkstra(g1, cch, seed, what + " first weights again");
      if (HasFatalFailure()) return;
    }
  }
}

// A kept topology: the image of one graph's hierarchy, read back for the same topology with other
// costs, customizes to exactly what a hierarchy built anew for those costs holds; another
// topology is refused.
TEST(Cch, TopologyImageCustomizesLikeANewHierarchy) {
  for (unsigned seed = 1; seed <= 6; ++seed) {
    RandomGraphSpec spec;
    spec.vertices = 200;
    spec.edges = 700;
    spec.components = 1 + static_cast<int>(seed % 2);
    spec.integer_weights = seed % 2 == 0;
    EdgeTable first = testing::random_edges(spec, seed);
    EdgeTable second = first;
    std::mt19937 rng(seed + 77);
    for (auto& cost : second.costs)
      if (cost >= 0) cost = static_cast<double>(rng() % 50);
    const bool directed = seed % 3 != 0;
    Graph g1 = build_graph(first.view(), directed);
    Graph g2 = build_graph(second.view(), directed);
    std::vector<VertexIndex> order = cch_order(g1);
    Cch original(g1, order);
    original.customize(g1);
    std::vector<std::uint64_t> image((original.topology_image_bytes() + 7) / 8);
    original.write_topology_image(image.data());
    Cch copied = Cch::from_topology_image(image.data(), original.topology_image_bytes(), g2);
    EXPECT_FALSE(copied.customized());
    copied.customize(g2);
    Cch fresh(g2, order);
    fresh.customize(g2);
    ASSERT_EQ(copied.arc_count(), fresh.arc_count());
    ASSERT_EQ(copied.elimination_tree_height(), fresh.elimination_tree_height());
    for (ArcIndex a = 0; a < fresh.arc_count(); ++a) {
      ASSERT_EQ(copied.arc_head()[static_cast<std::size_t>(a)],
                fresh.arc_head()[static_cast<std::size_t>(a)]);
      ASSERT_EQ(copied.upward_weights()[static_cast<std::size_t>(a)],
                fresh.upward_weights()[static_cast<std::size_t>(a)]);
      ASSERT_EQ(copied.downward_weights()[static_cast<std::size_t>(a)],
                fresh.downward_weights()[static_cast<std::size_t>(a)]);
    }
    expect_matches_dijkstra(g2, copied, seed, testing::describe(spec, seed) + " copied topology");
    // A graph with fewer arcs still lies on the hierarchy (a supergraph's hierarchy answers for
    // it); one with an arc between two parts of the graph, where the hierarchy has none, is
    // refused, as is an image of the wrong size.
    EdgeTable fewer = first;
    for (std::size_t e = 0; e < fewer.costs.size(); ++e)
      if (fewer.costs[e] >= 0 && fewer.sources[e] != fewer.targets[e]) {
        fewer.costs[e] = -1;
        fewer.reverse_costs[e] = -1;
        break;
      }
    Graph g3 = build_graph(fewer.view(), directed);
    Cch subset = Cch::from_topology_image(image.data(), original.topology_image_bytes(), g3);
    subset.customize(g3);
    expect_matches_dijkstra(g3, subset, seed, testing::describe(spec, seed) + " fewer arcs");
    const Graph undirected = build_graph(first.view(), false);
    const std::vector<double> from_first = reference_dijkstra(undirected.forward, 0);
    for (VertexIndex v = 0; v < undirected.vertex_count(); ++v) {
      if (from_first[static_cast<std::size_t>(v)] != kInfinity) continue;
      EdgeTable bridged = first;
      bridged.add(undirected.vertices.id(0), undirected.vertices.id(v), 1.0);
      Graph g4 = build_graph(bridged.view(), directed);
      EXPECT_THROW(Cch::from_topology_image(image.data(), original.topology_image_bytes(), g4),
                   RoutingError);
      break;
    }
    EXPECT_THROW(Cch::from_topology_image(image.data(), original.topology_image_bytes() - 8, g2),
                 RoutingError);
    if (HasFatalFailure()) return;
  }
}

TEST(Cch, SmallAndDegenerateGraphs) {
  // No vertex at all.
  Graph empty = build_graph(EdgeTable().view(), true);
  Cch none(empty, cch_order(empty));
  none.customize(empty);
  EXPECT_EQ(none.arc_count(), 0);

  // One vertex with a self loop: no CCH arc, distance 0 to itself, an empty path.
  EdgeTable loop;
  loop.add(7, 7, 3);
  Graph one = build_graph(loop.view(), true);
  Cch single(one, cch_order(one));
  single.customize(one);
  EXPECT_EQ(single.arc_count(), 0);
  EXPECT_EQ(single.distance(0, 0), 0.0);
  EXPECT_TRUE(single.path(0, 0).empty());
  double d = -1;
  single.one_to_all(0, &d);
  EXPECT_EQ(d, 0.0);

  // Many equal-length routes racing to one vertex; and a pure one-way chain.
  Graph race = build_graph(testing::counterexample_edges(40).view(), true);
  Cch race_cch(race, cch_order(race));
  race_cch.customize(race);
  expect_matches_dijkstra(race, race_cch, 1, "counterexample");
  EdgeTable chain;
  for (int i = 0; i < 100; ++i) chain.add(i, i + 1, i % 3);
  Graph chain_graph = build_graph(chain.view(), true);
  Cch chain_cch(chain_graph, cch_order(chain_graph));
  chain_cch.customize(chain_graph);
  expect_matches_dijkstra(chain_graph, chain_cch, 2, "chain");
  EXPECT_EQ(chain_cch.distance(100, 0), kInfinity);
  EXPECT_TRUE(chain_cch.path(100, 0).empty());
}

TEST(Cch, RefusesMisuse) {
  RandomGraphSpec spec;
  EdgeTable t = testing::random_edges(spec, 4);
  Graph g = build_graph(t.view(), true);
  Cch cch(g, cch_order(g));
  EXPECT_THROW(cch.distance(0, 1), RoutingError);  // not customized yet
  cch.customize(g);
  EXPECT_THROW(cch.distance(0, g.vertex_count()), RoutingError);
  EXPECT_THROW(cch.path(-1, 0), RoutingError);

  // Another topology: refused rather than indexing arcs that are not there.
  Graph undirected = build_graph(t.view(), false);
  EXPECT_THROW(cch.customize(undirected), RoutingError);
  EdgeTable other = t;
  std::swap(other.targets[0], other.targets[1]);
  Graph rewired = build_graph(other.view(), true);
  const bool same_heads = std::equal(rewired.forward.heads.begin(), rewired.forward.heads.end(),
                                     g.forward.heads.begin(), g.forward.heads.end());
  if (!same_heads) {
    EXPECT_THROW(cch.customize(rewired), RoutingError);
  }

  std::vector<VertexIndex> repeated(static_cast<std::size_t>(g.vertex_count()), 0);
  EXPECT_THROW(Cch(g, repeated), RoutingError);
  EXPECT_THROW(Cch(g, std::vector<VertexIndex>{0}), RoutingError);
}

TEST(Cch, CancelStopsOrderingBuildingAndCustomizing) {
  RandomGraphSpec spec;
  spec.vertices = 400;
  spec.edges = 1200;
  EdgeTable t = testing::random_edges(spec, 9);
  Graph g = build_graph(t.view(), true);
  const CancelToken cancelled([] { return true; });
  EXPECT_THROW(cch_order(g, nullptr, nullptr, cancelled), Cancelled);
  std::vector<VertexIndex> order = cch_order(g);
  EXPECT_THROW(Cch(g, order, cancelled), Cancelled);
  Cch cch(g, order);
  EXPECT_THROW(cch.customize(g, cancelled), Cancelled);
  EXPECT_FALSE(cch.customized());
  cch.customize(g);
  EXPECT_TRUE(cch.customized());
}

// Customization polls by the work done, not every 1024 vertices: on a random sparse graph the
// hierarchy is dense (1024 vertices: 194k arcs, upward degrees in the hundreds at the top), and a
// random 4096-vertex graph's customization polled 4 times in 9.7 s, so a cancelled call (or the
// GPU service's lane making the index) ran up to 5 s on.
TEST(Cch, CustomizationPollsForCancelByWorkNotByVertices) {
  const int n = 1024;
  std::mt19937_64 rng(1);
  std::uniform_int_distribution<int> vertex(0, n - 1), weight(1, 100);
  EdgeTable t;
  t.with_reverse = false;
  for (int v = 0; v < n; ++v) t.add(v + 1, (v + 1) % n + 1, weight(rng), -1);
  for (int e = 0; e < 3 * n; ++e) t.add(vertex(rng) + 1, vertex(rng) + 1, weight(rng), -1);
  Graph g = build_graph(t.view(), true);
  Cch cch(g, cch_order(g));
  ASSERT_GT(cch.arc_count(), 100000);
  for (int threads : {1, 2}) {
    std::atomic<int> polls{0};
    const CancelToken counting(
        [](const void* count) {
          static_cast<std::atomic<int>*>(const_cast<void*>(count))->fetch_add(1);
          return false;
        },
        &polls);
    cch.customize(g, counting, threads);
    EXPECT_GE(polls.load(), 16) << threads << " threads";
    // And a cancel that comes mid-way stops it.
    std::atomic<int> countdown{8};
    const CancelToken later(
        [](const void* left) {
          return static_cast<std::atomic<int>*>(const_cast<void*>(left))->fetch_sub(1) <= 0;
        },
        &countdown);
    EXPECT_THROW(cch.customize(g, later, threads), Cancelled) << threads << " threads";
  }
}

// The customized arrays (arc weights and vias in both directions, with the topology) as the
// hierarchy's image holds them, its header (which holds timings) left out. The arrays fill the
// image's end, each 8-byte aligned: 3 x n and n + 1 indices, then per arc a head, two weights and
// two vias, then one index per input arc.
std::vector<unsigned char> customized_arrays(const Cch& cch, const Graph& g) {
  std::vector<std::uint64_t> image((cch.image_bytes() + 7) / 8);
  cch.write_image(image.data());
  const auto aligned = [](std::size_t bytes) { return (bytes + 7) / 8 * 8; };
  const auto n = static_cast<std::size_t>(cch.vertex_count());
  const auto m = static_cast<std::size_t>(cch.arc_count());
  const std::size_t arrays = 3 * aligned(4 * n) + aligned(4 * (n + 1)) + 3 * aligned(4 * m) +
                             2 * 8 * m + aligned(4 * static_cast<std::size_t>(g.arc_count()));
  const auto* bytes = reinterpret_cast<const unsigned char*>(image.data());
  return std::vector<unsigned char>(bytes + cch.image_bytes() - arrays, bytes + cch.image_bytes());
}

// Customizing on several threads (disjoint elimination-tree subtrees, private copies of the top's
// arcs merged, then the top on one thread) gives the same bytes as one thread: weights and vias,
// ties included. Random graphs with few distinct weights and zero-cost arcs (many ties), parallel
// arcs, self loops and disconnected parts, under nested dissection and arbitrary orders; a grid
// ordered by its coordinates; then the same hierarchy customized again with other weights.
TEST(Cch, ParallelCustomizationIsBitIdentical) {
  int parallel_runs = 0;
  for (unsigned seed = 1; seed <= 24; ++seed) {
    RandomGraphSpec spec;
    spec.vertices = 40 + static_cast<int>(seed * 67 % 400);
    spec.edges = spec.vertices * static_cast<int>(1 + seed % 4);
    spec.integer_weights = seed % 4 != 1;
    spec.zero_weights = seed % 3 == 0;
    spec.max_weight = seed % 2 == 0 ? 2 : 50;
    spec.components = 1 + static_cast<int>(seed % 4);
    spec.sparse_ids = seed % 5 == 0;
    EdgeTable t = testing::random_edges(spec, seed);
    for (bool directed : {true, false}) {
      const std::string what =
          testing::describe(spec, seed) + (directed ? " directed" : " undirected");
      Graph g = build_graph(t.view(), directed);
      Cch cch(g, seed % 5 == 0 ? random_order(g.vertex_count(), seed) : cch_order(g));
      cch.customize(g, CancelToken(), 1);
      EXPECT_EQ(cch.customization_split().threads, 1);
      const std::vector<unsigned char> one_thread = customized_arrays(cch, g);
      for (int threads : {2, 3, 5}) {
        cch.customize(g, CancelToken(), threads);
        ASSERT_EQ(customized_arrays(cch, g), one_thread) << what << ", " << threads << " threads";
        const Cch::CustomizationSplit& split = cch.customization_split();
        EXPECT_EQ(split.threads, threads);
        EXPECT_LE(split.top_arcs, cch.arc_count());
        EXPECT_LE(split.top_ranks, cch.vertex_count());
        if (split.subtrees > 1) ++parallel_runs;
      }
      // A fresh hierarchy straight on 2 threads, and its answers.
      Cch fresh(g, seed % 5 == 0 ? random_order(g.vertex_count(), seed) : cch_order(g));
      fresh.customize(g, CancelToken(), 2);
      ASSERT_EQ(customized_arrays(fresh, g), one_thread) << what << ", fresh";
      if (seed % 4 == 0) expect_matches_dijkstra(g, fresh, seed, what + ", 2 threads");
      if (HasFatalFailure()) return;
    }
  }
  EXPECT_GT(parallel_runs, 100);

  // Nothing to split: no vertex, one vertex, a chain (an elimination tree that is one path).
  Graph empty = build_graph(EdgeTable().view(), true);
  Cch none(empty, cch_order(empty));
  none.customize(empty, CancelToken(), 3);
  EXPECT_TRUE(none.customized());
  EdgeTable loop;
  loop.add(7, 7, 3);
  Graph one = build_graph(loop.view(), true);
  Cch single(one, cch_order(one));
  single.customize(one, CancelToken(), 2);
  EXPECT_EQ(single.distance(0, 0), 0.0);
  EdgeTable chain;
  for (int i = 0; i < 60; ++i) chain.add(i, i + 1, i % 3);
  Graph chain_graph = build_graph(chain.view(), true);
  std::vector<VertexIndex> along(static_cast<std::size_t>(chain_graph.vertex_count()));
  std::iota(along.begin(), along.end(), 0);
  Cch chain_cch(chain_graph, along);
  chain_cch.customize(chain_graph, CancelToken(), 1);
  const std::vector<unsigned char> chain_one = customized_arrays(chain_cch, chain_graph);
  chain_cch.customize(chain_graph, CancelToken(), 2);
  EXPECT_EQ(customized_arrays(chain_cch, chain_graph), chain_one);
  expect_matches_dijkstra(chain_graph, chain_cch, 2, "chain, 2 threads");

  // A grid (road-like) by its coordinates, and new weights on the same hierarchy: customized on
  // 2 threads after 1 (and back), the same bytes as a hierarchy customized once on 1 thread.
  const int rows = 40, cols = 50;
  std::vector<double> x, y;
  grid_coordinates(rows, cols, x, y);
  EdgeTable first = testing::grid_edges(rows, cols, 4, 1);
  EdgeTable second = first;
  std::mt19937 rng(5);
  for (auto& cost : second.costs) cost = static_cast<double>(rng() % 3);
  for (auto& cost : second.reverse_costs) cost = static_cast<double>(rng() % 3);
  for (bool directed : {true, false}) {
    Graph g1 = build_graph(first.view(), directed);
    Graph g2 = build_graph(second.view(), directed);
    const std::vector<VertexIndex> order = cch_order(g1, x.data(), y.data());
    Cch reference1(g1, order), reference2(g2, order);
    reference1.customize(g1, CancelToken(), 1);
    reference2.customize(g2, CancelToken(), 1);
    Cch cch(g1, order);
    cch.customize(g1, CancelToken(), 2);
    EXPECT_EQ(customized_arrays(cch, g1), customized_arrays(reference1, g1));
    cch.customize(g2, CancelToken(), 2);
    EXPECT_EQ(customized_arrays(cch, g2), customized_arrays(reference2, g2));
    expect_matches_dijkstra(g2, cch, 9, directed ? "grid directed" : "grid undirected");
    cch.customize(g1, CancelToken(), 1);
    cch.customize(g1, CancelToken(), 4);
    EXPECT_EQ(customized_arrays(cch, g1), customized_arrays(reference1, g1));
    // The top (ranks above every subtree) stays small on a well-ordered grid.
    // The estimated time (the top's work, then the busiest thread's, as a share of one thread's)
    // well under one thread's, though a grid's top separators hold much of its work.
    const Cch::CustomizationSplit& split = cch.customization_split();
    EXPECT_GE(split.subtrees, 4);
    EXPECT_LT(split.top_work_share + (1 - split.top_work_share) / 4 * split.busiest_thread, 0.6);
  }
}

// From kCchParallelRanks ranks on, customize() takes every core unasked; the result is the same.
TEST(Cch, LargeHierarchyDefaultsToEveryCore) {
  const int rows = 200, cols = 260;
  ASSERT_GE(rows * cols, kCchParallelRanks);
  std::vector<double> x, y;
  grid_coordinates(rows, cols, x, y);
  Graph g = build_graph(testing::grid_edges(rows, cols, 3, 2).view(), true);
  Cch cch(g, cch_order(g, x.data(), y.data()));
  cch.customize(g, CancelToken(), 1);
  const std::vector<unsigned char> one_thread = customized_arrays(cch, g);
  cch.customize(g);
  EXPECT_EQ(cch.customization_split().threads, resolve_thread_count(0));
  EXPECT_EQ(customized_arrays(cch, g), one_thread);
  cch.customize(g, CancelToken(), 2);
  EXPECT_EQ(customized_arrays(cch, g), one_thread);
  const Cch::CustomizationSplit& split = cch.customization_split();
  EXPECT_GE(split.subtrees, 2);
  EXPECT_LT(split.top_work_share + (1 - split.top_work_share) / 2 * split.busiest_thread, 0.7);
}

TEST(Cch, CancelStopsParallelCustomization) {
  RandomGraphSpec spec;
  spec.vertices = 400;
  spec.edges = 1200;
  EdgeTable t = testing::random_edges(spec, 9);
  Graph g = build_graph(t.view(), true);
  Cch cch(g, cch_order(g));
  EXPECT_THROW(cch.customize(g, CancelToken([] { return true; }), 2), Cancelled);
  EXPECT_FALSE(cch.customized());
  cch.customize(g, CancelToken(), 2);
  EXPECT_TRUE(cch.customized());
  expect_matches_dijkstra(g, cch, 4, "after a cancelled customization");
}

// The hierarchies the sweep tests run on: street grids ordered by their coordinates (zero-cost
// streets and ties with max_cost 2, one-way streets, holes), random graphs with zero weights, real
// weights, several components (a forest of elimination trees, unreachable vertices) under nested
// dissection and arbitrary orders (subtrees whose ranks are no range), a chain, and the smallest.
std::vector<HierarchyCase> sweep_cases() {
  std::vector<HierarchyCase> cases;
  for (unsigned seed = 1; seed <= 4; ++seed) {
    const int rows = 20 + static_cast<int>(seed) * 5, cols = 30 + static_cast<int>(seed % 2) * 9;
    EdgeTable streets = street_grid(rows, cols, seed % 2 == 0 ? 2 : 40, seed);
    Graph g = build_graph(streets.view(), seed != 3);
    std::vector<VertexIndex> order = street_order(g, rows, cols);
    cases.push_back({"streets seed " + std::to_string(seed), std::move(g), std::move(order)});
  }
  for (unsigned seed = 1; seed <= 8; ++seed)
    cases.push_back(random_case(seed, 50 + static_cast<int>(seed * 53 % 400),
                                1 + static_cast<int>(seed % 4), seed % 3 == 0));
  EdgeTable chain;
  for (int i = 0; i < 60; ++i) chain.add(i, i + 1, i % 3);
  Graph chain_graph = build_graph(chain.view(), true);
  std::vector<VertexIndex> along(static_cast<std::size_t>(chain_graph.vertex_count()));
  std::iota(along.begin(), along.end(), 0);
  cases.push_back({"chain", std::move(chain_graph), std::move(along)});
  EdgeTable loop;
  loop.add(7, 7, 3);
  Graph one = build_graph(loop.view(), true);
  std::vector<VertexIndex> single = cch_order(one);
  cases.push_back({"one vertex", std::move(one), std::move(single)});
  return cases;
}

bool same_bits(const double* a, const double* b, std::size_t count) {
  return std::memcmp(a, b, count * sizeof(double)) == 0;
}

// many_to_all against one_to_all, bit for bit (signed zeros and +infinity included): every lane
// count 1 .. 8 (3, 5, 6, 7 leave lanes unused), repeated sources, 1, 2, 3 and 8 threads (the sweep
// plans: a top, then subtrees as ranges or lists), whole rows and target columns (repeated
// targets), on an owned hierarchy and a view of its image, one workspace for every call (its
// lanes grow from 1 to 8; one-to-one queries and one_to_all between sweeps).
TEST(CchSweep, LanesAndThreadsAreBitIdenticalToOneToAll) {
  int range_subtrees = 0, listed_subtrees = 0, tops = 0;
  for (HierarchyCase& c : sweep_cases()) {
    const Graph& g = c.graph;
    const VertexIndex n = g.vertex_count();
    const auto width = static_cast<std::size_t>(n);
    Cch original(g, c.order);
    original.customize(g);
    std::vector<std::uint64_t> storage((original.image_bytes() + 7) / 8);
    original.write_image(storage.data());
    const Cch view = Cch::view_image(storage.data(), original.image_bytes(), g);
    // The reference rows, one per vertex where there are few, else a spread of them.
    std::vector<VertexIndex> sources;
    std::mt19937 rng(static_cast<unsigned>(n) + 5);
    for (int k = 0; k < 24; ++k)
      sources.push_back(static_cast<VertexIndex>(rng() % static_cast<unsigned>(n)));
    sources[3] = sources[2];  // repeated within a group
    sources[9] = sources[2];
    std::vector<double> reference(sources.size() * width);
    CchWorkspace workspace;
    for (std::size_t i = 0; i < sources.size(); ++i)
      original.one_to_all(sources[i], reference.data() + i * width, workspace);
    std::vector<VertexIndex> targets;
    for (int k = 0; k < 40; ++k)
      targets.push_back(static_cast<VertexIndex>(rng() % static_cast<unsigned>(n)));
    targets.push_back(targets.front());

    for (const Cch* cch : std::initializer_list<const Cch*>{&original, &view}) {
      const std::string where = c.what + (cch == &view ? ", image view" : ", owned");
      for (int threads : {1, 2, 3, 8}) {
        const Cch::SweepSplit split = cch->sweep_split(threads);
        if (threads == 2 && cch == &original) {
          range_subtrees += split.subtrees - split.listed_subtrees;
          listed_subtrees += split.listed_subtrees;
          tops += split.top_ranks > 0;
        }
        for (int count = 1; count <= Cch::kMaxSweepLanes; ++count) {
          Cch::SweepOptions options;
          options.threads = threads;
          for (std::size_t first = 0; first + static_cast<std::size_t>(count) <= sources.size();
               first += static_cast<std::size_t>(count) + 5) {
            std::vector<double> rows(static_cast<std::size_t>(count) * width, -1.0);
            std::vector<double*> row_of;
            for (int lane = 0; lane < count; ++lane)
              row_of.push_back(rows.data() + static_cast<std::size_t>(lane) * width);
            cch->many_to_all(sources.data() + first, count, row_of.data(), workspace, options);
            for (int lane = 0; lane < count; ++lane)
              ASSERT_TRUE(same_bits(
                  row_of[static_cast<std::size_t>(lane)],
                  reference.data() + (first + static_cast<std::size_t>(lane)) * width, width))
                  << where << ": " << threads << " threads, " << count << " lanes, lane " << lane
                  << " (source " << sources[first + static_cast<std::size_t>(lane)] << ")";
            // Columns of the targets alone.
            Cch::SweepOptions columns = options;
            columns.targets = targets.data();
            columns.target_count = static_cast<int>(targets.size());
            std::vector<double> cells(static_cast<std::size_t>(count) * targets.size(), -1.0);
            for (int lane = 0; lane < count; ++lane)
              row_of[static_cast<std::size_t>(lane)] =
                  cells.data() + static_cast<std::size_t>(lane) * targets.size();
            cch->many_to_all(sources.data() + first, count, row_of.data(), workspace, columns);
            for (int lane = 0; lane < count; ++lane)
              for (std::size_t j = 0; j < targets.size(); ++j) {
                const double want = reference[(first + static_cast<std::size_t>(lane)) * width +
                                              static_cast<std::size_t>(targets[j])];
                ASSERT_TRUE(same_bits(&cells[static_cast<std::size_t>(lane) * targets.size() + j],
                                      &want, 1))
                    << where << ": " << threads << " threads, " << count << " lanes, target "
                    << targets[j];
              }
          }
          // The workspace serves other queries between sweeps as before.
          const VertexIndex s = sources[static_cast<std::size_t>(count)];
          const VertexIndex t = targets[static_cast<std::size_t>(count)];
          // (exact for whole-number weights; the one-to-one walk sums fractions in another order)
          ASSERT_TRUE(close_enough(
              cch->distance(s, t, workspace),
              reference[static_cast<std::size_t>(count) * width + static_cast<std::size_t>(t)],
              g.integer_weights))
              << where;
          std::vector<double> row(width);
          cch->one_to_all(s, row.data(), workspace);
          ASSERT_TRUE(same_bits(row.data(),
                                reference.data() + static_cast<std::size_t>(count) * width, width))
              << where;
        }
      }
    }
  }
  // The plans took both kinds of subtrees, and split off a top.
  EXPECT_GT(range_subtrees, 20);
  EXPECT_GT(listed_subtrees, 0);
  EXPECT_GT(tops, 3);
}

// Zero-cost arcs, some of them -0.0 (equal to 0.0 under the minimum; a sum from the source's 0.0
// is never -0.0, and the sweep takes one_to_all's candidates in its order anyway), zero-cost
// cycles, all sources in one sweep with repeats, and an unreachable part: +infinity in every lane.
TEST(CchSweep, SignedZerosAndUnreachableVertices) {
  EdgeTable t;
  t.with_reverse = false;
  t.add(1, 2, 0.0);
  t.add(2, 3, -0.0);
  t.add(1, 3, 0.0);
  t.add(3, 4, 2.0);
  t.add(4, 2, -0.0);
  t.add(5, 6, 1.0);  // another component
  Graph g = build_graph(t.view(), true);
  const auto n = static_cast<std::size_t>(g.vertex_count());
  for (const std::vector<VertexIndex>& order :
       {cch_order(g), random_order(g.vertex_count(), 3), random_order(g.vertex_count(), 4)}) {
    Cch cch(g, order);
    cch.customize(g);
    CchWorkspace workspace;
    std::vector<VertexIndex> sources;
    for (VertexIndex v = 0; v < g.vertex_count(); ++v) sources.push_back(v);
    sources.push_back(0);
    sources.push_back(4);
    std::vector<double> want(sources.size() * n), got(want.size());
    std::vector<double*> rows;
    for (std::size_t i = 0; i < sources.size(); ++i) {
      cch.one_to_all(sources[i], want.data() + i * n, workspace);
      rows.push_back(got.data() + i * n);
    }
    for (int threads : {1, 2}) {
      Cch::SweepOptions options;
      options.threads = threads;
      cch.many_to_all(sources.data(), static_cast<int>(sources.size()), rows.data(), workspace,
                      options);
      EXPECT_TRUE(same_bits(got.data(), want.data(), want.size())) << threads << " threads";
    }
    const std::size_t other = static_cast<std::size_t>(g.vertices.find(5));
    EXPECT_EQ(got[other], kInfinity);  // from vertex index 0 (id 1)
  }
}

// One hierarchy, several threads of the process sweeping at once on their own workspaces, each
// sweep on 2 or 3 threads: the plans are made once each while others wait for them, and every row
// is one_to_all's. A moved hierarchy keeps its plans and answers the same.
TEST(CchSweep, ConcurrentSweepsShareThePlans) {
  EdgeTable t = street_grid(40, 50, 30, 5);
  Graph g = build_graph(t.view(), true);
  Cch built(g, cch_order(g));
  built.customize(g);
  const auto n = static_cast<std::size_t>(g.vertex_count());
  std::vector<VertexIndex> sources;
  for (VertexIndex s = 0; s < 16; ++s) sources.push_back(s * 97 % g.vertex_count());
  std::vector<double> want(sources.size() * n);
  CchWorkspace workspace;
  for (std::size_t i = 0; i < sources.size(); ++i)
    built.one_to_all(sources[i], want.data() + i * n, workspace);
  for (int round = 0; round < 2; ++round) {
    Cch cch = std::move(built);  // the second round: the plans made in the first moved along
    const Cch& shared = cch;
    std::atomic<int> wrong{0};
    std::vector<std::thread> callers;
    for (int caller = 0; caller < 4; ++caller)
      callers.emplace_back([&, caller] {
        CchWorkspace own;
        std::vector<double> rows(sources.size() * n);
        std::vector<double*> row_of;
        for (std::size_t i = 0; i < sources.size(); ++i) row_of.push_back(rows.data() + i * n);
        Cch::SweepOptions options;
        options.threads = 2 + caller % 2;
        for (std::size_t first = 0; first < sources.size(); first += 8)
          shared.many_to_all(sources.data() + first, 8, row_of.data() + first, own, options);
        if (!same_bits(rows.data(), want.data(), want.size())) ++wrong;
      });
    for (std::thread& caller : callers) caller.join();
    EXPECT_EQ(wrong.load(), 0) << "round " << round;
    EXPECT_GT(cch.sweep_split(2).subtrees, 1);
    built = std::move(cch);
  }
}

TEST(CchSweep, RefusesMisuseAndStopsWhenCancelled) {
  EdgeTable t = street_grid(12, 14, 9, 2);
  Graph g = build_graph(t.view(), true);
  Cch cch(g, cch_order(g));
  CchWorkspace workspace;
  const auto n = static_cast<std::size_t>(g.vertex_count());
  std::vector<double> rows(9 * n);
  std::vector<double*> row_of;
  for (int lane = 0; lane < 9; ++lane) row_of.push_back(rows.data() + lane * n);
  std::vector<VertexIndex> sources(9, 0);
  Cch::SweepOptions options;
  EXPECT_THROW(cch.many_to_all(sources.data(), 1, row_of.data(), workspace, options),
               RoutingError);  // not customized
  cch.customize(g);
  EXPECT_THROW(cch.many_to_all(sources.data(), 0, row_of.data(), workspace, options), RoutingError);
  EXPECT_THROW(cch.many_to_all(sources.data(), 9, row_of.data(), workspace, options), RoutingError);
  sources[1] = g.vertex_count();
  EXPECT_THROW(cch.many_to_all(sources.data(), 2, row_of.data(), workspace, options), RoutingError);
  sources[1] = 0;
  const VertexIndex bad_target = -1;
  options.targets = &bad_target;
  options.target_count = 1;
  EXPECT_THROW(cch.many_to_all(sources.data(), 2, row_of.data(), workspace, options), RoutingError);
  options.targets = nullptr;
  for (int threads : {1, 2}) {
    options.threads = threads;
    options.cancel = CancelToken([] { return true; });
    EXPECT_THROW(cch.many_to_all(sources.data(), 4, row_of.data(), workspace, options), Cancelled);
    options.cancel = CancelToken();
    cch.many_to_all(sources.data(), 4, row_of.data(), workspace, options);
    std::vector<double> want(n);
    cch.one_to_all(0, want.data(), workspace);
    EXPECT_TRUE(same_bits(row_of[3], want.data(), n));
  }
}

}  // namespace
}  // namespace gpu_routing
