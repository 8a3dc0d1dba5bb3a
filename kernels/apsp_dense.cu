// Dense all-pairs engines on the V x V matrix: blocked Floyd-Warshall (seed 002), the naive
// one-kernel-per-k Floyd-Warshall (seed 002's baseline) and recursive Kleene (seed 004).
//
// Everything heavy is one register-tiled min-plus product kernel, C = min(C, A (x) B), in the
// shape of a classic SGEMM: a CTA computes a 128-row tile, each thread an TM x TN block of words
// in registers, A and B staged through double-buffered shared memory one BK-deep slice at a time.
// Blocked Floyd-Warshall's phase 2 (with the closed diagonal tile as one factor) and phase 3 are
// such products; so are all six products of R-Kleene. The diagonal closure (phase 1, and
// R-Kleene's base case) is one CTA running Floyd-Warshall on a 128 x 128 tile held in registers,
// with row k and column k published through shared memory.
//
// Number modes: int32 (one VIADDMNMX per update on sm_90), int16x2 (two 16-bit lanes per word,
// twice the updates per instruction) and float64. The integer modes are exact whenever every
// distance stays below the sentinel, which resolve_dense_mode() checks from (V-1) * max_weight:
// every value the algorithms hold is the length of a simple path or the sentinel.
//
// In-place products. Several products read the tile they update (B = A*B in R-Kleene, the
// phase-2 panels), and in R-Kleene other CTAs of the same launch may read a tile while its owner
// rewrites it. That is safe because the other factor is closed (zero diagonal, triangle
// inequality): a candidate built from an already-updated value is still the length of a path of
// the allowed kind, never below the final value, and the candidate the final value comes from is
// still present. So any mix of old and new values gives the same integer result (float64: the
// same up to rounding, which the float64 mode does not promise to match anyway).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>
#include <vector>

#include "../src/core/gpu.hpp"
#include "apsp_engines.cuh"
#include "cuda_common.cuh"

namespace gpu_routing::gpu::apsp {

namespace {

constexpr int kTile = 128;  // Floyd-Warshall block, closure tile, product CTA rows

// ---------------------------------------------------------------------------------------------
// Number modes.

struct Int32Mode {
  using Elem = std::int32_t;  // what the matrix stores
  using Word = std::int32_t;  // what the product kernel adds (B, C words; A broadcast)
  using Acc = std::int32_t;   // what the closure kernel computes in
  static constexpr int kElemsPerWord = 1;
  static constexpr Elem kInf = 0x3fffffff;  // kInf + kInf = 2^31 - 2 still fits
  static constexpr double kMaxDistance = kInf - 1.0;
  __device__ static Word broadcast(Elem a) { return a; }
  __device__ static Word word_inf() { return kInf; }
  __device__ static Word add_min(Word a, Word b, Word c) { return __viaddmin_s32(a, b, c); }
  __device__ static Word word_min(Word a, Word b) { return min(a, b); }
  __device__ static Acc widen(Elem e) { return e; }
  __device__ static Elem narrow(Acc a) { return a; }
  __device__ static Acc acc_add_min(Acc a, Acc b, Acc c) { return __viaddmin_s32(a, b, c); }
  __device__ static double to_double(Elem e) { return e >= kInf ? kInfinity : double(e); }
  __device__ static Elem from_weight(double w) { return static_cast<Elem>(w); }
};

struct Int16x2Mode {
  using Elem = std::uint16_t;
  using Word = std::uint32_t;  // two adjacent columns; A is broadcast into both lanes
  using Acc = std::int32_t;
  static constexpr int kElemsPerWord = 2;
  static constexpr Elem kInf = 0x7fff;  // kInf + kInf = 0xfffe: no lane wraps
  static constexpr double kMaxDistance = kInf - 1.0;
  __device__ static Word broadcast(Elem a) { return static_cast<Word>(a) * 0x00010001u; }
  __device__ static Word word_inf() { return 0x7fff7fffu; }
  __device__ static Word add_min(Word a, Word b, Word c) { return __viaddmin_u16x2(a, b, c); }
  __device__ static Word word_min(Word a, Word b) { return __vminu2(a, b); }
  __device__ static Acc widen(Elem e) { return e; }
  __device__ static Elem narrow(Acc a) { return static_cast<Elem>(a); }
  __device__ static Acc acc_add_min(Acc a, Acc b, Acc c) { return __viaddmin_s32(a, b, c); }
  __device__ static double to_double(Elem e) { return e >= kInf ? kInfinity : double(e); }
  __device__ static Elem from_weight(double w) { return static_cast<Elem>(w); }
};

struct Float64Mode {
  using Elem = double;
  using Word = double;
  using Acc = double;
  static constexpr int kElemsPerWord = 1;
  __device__ static Word broadcast(Elem a) { return a; }
  __device__ static Word word_inf() { return kInfinity; }
  __device__ static Word add_min(Word a, Word b, Word c) { return fmin(a + b, c); }
  __device__ static Word word_min(Word a, Word b) { return fmin(a, b); }
  __device__ static Acc widen(Elem e) { return e; }
  __device__ static Elem narrow(Acc a) { return a; }
  __device__ static Acc acc_add_min(Acc a, Acc b, Acc c) { return fmin(a + b, c); }
  __device__ static double to_double(Elem e) { return e; }
  __device__ static Elem from_weight(double w) { return w + 0.0; }  // -0.0 becomes +0.0
};

template <class T>
__device__ __forceinline__ typename T::Elem elem_inf() {
  if constexpr (std::is_same_v<T, Float64Mode>)
    return kInfinity;
  else
    return T::kInf;
}

// ---------------------------------------------------------------------------------------------
// The min-plus product kernel.

// Coordinates are in elements of the one square matrix (row-major, leading dimension ld).
struct ProductArgs {
  void* matrix;
  std::int64_t ld;
  int c_row, c_col, a_row, a_col, b_row, b_col;
  int rows, cols, depth;  // M, N, K
  // C elements in [mask_row_begin, mask_row_end) x all columns, and all rows x
  // [mask_col_begin, mask_col_end), are left alone (blocked Floyd-Warshall's panels).
  int mask_row_begin, mask_row_end, mask_col_begin, mask_col_end;
};

union Vec16 {
  uint4 raw;
  std::int32_t i32[4];
  std::uint32_t u32[4];
  std::uint16_t u16[8];
  double f64[2];
};

template <class T>
__device__ __forceinline__ typename T::Elem vec_elem(const Vec16& v, int e) {
  if constexpr (std::is_same_v<T, Int32Mode>)
    return v.i32[e];
  else if constexpr (std::is_same_v<T, Int16x2Mode>)
    return v.u16[e];
  else
    return v.f64[e];
}
template <class T>
__device__ __forceinline__ typename T::Word vec_word(const Vec16& v, int e) {
  if constexpr (std::is_same_v<T, Int32Mode>)
    return v.i32[e];
  else if constexpr (std::is_same_v<T, Int16x2Mode>)
    return v.u32[e];
  else
    return v.f64[e];
}
template <class T>
__device__ __forceinline__ void set_vec_word(Vec16& v, int e, typename T::Word w) {
  if constexpr (std::is_same_v<T, Int32Mode>)
    v.i32[e] = w;
  else if constexpr (std::is_same_v<T, Int16x2Mode>)
    v.u32[e] = w;
  else
    v.f64[e] = w;
}

// kThreadsY x kThreadsX threads; each owns kTM rows x kTN words, as groups of kVecW consecutive
// rows/words spaced kThreads{Y,X} * kVecW apart (16-byte shared-memory reads, no bank conflicts).
template <class T, int kThreadsY, int kThreadsX, int kTM, int kTN, int kBK, int kMinBlocks>
__global__ void __launch_bounds__(kThreadsY* kThreadsX, kMinBlocks)
    min_plus_product_kernel(ProductArgs args) {
  using Elem = typename T::Elem;
  using Word = typename T::Word;
  constexpr int kThreads = kThreadsY * kThreadsX;
  constexpr int kVecW = 16 / static_cast<int>(sizeof(Word));  // words per 16-byte vector
  constexpr int kVecA = 16 / static_cast<int>(sizeof(Elem));  // A elements per 16-byte load
  constexpr int kBM = kTM * kThreadsY;                        // rows
  constexpr int kBN = kTN * kThreadsX;                        // words
  constexpr int kBNElems = kBN * T::kElemsPerWord;
  constexpr int kALoads = kBM * kBK / kVecA / kThreads;
  constexpr int kBLoads = kBK * kBN / kVecW / kThreads;
  static_assert(kTile % kBM == 0 && kTile % kBNElems == 0, "tiles nest in Floyd-Warshall blocks");
  static_assert(kALoads * kVecA * kThreads == kBM * kBK, "A slice splits evenly");
  static_assert(kBLoads * kVecW * kThreads == kBK * kBN, "B slice splits evenly");
  static_assert(kTM % kVecW == 0 && kTN % kVecW == 0, "fragments are whole vectors");
  static_assert(kBK % kVecA == 0, "A loads stay inside one slice");

  __shared__ alignas(16) Word a_slices[2][kBK][kBM];  // transposed: [k][row]
  __shared__ alignas(16) Word b_slices[2][kBK][kBN];  // [k][word]

  const int tile_row = blockIdx.y * kBM;       // within C
  const int tile_col = blockIdx.x * kBNElems;  // within C, elements
  const int row0 = args.c_row + tile_row;      // matrix coordinates
  const int col0 = args.c_col + tile_col;
  if (row0 >= args.mask_row_begin && row0 + kBM <= args.mask_row_end) return;
  if (col0 >= args.mask_col_begin && col0 + kBNElems <= args.mask_col_end) return;

  Elem* matrix = static_cast<Elem*>(args.matrix);
  const std::int64_t ld = args.ld;
  const int tid = threadIdx.x;
  const int tx = tid % kThreadsX;
  const int ty = tid / kThreadsX;

  const Elem* a_base = matrix + (args.a_row + tile_row) * ld + args.a_col;
  const Elem* b_base = matrix + std::int64_t(args.b_row) * ld + args.b_col + tile_col;

  Vec16 a_stage[kALoads];
  Vec16 b_stage[kBLoads];
  auto load_slice = [&](int k0) {
#pragma unroll
    for (int l = 0; l < kALoads; ++l) {
      const int idx = tid + l * kThreads;
      const int m = idx % kBM;
      const int kv = idx / kBM;
      a_stage[l].raw = *reinterpret_cast<const uint4*>(a_base + m * ld + k0 + kv * kVecA);
    }
#pragma unroll
    for (int l = 0; l < kBLoads; ++l) {
      const int idx = tid + l * kThreads;
      const int kk = idx / (kBN / kVecW);
      const int cv = idx % (kBN / kVecW);
      b_stage[l].raw =
          *reinterpret_cast<const uint4*>(b_base + (k0 + kk) * ld + cv * kVecW * T::kElemsPerWord);
    }
  };
  auto store_slice = [&](int buffer) {
#pragma unroll
    for (int l = 0; l < kALoads; ++l) {
      const int idx = tid + l * kThreads;
      const int m = idx % kBM;
      const int kv = idx / kBM;
#pragma unroll
      for (int e = 0; e < kVecA; ++e)
        a_slices[buffer][kv * kVecA + e][m] = T::broadcast(vec_elem<T>(a_stage[l], e));
    }
#pragma unroll
    for (int l = 0; l < kBLoads; ++l) {
      const int idx = tid + l * kThreads;
      const int kk = idx / (kBN / kVecW);
      const int cv = idx % (kBN / kVecW);
      *reinterpret_cast<uint4*>(&b_slices[buffer][kk][cv * kVecW]) = b_stage[l].raw;
    }
  };

  Word acc[kTM][kTN];
#pragma unroll
  for (int i = 0; i < kTM; ++i)
#pragma unroll
    for (int j = 0; j < kTN; ++j) acc[i][j] = T::word_inf();

  const int slices = args.depth / kBK;
  load_slice(0);
  store_slice(0);
  __syncthreads();
  for (int s = 0; s < slices; ++s) {
    const int buffer = s & 1;
    if (s + 1 < slices) load_slice((s + 1) * kBK);
#pragma unroll
    for (int k = 0; k < kBK; ++k) {
      Word a[kTM], b[kTN];
#pragma unroll
      for (int q = 0; q < kTM / kVecW; ++q) {
        Vec16 v;
        v.raw = *reinterpret_cast<const uint4*>(
            &a_slices[buffer][k][q * kThreadsY * kVecW + ty * kVecW]);
#pragma unroll
        for (int e = 0; e < kVecW; ++e) a[q * kVecW + e] = vec_word<T>(v, e);
      }
#pragma unroll
      for (int q = 0; q < kTN / kVecW; ++q) {
        Vec16 v;
        v.raw = *reinterpret_cast<const uint4*>(
            &b_slices[buffer][k][q * kThreadsX * kVecW + tx * kVecW]);
#pragma unroll
        for (int e = 0; e < kVecW; ++e) b[q * kVecW + e] = vec_word<T>(v, e);
      }
#pragma unroll
      for (int i = 0; i < kTM; ++i)
#pragma unroll
        for (int j = 0; j < kTN; ++j) acc[i][j] = T::add_min(a[i], b[j], acc[i][j]);
    }
    if (s + 1 < slices) store_slice(buffer ^ 1);
    __syncthreads();
  }

  // Epilogue: C = min(C, acc), one 16-byte vector per (row, word group), masked bands skipped.
#pragma unroll
  for (int i = 0; i < kTM; ++i) {
    const int r = (i / kVecW) * (kThreadsY * kVecW) + ty * kVecW + (i % kVecW);
    const int row = row0 + r;
    if (row >= args.mask_row_begin && row < args.mask_row_end) continue;
    Elem* c_row_ptr = matrix + row * ld;
#pragma unroll
    for (int q = 0; q < kTN / kVecW; ++q) {
      const int col = col0 + (q * kThreadsX * kVecW + tx * kVecW) * T::kElemsPerWord;
      if (col >= args.mask_col_begin && col < args.mask_col_end) continue;
      uint4* target = reinterpret_cast<uint4*>(c_row_ptr + col);
      Vec16 v;
      v.raw = *target;
#pragma unroll
      for (int e = 0; e < kVecW; ++e)
        set_vec_word<T>(v, e, T::word_min(vec_word<T>(v, e), acc[i][q * kVecW + e]));
      *target = v.raw;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Closure of one 128 x 128 diagonal tile: Floyd-Warshall in one CTA of 1024 threads, each
// holding a 4 x 4 block in registers. Row k and column k do not change during step k (the
// diagonal is 0), so step k only needs them published: the owners of row/column k+1 write them
// into the other half of a double buffer, one barrier per step.
template <class T>
__global__ void __launch_bounds__(1024) closure_kernel(void* matrix_ptr, std::int64_t ld, int at) {
  using Acc = typename T::Acc;
  using Elem = typename T::Elem;
  __shared__ alignas(16) Acc row_k[2][kTile];
  __shared__ alignas(16) Acc col_k[2][kTile];
  Elem* matrix = static_cast<Elem*>(matrix_ptr);
  const int tx = threadIdx.x % 32;  // columns tx*4 .. tx*4+3
  const int ty = threadIdx.x / 32;  // rows ty*4 .. ty*4+3
  Acc d[4][4];
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const Elem* src = matrix + (at + ty * 4 + i) * ld + at + tx * 4;
#pragma unroll
    for (int j = 0; j < 4; ++j) d[i][j] = T::widen(src[j]);
  }
  if (ty == 0)
#pragma unroll
    for (int j = 0; j < 4; ++j) row_k[0][tx * 4 + j] = d[0][j];
  if (tx == 0)
#pragma unroll
    for (int i = 0; i < 4; ++i) col_k[0][ty * 4 + i] = d[i][0];
  __syncthreads();
  for (int k = 0; k < kTile; ++k) {
    const int p = k & 1;
    Acc a[4], b[4];
#pragma unroll
    for (int i = 0; i < 4; ++i) a[i] = col_k[p][ty * 4 + i];
#pragma unroll
    for (int j = 0; j < 4; ++j) b[j] = row_k[p][tx * 4 + j];
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
      for (int j = 0; j < 4; ++j) d[i][j] = T::acc_add_min(a[i], b[j], d[i][j]);
    const int next = k + 1;
    if (next < kTile) {
      // Selects, not d[next & 3][j]: a run-time index would move d to local memory.
      const int sel = next & 3;
      if (ty == (next >> 2)) {
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          Acc value = d[0][j];
          value = sel == 1 ? d[1][j] : value;
          value = sel == 2 ? d[2][j] : value;
          value = sel == 3 ? d[3][j] : value;
          row_k[p ^ 1][tx * 4 + j] = value;
        }
      }
      if (tx == (next >> 2)) {
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          Acc value = d[i][0];
          value = sel == 1 ? d[i][1] : value;
          value = sel == 2 ? d[i][2] : value;
          value = sel == 3 ? d[i][3] : value;
          col_k[p ^ 1][ty * 4 + i] = value;
        }
      }
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    Elem* dst = matrix + (at + ty * 4 + i) * ld + at + tx * 4;
#pragma unroll
    for (int j = 0; j < 4; ++j) dst[j] = T::narrow(d[i][j]);
  }
}

// One step k of the textbook Floyd-Warshall over the n x n corner. Thread (i, k) and (k, j)
// never write (the diagonal is 0), so row and column k are stable during the step.
template <class T>
__global__ void naive_step_kernel(void* matrix_ptr, std::int64_t ld, int n, int k) {
  using Elem = typename T::Elem;
  Elem* matrix = static_cast<Elem*>(matrix_ptr);
  const int j = blockIdx.x * blockDim.x + threadIdx.x;
  const int i = blockIdx.y * blockDim.y + threadIdx.y;
  if (i >= n || j >= n) return;
  const auto through_k = T::widen(matrix[i * ld + k]);
  const auto from_k = T::widen(matrix[k * ld + j]);
  Elem* target = matrix + i * ld + j;
  const auto current = T::widen(*target);
  const auto candidate = T::acc_add_min(through_k, from_k, current);
  if (candidate < current) *target = T::narrow(candidate);
}

// ---------------------------------------------------------------------------------------------
// Building the matrix and reading rows out.

template <class T>
__global__ void fill_matrix_kernel(void* matrix_ptr, std::int64_t padded) {
  using Elem = typename T::Elem;
  Elem* matrix = static_cast<Elem*>(matrix_ptr);
  const std::int64_t total = padded * padded;
  for (std::int64_t idx = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; idx < total;
       idx += std::int64_t(gridDim.x) * blockDim.x) {
    const std::int64_t i = idx / padded, j = idx % padded;
    matrix[idx] = i == j ? Elem(0) : elem_inf<T>();
  }
}

template <class T>
__device__ void atomic_min_elem(typename T::Elem* address, typename T::Elem value) {
  if constexpr (std::is_same_v<T, Int32Mode>) {
    atomicMin(address, value);
  } else if constexpr (std::is_same_v<T, Float64Mode>) {
    atomic_min_distance(address, value);
  } else {
    // 16-bit: compare-and-swap on the aligned 32-bit word holding the element.
    const std::uintptr_t raw = reinterpret_cast<std::uintptr_t>(address);
    unsigned int* word = reinterpret_cast<unsigned int*>(raw & ~std::uintptr_t(3));
    const int shift = (raw & 2) ? 16 : 0;
    unsigned int old = *word;
    while (true) {
      const unsigned int lane = (old >> shift) & 0xffffu;
      if (lane <= value) return;
      const unsigned int desired = (old & ~(0xffffu << shift)) | (unsigned(value) << shift);
      const unsigned int seen = atomicCAS(word, old, desired);
      if (seen == old) return;
      old = seen;
    }
  }
}

// One warp per vertex u: M[u][v] = min over parallel arcs u->v of their weight.
template <class T>
__global__ void scatter_arcs_kernel(void* matrix_ptr, std::int64_t ld, int n,
                                    const ArcIndex* row_offsets, const VertexIndex* heads,
                                    const double* weights) {
  using Elem = typename T::Elem;
  Elem* matrix = static_cast<Elem*>(matrix_ptr);
  const int warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
  const int lane = threadIdx.x % 32;
  if (warp >= n) return;
  for (ArcIndex a = row_offsets[warp] + lane; a < row_offsets[warp + 1]; a += 32)
    atomic_min_elem<T>(matrix + warp * ld + heads[a], T::from_weight(weights[a]));
}

template <class T>
__global__ void gather_rows_kernel(const void* matrix_ptr, std::int64_t ld, int n,
                                   const VertexIndex* sources, double* out) {
  using Elem = typename T::Elem;
  const Elem* matrix = static_cast<const Elem*>(matrix_ptr);
  const int v = blockIdx.x * blockDim.x + threadIdx.x;
  const int r = blockIdx.y;
  if (v >= n) return;
  out[std::int64_t(r) * n + v] = T::to_double(matrix[std::int64_t(sources[r]) * ld + v]);
}

// ---------------------------------------------------------------------------------------------
// Product kernel variants per mode. Variant 0 is the default the engines use.

using ProductLauncher = void (*)(const ProductArgs&, cudaStream_t);

template <class T, int kThreadsY, int kThreadsX, int kTM, int kTN, int kBK, int kMinBlocks>
struct ProductShape {
  static constexpr int kBM = kTM * kThreadsY;
  static constexpr int kBNElems = kTN * kThreadsX * T::kElemsPerWord;
  static void launch(const ProductArgs& args, cudaStream_t stream) {
    dim3 grid(args.cols / kBNElems, args.rows / kBM);
    if (grid.x == 0 || grid.y == 0 || args.depth == 0) return;
    min_plus_product_kernel<T, kThreadsY, kThreadsX, kTM, kTN, kBK, kMinBlocks>
        <<<grid, kThreadsY * kThreadsX, 0, stream>>>(args);
    GPU_ROUTING_CUDA_CHECK_LAUNCH();
  }
};

struct ProductVariant {
  const char* name;
  ProductLauncher launch;
};

// Every variant takes M multiple of 128, N multiple of 128 elements, K multiple of 16.
const std::vector<ProductVariant>& product_variants(DenseMode mode) {
  static const std::vector<ProductVariant> int32_variants = {
      {"16x16 threads, 8x8 words, k8", ProductShape<Int32Mode, 16, 16, 8, 8, 8, 2>::launch},
      {"16x16 threads, 8x8 words, k16", ProductShape<Int32Mode, 16, 16, 8, 8, 16, 2>::launch},
      {"32x8 threads, 4x16 words, k16", ProductShape<Int32Mode, 32, 8, 4, 16, 16, 2>::launch},
      {"16x16 threads, 8x8 words, k16, 1 CTA/SM",
       ProductShape<Int32Mode, 16, 16, 8, 8, 16, 1>::launch},
  };
  static const std::vector<ProductVariant> int16_variants = {
      {"16x16 threads, 8x4 words, k16", ProductShape<Int16x2Mode, 16, 16, 8, 4, 16, 2>::launch},
      {"8x16 threads, 16x4 words, k16", ProductShape<Int16x2Mode, 8, 16, 16, 4, 16, 2>::launch},
      {"16x8 threads, 8x8 words, k16", ProductShape<Int16x2Mode, 16, 8, 8, 8, 16, 2>::launch},
  };
  static const std::vector<ProductVariant> float64_variants = {
      {"16x16 threads, 8x4 doubles, k16", ProductShape<Float64Mode, 16, 16, 8, 4, 16, 1>::launch},
      {"16x16 threads, 8x8 doubles, k8", ProductShape<Float64Mode, 16, 16, 8, 8, 8, 1>::launch},
  };
  switch (mode) {
    case DenseMode::kInt16x2:
      return int16_variants;
    case DenseMode::kFloat64:
      return float64_variants;
    default:
      return int32_variants;
  }
}

// 64-row tiles for products whose 128-tile grid would leave most SMs idle (the phase-2 panels,
// R-Kleene's deep levels): four times the CTAs, a quarter of the serial work per CTA.
ProductLauncher small_tile_product(DenseMode mode) {
  switch (mode) {
    case DenseMode::kInt16x2:
      return ProductShape<Int16x2Mode, 8, 16, 8, 4, 16, 2>::launch;
    case DenseMode::kFloat64:
      return ProductShape<Float64Mode, 16, 16, 4, 2, 16, 2>::launch;
    default:
      return ProductShape<Int32Mode, 16, 16, 4, 4, 16, 2>::launch;
  }
}

std::size_t element_bytes(DenseMode mode) {
  switch (mode) {
    case DenseMode::kInt16x2:
      return 2;
    case DenseMode::kFloat64:
      return 8;
    default:
      return 4;
  }
}

std::int64_t padded_size(VertexIndex n) {
  return (static_cast<std::int64_t>(std::max<VertexIndex>(n, 1)) + kTile - 1) / kTile * kTile;
}

constexpr std::size_t kRowStagingBytes = std::size_t{64} << 20;

std::size_t staging_rows(VertexIndex n, int batch) {
  std::size_t per_row = sizeof(double) * static_cast<std::size_t>(std::max<VertexIndex>(n, 1));
  std::size_t rows = std::max<std::size_t>(1, kRowStagingBytes / per_row);
  rows = std::min<std::size_t>(rows, 65535);  // one grid row per source row
  return std::min<std::size_t>(rows, static_cast<std::size_t>(std::max(batch, 1)));
}

// Syncs the stream and polls cancel once roughly every 20 ms of queued GPU work, estimated from
// the work each launch carries (the host enqueues far ahead of the GPU, so host time alone says
// nothing about progress).
class CancelPacer {
 public:
  CancelPacer(const CancelToken& cancel, cudaStream_t stream) : cancel_(cancel), stream_(stream) {}
  void add(double estimated_ms) {
    queued_ms_ += estimated_ms;
    if (queued_ms_ >= kSliceMs) poll();
  }
  void poll() {
    GPU_ROUTING_CUDA_CHECK(cudaStreamSynchronize(stream_));
    queued_ms_ = 0;
    cancel_.throw_if_requested();
  }

 private:
  static constexpr double kSliceMs = 20.0;
  const CancelToken& cancel_;
  cudaStream_t stream_;
  double queued_ms_ = 0;
};

// ---------------------------------------------------------------------------------------------
// The engine.

class DenseApspEngine final : public ShortestPathEngine {
 public:
  DenseApspEngine(const Graph& graph, const EngineOptions& options, DenseAlgorithm algorithm,
                  const DenseTuning& tuning)
      : ShortestPathEngine(graph, options), algorithm_(algorithm), tuning_(tuning) {
    const auto& gpus = availability();
    if (!gpus.usable) throw RoutingError(ErrorKind::kNoDevice, "no usable GPU: " + gpus.reason);
    report_.device_name = gpus.devices.front().name + " (device 0)";
    mode_ = resolve_dense_mode(graph, tuning.mode);
    const auto& variants = product_variants(mode_);
    if (tuning.product_variant < 0 || tuning.product_variant >= int(variants.size()))
      throw RoutingError(ErrorKind::kInvalidParameter, "no such min-plus kernel variant");
    product_ = variants[static_cast<std::size_t>(tuning.product_variant)].launch;
    small_product_ = small_tile_product(mode_);
    small_grid_limit_ = 2 * std::max(1, gpus.devices.front().multiprocessors);
    report_.notes = std::string("dense ") + dense_mode_name(mode_) + " matrix";
  }

  const char* name() const override {
    switch (algorithm_) {
      case DenseAlgorithm::kBlocked:
        return "blocked_fw";
      case DenseAlgorithm::kNaive:
        return "floyd_warshall";
      default:
        return "rkleene";
    }
  }
  Device device() const override { return Device::kGpu; }
  int preferred_batch_size() const override {
    return std::max<VertexIndex>(1, graph_.vertex_count());
  }

  void solve(const SolveRequest& request) override {
    const VertexIndex n = graph_.vertex_count();
    if (request.source_count <= 0) return;
    for (int i = 0; i < request.source_count; ++i)
      if (request.sources[i] < 0 || request.sources[i] >= n)
        throw RoutingError(ErrorKind::kInvalidParameter, "source index out of range");
    use_device(0);
    if (!closed_) close_matrix(request.source_count);
    copy_rows_out(request);
    if (request.predecessor_arcs != nullptr) {
      Stopwatch watch;
      fill_predecessors_on_host(request);
      report_.compute_ms += watch.elapsed_ms();
    }
  }

 private:
  void close_matrix(int batch) {
    options_.cancel.throw_if_requested();
    const VertexIndex n = graph_.vertex_count();
    padded_ = padded_size(n);
    const std::size_t matrix_bytes = saturating_multiply(
        saturating_multiply(std::size_t(padded_), std::size_t(padded_)), element_bytes(mode_));
    const std::size_t rows = staging_rows(n, batch);
    const std::size_t needed =
        saturating_add(saturating_add(matrix_bytes, DeviceCsr::bytes(graph_.forward, false)),
                       rows * sizeof(double) * std::size_t(n) + rows * sizeof(VertexIndex));
    require_device_memory(0, needed,
                          std::string(name()) + " (" + dense_mode_name(mode_) + " " +
                              std::to_string(n) + " x " + std::to_string(n) + " distance matrix)",
                          options_.budget);
    if (!stream_) stream_ = std::make_unique<Stream>();
    Stopwatch build_watch;
    matrix_.allocate(matrix_bytes);
    switch (mode_) {
      case DenseMode::kInt16x2:
        build_and_close<Int16x2Mode>();
        break;
      case DenseMode::kFloat64:
        build_and_close<Float64Mode>();
        break;
      default:
        build_and_close<Int32Mode>();
        break;
    }
    report_.transfer_ms += build_watch.elapsed_ms() - closure_ms_;
    report_.compute_ms += closure_ms_;
    closed_ = true;
  }

  template <class T>
  void build_and_close() {
    cudaStream_t stream = stream_->get();
    const VertexIndex n = graph_.vertex_count();
    const int fill_blocks = std::min(blocks_for(padded_ * padded_, kDefaultBlockSize), 1 << 16);
    fill_matrix_kernel<T><<<fill_blocks, kDefaultBlockSize, 0, stream>>>(matrix_.data(), padded_);
    GPU_ROUTING_CUDA_CHECK_LAUNCH();
    if (graph_.arc_count() > 0) {
      DeviceCsr csr;
      csr.upload(graph_.forward, false, stream);
      scatter_arcs_kernel<T>
          <<<blocks_for(std::int64_t(n) * 32, kDefaultBlockSize), kDefaultBlockSize, 0, stream>>>(
              matrix_.data(), padded_, n, csr.row_offsets.data(), csr.heads.data(),
              csr.weights.data());
      GPU_ROUTING_CUDA_CHECK_LAUNCH();
      GPU_ROUTING_CUDA_CHECK(cudaStreamSynchronize(stream));  // before csr is freed
    }
    GPU_ROUTING_CUDA_CHECK(cudaStreamSynchronize(stream));
    // The closure alone is timed (events), so the benchmark's updates/s exclude the build.
    Event start, stop;
    start.record(stream);
    CancelPacer pacer(options_.cancel, stream);
    switch (algorithm_) {
      case DenseAlgorithm::kBlocked:
        blocked_floyd_warshall<T>(pacer);
        break;
      case DenseAlgorithm::kNaive:
        naive_floyd_warshall<T>(pacer);
        break;
      default:
        recursive_kleene<T>(0, int(padded_), pacer);
        break;
    }
    stop.record(stream);
    pacer.poll();
    float ms = 0;
    GPU_ROUTING_CUDA_CHECK(cudaEventElapsedTime(&ms, start.get(), stop.get()));
    closure_ms_ = ms;
  }

  // Updates per millisecond the pacer assumes (conservative: it only decides how often to poll).
  double product_ms(double rows, double cols, double depth) const {
    const double rate = mode_ == DenseMode::kInt16x2 ? 2.0e10
                        : mode_ == DenseMode::kInt32 ? 1.0e10
                                                     : 3.0e9;
    return rows * cols * depth / rate;
  }

  ProductArgs product_args(int c_row, int c_col, int a_row, int a_col, int b_row, int b_col,
                           int rows, int cols, int depth) const {
    ProductArgs args;
    args.matrix = matrix_.data();
    args.ld = padded_;
    args.c_row = c_row;
    args.c_col = c_col;
    args.a_row = a_row;
    args.a_col = a_col;
    args.b_row = b_row;
    args.b_col = b_col;
    args.rows = rows;
    args.cols = cols;
    args.depth = depth;
    args.mask_row_begin = args.mask_row_end = 0;
    args.mask_col_begin = args.mask_col_end = 0;
    return args;
  }

  // The tuned 128-row kernel, or the 64-row one where 128-row tiles would not fill the GPU.
  void launch_product(const ProductArgs& args) {
    const long long tiles = (long long)(args.rows / kTile) * (args.cols / kTile);
    const bool small =
        tuning_.small_tiles > 0 || (tuning_.small_tiles < 0 && tiles < small_grid_limit_);
    (small ? small_product_ : product_)(args, stream_->get());
  }

  template <class T>
  void closure(int at, CancelPacer& pacer) {
    closure_kernel<T><<<1, 1024, 0, stream_->get()>>>(matrix_.data(), padded_, at);
    GPU_ROUTING_CUDA_CHECK_LAUNCH();
    pacer.add(0.02);
  }

  // Seed 002: per block row kb, phase 1 closes the diagonal tile, phase 2 multiplies the row and
  // column panels by it, phase 3 adds the product of the panels to every other tile.
  template <class T>
  void blocked_floyd_warshall(CancelPacer& pacer) {
    const int padded = int(padded_);
    for (int at = 0; at < padded; at += kTile) {
      closure<T>(at, pacer);
      ProductArgs row_panel = product_args(at, 0, at, at, at, 0, kTile, padded, kTile);
      row_panel.mask_col_begin = at;
      row_panel.mask_col_end = at + kTile;
      launch_product(row_panel);
      ProductArgs col_panel = product_args(0, at, 0, at, at, at, padded, kTile, kTile);
      col_panel.mask_row_begin = at;
      col_panel.mask_row_end = at + kTile;
      launch_product(col_panel);
      ProductArgs rest = product_args(0, 0, 0, at, at, 0, padded, padded, kTile);
      rest.mask_row_begin = rest.mask_col_begin = at;
      rest.mask_row_end = rest.mask_col_end = at + kTile;
      launch_product(rest);
      pacer.add(product_ms(padded, padded, kTile));
    }
  }

  template <class T>
  void naive_floyd_warshall(CancelPacer& pacer) {
    const int n = graph_.vertex_count();
    dim3 block(32, 8);
    dim3 grid((n + 31) / 32, (n + 7) / 8);
    const double step_ms = double(n) * n * 3.0 * sizeof(typename T::Elem) / 1.5e9;
    for (int k = 0; k < n; ++k) {
      naive_step_kernel<T><<<grid, block, 0, stream_->get()>>>(matrix_.data(), padded_, n, k);
      GPU_ROUTING_CUDA_CHECK_LAUNCH();
      pacer.add(step_ms + 0.003);
    }
  }

  // Seed 004 on the square [at, at + size): split into A B / C D at a multiple of the tile.
  template <class T>
  void recursive_kleene(int at, int size, CancelPacer& pacer) {
    if (size <= kTile) {
      closure<T>(at, pacer);
      return;
    }
    const int n1 = (size / kTile + 1) / 2 * kTile;
    const int n2 = size - n1;
    const int a = at, d = at + n1;  // A = (a, a), B = (a, d), C = (d, a), D = (d, d)
    auto product = [&](int c_row, int c_col, int a_row, int a_col, int b_row, int b_col, int rows,
                       int cols, int depth) {
      launch_product(product_args(c_row, c_col, a_row, a_col, b_row, b_col, rows, cols, depth));
      pacer.add(product_ms(rows, cols, depth));
    };
    recursive_kleene<T>(a, n1, pacer);      // A = A*
    product(a, d, a, a, a, d, n1, n2, n1);  // B = A B
    product(d, a, d, a, a, a, n2, n1, n1);  // C = C A
    product(d, d, d, a, a, d, n2, n2, n1);  // D = D + C B
    recursive_kleene<T>(d, n2, pacer);      // D = D*
    product(a, d, a, d, d, d, n1, n2, n2);  // B = B D
    product(d, a, d, d, d, a, n2, n1, n2);  // C = D C
    product(a, a, a, d, d, a, n1, n1, n2);  // A = A + B C
  }

  void copy_rows_out(const SolveRequest& request) {
    Stopwatch watch;
    const VertexIndex n = graph_.vertex_count();
    cudaStream_t stream = stream_->get();
    const std::size_t rows = staging_rows(n, request.source_count);
    staging_.reserve(rows * std::size_t(n));
    staging_sources_.reserve(rows);
    for (int first = 0; first < request.source_count; first += int(rows)) {
      const int count = std::min<int>(int(rows), request.source_count - first);
      staging_sources_.upload(request.sources + first, std::size_t(count), stream);
      dim3 grid((n + 255) / 256, count);
      switch (mode_) {
        case DenseMode::kInt16x2:
          gather_rows_kernel<Int16x2Mode><<<grid, 256, 0, stream>>>(
              matrix_.data(), padded_, n, staging_sources_.data(), staging_.data());
          break;
        case DenseMode::kFloat64:
          gather_rows_kernel<Float64Mode><<<grid, 256, 0, stream>>>(
              matrix_.data(), padded_, n, staging_sources_.data(), staging_.data());
          break;
        default:
          gather_rows_kernel<Int32Mode><<<grid, 256, 0, stream>>>(
              matrix_.data(), padded_, n, staging_sources_.data(), staging_.data());
          break;
      }
      GPU_ROUTING_CUDA_CHECK_LAUNCH();
      staging_.download(request.distances + std::size_t(first) * n, std::size_t(count) * n, stream);
      GPU_ROUTING_CUDA_CHECK(cudaStreamSynchronize(stream));
      options_.cancel.throw_if_requested();
    }
    report_.transfer_ms += watch.elapsed_ms();
  }

  DenseAlgorithm algorithm_;
  DenseTuning tuning_;
  DenseMode mode_ = DenseMode::kInt32;
  ProductLauncher product_ = nullptr;
  ProductLauncher small_product_ = nullptr;
  int small_grid_limit_ = 264;
  bool closed_ = false;
  double closure_ms_ = 0;
  std::int64_t padded_ = 0;
  std::unique_ptr<Stream> stream_;
  DeviceBuffer<unsigned char> matrix_;
  DeviceBuffer<double> staging_;
  DeviceBuffer<VertexIndex> staging_sources_;
};

}  // namespace

const char* dense_mode_name(DenseMode mode) {
  switch (mode) {
    case DenseMode::kInt16x2:
      return "int16x2";
    case DenseMode::kInt32:
      return "int32";
    case DenseMode::kFloat64:
      return "float64";
    default:
      return "auto";
  }
}

DenseMode resolve_dense_mode(const Graph& graph, DenseMode requested) {
  // Every finite distance is at most (V - 1) * max_weight; the integer modes need it below their
  // sentinel (and each weight itself, for V = 1 with self loops).
  const double longest =
      std::max(1.0, double(graph.vertex_count()) - 1.0) * std::max(0.0, graph.max_weight);
  const bool fits16 = graph.integer_weights && longest <= Int16x2Mode::kMaxDistance;
  const bool fits32 = graph.integer_weights && longest <= Int32Mode::kMaxDistance;
  auto refuse = [&](const char* mode, const char* limit) {
    throw RoutingError(ErrorKind::kInvalidParameter,
                       std::string("the ") + mode +
                           " dense mode needs integer weights and (V - 1) * max_weight <= " +
                           limit + "; this graph has V = " + std::to_string(graph.vertex_count()) +
                           ", max_weight = " + std::to_string(graph.max_weight) +
                           (graph.integer_weights ? "" : " and non-integer weights"));
  };
  switch (requested) {
    case DenseMode::kInt16x2:
      if (!fits16) refuse("int16x2", "32766");
      return requested;
    case DenseMode::kInt32:
      if (!fits32) refuse("int32", "2^30 - 2");
      return requested;
    case DenseMode::kFloat64:
      return requested;
    default:
      return fits16 ? DenseMode::kInt16x2 : fits32 ? DenseMode::kInt32 : DenseMode::kFloat64;
  }
}

int dense_product_variant_count(DenseMode mode) {
  return int(product_variants(mode).size());
}

std::string dense_product_variant_name(DenseMode mode, int variant) {
  const auto& variants = product_variants(mode);
  if (variant < 0 || variant >= int(variants.size())) return "?";
  return variants[std::size_t(variant)].name;
}

std::unique_ptr<ShortestPathEngine> create_dense_engine(const Graph& graph,
                                                        const EngineOptions& options,
                                                        DenseAlgorithm algorithm,
                                                        const DenseTuning& tuning) {
  return std::make_unique<DenseApspEngine>(graph, options, algorithm, tuning);
}

std::size_t estimate_dense_bytes(const Graph& graph, int batch) {
  const VertexIndex n = graph.vertex_count();
  const DenseMode mode = resolve_dense_mode(graph, DenseMode::kAuto);
  const std::int64_t padded = padded_size(n);
  const std::size_t rows = staging_rows(n, batch);
  return saturating_add(
      saturating_multiply(saturating_multiply(std::size_t(padded), std::size_t(padded)),
                          element_bytes(mode)),
      saturating_add(DeviceCsr::bytes(graph.forward, false),
                     rows * sizeof(double) * std::size_t(n)));
}

}  // namespace gpu_routing::gpu::apsp
