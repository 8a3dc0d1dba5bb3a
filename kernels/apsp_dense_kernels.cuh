// Device side of the dense all-pairs engines (apsp_dense.cu, whose head comment has the design):
// the number modes, the register-tiled min-plus product kernel and its compiled shapes, the
// closure of a diagonal tile, the naive Floyd-Warshall step, and the kernels that build the matrix
// and read rows out. Only kernels/apsp_dense.cu includes this, so its names stay in an unnamed
// namespace, internal to that file.
#pragma once

#include <cstdint>
#include <type_traits>
#include <vector>

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

// Coordinates are in elements, row-major with leading dimension ld, each relative to its own base:
// one square matrix on one GPU; on several, a row band (C, A) and the pivot tile row (B).
struct ProductArgs {
  void* c_matrix;
  const void* a_matrix;
  const void* b_matrix;
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

  Elem* c_matrix = static_cast<Elem*>(args.c_matrix);
  const std::int64_t ld = args.ld;
  const int tid = threadIdx.x;
  const int tx = tid % kThreadsX;
  const int ty = tid / kThreadsX;

  const Elem* a_base =
      static_cast<const Elem*>(args.a_matrix) + (args.a_row + tile_row) * ld + args.a_col;
  const Elem* b_base = static_cast<const Elem*>(args.b_matrix) + std::int64_t(args.b_row) * ld +
                       args.b_col + tile_col;

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
    Elem* c_row_ptr = c_matrix + row * ld;
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
// into the other half of a double buffer, one barrier per step. The tile's corner is (row, col):
// on one GPU row == col; in a row band, row is relative to the band.
template <class T>
__global__ void __launch_bounds__(1024)
    closure_kernel(void* matrix_ptr, std::int64_t ld, int row, int col) {
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
    const Elem* src = matrix + (row + ty * 4 + i) * ld + col + tx * 4;
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
    Elem* dst = matrix + (row + ty * 4 + i) * ld + col + tx * 4;
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

// Rows [first_row, first_row + rows) of the padded matrix (all of it, or one row band).
template <class T>
__global__ void fill_matrix_kernel(void* matrix_ptr, std::int64_t rows, std::int64_t padded,
                                   std::int64_t first_row) {
  using Elem = typename T::Elem;
  Elem* matrix = static_cast<Elem*>(matrix_ptr);
  const std::int64_t total = rows * padded;
  for (std::int64_t idx = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; idx < total;
       idx += std::int64_t(gridDim.x) * blockDim.x) {
    const std::int64_t i = first_row + idx / padded, j = idx % padded;
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

// One warp per vertex u in [first_vertex, end_vertex): M[u][v] = min over parallel arcs u->v of
// their weight, into a matrix (or row band) whose row 0 is vertex first_vertex.
template <class T>
__global__ void scatter_arcs_kernel(void* matrix_ptr, std::int64_t ld, int first_vertex,
                                    int end_vertex, const ArcIndex* row_offsets,
                                    const VertexIndex* heads, const double* weights) {
  using Elem = typename T::Elem;
  Elem* matrix = static_cast<Elem*>(matrix_ptr);
  const int warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
  const int lane = threadIdx.x % 32;
  const int vertex = first_vertex + warp;
  if (vertex >= end_vertex) return;
  for (ArcIndex a = row_offsets[vertex] + lane; a < row_offsets[vertex + 1]; a += 32)
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

}  // namespace

}  // namespace gpu_routing::gpu::apsp
