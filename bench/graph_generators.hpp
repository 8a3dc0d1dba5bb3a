// The benchmark workloads, generated the same way for every engine and for the SQL benchmarks
// (which write the same edges into tables): grids, DIMACS-style random graphs, R-MAT power-law
// graphs, rings and complete graphs (seed 000's topologies), and DIMACS .gr files.
#pragma once

#include <zlib.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "base/graph.hpp"

namespace gpu_routing::bench {

struct EdgeList {
  std::string name;
  std::vector<std::int64_t> ids, sources, targets;
  std::vector<double> costs;

  void add(std::int64_t s, std::int64_t t, double c) {
    ids.push_back(static_cast<std::int64_t>(ids.size()) + 1);
    sources.push_back(s);
    targets.push_back(t);
    costs.push_back(c);
  }
  std::size_t size() const { return ids.size(); }
  EdgeArrays view() const {
    EdgeArrays e;
    e.count = ids.size();
    e.ids = ids.data();
    e.sources = sources.data();
    e.targets = targets.data();
    e.costs = costs.data();
    return e;
  }
};

// side x side 4-neighbour grid, every neighbour pair joined both ways (4 * side * (side - 1) arcs,
// 4M for side 1000), integer weights 1..max_weight.
inline EdgeList grid_graph(int side, int max_weight = 100, unsigned seed = 1) {
  EdgeList g;
  g.name = "grid " + std::to_string(side) + "x" + std::to_string(side);
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> w(1, max_weight);
  auto id = [&](int r, int c) { return static_cast<std::int64_t>(r) * side + c + 1; };
  for (int r = 0; r < side; ++r)
    for (int c = 0; c < side; ++c) {
      if (c + 1 < side) {
        g.add(id(r, c), id(r, c + 1), w(rng));
        g.add(id(r, c + 1), id(r, c), w(rng));
      }
      if (r + 1 < side) {
        g.add(id(r, c), id(r + 1, c), w(rng));
        g.add(id(r + 1, c), id(r, c), w(rng));
      }
    }
  return g;
}

// DIMACS-style random graph (seed 000): a Hamiltonian cycle keeps it connected, the rest of the
// E = degree * V arcs join uniformly random pairs, integer weights 1..max_weight.
inline EdgeList random_graph(int vertices, int degree, int max_weight, unsigned seed = 1) {
  EdgeList g;
  g.name = "random V=" + std::to_string(vertices) + " E=" + std::to_string(degree) + "V";
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> w(1, max_weight);
  std::uniform_int_distribution<int> vertex(0, vertices - 1);
  for (int v = 0; v < vertices; ++v) g.add(v + 1, (v + 1) % vertices + 1, w(rng));
  std::int64_t remaining = static_cast<std::int64_t>(degree) * vertices - vertices;
  for (std::int64_t e = 0; e < remaining; ++e) g.add(vertex(rng) + 1, vertex(rng) + 1, w(rng));
  return g;
}

// R-MAT power-law graph (a, b, c, d) = (0.57, 0.19, 0.19, 0.05), 2^scale vertices, `edges` arcs.
inline EdgeList rmat_graph(int scale, std::int64_t edges, int max_weight, unsigned seed = 1) {
  EdgeList g;
  g.name = "R-MAT 2^" + std::to_string(scale) + " E=" + std::to_string(edges);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::uniform_int_distribution<int> w(1, max_weight);
  for (std::int64_t e = 0; e < edges; ++e) {
    std::int64_t s = 0, t = 0;
    for (int level = 0; level < scale; ++level) {
      double p = unit(rng);
      int quadrant = p < 0.57 ? 0 : p < 0.76 ? 1 : p < 0.95 ? 2 : 3;
      s = (s << 1) | (quadrant >> 1);
      t = (t << 1) | (quadrant & 1);
    }
    g.add(s + 1, t + 1, w(rng));
  }
  return g;
}

// A directed ring: the longest chain of dependent rounds for frontier engines.
inline EdgeList ring_graph(int vertices, int max_weight, unsigned seed = 1) {
  EdgeList g;
  g.name = "ring V=" + std::to_string(vertices);
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> w(1, max_weight);
  for (int v = 0; v < vertices; ++v) g.add(v + 1, (v + 1) % vertices + 1, w(rng));
  return g;
}

// Complete directed graph without self loops.
inline EdgeList complete_graph(int vertices, int max_weight, unsigned seed = 1) {
  EdgeList g;
  g.name = "complete V=" + std::to_string(vertices);
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> w(1, max_weight);
  for (int s = 0; s < vertices; ++s)
    for (int t = 0; t < vertices; ++t)
      if (s != t) g.add(s + 1, t + 1, w(rng));
  return g;
}

// Dense random graph: each ordered pair joined with probability `density`.
inline EdgeList dense_graph(int vertices, double density, int max_weight, unsigned seed = 1) {
  EdgeList g;
  g.name = "dense V=" + std::to_string(vertices);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::uniform_int_distribution<int> w(1, max_weight);
  for (int s = 0; s < vertices; ++s)
    for (int t = 0; t < vertices; ++t)
      if (s != t && unit(rng) < density) g.add(s + 1, t + 1, w(rng));
  return g;
}

// DIMACS shortest-path file (.gr or .gr.gz): "a <from> <to> <weight>" lines.
inline EdgeList read_dimacs(const std::string& path) {
  EdgeList g;
  g.name = path.substr(path.find_last_of('/') + 1);
  gzFile file = gzopen(path.c_str(), "rb");
  if (file == nullptr) throw std::runtime_error("cannot open " + path);
  char line[256];
  while (gzgets(file, line, sizeof line) != nullptr) {
    if (line[0] != 'a') continue;
    long long s = 0, t = 0;
    double w = 0;
    if (std::sscanf(line + 1, "%lld %lld %lf", &s, &t, &w) == 3) g.add(s, t, w);
  }
  gzclose(file);
  if (g.size() == 0) throw std::runtime_error("no arcs in " + path);
  return g;
}

}  // namespace gpu_routing::bench
