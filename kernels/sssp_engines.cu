// The Dijkstra-family CUDA engines of seeds 000, 001 and 003.
//
// Single source:
//   frontier              DA2CF with relax_F (seed 001): frontier vertices relax their unresolved
//                         successors with atomicMin on the float64 bits; a two-pass minimum over
//                         unresolved vertices; an update kernel makes those at the minimum the
//                         new frontier. Switches to the adjacency matrix on dense graphs.
//   frontier_pred         DA2CF with relax_U: each unresolved vertex takes the minimum over its
//                         frontier predecessors (reversed CSR); no atomics.
//   frontier_matrix,
//   frontier_pred_matrix  the same two on a V x V matrix of cheapest arc weights (seed 001 s. 5).
//   crauser               Dijkstra with Crauser's threshold (Ortega-Arranz et al.): settle every
//                         unsettled v with dist[v] <= min over unsettled u of dist[u] +
//                         (cheapest arc out of u).
//   bellman_ford          Harish & Narayanan's scatter/check iteration (mask M, costs C, updating
//                         costs U), its write-after-write race (seed 001 s. 4.3) fixed by
//                         atomicMin.
// Many sources:
//   harish                bellman_ford's kernels, one source at a time (seed 000's baseline).
//   concurrent            crauser on several CUDA streams at once, each with its own buffers.
//
// Every engine runs its rounds on the device in batches: a CUDA graph whose conditional WHILE node
// repeats a body of a few rounds until a round's last kernel sees the end (or the batch's round
// budget), so the host waits once per batch, polls the cancel token, and adapts the batch size to
// ~10 ms. Every kernel is a no-op once the device-side done flag is set, so rounds left in the
// body after the end cost a launch each. Where the driver has no conditional nodes the rounds are
// launched as plain kernels in batches. Predecessors come from kernels/predecessors_gpu.
//
// Measured on an H200 (bench/sssp_bench): a round costs ~15-35 us (three launches; graph size
// matters less than launch latency), so these engines win where rounds are few: bellman_ford on
// low-diameter graphs (random 1M: 2.5 ms against 401 ms for CPU Dijkstra), crauser on R-MAT;
// frontier needs one round per distinct distance (221,736 on the NY road network: 4.2 s).
#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "engine/gpu.hpp"
#include "base/predecessors.hpp"
#include "cuda_common.cuh"
#include "gpu_engines.hpp"
#include "multi_device_engine.cuh"
#include "predecessors_gpu.cuh"
#include "sssp_tuning.hpp"

namespace gpu_routing::gpu {

namespace {

constexpr unsigned kFullWarp = 0xffffffffu;
// A vertex with more arcs than this is relaxed by its whole warp (lanes stride its arcs), so the
// hubs of power-law graphs do not hold one thread for their thousands of arcs.
constexpr ArcIndex kWarpAssistDegree = 32;
constexpr int kAuxiliaryBlockSize = 256;   // init, minimum and update kernels
constexpr int kMaxPartialMinimums = 1024;  // blocks of the first minimum pass
constexpr int kMaxMatrixRowBlocks = 2048;
// Adaptive rounds per batch: grow while a batch takes under kGrowBelowMs, shrink above
// kShrinkAboveMs, so the host polls the cancel token every ~10-30 ms.
constexpr unsigned kInitialBatchRounds = 32;
constexpr unsigned kMaxBatchRounds = 1u << 20;
constexpr double kGrowBelowMs = 8.0;
constexpr double kShrinkAboveMs = 32.0;
constexpr double kDenseArcRatio = 0.25;  // frontier engines: arcs >= 0.25 V^2 -> matrix
// Seed 003 found 4 concurrent kernels best on Fermi; on an H200 (bench/sssp_bench's third
// table, 32 sources on a random 100k graph) ms per source fell with streams: 1: 10.1, 2: 5.35,
// 4: 2.93, 8: 1.80, 16: 1.46, 32: 1.48. Small rounds leave the GPU idle between kernels, and more
// sources in flight fill it. Fewer when memory is short.
constexpr int kDefaultConcurrentStreams = 16;

// Relax block sizes, bench/sssp_bench's second table on an H200 (random graph, V = 1M, E = 4V):
// 128 was best for all four relax kernels, though by 1-3% only (frontier 52.2 ms against 53.7 at
// 64 and 53.8 at 512): these rounds are bound by launches and latency, not by occupancy. Seed
// 003's 96 (Fermi) is within that spread.
constexpr int kFrontierBlockSize = 128;
constexpr int kFrontierPredBlockSize = 128;
constexpr int kCrauserBlockSize = 128;
constexpr int kBellmanFordBlockSize = 128;

std::atomic<bool> g_time_relax{false};
std::atomic<bool> g_plain_launches{false};
// Rounds captured into one iteration of the batch graph's loop: the loop's own per-iteration
// cost is paid once for them (rounds after the end are no-op launches, at most this minus one).
// Measured on an H200 (bench/sssp_bench's fourth table), ms per source for 1/2/4/8 rounds:
// frontier on a 4096 ring 46.7/39.6/37.0/34.8, bellman_ford 33.6/26.7/23.3/21.8, crauser on a
// random 100k graph 10.1/9.05/8.60/8.40. 4 takes most of the gain and is the count the tests ran.
constexpr int kDefaultRoundsPerIteration = 4;
std::atomic<int> g_rounds_per_iteration{kDefaultRoundsPerIteration};

enum class Method { kFrontier, kFrontierPred, kCrauser, kBellmanFord };
enum class Storage { kLists, kMatrix, kAuto };

struct EngineConfig {
  const char* name;
  Method method;
  Storage storage;
  bool concurrent;  // several streams, one source each
  int default_block_size;
};

// Round state on the device, read back once per batch.
struct RoundControl {
  double threshold;                // this round's minimum (DA2CF) or Crauser's Delta
  long long rounds;                // rounds that made progress
  unsigned int done;               // set by the round that found nothing left to do
  unsigned int changed;            // Bellman-Ford: some cost fell in this iteration
  unsigned int finished_blocks;    // Bellman-Ford: last-block detection in the check kernel
  unsigned int batch_rounds;       // rounds the running batch has done
  unsigned int batch_limit;        // rounds per batch, set by the host
  unsigned long long relax_start;  // relax timing: %globaltimer when this round's relax began
  unsigned long long relax_ns;     // relax timing: nanoseconds of this source's relax kernels
};

// What every round kernel reads; passed by value (and captured so into the batch graph).
struct RoundArgs {
  VertexIndex vertex_count;
  const ArcIndex* row_offsets;  // forward CSR (relax_F, Bellman-Ford), reversed one (relax_U)
  const VertexIndex* heads;
  const double* weights;
  const double* matrix;          // V x V cheapest arc weights (matrix forms)
  const double* min_out_weight;  // Crauser: cheapest arc leaving each vertex (+inf: none)
  double* distances;             // c / delta / C
  double* updating;              // Bellman-Ford's updating costs U
  unsigned char* unresolved;     // U of DA2CF / unsettled of Crauser
  unsigned char* frontier;       // F (Bellman-Ford: the mask M)
  double* partial_minimums;
  int partial_count;
  RoundControl* control;
  cudaGraphConditionalHandle loop;  // the batch graph's WHILE condition; 0 outside a graph
  bool time_relax;                  // bench/sssp_bench's relax kernel timing
};

// ---------------------------------------------------------------------------------------------
// Device helpers

__device__ __forceinline__ bool rounds_done(const RoundControl* control) {
  return *static_cast<const volatile unsigned int*>(&control->done) != 0;
}

// Called by one thread at the end of a round that started with work left: records the outcome
// and ends the batch's loop when the search is over or the batch's budget is spent.
__device__ void end_round(const RoundArgs& args, bool finished) {
  RoundControl* control = args.control;
  if (finished)
    control->done = 1;
  else
    control->rounds += 1;
  const unsigned int ran = control->batch_rounds + 1;
  if (finished || ran >= control->batch_limit) {
    control->batch_rounds = 0;
    if (args.loop != 0) cudaGraphSetConditional(args.loop, 0);
  } else {
    control->batch_rounds = ran;
  }
}

__device__ __forceinline__ unsigned long long global_nanoseconds() {
  unsigned long long now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  return now;
}

// Relax timing without host events (which would time the host's launch rate): the relax
// kernel's first block stamps its start, the round's next kernel's first block adds the time up
// to its own start. So a relax time is the kernel plus one fixed launch gap, the same for every
// block size compared.
__device__ __forceinline__ void stamp_relax_start(const RoundArgs& args) {
  if (args.time_relax && blockIdx.x == 0 && threadIdx.x == 0)
    args.control->relax_start = global_nanoseconds();
}
__device__ __forceinline__ void add_relax_time(const RoundArgs& args) {
  if (args.time_relax && blockIdx.x == 0 && threadIdx.x == 0)
    args.control->relax_ns += global_nanoseconds() - args.control->relax_start;
}

// A round kernel that finds the search over must still end the graph's loop.
__device__ __forceinline__ void stop_loop_if_first_thread(const RoundArgs& args) {
  if (args.loop != 0 && blockIdx.x == 0 && threadIdx.x == 0) cudaGraphSetConditional(args.loop, 0);
}

// Calls action(arc, value) for every arc of every lane's vertex. Light vertices are handled by
// their own lane; heavy ones (> kWarpAssistDegree arcs) by the whole warp, lanes striding the
// arcs with the owner's `value`. Every lane of the warp must arrive here.
template <typename Action>
__device__ __forceinline__ void for_each_arc_warp_assisted(bool active, ArcIndex begin,
                                                           ArcIndex end, double value,
                                                           Action action) {
  const bool heavy = active && end - begin > kWarpAssistDegree;
  if (active && !heavy)
    for (ArcIndex a = begin; a < end; ++a) action(a, value);
  unsigned heavy_lanes = __ballot_sync(kFullWarp, heavy);
  const int lane = threadIdx.x & 31;
  while (heavy_lanes != 0) {
    const int leader = __ffs(heavy_lanes) - 1;
    heavy_lanes &= heavy_lanes - 1;
    const ArcIndex leader_begin = __shfl_sync(kFullWarp, begin, leader);
    const ArcIndex leader_end = __shfl_sync(kFullWarp, end, leader);
    const double leader_value = __shfl_sync(kFullWarp, value, leader);
    for (ArcIndex a = leader_begin + lane; a < leader_end; a += 32) action(a, leader_value);
  }
}

__device__ __forceinline__ double warp_min(double value) {
  for (int offset = 16; offset > 0; offset >>= 1)
    value = fmin(value, __shfl_down_sync(kFullWarp, value, offset));
  return value;
}

// Minimum over the block; the result is valid in thread 0. blockDim.x is a multiple of 32.
__device__ double block_min(double value) {
  __shared__ double warp_minimums[32];
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
  value = warp_min(value);
  if (lane == 0) warp_minimums[warp] = value;
  __syncthreads();
  if (warp == 0) {
    const int warps = static_cast<int>(blockDim.x + 31) >> 5;
    value = lane < warps ? warp_minimums[lane] : kInfinity;
    value = warp_min(value);
  }
  return value;
}

// Lowers *target to candidate; reads first so most losing candidates cost no atomic.
__device__ __forceinline__ void lower_distance(double* target, double candidate) {
  if (candidate < *target) atomic_min_distance(target, candidate);
}

// ---------------------------------------------------------------------------------------------
// Kernels

__global__ void init_source_kernel(RoundArgs args, VertexIndex source, bool bellman_ford) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       i < args.vertex_count; i += stride) {
    const bool is_source = i == source;
    const double start = is_source ? 0.0 : kInfinity;
    args.distances[i] = start;
    args.frontier[i] = is_source ? 1 : 0;
    if (bellman_ford)
      args.updating[i] = start;
    else
      args.unresolved[i] = is_source ? 0 : 1;
  }
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    RoundControl* control = args.control;
    control->threshold = 0;
    control->rounds = 0;
    control->done = 0;
    control->changed = 0;
    control->finished_blocks = 0;
    control->batch_rounds = 0;
    control->relax_start = 0;
    control->relax_ns = 0;
  }
}

// relax_F on lists: for each frontier vertex, atomicMin into its unresolved successors.
__global__ void relax_frontier_kernel(RoundArgs args) {
  if (rounds_done(args.control)) return;  // the same for the whole grid
  stamp_relax_start(args);
  const std::int64_t index = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const bool in_range = index < args.vertex_count;
  const VertexIndex v = in_range ? static_cast<VertexIndex>(index) : 0;
  const bool active = in_range && args.frontier[v] != 0;
  ArcIndex begin = 0, end = 0;
  double from = 0;
  if (active) {
    begin = args.row_offsets[v];
    end = args.row_offsets[v + 1];
    from = args.distances[v];
  }
  for_each_arc_warp_assisted(active, begin, end, from, [&](ArcIndex a, double tail_distance) {
    const VertexIndex head = args.heads[a];
    if (args.unresolved[head])
      lower_distance(&args.distances[head], tail_distance + args.weights[a]);
  });
}

// relax_U on lists (reversed CSR): each unresolved vertex takes the minimum over its frontier
// predecessors. Only the vertex's own thread (or its warp's leader) writes its distance, and
// frontier vertices' distances are not written in this kernel: no atomics.
__global__ void relax_unresolved_kernel(RoundArgs args) {
  if (rounds_done(args.control)) return;
  stamp_relax_start(args);
  const std::int64_t index = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const bool in_range = index < args.vertex_count;
  const VertexIndex v = in_range ? static_cast<VertexIndex>(index) : 0;
  const bool active = in_range && args.unresolved[v] != 0;
  ArcIndex begin = 0, end = 0;
  if (active) {
    begin = args.row_offsets[v];
    end = args.row_offsets[v + 1];
  }
  const bool heavy = active && end - begin > kWarpAssistDegree;
  double best = kInfinity;
  if (active && !heavy) {
    for (ArcIndex a = begin; a < end; ++a) {
      const VertexIndex tail = args.heads[a];
      if (args.frontier[tail]) best = fmin(best, args.distances[tail] + args.weights[a]);
    }
  }
  unsigned heavy_lanes = __ballot_sync(kFullWarp, heavy);
  const int lane = threadIdx.x & 31;
  while (heavy_lanes != 0) {
    const int leader = __ffs(heavy_lanes) - 1;
    heavy_lanes &= heavy_lanes - 1;
    const ArcIndex leader_begin = __shfl_sync(kFullWarp, begin, leader);
    const ArcIndex leader_end = __shfl_sync(kFullWarp, end, leader);
    double shared_best = kInfinity;
    for (ArcIndex a = leader_begin + lane; a < leader_end; a += 32) {
      const VertexIndex tail = args.heads[a];
      if (args.frontier[tail])
        shared_best = fmin(shared_best, args.distances[tail] + args.weights[a]);
    }
    shared_best = __shfl_sync(kFullWarp, warp_min(shared_best), 0);
    if (lane == leader) best = shared_best;
  }
  if (active && best < args.distances[v]) args.distances[v] = best;
}

// relax_F on the matrix: blocks take frontier rows, threads sweep the row (coalesced).
__global__ void relax_frontier_matrix_kernel(RoundArgs args) {
  if (rounds_done(args.control)) return;
  stamp_relax_start(args);
  const std::size_t n = static_cast<std::size_t>(args.vertex_count);
  for (std::size_t row = blockIdx.x; row < n; row += gridDim.x) {
    if (!args.frontier[row]) continue;  // the same for the whole block
    const double from = args.distances[row];
    const double* weights = args.matrix + row * n;
    for (std::size_t column = threadIdx.x; column < n; column += blockDim.x) {
      const double weight = weights[column];
      if (weight < kInfinity && args.unresolved[column])
        lower_distance(&args.distances[column], from + weight);
    }
  }
}

// relax_U on the matrix: one thread per column; every thread of a warp reads the same frontier
// flag (a broadcast) and neighbouring matrix entries (coalesced).
__global__ void relax_unresolved_matrix_kernel(RoundArgs args) {
  if (rounds_done(args.control)) return;
  stamp_relax_start(args);
  const std::int64_t column = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (column >= args.vertex_count || !args.unresolved[column]) return;
  const std::size_t n = static_cast<std::size_t>(args.vertex_count);
  double best = args.distances[column];
  for (std::size_t row = 0; row < n; ++row) {
    if (!args.frontier[row]) continue;
    const double weight = args.matrix[row * n + static_cast<std::size_t>(column)];
    if (weight < kInfinity) best = fmin(best, args.distances[row] + weight);
  }
  if (best < args.distances[column]) args.distances[column] = best;
}

// The minimum (seed 001's minimum1 + minimum2 in one launch): each block reduces its share of
// the unresolved vertices' distances (plus, for Crauser's threshold, each one's cheapest
// outgoing arc) to a partial minimum; the last block to finish reduces the partials (the second
// pass) and records the round's threshold, or the end when it is +inf.
__global__ void minimum_kernel(RoundArgs args, bool crauser) {
  if (rounds_done(args.control)) {
    stop_loop_if_first_thread(args);
    return;
  }
  add_relax_time(args);
  double minimum = kInfinity;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t v = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       v < args.vertex_count; v += stride) {
    if (!args.unresolved[v]) continue;
    double value = args.distances[v];
    if (crauser) value += args.min_out_weight[v];
    minimum = fmin(minimum, value);
  }
  minimum = block_min(minimum);
  __shared__ bool last_block;
  RoundControl* control = args.control;
  if (threadIdx.x == 0) {
    args.partial_minimums[blockIdx.x] = minimum;
    __threadfence();
    last_block = atomicAdd(&control->finished_blocks, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (!last_block) return;
  __threadfence();
  minimum = kInfinity;
  for (unsigned i = threadIdx.x; i < gridDim.x; i += blockDim.x)
    minimum = fmin(minimum, __ldcg(&args.partial_minimums[i]));
  minimum = block_min(minimum);
  if (threadIdx.x == 0) {
    control->finished_blocks = 0;
    const bool finished = !(minimum < kInfinity);
    if (!finished) control->threshold = minimum;
    end_round(args, finished);
  }
}

// update: unresolved vertices at the minimum (DA2CF) or within Crauser's threshold become the
// new frontier; the old frontier is cleared.
__global__ void update_kernel(RoundArgs args, bool crauser) {
  if (rounds_done(args.control)) return;
  const std::int64_t v = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (v >= args.vertex_count) return;
  const double threshold = args.control->threshold;
  bool settle = false;
  if (args.unresolved[v]) {
    const double distance = args.distances[v];
    settle = crauser ? distance <= threshold : distance == threshold;
  }
  if (settle) {
    args.unresolved[v] = 0;
    args.frontier[v] = 1;
  } else if (args.frontier[v]) {
    args.frontier[v] = 0;
  }
}

// Harish's scattering kernel: masked vertices lower their successors' updating costs. The
// original `if (U[n] > C[v] + w) U[n] = C[v] + w` loses updates when two threads race for one
// n (seed 001 s. 4.3); atomicMin on the float64 bits does not.
__global__ void bellman_ford_scatter_kernel(RoundArgs args) {
  if (rounds_done(args.control)) return;
  stamp_relax_start(args);
  const std::int64_t index = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const bool in_range = index < args.vertex_count;
  const VertexIndex v = in_range ? static_cast<VertexIndex>(index) : 0;
  const bool active = in_range && args.frontier[v] != 0;
  ArcIndex begin = 0, end = 0;
  double from = 0;
  if (active) {
    args.frontier[v] = 0;
    begin = args.row_offsets[v];
    end = args.row_offsets[v + 1];
    from = args.distances[v];
  }
  for_each_arc_warp_assisted(active, begin, end, from, [&](ArcIndex a, double tail_distance) {
    lower_distance(&args.updating[args.heads[a]], tail_distance + args.weights[a]);
  });
}

// Harish's checking kernel: a vertex whose updating cost fell below its cost takes it and is
// masked for the next iteration. The last block to finish decides whether anything changed (no
// host round trip).
__global__ void bellman_ford_check_kernel(RoundArgs args) {
  if (rounds_done(args.control)) {
    stop_loop_if_first_thread(args);
    return;
  }
  add_relax_time(args);
  int changed = 0;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t v = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       v < args.vertex_count; v += stride) {
    const double updated = args.updating[v];
    if (updated < args.distances[v]) {
      args.distances[v] = updated;
      args.frontier[v] = 1;
      changed = 1;
    }
  }
  changed = __syncthreads_or(changed);
  if (threadIdx.x != 0) return;
  RoundControl* control = args.control;
  if (changed) atomicOr(&control->changed, 1u);
  __threadfence();
  const unsigned int ticket = atomicAdd(&control->finished_blocks, 1u);
  if (ticket != gridDim.x - 1) return;
  __threadfence();
  const unsigned int any_changed = atomicExch(&control->changed, 0u);
  control->finished_blocks = 0;
  end_round(args, any_changed == 0);
}

// Crauser's W(u): the cheapest arc leaving u, self loops excluded (a shortest path never takes
// one, and a zero-cost loop would hold Delta at dist[u]).
__global__ void min_out_weight_kernel(VertexIndex vertex_count, const ArcIndex* row_offsets,
                                      const VertexIndex* heads, const double* weights,
                                      double* min_out_weight) {
  const std::int64_t v = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (v >= vertex_count) return;
  double cheapest = kInfinity;
  for (ArcIndex a = row_offsets[v]; a < row_offsets[v + 1]; ++a)
    if (heads[a] != v) cheapest = fmin(cheapest, weights[a]);
  min_out_weight[v] = cheapest;
}

__global__ void fill_kernel(double* values, std::size_t count, double value) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += stride)
    values[i] = value;
}

// One warp per row: the cheapest of parallel arcs wins (atomicMin, lanes may share a head).
__global__ void arcs_to_matrix_kernel(VertexIndex vertex_count, const ArcIndex* row_offsets,
                                      const VertexIndex* heads, const double* weights,
                                      double* matrix) {
  const std::int64_t row = (static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) >> 5;
  const int lane = threadIdx.x & 31;
  if (row >= vertex_count) return;
  double* matrix_row =
      matrix + static_cast<std::size_t>(row) * static_cast<std::size_t>(vertex_count);
  for (ArcIndex a = row_offsets[row] + lane; a < row_offsets[row + 1]; a += 32)
    atomic_min_distance(&matrix_row[heads[a]], weights[a]);
}

// ---------------------------------------------------------------------------------------------
// Host side

int grid_for(std::int64_t items, int block_size, int max_blocks) {
  return std::min(blocks_for(items, block_size), max_blocks);
}

std::string device_label_of(int device) {
  const Availability& gpus = availability();
  for (const auto& info : gpus.devices)
    if (info.index == device) return info.name + " (device " + std::to_string(device) + ")";
  return "GPU device " + std::to_string(device);
}

// Block sizes are whole warps (the relax kernels' ballots need every lane), 32 .. 1024.
int whole_warps(int block_size) {
  block_size = std::max(32, std::min(1024, block_size));
  return (block_size + 31) / 32 * 32;
}

std::size_t square_bytes(VertexIndex vertex_count) {
  const std::size_t n = static_cast<std::size_t>(vertex_count);
  return saturating_multiply(saturating_multiply(n, n), sizeof(double));
}

bool is_dense(const Graph& graph) {
  const double n = static_cast<double>(graph.vertex_count());
  return graph.vertex_count() > 0 &&
         static_cast<double>(graph.arc_count()) >= kDenseArcRatio * n * n;
}

std::size_t csr_bytes(const Graph& graph, bool with_edge_ids) {
  const std::size_t arcs = static_cast<std::size_t>(graph.arc_count());
  const std::size_t rows = static_cast<std::size_t>(graph.vertex_count()) + 1;
  return rows * sizeof(ArcIndex) + arcs * (sizeof(VertexIndex) + sizeof(double)) +
         (with_edge_ids ? arcs * sizeof(std::int64_t) : 0);
}

// Bytes of one engine: device (graph, matrix, per-stream work arrays) and pinned host staging.
struct MemoryPlan {
  std::size_t device = 0;
  std::size_t host = 0;
  std::size_t total() const { return saturating_add(device, host); }
};

MemoryPlan plan_memory(const Graph& graph, Method method, bool matrix, int lanes,
                       bool predecessors) {
  const std::size_t n = static_cast<std::size_t>(graph.vertex_count());
  MemoryPlan plan;
  // The forward CSR (the matrix is built from it), the reversed one for relax_U/predecessors.
  std::size_t device = csr_bytes(graph, false);
  if (method == Method::kFrontierPred || predecessors)
    device = saturating_add(device, csr_bytes(graph, true));
  if (matrix) device = saturating_add(device, square_bytes(graph.vertex_count()));
  if (method == Method::kCrauser) device = saturating_add(device, n * sizeof(double));
  std::size_t per_lane = n * (sizeof(double) + 2) + kMaxPartialMinimums * sizeof(double) + 64;
  if (method == Method::kBellmanFord) per_lane += n * sizeof(double);
  if (predecessors) per_lane += predecessor_pass_bytes(graph.vertex_count());
  std::size_t host_per_lane = n * sizeof(double) + (predecessors ? n * sizeof(ArcIndex) : 0) + 64;
  plan.device =
      saturating_add(device, saturating_multiply(per_lane, static_cast<std::size_t>(lanes)));
  plan.host = saturating_multiply(host_per_lane, static_cast<std::size_t>(lanes));
  return plan;
}

// A CUDA graph `while (condition) { one round }`; the round's last kernel clears the condition.
class BatchGraph {
 public:
  BatchGraph() = default;
  ~BatchGraph() { release(); }
  BatchGraph(const BatchGraph&) = delete;
  BatchGraph& operator=(const BatchGraph&) = delete;

  // Returns false (and leaves nothing behind) when the driver cannot build conditional nodes.
  template <typename EnqueueRound>
  bool build(cudaStream_t capture_stream, EnqueueRound enqueue_round) {
    release();
    GPU_ROUTING_CUDA_CHECK(cudaGraphCreate(&graph_, 0));
    cudaGraphConditionalHandle handle = 0;
    if (cudaGraphConditionalHandleCreate(&handle, graph_, 1, cudaGraphCondAssignDefault) !=
        cudaSuccess) {
      cudaGetLastError();
      release();
      return false;
    }
    cudaGraphNodeParams params{};
    params.type = cudaGraphNodeTypeConditional;
    params.conditional.handle = handle;
    params.conditional.type = cudaGraphCondTypeWhile;
    params.conditional.size = 1;
    cudaGraphNode_t node = nullptr;
    if (cudaGraphAddNode(&node, graph_, nullptr, nullptr, 0, &params) != cudaSuccess) {
      cudaGetLastError();
      release();
      return false;
    }
    cudaGraph_t body = params.conditional.phGraph_out[0];
    GPU_ROUTING_CUDA_CHECK(cudaStreamBeginCaptureToGraph(capture_stream, body, nullptr, nullptr, 0,
                                                         cudaStreamCaptureModeThreadLocal));
    try {
      enqueue_round(capture_stream, handle);
    } catch (...) {
      cudaGraph_t ignored = nullptr;
      cudaStreamEndCapture(capture_stream, &ignored);
      cudaGetLastError();
      release();
      throw;
    }
    GPU_ROUTING_CUDA_CHECK(cudaStreamEndCapture(capture_stream, nullptr));
    if (cudaGraphInstantiate(&exec_, graph_, 0) != cudaSuccess) {
      cudaGetLastError();
      exec_ = nullptr;
      release();
      return false;
    }
    return true;
  }

  void launch(cudaStream_t stream) const { GPU_ROUTING_CUDA_CHECK(cudaGraphLaunch(exec_, stream)); }

 private:
  void release() {
    if (exec_ != nullptr) cudaGraphExecDestroy(exec_);
    if (graph_ != nullptr) cudaGraphDestroy(graph_);
    exec_ = nullptr;
    graph_ = nullptr;
  }
  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t exec_ = nullptr;
};

// One source in flight: its stream, its buffers, its batch graph.
struct Lane {
  enum class State { kIdle, kRunning, kDownloading };

  Stream stream;
  DeviceBuffer<double> distances;
  DeviceBuffer<double> updating;
  DeviceBuffer<unsigned char> unresolved;
  DeviceBuffer<unsigned char> frontier;
  DeviceBuffer<double> partial_minimums;
  DeviceBuffer<RoundControl> control;
  PinnedBuffer<RoundControl> control_host;
  PinnedBuffer<double> distances_host;
  PinnedBuffer<ArcIndex> arcs_host;
  DevicePredecessorPass predecessors;
  Event batch_done, copy_start, copy_end;
  BatchGraph graph;

  State state = State::kIdle;
  int row = -1;
  VertexIndex source = kNoVertex;
  unsigned batch_limit = kInitialBatchRounds;
  unsigned limit_on_device = 0;
  Stopwatch batch_watch;

  Lane() = default;
  Lane(const Lane&) = delete;
  Lane& operator=(const Lane&) = delete;
  ~Lane() {
    cudaStreamSynchronize(stream.get());  // nothing may still run on buffers being freed
  }
};

class DijkstraFamilyEngine final : public ShortestPathEngine {
 public:
  DijkstraFamilyEngine(const Graph& graph, const EngineOptions& options, const EngineConfig& config,
                       int device = 0)
      : ShortestPathEngine(graph, options), config_(config), device_(device) {
    use_device(device_);
    report_.device_name = device_label_of(device_);
    block_size_ =
        whole_warps(options.block_size > 0 ? options.block_size : config.default_block_size);
    if (options.block_size > 0 && block_size_ != options.block_size)
      add_note("block size " + std::to_string(options.block_size) + " rounded to " +
               std::to_string(block_size_) + " (whole warps, at most 1024)");
    time_relax_ = g_time_relax.load();
    int lanes = 1;
    if (config.concurrent) {
      lanes = options.streams > 0 ? options.streams : kDefaultConcurrentStreams;
      // The default shrinks to what fits; an explicit setting is refused when it does not.
      if (options.streams <= 0)
        while (lanes > 1 && !fits(plan_memory(graph, config.method, false, lanes, true)))
          lanes /= 2;
    }
    decide_storage(lanes);
    const VertexIndex n = graph.vertex_count();
    if (n == 0) return;
    Stopwatch watch;
    Stream upload_stream;
    upload_graph(upload_stream.get());
    for (int i = 0; i < lanes; ++i) lanes_.push_back(std::make_unique<Lane>());
    for (auto& lane : lanes_) allocate_lane(*lane);
    GPU_ROUTING_CUDA_CHECK(cudaDeviceSynchronize());
    report_.transfer_ms += watch.elapsed_ms();
    if (config.concurrent) add_note(std::to_string(lanes) + " concurrent streams");
    build_batch_graphs();
  }

  // Streams and buffers are freed with their own device current.
  ~DijkstraFamilyEngine() override { cudaSetDevice(device_); }

  const char* name() const override { return config_.name; }
  Device device() const override { return Device::kGpu; }
  int preferred_batch_size() const override {
    return config_.concurrent ? static_cast<int>(lanes_.size()) * 8 : 1;
  }

  void solve(const SolveRequest& request) override {
    const VertexIndex n = graph_.vertex_count();
    if (request.source_count <= 0) return;
    for (int i = 0; i < request.source_count; ++i)
      if (request.sources[i] < 0 || request.sources[i] >= n)
        throw RoutingError(ErrorKind::kInvalidParameter, "source vertex index " +
                                                             std::to_string(request.sources[i]) +
                                                             " is not a vertex of the graph");
    const bool predecessors = request.predecessor_arcs != nullptr;
    use_device(device_);
    if (predecessors) prepare_predecessors();
    Stopwatch wall;
    const double transfer_before = report_.transfer_ms;
    try {
      schedule(request, predecessors);
    } catch (...) {
      for (auto& lane : lanes_) {
        cudaStreamSynchronize(lane->stream.get());
        lane->state = Lane::State::kIdle;
      }
      cudaGetLastError();
      throw;
    }
    report_.compute_ms +=
        std::max(0.0, wall.elapsed_ms() - (report_.transfer_ms - transfer_before));
  }

  double relax_ms() const { return relax_ms_; }
  int relax_block() const { return block_size_; }

 private:
  void add_note(const std::string& note) {
    if (!report_.notes.empty()) report_.notes += "; ";
    report_.notes += note;
  }

  bool fits(const MemoryPlan& plan) const {
    if (plan.total() > options_.budget.limit_bytes()) return false;
    try {
      require_device_memory(device_, plan.device, "work arrays", MemoryBudget());
    } catch (const RoutingError&) {
      return false;
    }
    return true;
  }

  // Lists or matrix; refuses (kOutOfMemory naming the size) what does not fit.
  void decide_storage(int lanes) {
    const Graph& g = graph_;
    const std::string n_text = std::to_string(g.vertex_count());
    matrix_ = config_.storage == Storage::kMatrix;
    if (config_.storage == Storage::kAuto && is_dense(g)) {
      if (fits(plan_memory(g, config_.method, true, lanes, true))) {
        matrix_ = true;
        add_note("graph is dense (" + std::to_string(g.arc_count()) + " arcs on " + n_text +
                 " vertices, >= 0.25 V^2): adjacency matrix form");
      } else {
        add_note("graph is dense but its " + n_text + " x " + n_text +
                 " adjacency matrix does not fit: adjacency lists");
      }
    }
    MemoryPlan plan = plan_memory(g, config_.method, matrix_, lanes, true);
    const std::string what =
        std::string(config_.name) +
        (matrix_ ? " (a " + n_text + " x " + n_text + " adjacency matrix of " +
                       format_bytes(square_bytes(g.vertex_count())) + ", graph and work arrays)"
                 : " (graph and work arrays)");
    options_.budget.require(plan.total(), what);
    require_device_memory(device_, plan.device, what, MemoryBudget());
  }

  void upload_graph(cudaStream_t stream) {
    const Graph& g = graph_;
    const VertexIndex n = g.vertex_count();
    const bool relax_u = config_.method == Method::kFrontierPred;
    if (relax_u && !matrix_) {
      reverse_.upload(host_reverse(), true, stream);
      return;
    }
    forward_.upload(g.forward, false, stream);
    if (config_.method == Method::kCrauser) {
      min_out_weight_.allocate(static_cast<std::size_t>(n));
      min_out_weight_kernel<<<blocks_for(n, kAuxiliaryBlockSize), kAuxiliaryBlockSize, 0, stream>>>(
          n, forward_.row_offsets.data(), forward_.heads.data(), forward_.weights.data(),
          min_out_weight_.data());
      GPU_ROUTING_CUDA_CHECK_LAUNCH();
    }
    if (matrix_) {
      const std::size_t cells = static_cast<std::size_t>(n) * static_cast<std::size_t>(n);
      matrix_cells_.allocate(cells);
      fill_kernel<<<grid_for(static_cast<std::int64_t>(cells), 256, 4096), 256, 0, stream>>>(
          matrix_cells_.data(), cells, kInfinity);
      GPU_ROUTING_CUDA_CHECK_LAUNCH();
      arcs_to_matrix_kernel<<<blocks_for(static_cast<std::int64_t>(n) * 32, 256), 256, 0, stream>>>(
          n, forward_.row_offsets.data(), forward_.heads.data(), forward_.weights.data(),
          matrix_cells_.data());
      GPU_ROUTING_CUDA_CHECK_LAUNCH();
      GPU_ROUTING_CUDA_CHECK(cudaStreamSynchronize(stream));
      // The matrix replaces the lists.
      forward_.row_offsets.release();
      forward_.heads.release();
      forward_.weights.release();
    }
  }

  const CsrGraph& host_reverse() {
    if (has_reverse(graph_)) return graph_.reverse;
    if (own_reverse_.row_offsets.empty()) own_reverse_ = reverse_graph(graph_.forward);
    return own_reverse_;
  }

  // The predecessor kernel reads the reversed graph with edge ids; uploaded on first use.
  void prepare_predecessors() {
    if (reverse_.row_offsets.data() == nullptr || reverse_.edge_ids.data() == nullptr) {
      Stopwatch watch;
      Stream stream;
      reverse_.upload(host_reverse(), true, stream.get());
      report_.transfer_ms += watch.elapsed_ms();
    }
    for (auto& lane : lanes_) {
      lane->predecessors.reserve(graph_.vertex_count());
      lane->arcs_host.reserve(static_cast<std::size_t>(graph_.vertex_count()));
    }
  }

  void allocate_lane(Lane& lane) {
    const std::size_t n = static_cast<std::size_t>(graph_.vertex_count());
    lane.distances.allocate(n);
    lane.frontier.allocate(n);
    if (config_.method == Method::kBellmanFord)
      lane.updating.allocate(n);
    else
      lane.unresolved.allocate(n);
    lane.partial_minimums.allocate(kMaxPartialMinimums);
    lane.control.allocate(1);
    lane.control_host.allocate(1);
    std::memset(lane.control_host.data(), 0, sizeof(RoundControl));
    lane.distances_host.allocate(n);
  }

  RoundArgs round_args(const Lane& lane, cudaGraphConditionalHandle loop) const {
    RoundArgs args{};
    args.vertex_count = graph_.vertex_count();
    const bool relax_u = config_.method == Method::kFrontierPred;
    const DeviceCsr& lists = relax_u ? reverse_ : forward_;
    args.row_offsets = lists.row_offsets.data();
    args.heads = lists.heads.data();
    args.weights = lists.weights.data();
    args.matrix = matrix_cells_.data();
    args.min_out_weight = min_out_weight_.data();
    args.distances = lane.distances.data();
    args.updating = lane.updating.data();
    args.unresolved = lane.unresolved.data();
    args.frontier = lane.frontier.data();
    args.partial_minimums = lane.partial_minimums.data();
    args.partial_count = grid_for(args.vertex_count, kAuxiliaryBlockSize, kMaxPartialMinimums);
    args.control = lane.control.data();
    args.loop = loop;
    args.time_relax = time_relax_;
    return args;
  }

  void launch_relax(const RoundArgs& args, cudaStream_t stream) const {
    const VertexIndex n = args.vertex_count;
    switch (config_.method) {
      case Method::kFrontier:
        if (matrix_)
          relax_frontier_matrix_kernel<<<std::min<int>(n, kMaxMatrixRowBlocks), block_size_, 0,
                                         stream>>>(args);
        else
          relax_frontier_kernel<<<blocks_for(n, block_size_), block_size_, 0, stream>>>(args);
        break;
      case Method::kFrontierPred:
        if (matrix_)
          relax_unresolved_matrix_kernel<<<blocks_for(n, block_size_), block_size_, 0, stream>>>(
              args);
        else
          relax_unresolved_kernel<<<blocks_for(n, block_size_), block_size_, 0, stream>>>(args);
        break;
      case Method::kCrauser:
        relax_frontier_kernel<<<blocks_for(n, block_size_), block_size_, 0, stream>>>(args);
        break;
      case Method::kBellmanFord:
        bellman_ford_scatter_kernel<<<blocks_for(n, block_size_), block_size_, 0, stream>>>(args);
        break;
    }
    GPU_ROUTING_CUDA_CHECK_LAUNCH();
  }

  // One round: relax, minimum (both passes), update; Bellman-Ford: scatter, check.
  void enqueue_round(Lane& lane, cudaStream_t stream, cudaGraphConditionalHandle loop) {
    const RoundArgs args = round_args(lane, loop);
    const VertexIndex n = args.vertex_count;
    launch_relax(args, stream);
    if (config_.method == Method::kBellmanFord) {
      bellman_ford_check_kernel<<<blocks_for(n, kAuxiliaryBlockSize), kAuxiliaryBlockSize, 0,
                                  stream>>>(args);
      GPU_ROUTING_CUDA_CHECK_LAUNCH();
      return;
    }
    const bool crauser = config_.method == Method::kCrauser;
    minimum_kernel<<<args.partial_count, kAuxiliaryBlockSize, 0, stream>>>(args, crauser);
    GPU_ROUTING_CUDA_CHECK_LAUNCH();
    update_kernel<<<blocks_for(n, kAuxiliaryBlockSize), kAuxiliaryBlockSize, 0, stream>>>(args,
                                                                                          crauser);
    GPU_ROUTING_CUDA_CHECK_LAUNCH();
  }

  void build_batch_graphs() {
    use_graphs_ = !g_plain_launches.load();
    if (!use_graphs_) return;
    const int rounds = std::max(1, std::min(64, g_rounds_per_iteration.load()));
    if (rounds != kDefaultRoundsPerIteration)
      add_note(std::to_string(rounds) + " rounds per graph iteration");
    for (auto& lane : lanes_) {
      Lane& l = *lane;
      bool built = l.graph.build(l.stream.get(), [&](cudaStream_t s, cudaGraphConditionalHandle h) {
        for (int r = 0; r < rounds; ++r) enqueue_round(l, s, h);
      });
      if (!built) {
        use_graphs_ = false;
        add_note("CUDA graph conditional nodes unavailable: rounds launched in batches");
        return;
      }
    }
  }

  void enqueue_batch(Lane& lane) {
    cudaStream_t stream = lane.stream.get();
    unsigned limit = lane.batch_limit;
    if (!use_graphs_) limit = std::min(limit, 256u);
    if (lane.limit_on_device != limit) {
      lane.control_host.data()->batch_limit = limit;
      GPU_ROUTING_CUDA_CHECK(cudaMemcpyAsync(&lane.control.data()->batch_limit,
                                             &lane.control_host.data()->batch_limit,
                                             sizeof(unsigned int), cudaMemcpyHostToDevice, stream));
      lane.limit_on_device = limit;
    }
    if (use_graphs_) {
      lane.graph.launch(stream);
    } else {
      for (unsigned k = 0; k < limit; ++k) enqueue_round(lane, stream, 0);
    }
    lane.control.download(lane.control_host.data(), 1, stream);
    lane.batch_done.record(stream);
    lane.batch_watch.restart();
  }

  void start_source(Lane& lane, int row, VertexIndex source) {
    lane.row = row;
    lane.source = source;
    RoundArgs args = round_args(lane, 0);
    const VertexIndex n = graph_.vertex_count();
    init_source_kernel<<<grid_for(n, kAuxiliaryBlockSize, 4096), kAuxiliaryBlockSize, 0,
                         lane.stream.get()>>>(args, source, config_.method == Method::kBellmanFord);
    GPU_ROUTING_CUDA_CHECK_LAUNCH();
    lane.state = Lane::State::kRunning;
    enqueue_batch(lane);
  }

  // A batch ended: adapt its size, account relax time, go on or fetch the row.
  void batch_finished(Lane& lane, bool predecessors) {
    const RoundControl control = *lane.control_host.data();
    const double batch_ms = lane.batch_watch.elapsed_ms();
    if (!control.done) {
      if (batch_ms < kGrowBelowMs && lane.batch_limit < kMaxBatchRounds) lane.batch_limit *= 2;
      if (batch_ms > kShrinkAboveMs && lane.batch_limit > 1) lane.batch_limit /= 2;
      enqueue_batch(lane);
      return;
    }
    report_.rounds += control.rounds;
    relax_ms_ += static_cast<double>(control.relax_ns) * 1e-6;
    cudaStream_t stream = lane.stream.get();
    const std::size_t n = static_cast<std::size_t>(graph_.vertex_count());
    lane.copy_start.record(stream);
    lane.distances.download(lane.distances_host.data(), n, stream);
    lane.copy_end.record(stream);
    if (predecessors)
      lane.predecessors.enqueue(reverse_, lane.distances.data(), lane.source, lane.arcs_host.data(),
                                stream);
    lane.batch_done.record(stream);
    lane.state = Lane::State::kDownloading;
  }

  void row_finished(Lane& lane, const SolveRequest& request, bool predecessors) {
    const std::size_t n = static_cast<std::size_t>(graph_.vertex_count());
    double* row = request.distances + static_cast<std::size_t>(lane.row) * n;
    std::memcpy(row, lane.distances_host.data(), n * sizeof(double));
    float copy_ms = 0;
    GPU_ROUTING_CUDA_CHECK(
        cudaEventElapsedTime(&copy_ms, lane.copy_start.get(), lane.copy_end.get()));
    report_.transfer_ms += copy_ms;
    if (predecessors) {
      ArcIndex* arcs = request.predecessor_arcs + static_cast<std::size_t>(lane.row) * n;
      std::memcpy(arcs, lane.arcs_host.data(), n * sizeof(ArcIndex));
      lane.predecessors.finish(host_reverse(), row, lane.source, arcs);
    }
    lane.state = Lane::State::kIdle;
  }

  // Keeps every lane busy: a lane whose batch ended gets its next batch, its download, or the
  // next source, without waiting for the others.
  void schedule(const SolveRequest& request, bool predecessors) {
    const int count = request.source_count;
    const int lanes = std::min<int>(static_cast<int>(lanes_.size()), count);
    int next = 0, finished = 0;
    Stopwatch since_poll;
    while (finished < count) {
      bool progressed = false;
      for (int i = 0; i < lanes; ++i) {
        Lane& lane = *lanes_[static_cast<std::size_t>(i)];
        if (lane.state == Lane::State::kIdle) {
          if (next < count) {
            start_source(lane, next, request.sources[next]);
            ++next;
            progressed = true;
          }
          continue;
        }
        if (lanes == 1) {
          lane.batch_done.synchronize();
        } else {
          cudaError_t status = cudaEventQuery(lane.batch_done.get());
          if (status == cudaErrorNotReady) continue;
          GPU_ROUTING_CUDA_CHECK(status);
        }
        progressed = true;
        if (lane.state == Lane::State::kRunning) {
          batch_finished(lane, predecessors);
        } else {
          row_finished(lane, request, predecessors);
          ++finished;
        }
        options_.cancel.throw_if_requested();
        since_poll.restart();
      }
      if (!progressed) {
        std::this_thread::yield();
        if (since_poll.elapsed_ms() > 5.0) {
          options_.cancel.throw_if_requested();
          since_poll.restart();
        }
      }
    }
  }

  EngineConfig config_;
  int device_ = 0;
  int block_size_ = kDefaultBlockSize;
  bool matrix_ = false;
  bool use_graphs_ = false;
  bool time_relax_ = false;
  double relax_ms_ = 0;
  DeviceCsr forward_;
  DeviceCsr reverse_;
  DeviceBuffer<double> matrix_cells_;
  DeviceBuffer<double> min_out_weight_;
  CsrGraph own_reverse_;
  std::vector<std::unique_ptr<Lane>> lanes_;
};

// ---------------------------------------------------------------------------------------------
// The table

constexpr EngineConfig kFrontierConfig{"frontier", Method::kFrontier, Storage::kAuto, false,
                                       kFrontierBlockSize};
constexpr EngineConfig kFrontierPredConfig{"frontier_pred", Method::kFrontierPred, Storage::kAuto,
                                           false, kFrontierPredBlockSize};
constexpr EngineConfig kFrontierMatrixConfig{"frontier_matrix", Method::kFrontier, Storage::kMatrix,
                                             false, kFrontierBlockSize};
constexpr EngineConfig kFrontierPredMatrixConfig{"frontier_pred_matrix", Method::kFrontierPred,
                                                 Storage::kMatrix, false, kFrontierPredBlockSize};
constexpr EngineConfig kCrauserConfig{"crauser", Method::kCrauser, Storage::kLists, false,
                                      kCrauserBlockSize};
constexpr EngineConfig kBellmanFordConfig{"bellman_ford", Method::kBellmanFord, Storage::kLists,
                                          false, kBellmanFordBlockSize};
constexpr EngineConfig kHarishConfig{"harish", Method::kBellmanFord, Storage::kLists, false,
                                     kBellmanFordBlockSize};
constexpr EngineConfig kConcurrentConfig{"concurrent", Method::kCrauser, Storage::kLists, true,
                                         kCrauserBlockSize};

// `engines` > 1: several engines share each many-source solve (make_multi_device_engine).
std::unique_ptr<ShortestPathEngine> create_family_engine(const Graph& graph,
                                                         const EngineOptions& options,
                                                         const EngineConfig& config, int engines) {
  return make_multi_device_engine(
      graph, options, engines, [&graph, &config](int device, const EngineOptions& share) {
        return std::make_unique<DijkstraFamilyEngine>(graph, share, config, device);
      });
}

// The many-source engines (harish, concurrent) use every visible GPU; the single-source ones
// device 0.
template <const EngineConfig& config>
std::unique_ptr<ShortestPathEngine> create_engine(const Graph& graph,
                                                  const EngineOptions& options) {
  const bool many_source = &config == &kHarishConfig || &config == &kConcurrentConfig;
  return create_family_engine(graph, options, config, many_source ? device_count() : 1);
}

template <const EngineConfig& config>
std::size_t estimate_engine_bytes(const Graph& graph, int) {
  bool matrix =
      config.storage == Storage::kMatrix || (config.storage == Storage::kAuto && is_dense(graph));
  int lanes = config.concurrent ? kDefaultConcurrentStreams : 1;
  return plan_memory(graph, config.method, matrix, lanes, true).total();
}

template <const EngineConfig& config>
EngineInfo entry(bool single_source, bool many_source, bool dense, const char* description) {
  return EngineInfo{
      config.name, Device::kGpu, single_source,         many_source,
      dense,       description,  create_engine<config>, estimate_engine_bytes<config>};
}

}  // namespace

const std::vector<EngineInfo>& dijkstra_family_engines() {
  static const std::vector<EngineInfo> table = {
      entry<kFrontierConfig>(
          true, false, false,
          "DA2CF with relax_F (Martin, Torres and Gavilanes): frontier vertices relax unresolved "
          "successors with atomicMin; adjacency matrix on dense graphs"),
      entry<kFrontierPredConfig>(
          true, false, false,
          "DA2CF with relax_U (Martin, Torres and Gavilanes): unresolved vertices scan their "
          "frontier predecessors, no atomics; matrix on dense graphs"),
      entry<kFrontierMatrixConfig>(true, false, true,
                                   "DA2CF relax_F on the V x V adjacency matrix (Martin et al.)"),
      entry<kFrontierPredMatrixConfig>(
          true, false, true, "DA2CF relax_U on the V x V adjacency matrix (Martin et al.)"),
      entry<kCrauserConfig>(
          true, false, false,
          "Dijkstra with Crauser's threshold (Ortega-Arranz et al.): settles every vertex "
          "within min(dist + cheapest outgoing arc) per round"),
      entry<kBellmanFordConfig>(true, false, false,
                                "Harish & Narayanan's scatter/check iteration, race fixed with "
                                "atomicMin (Martin et al.)"),
      entry<kHarishConfig>(false, true, false,
                           "bellman_ford one source at a time (Harish's baseline)"),
      entry<kConcurrentConfig>(
          false, true, false,
          "crauser SSSPs on several CUDA streams at once (Ortega-Arranz et al.); "
          "gpu_routing streams setting"),
  };
  return table;
}

std::unique_ptr<ShortestPathEngine> make_dijkstra_family_engine(const Graph& graph,
                                                                const EngineOptions& options,
                                                                const std::string& name,
                                                                int engines) {
  for (const EngineConfig* config :
       {&kFrontierConfig, &kFrontierPredConfig, &kFrontierMatrixConfig, &kFrontierPredMatrixConfig,
        &kCrauserConfig, &kBellmanFordConfig, &kHarishConfig, &kConcurrentConfig})
    if (name == config->name) return create_family_engine(graph, options, *config, engines);
  throw RoutingError(ErrorKind::kInvalidParameter, "no Dijkstra-family engine named " + name);
}

void set_relax_kernel_timing(bool on) {
  g_time_relax.store(on);
}

void set_plain_round_launches(bool on) {
  g_plain_launches.store(on);
}

void set_rounds_per_graph_iteration(int rounds) {
  g_rounds_per_iteration.store(rounds > 0 ? rounds : kDefaultRoundsPerIteration);
}

double relax_kernel_ms(const ShortestPathEngine& engine) {
  const auto* family = dynamic_cast<const DijkstraFamilyEngine*>(&first_device_engine(engine));
  return family == nullptr ? -1.0 : family->relax_ms();
}

int relax_block_size(const ShortestPathEngine& engine) {
  const auto* family = dynamic_cast<const DijkstraFamilyEngine*>(&first_device_engine(engine));
  return family == nullptr ? -1 : family->relax_block();
}

}  // namespace gpu_routing::gpu
