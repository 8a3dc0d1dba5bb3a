// CPU all-pairs on the dense distance matrix: the naive Floyd-Warshall and the cache-blocked,
// vectorised three-phase version (the CPU side of seed 002).
#pragma once

#include <vector>

#include "base/common.hpp"
#include "base/graph.hpp"

namespace gpu_routing {

// Row-major padded_size x padded_size matrix of float64 distances: 0 on the diagonal, the
// cheapest arc u->v, +inf elsewhere (padding rows and columns stay isolated at +inf).
struct DenseDistanceMatrix {
  VertexIndex size = 0;          // vertices
  std::int64_t padded_size = 0;  // size rounded up to the tile
  std::vector<double> values;
  double* row(VertexIndex i) { return values.data() + static_cast<std::size_t>(i) * padded_size; }
  const double* row(VertexIndex i) const {
    return values.data() + static_cast<std::size_t>(i) * padded_size;
  }
};

constexpr int kCpuFloydWarshallTile = 64;

std::size_t dense_matrix_bytes(VertexIndex vertex_count, int tile);
DenseDistanceMatrix build_dense_matrix(const CsrGraph& graph, int tile);

// In place, closes the matrix under min-plus. Checks `cancel` once per block row (blocked) or per
// k (naive).
void floyd_warshall_blocked(DenseDistanceMatrix& matrix, int tile, int threads,
                            const CancelToken& cancel);
void floyd_warshall_naive(DenseDistanceMatrix& matrix, int threads, const CancelToken& cancel);

}  // namespace gpu_routing
