#include "cpu/apsp_floyd_warshall.hpp"

#include <algorithm>

#include "base/parallel.hpp"

namespace gpu_routing {

namespace {

// c[i][j] = min(c[i][j], a[i][k] + b[k][j]) over one kTile x kTile tile; a, b, c may alias
// (phases 1 and 2), which is why k is the outer loop: row k of b and column k of a are final for
// step k. The tile size is a compile-time constant and the minimum a plain `s < x ? s : x` so
// the compiler emits vminpd (std::min's reference form compiled to a compare and branch).
// target_clones: an AVX2 body where the CPU has it, the x86-64 baseline elsewhere, one binary.
constexpr int kTile = kCpuFloydWarshallTile;

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("avx2", "default")))
#endif
void min_plus_tile(double* c, const double* a, const double* b, std::int64_t stride) {
  for (int k = 0; k < kTile; ++k) {
    const double* b_row = b + k * stride;
    for (int i = 0; i < kTile; ++i) {
      const double a_ik = a[i * stride + k];
      double* c_row = c + i * stride;
      for (int j = 0; j < kTile; ++j) {
        const double through_k = a_ik + b_row[j];
        c_row[j] = through_k < c_row[j] ? through_k : c_row[j];
      }
    }
  }
}

// Phase 3 has no aliasing: each row of c is kept in a local accumulator (registers and L1) while
// k runs over the row tile of a and the column tile of b.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("avx2", "default")))
#endif
void min_plus_tile_disjoint(double* __restrict c, const double* __restrict a,
                            const double* __restrict b, std::int64_t stride) {
  for (int i = 0; i < kTile; ++i) {
    double row[kTile];
    double* c_row = c + i * stride;
    for (int j = 0; j < kTile; ++j) row[j] = c_row[j];
    for (int k = 0; k < kTile; ++k) {
      const double a_ik = a[i * stride + k];
      const double* b_row = b + k * stride;
      for (int j = 0; j < kTile; ++j) {
        const double through_k = a_ik + b_row[j];
        row[j] = through_k < row[j] ? through_k : row[j];
      }
    }
    for (int j = 0; j < kTile; ++j) c_row[j] = row[j];
  }
}

}  // namespace

std::size_t dense_matrix_bytes(VertexIndex vertex_count, int tile) {
  std::size_t padded = (static_cast<std::size_t>(vertex_count) + tile - 1) / tile * tile;
  return saturating_multiply(saturating_multiply(padded, padded), sizeof(double));
}

DenseDistanceMatrix build_dense_matrix(const CsrGraph& graph, int tile) {
  DenseDistanceMatrix matrix;
  matrix.size = graph.vertex_count;
  matrix.padded_size = (static_cast<std::int64_t>(graph.vertex_count) + tile - 1) / tile * tile;
  matrix.values.assign(static_cast<std::size_t>(matrix.padded_size * matrix.padded_size),
                       kInfinity);
  for (VertexIndex u = 0; u < graph.vertex_count; ++u) {
    double* row = matrix.row(u);
    row[u] = 0.0;
    for (ArcIndex a = graph.begin(u); a < graph.end(u); ++a) {
      VertexIndex v = graph.heads[static_cast<std::size_t>(a)];
      row[v] = std::min(row[v], graph.weights[static_cast<std::size_t>(a)]);
    }
  }
  return matrix;
}

void floyd_warshall_blocked(DenseDistanceMatrix& matrix, int tile, int threads,
                            const CancelToken& cancel) {
  if (tile != kTile)
    throw RoutingError(ErrorKind::kInternal,
                       "blocked Floyd-Warshall is built for tiles of " + std::to_string(kTile));
  const std::int64_t n = matrix.padded_size;
  if (n == 0) return;
  const std::int64_t blocks = n / tile;
  double* d = matrix.values.data();
  auto at = [&](std::int64_t bi, std::int64_t bj) { return d + (bi * tile) * n + bj * tile; };
  prepare_worker_threads(threads);
  for (std::int64_t k = 0; k < blocks; ++k) {
    cancel.throw_if_requested();
    // Phase 1: the diagonal tile closes on itself.
    min_plus_tile(at(k, k), at(k, k), at(k, k), n);
    // Phase 2: tiles of row k and column k, each against the closed diagonal tile.
#pragma omp parallel for num_threads(threads) schedule(static)
    for (std::int64_t j = 0; j < 2 * blocks; ++j) {
      std::int64_t b = j % blocks;
      if (b == k) continue;
      if (j < blocks)
        min_plus_tile(at(k, b), at(k, k), at(k, b), n);  // row: c = c min (diag * c)
      else
        min_plus_tile(at(b, k), at(b, k), at(k, k), n);  // column: c = c min (c * diag)
    }
    // Phase 3: every other tile is a min-plus product of its row and column tiles.
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1) collapse(2)
    for (std::int64_t i = 0; i < blocks; ++i) {
      for (std::int64_t j = 0; j < blocks; ++j) {
        if (i == k || j == k) continue;
        min_plus_tile_disjoint(at(i, j), at(i, k), at(k, j), n);
      }
    }
  }
}

void floyd_warshall_naive(DenseDistanceMatrix& matrix, int threads, const CancelToken& cancel) {
  const std::int64_t n = matrix.padded_size;
  double* d = matrix.values.data();
  prepare_worker_threads(threads);
  for (std::int64_t k = 0; k < n; ++k) {
    if ((k & 15) == 0) cancel.throw_if_requested();
    const double* row_k = d + k * n;
#pragma omp parallel for num_threads(threads) schedule(static)
    for (std::int64_t i = 0; i < n; ++i) {
      double* row_i = d + i * n;
      const double d_ik = row_i[k];
      if (!(d_ik < kInfinity)) continue;
      for (std::int64_t j = 0; j < n; ++j) row_i[j] = std::min(row_i[j], d_ik + row_k[j]);
    }
  }
}

}  // namespace gpu_routing
