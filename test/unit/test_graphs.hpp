// Random and structured graphs for the unit tests of every engine, CPU and GPU alike.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "engine/engine.hpp"
#include "base/graph.hpp"

namespace gpu_routing::testing {

// Owns the edge arrays an EdgeArrays view points into.
struct EdgeTable {
  std::vector<std::int64_t> ids, sources, targets;
  std::vector<double> costs, reverse_costs;
  bool with_reverse = false;

  void add(std::int64_t source, std::int64_t target, double cost, double reverse_cost = -1) {
    ids.push_back(static_cast<std::int64_t>(ids.size()) + 1);
    sources.push_back(source);
    targets.push_back(target);
    costs.push_back(cost);
    reverse_costs.push_back(reverse_cost);
  }
  EdgeArrays view() const {
    EdgeArrays e;
    e.count = ids.size();
    e.ids = ids.data();
    e.sources = sources.data();
    e.targets = targets.data();
    e.costs = costs.data();
    e.reverse_costs = with_reverse ? reverse_costs.data() : nullptr;
    return e;
  }
};

struct RandomGraphSpec {
  int vertices = 100;
  int edges = 400;
  bool integer_weights = true;
  int max_weight = 100;  // integer weights 1..max_weight (0 allowed when zero_weights)
  bool zero_weights = false;
  bool parallel_edges = true;  // duplicate some (source, target) pairs
  bool self_loops = true;
  int components = 1;        // vertices split into disconnected parts
  bool with_reverse = true;  // reverse_cost column, some negative (one-way)
  bool sparse_ids = false;   // vertex ids spread over int64 (negative too)
};

inline std::string describe(const RandomGraphSpec& s, unsigned seed) {
  return "seed=" + std::to_string(seed) + " V=" + std::to_string(s.vertices) +
         " E=" + std::to_string(s.edges) + (s.integer_weights ? " int" : " real") +
         (s.zero_weights ? " zeros" : "") + " parts=" + std::to_string(s.components);
}

inline EdgeTable random_edges(const RandomGraphSpec& spec, unsigned seed) {
  std::mt19937_64 rng(seed);
  EdgeTable table;
  table.with_reverse = spec.with_reverse;
  auto vertex_id = [&](int v) -> std::int64_t {
    if (!spec.sparse_ids) return v + 1;
    // Spread and sign-mix while keeping ids distinct.
    return (static_cast<std::int64_t>(v) * 2654435761LL % 1000000007LL) * ((v % 2) ? -977 : 1013) +
           v;
  };
  std::uniform_real_distribution<double> real(0.001, static_cast<double>(spec.max_weight));
  std::uniform_int_distribution<int> integer(spec.zero_weights ? 0 : 1, spec.max_weight);
  auto weight = [&]() {
    return spec.integer_weights ? static_cast<double>(integer(rng)) : real(rng);
  };
  const int parts = std::max(1, spec.components);
  const int per_part = std::max(1, spec.vertices / parts);
  for (int e = 0; e < spec.edges; ++e) {
    int part = static_cast<int>(rng() % static_cast<unsigned>(parts));
    int base = part * per_part;
    int size = (part == parts - 1) ? spec.vertices - base : per_part;
    if (size <= 0) continue;
    int s = base + static_cast<int>(rng() % static_cast<unsigned>(size));
    int t = base + static_cast<int>(rng() % static_cast<unsigned>(size));
    if (!spec.self_loops && s == t) t = base + (t - base + 1) % size;
    double cost = weight();
    double reverse_cost = weight();
    if (rng() % 4 == 0)
      cost = -1;  // one-way the other way
    else if (rng() % 4 == 0)
      reverse_cost = -1;  // one-way
    table.add(vertex_id(s), vertex_id(t), cost, reverse_cost);
    if (spec.parallel_edges && rng() % 10 == 0)
      table.add(vertex_id(s), vertex_id(t), weight(), weight());
  }
  return table;
}

// 2D grid graph rows x cols, 4-neighbour, both directions, integer weights 1..max_weight.
inline EdgeTable grid_edges(int rows, int cols, int max_weight, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> w(1, max_weight);
  EdgeTable table;
  table.with_reverse = true;
  auto id = [&](int r, int c) { return static_cast<std::int64_t>(r) * cols + c + 1; };
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) {
      if (c + 1 < cols) table.add(id(r, c), id(r, c + 1), w(rng), w(rng));
      if (r + 1 < rows) table.add(id(r, c), id(r + 1, c), w(rng), w(rng));
    }
  return table;
}

// Seed 001 section 4.3: vertex 0 reaches 1..n-2 at cost 1; each of those reaches n-1 at a
// different cost (n-1-i), so in the second round n-2 threads race to lower dist[n-1] to 2.
inline EdgeTable counterexample_edges(int n) {
  EdgeTable table;
  for (int i = 1; i <= n - 2; ++i) table.add(0, i, 1.0);
  for (int i = 1; i <= n - 2; ++i) table.add(i, n - 1, static_cast<double>(n - 1 - i));
  return table;
}

// Every distance of `got` equals `want` exactly (both +inf for unreachable).
inline ::testing::AssertionResult same_distances(const double* got,
                                                 const std::vector<double>& want) {
  for (std::size_t v = 0; v < want.size(); ++v) {
    if (!(got[v] == want[v]))
      return ::testing::AssertionFailure()
             << "vertex index " << v << ": got " << got[v] << ", want " << want[v];
  }
  return ::testing::AssertionSuccess();
}

// Every distance within a relative tolerance (real weights summed in another order).
inline ::testing::AssertionResult near_distances(const double* got, const std::vector<double>& want,
                                                 double rel) {
  for (std::size_t v = 0; v < want.size(); ++v) {
    if (want[v] == kInfinity || got[v] == kInfinity) {
      if (got[v] != want[v])
        return ::testing::AssertionFailure()
               << "vertex index " << v << ": got " << got[v] << ", want " << want[v];
      continue;
    }
    double tol = rel * std::max(1.0, std::abs(want[v]));
    if (std::abs(got[v] - want[v]) > tol)
      return ::testing::AssertionFailure()
             << "vertex index " << v << ": got " << got[v] << ", want " << want[v];
  }
  return ::testing::AssertionSuccess();
}

// Predecessors are checked as "an arc of matching weight exists" (ties make exact equality the
// wrong test): pred arc enters v, its tail is reachable, dist[tail] + w == dist[v].
inline ::testing::AssertionResult valid_predecessors(const Graph& g, const double* dist,
                                                     const ArcIndex* pred, VertexIndex source) {
  for (VertexIndex v = 0; v < g.vertex_count(); ++v) {
    if (v == source || dist[v] == kInfinity) {
      if (pred[v] != kNoArc)
        return ::testing::AssertionFailure() << "vertex " << v << " should have no predecessor";
      continue;
    }
    ArcIndex a = pred[v];
    if (a < 0 || a >= g.reverse.arc_count())
      return ::testing::AssertionFailure() << "vertex " << v << " has no predecessor";
    if (!(a >= g.reverse.begin(v) && a < g.reverse.end(v)))
      return ::testing::AssertionFailure() << "predecessor arc of " << v << " does not enter it";
    VertexIndex u = g.reverse.heads[static_cast<std::size_t>(a)];
    if (dist[u] + g.reverse.weights[static_cast<std::size_t>(a)] != dist[v])
      return ::testing::AssertionFailure() << "predecessor arc of " << v << " is not tight";
  }
  return ::testing::AssertionSuccess();
}

}  // namespace gpu_routing::testing
