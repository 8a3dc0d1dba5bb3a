// The many-source and dense all-pairs CUDA engines (seeds 000, 002, 004): what the engine table,
// the unit tests and the benchmark need beyond the common engine interface. The knobs here let
// tests and benchmarks force a code path (a number mode, a worker count); the SQL layer never
// sets them and gets the automatic choice.
#pragma once

#include <memory>
#include <string>

#include "engine/engine.hpp"

namespace gpu_routing::gpu::apsp {

// ---- Dense engines: blocked_fw (seed 002), floyd_warshall (naive baseline), rkleene (seed 004).

enum class DenseAlgorithm { kBlocked, kNaive, kRecursiveKleene };

// How the V x V matrix is stored and added. The integer modes are exact (every value they hold is
// a sum of integer weights below the sentinel); float64 adds in another order than Dijkstra, so
// real weights may differ from it in the last bits (exact for integer weights below 2^53).
enum class DenseMode {
  kAuto,     // int16x2 when every distance fits, else int32 when it fits, else float64
  kInt16x2,  // two 16-bit lanes per 32-bit word (__viaddmin_u16x2); distances <= 32766
  kInt32,    // one 32-bit integer (__viaddmin_s32); distances <= 2^30 - 2
  kFloat64,  // doubles (DADD + DMNMX)
};

const char* dense_mode_name(DenseMode mode);  // "auto", "int16x2", "int32", "float64"

// The mode kAuto picks for `graph`; for a forced mode, throws kInvalidParameter when it cannot
// represent the graph's distances exactly (real weights, or (V-1) * max_weight too large).
DenseMode resolve_dense_mode(const Graph& graph, DenseMode requested);

// Tuning knobs for the benchmark. product_variant selects among the compiled register-tiled
// min-plus kernels of a mode (0 = the default; see apsp_dense_kernels.cuh for the shapes).
struct DenseTuning {
  DenseMode mode = DenseMode::kAuto;
  int product_variant = 0;
  // 64-row tiles for products whose 128-row tiles would not fill the GPU: -1 = there (default),
  // 0 = never, 1 = always.
  int small_tiles = -1;
  // Row bands of blocked_fw's matrix, one per GPU. 0 = automatic: every usable device when there
  // are at least two and V is large enough to pay; 1 = one GPU (device 0); k >= 2 = k bands, more
  // bands than devices sharing devices round-robin (tests run the distributed path on one GPU).
  // At most one band per 128-row tile row. floyd_warshall and rkleene ignore it (one GPU).
  int devices = 0;
};
int dense_product_variant_count(DenseMode mode);
std::string dense_product_variant_name(DenseMode mode, int variant);

std::unique_ptr<ShortestPathEngine> create_dense_engine(const Graph& graph,
                                                        const EngineOptions& options,
                                                        DenseAlgorithm algorithm,
                                                        const DenseTuning& tuning = {});
// Device bytes the dense engines allocate, all devices together (the padded matrix in the
// automatic mode once, plus the row staging buffers, the graph while the matrix is built and, when
// blocked_fw spreads over several GPUs, their pivot rows).
std::size_t estimate_dense_bytes(const Graph& graph, int batch);

// ---- multi_source (seed 000): 32 sources per warp-wide group, several groups per launch.

struct MultiSourceTuning {
  int groups_per_launch = 0;  // 0 = sized from the vertex count (enough threads to fill the GPU)
  int workers = 0;            // host threads, one per device; 0 = every usable device. More
                              // workers than devices share devices round-robin (tests use it)
};

std::unique_ptr<ShortestPathEngine> create_multi_source_engine(
    const Graph& graph, const EngineOptions& options, const MultiSourceTuning& tuning = {});
std::size_t estimate_multi_source_bytes(const Graph& graph, int batch);

// Milliseconds of the last solve() spent in the path recording kernel (multi_source only), for
// the benchmark's overhead column; 0 for other engines.
double path_recording_ms(const ShortestPathEngine& engine);

}  // namespace gpu_routing::gpu::apsp
