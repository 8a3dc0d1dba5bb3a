// The road index on the GPU: PHAST (Delling, Goldberg, Nowatzyk, Werneck: "PHAST:
// Hardware-accelerated shortest path trees", 2011) over the customizable contraction hierarchy of
// src/core/road_index/cch.hpp.
//
// A one-to-all tree on the hierarchy is an upward search from the source (a few hundred ranks:
// its elimination-tree ancestors, done on the host) and one downward sweep over every rank in
// decreasing rank order, each rank pulling over its upward arcs from higher ranks. The sweep needs
// only that a rank's higher neighbours are final before it, so ranks are grouped by level (level 0:
// no upward arcs; otherwise one more than the deepest higher neighbour) and each level is one
// data-parallel step. On the device the ranks are renumbered level by level ("positions"), so a
// level is a contiguous range and its arcs are read in order. Many sources share one sweep: a
// position's k distances lie side by side, so the k threads of one position read their higher
// neighbours' distances in one coalesced access (the PHAST paper's multiple trees per sweep).
//
// Levels alone would cost one launch each, and New York has 378 of them, most of a few dozen
// ranks: the sweep would be bound by the GPU's latency per level. So the hierarchy is split along
// its elimination tree (a rank's parent: its lowest higher neighbour; every higher neighbour is an
// ancestor). Ranks whose subtree is small (at most kSubtreeVertices) form the bottom: each of its
// subtrees depends only on itself and on ranks above it, so subtrees are packed into groups, one
// block each, and one launch runs every group's levels with a block barrier between them. The
// rest, the top (New York: 1,438 ranks of the separators, 224 levels), runs level by level; its
// small levels run as one block's loop with a block barrier between levels instead of one launch
// each. Lanes per (rank, source) follow each level's degrees: the top's separators have dozens of
// upward arcs, the bottom's ranks a handful. Every distance is the same minimum over
// the same sums as the host sweep (Cch::one_to_all), so rows equal the CPU engine's bit for bit;
// predecessors follow the common rule on the device (predecessors_gpu.cuh).
#include <algorithm>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <math_constants.h>

#include "road_index/cch.hpp"
#include "road_index/sweep_layout.hpp"
#include "base/parallel.hpp"
#include "base/parallel_for.hpp"
#include "base/predecessors.hpp"
#include "cuda_common.cuh"
#include "gpu_engines.hpp"
#include "predecessors_gpu.cuh"

namespace gpu_routing::gpu {
namespace {

constexpr int kSweepBlock = 256;
constexpr int kOneBlockThreads = 1024;
// A level whose threads (ranks x sources x lanes) fit this many passes of one block runs inside
// the one-block loop: a launch costs a few microseconds, a block barrier a fraction of one.
// Larger levels get the whole GPU. New York's top has 224 levels, most of a few ranks
// (set_phast_one_block_passes lets phast_bench compare).
int g_one_block_passes = 2;
// Sources per sweep. A sweep's time is mostly its latency (its steps run one after another) up to
// a few dozen sources, so more sources a sweep cost little more each (the PHAST paper's many trees
// a sweep); the table (vertices x sources x 8 bytes, twice with the rows) bounds them. Paths keep
// kSourcesPerSweep (each source also holds a predecessor row); distances take up to
// kMaxSourcesPerSweep while gpu_routing.max_memory allows it (New York, 256: 1.1 GB), halving
// until it does (set_phast_sources_per_sweep lets phast_bench compare).
constexpr int kSourcesPerSweep = 32;
constexpr int kMaxSourcesPerSweep = 256;
int g_sources_per_sweep = 0;  // 0: kMaxSourcesPerSweep
// A cost matrix's sweep restricted to its targets' closure (RPHAST, restrict_sweep_layout) covers
// fewer positions, so its table holds more sources for the same memory: up to this many while
// gpu_routing.max_memory allows (New York, 10,000 targets: 66,841 positions; 1024 sources hold
// 1.1 GB with the rows). A sweep's latency is paid once for all of them.
constexpr int kMaxRestrictedSourcesPerSweep = 1024;
constexpr double kRestrictedShare = Cch::kRestrictedSweepShare;
bool g_restrict = true;  // set_phast_restrict lets phast_bench compare
// The fewest sources a solve restricts its sweeps for (set_phast_restrict_from_sources).
constexpr int kRestrictFromSources = Cch::kRestrictedSweepFromSources;
int g_restrict_from_sources = kRestrictFromSources;
// Rows of at least this many bytes come to the host through two pinned buffers of kStagingBytes,
// copied out by every host thread: straight into pageable memory (the GPU service's exchange
// segment) they came at 1-2 GB/s (New York, H200 host: one tree's 2 MB in 1.5 ms, 64 trees' 135 MB
// in 69 ms).
constexpr std::size_t kStagedDownloadBytes = std::size_t{1} << 20;
constexpr std::size_t kStagingBytes = std::size_t{32} << 20;
// The host memory the upward searches' per-thread workspaces may span together.
constexpr std::size_t kUpwardScratchBytes = std::size_t{256} << 20;
// Lanes per (rank, source): forced by set_phast_lanes, else by degree (sweep_layout.hpp).
int g_lanes = 0;  // 0: by degree
// The bottom's subtrees: at most this many ranks each, packed into groups of at most as many
// ranks, one block of kGroupBlock threads a group (set_phast_subtree_vertices; 0: no bottom, every
// level its own step over the whole GPU). phast_bench on an H100, New York, against every level
// over the whole GPU: a lone tree 1.29 -> 1.05 ms, 16 a sweep 0.176 -> 0.163 ms a tree, 32
// 0.112 -> 0.105 (docs/results/h100_phast.md); subtrees of 1024 or 16384 ranks, or
// one block for all of a sweep's sources, did worse.
constexpr int kSubtreeVertices = 4096;
constexpr int kGroupBlock = 512;
int g_subtree_vertices = -1;  // negative: kSubtreeVertices
int g_group_block = 0;        // 0: kGroupBlock
// A small graph keeps at least ~64 groups, so its bottom still spreads over the GPU.
int subtree_limit(VertexIndex n) {
  if (g_subtree_vertices >= 0) return g_subtree_vertices;
  return static_cast<int>(
      std::min<VertexIndex>(kSubtreeVertices, std::max<VertexIndex>(n / 64, 64)));
}
int group_block() {
  return g_group_block > 0 ? g_group_block : kGroupBlock;
}
// Sources a bottom block sweeps: a group's blocks split a sweep's sources among them.
constexpr int kGroupSources = 4;
int g_group_sources = 0;  // 0: kGroupSources
// Wide sweeps give each block more of them, so that a group keeps at most kGroupBlocksWide
// blocks: phast_bench on the H200 host, New York, 256 sources a sweep: 0.047 ms a tree at 2 a
// block, 0.037 at 4, 0.033 at 8 and 16.
constexpr int kGroupBlocksWide = 16;
int group_sources(int count) {
  if (g_group_sources > 0) return g_group_sources;
  return std::max(kGroupSources, (count + kGroupBlocksWide - 1) / kGroupBlocksWide);
}
// A sweep's level launches are captured once per source count as a CUDA graph and replayed:
// New York's sweep is about 370 launches, and enqueuing them one by one took longer than the GPU
// took to run them (set_phast_graphs(false) lets phast_bench compare).
bool g_graphs = true;

// Thread t of a level (positions from `begin`, `lanes` threads an item): items are (position,
// source) for the `width` sources from j0 of the k a position holds, so `items` = positions x
// width. Every lane of a warp calls it together (the shuffles need the whole warp), lanes past the
// level idle.
__device__ __forceinline__ void pull_item(const ArcIndex* __restrict__ first,
                                          const VertexIndex* __restrict__ head,
                                          const double* __restrict__ down, double* table,
                                          std::int64_t begin, std::int64_t items, int k, int j0,
                                          int width, int lanes, std::int64_t t) {
  const std::int64_t item = t / lanes;
  const int lane = static_cast<int>(t % lanes);
  const bool valid = item < items;
  std::int64_t position = 0;
  int j = 0;
  double best = CUDART_INF;
  if (valid) {
    position = begin + item / width;
    j = j0 + static_cast<int>(item % width);
    if (lane == 0) best = table[position * k + j];
    const ArcIndex end = first[position + 1];
    for (ArcIndex a = first[position] + lane; a < end; a += lanes) {
      const double candidate = table[static_cast<std::int64_t>(head[a]) * k + j] + down[a];
      if (candidate < best) best = candidate;
    }
  }
  for (int offset = lanes / 2; offset > 0; offset /= 2) {
    const double other = __shfl_xor_sync(0xffffffffu, best, offset, lanes);
    if (other < best) best = other;
  }
  if (valid && lane == 0) table[position * k + j] = best;
}

std::int64_t round_to_warps(std::int64_t threads) {
  return (threads + 31) / 32 * 32;
}

// The settings a sweep's launches depend on beyond the hierarchy's layout.
struct SweepSettings {
  int group_block, group_sources, one_block_passes;
  bool operator==(const SweepSettings& o) const {
    return group_block == o.group_block && group_sources == o.group_sources &&
           one_block_passes == o.one_block_passes;
  }
};
SweepSettings current_sweep_settings() {
  return {group_block(), g_group_sources, g_one_block_passes};
}

// An instantiated CUDA graph, with the settings it was captured under.
class SweepGraph {
 public:
  SweepGraph(cudaGraphExec_t exec, SweepSettings settings) : exec_(exec), settings_(settings) {}
  ~SweepGraph() { cudaGraphExecDestroy(exec_); }  // errors ignored, as DeviceBuffer's free
  SweepGraph(const SweepGraph&) = delete;
  SweepGraph& operator=(const SweepGraph&) = delete;
  cudaGraphExec_t exec() const { return exec_; }
  bool made_with(const SweepSettings& settings) const { return settings_ == settings; }

 private:
  cudaGraphExec_t exec_;
  SweepSettings settings_;
};

// Runs enqueue(stream) under stream capture and instantiates what it enqueued. A failure ends the
// capture first: a stream left capturing would refuse every later call on it.
template <typename Enqueue>
std::unique_ptr<SweepGraph> capture_sweep(cudaStream_t stream, SweepSettings settings,
                                          Enqueue&& enqueue) {
  // Thread-local: the GPU service's other workers keep using their own streams meanwhile.
  GPU_ROUTING_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  cudaGraph_t graph = nullptr;
  try {
    enqueue(stream);
  } catch (...) {
    if (cudaStreamEndCapture(stream, &graph) == cudaSuccess && graph != nullptr)
      cudaGraphDestroy(graph);
    cudaGetLastError();  // the capture's error is this throw's, not the next call's
    throw;
  }
  GPU_ROUTING_CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
  cudaGraphExec_t exec = nullptr;
  const cudaError_t made = cudaGraphInstantiate(&exec, graph, 0);
  cudaGraphDestroy(graph);
  GPU_ROUTING_CUDA_CHECK(made);
  return std::make_unique<SweepGraph>(exec, settings);
}

// One level: positions [begin, end), k sources each, `lanes` threads each.
__global__ void sweep_level_kernel(const ArcIndex* __restrict__ first,
                                   const VertexIndex* __restrict__ head,
                                   const double* __restrict__ down, double* table,
                                   std::int64_t begin, std::int64_t end, int k, int lanes) {
  const std::int64_t t = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  pull_item(first, head, down, table, begin, (end - begin) * k, k, 0, k, lanes, t);
}

// Steps [step_begin, step_end) in one block, a barrier after each: step s covers positions
// [step_first[s], step_first[s + 1]) with step_lanes[s] lanes an item, for the `width` sources
// from j0.
__device__ __forceinline__ void sweep_steps_in_block(
    const ArcIndex* __restrict__ first, const VertexIndex* __restrict__ head,
    const double* __restrict__ down, double* table, const VertexIndex* __restrict__ step_first,
    const int* __restrict__ step_lanes, int step_begin, int step_end, int k, int j0, int width) {
  for (int step = step_begin; step < step_end; ++step) {
    const std::int64_t begin = step_first[step];
    const std::int64_t items = (step_first[step + 1] - begin) * width;
    const int lanes = step_lanes[step];
    const std::int64_t threads = (items * lanes + 31) / 32 * 32;
    for (std::int64_t t = threadIdx.x; t < threads; t += blockDim.x)
      pull_item(first, head, down, table, begin, items, k, j0, width, lanes, t);
    __syncthreads();
  }
}

// Top levels [level_begin, level_end) in one block, every source.
__global__ void sweep_levels_one_block_kernel(const ArcIndex* __restrict__ first,
                                              const VertexIndex* __restrict__ head,
                                              const double* __restrict__ down, double* table,
                                              const VertexIndex* __restrict__ level_first,
                                              const int* __restrict__ level_lanes, int level_begin,
                                              int level_end, int k) {
  sweep_steps_in_block(first, head, down, table, level_first, level_lanes, level_begin, level_end,
                       k, 0, k);
}

// The bottom: block (g, c) runs group g's steps [group_step[g], group_step[g + 1]) for sources
// [c * per_block, (c + 1) * per_block): the sources' trees are independent, so splitting them
// shortens the longest group's path through its steps.
__global__ void sweep_groups_kernel(const ArcIndex* __restrict__ first,
                                    const VertexIndex* __restrict__ head,
                                    const double* __restrict__ down, double* table,
                                    const VertexIndex* __restrict__ group_step,
                                    const VertexIndex* __restrict__ step_first,
                                    const int* __restrict__ step_lanes, int k, int per_block) {
  const int j0 = static_cast<int>(blockIdx.y) * per_block;
  sweep_steps_in_block(first, head, down, table, step_first, step_lanes, group_step[blockIdx.x],
                       group_step[blockIdx.x + 1], k, j0, min(per_block, k - j0));
}

__global__ void fill_kernel(double* table, std::int64_t count, double value) {
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < count) table[i] = value;
}

// The upward searches' results: table[slot[i]] = value[i].
__global__ void seed_kernel(const std::int64_t* __restrict__ slot, const double* __restrict__ value,
                            int count, double* table) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < count) table[slot[i]] = value[i];
}

// Rows in vertex order: rows[j * n + v] = table[position_of_vertex[v] * k + j].
__global__ void rows_kernel(const double* __restrict__ table,
                            const VertexIndex* __restrict__ position_of_vertex, std::int64_t n,
                            int k, int count, double* __restrict__ rows) {
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n * count) return;
  const int j = static_cast<int>(i / n);
  const std::int64_t v = i % n;
  rows[i] = table[static_cast<std::int64_t>(position_of_vertex[v]) * k + j];
}

// out[i] = rows[slot[i]]: the sources' own targets, each in its source's row.
__global__ void gather_slots_kernel(const double* __restrict__ rows,
                                    const std::int64_t* __restrict__ slot, int count,
                                    double* __restrict__ out) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < count) out[i] = rows[slot[i]];
}

// Compact rows of a cost matrix: out[j * targets + t] for the target at table position
// target_position[t].
__global__ void gather_kernel(const double* __restrict__ table,
                              const VertexIndex* __restrict__ target_position, int target_count,
                              int k, int count, double* __restrict__ out) {
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= static_cast<std::int64_t>(target_count) * count) return;
  const int j = static_cast<int>(i / target_count);
  const int t = static_cast<int>(i % target_count);
  out[i] = table[static_cast<std::int64_t>(target_position[t]) * k + j];
}

// A sweep layout on the device: the whole hierarchy, or the part a cost matrix's targets need.
struct DeviceSweepLayout {
  DeviceBuffer<ArcIndex> first;
  DeviceBuffer<VertexIndex> head;
  DeviceBuffer<double> down;
  DeviceBuffer<VertexIndex> step_first;
  DeviceBuffer<int> step_lanes;
  DeviceBuffer<VertexIndex> group_step;
  std::vector<VertexIndex> position_of_rank;  // -1: a rank the sweep leaves out
  std::vector<VertexIndex> step_first_host;
  std::vector<int> step_lanes_host;
  VertexIndex positions = 0;
  int top_levels = 0, groups = 0;
  std::size_t bytes = 0;  // on the device
  // Entry k - 1: the captured level launches of a sweep of k sources (made when first needed).
  std::vector<std::unique_ptr<SweepGraph>> graphs;

  static std::size_t bytes_of(const SweepLayout& layout) {
    const std::size_t n = layout.first.size() - 1, m = layout.head.size();
    const std::size_t steps = layout.step_lanes.size();
    return (n + 1) * sizeof(ArcIndex) + m * (sizeof(VertexIndex) + sizeof(double)) +
           (steps + 1) * sizeof(VertexIndex) + steps * sizeof(int) +
           layout.group_step.size() * sizeof(VertexIndex);
  }

  void upload(const SweepLayout& layout, cudaStream_t stream) {
    release();
    const std::size_t n = layout.first.size() - 1, m = layout.head.size();
    const std::size_t steps = layout.step_lanes.size();
    first.allocate(n + 1);
    first.upload(layout.first.data(), n + 1, stream);
    head.allocate(std::max<std::size_t>(m, 1));
    down.allocate(std::max<std::size_t>(m, 1));
    if (m > 0) {
      head.upload(layout.head.data(), m, stream);
      down.upload(layout.down.data(), m, stream);
    }
    step_first.allocate(steps + 1);
    step_first.upload(layout.step_first.data(), steps + 1, stream);
    step_lanes.allocate(std::max<std::size_t>(steps, 1));
    if (steps > 0) step_lanes.upload(layout.step_lanes.data(), steps, stream);
    group_step.allocate(std::max<std::size_t>(layout.group_step.size(), 1));
    if (!layout.group_step.empty())
      group_step.upload(layout.group_step.data(), layout.group_step.size(), stream);
    GPU_ROUTING_CUDA_CHECK(cudaStreamSynchronize(stream));  // the host vectors may go after
    position_of_rank = layout.position_of_rank;
    step_first_host = layout.step_first;
    step_lanes_host = layout.step_lanes;
    positions = static_cast<VertexIndex>(n);
    top_levels = layout.top_levels;
    groups = layout.group_step.empty() ? 0 : static_cast<int>(layout.group_step.size()) - 1;
    bytes = bytes_of(layout);
  }

  void release() {
    graphs.clear();
    first.release();
    head.release();
    down.release();
    step_first.release();
    step_lanes.release();
    group_step.release();
    position_of_rank.clear();
    step_first_host.clear();
    step_lanes_host.clear();
    positions = 0;
    top_levels = groups = 0;
    bytes = 0;
  }
};

// Service areas, the first pass: how many of each source's vertices lie within the bound
// (rows_kernel's cells, read lane by lane: a vertex's `k` sources are `k` neighbouring cells).
__global__ void area_count_kernel(const double* __restrict__ table,
                                  const VertexIndex* __restrict__ position_of_vertex,
                                  std::int64_t n, int k, double bound,
                                  unsigned long long* __restrict__ counts) {
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n * k) return;
  const std::int64_t v = i / k;
  const int j = static_cast<int>(i % k);
  if (table[static_cast<std::int64_t>(position_of_vertex[v]) * k + j] <= bound)
    atomicAdd(counts + j, 1ull);
}

// The second pass: each such vertex and its distance at its source's next slot (`cursor` starts
// at each source's offset); the order within a source is the host's to make.
__global__ void area_write_kernel(const double* __restrict__ table,
                                  const VertexIndex* __restrict__ position_of_vertex,
                                  std::int64_t n, int k, double bound,
                                  unsigned long long* __restrict__ cursor,
                                  VertexIndex* __restrict__ vertices,
                                  double* __restrict__ distances) {
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n * k) return;
  const std::int64_t v = i / k;
  const int j = static_cast<int>(i % k);
  const double d = table[static_cast<std::int64_t>(position_of_vertex[v]) * k + j];
  if (!(d <= bound)) return;
  const unsigned long long slot = atomicAdd(cursor + j, 1ull);
  vertices[slot] = static_cast<VertexIndex>(v);
  distances[slot] = d;
}

class GpuCchEngine final : public ShortestPathEngine {
 public:
  GpuCchEngine(const Graph& graph, const EngineOptions& options)
      : ShortestPathEngine(graph, options), device_(std::max(0, options.device)) {
    use_device(device_);
    cudaDeviceProp props{};
    GPU_ROUTING_CUDA_CHECK(cudaGetDeviceProperties(&props, device_));
    report_.device_name = std::string(props.name) + " (device " + std::to_string(device_) + ")";
    stream_ = std::make_unique<Stream>();
  }

  ~GpuCchEngine() override {
    for (cudaEvent_t done : staging_done_)
      if (done != nullptr) cudaEventDestroy(done);  // errors ignored, as DeviceBuffer's free
  }
  GpuCchEngine(const GpuCchEngine&) = delete;
  GpuCchEngine& operator=(const GpuCchEngine&) = delete;

  const char* name() const override { return "cch"; }
  Device device() const override { return Device::kGpu; }
  int preferred_batch_size() const override { return max_sources_per_sweep() * 4; }
  bool supports_compact_targets() const override { return true; }
  bool supports_paths_without_rows() const override { return true; }
  void rebind(const EngineOptions& options) override {
    ShortestPathEngine::rebind(options);
    if (options.road_index != nullptr) options_.road_index = options.road_index;
  }

  bool own_path(VertexIndex s, VertexIndex t, std::vector<ArcIndex>& arcs, double* cost) override {
    Stopwatch watch;
    *cost = index_path(index(), graph_, s, t, workspace_, arcs);
    report_.rounds += 1;
    report_.compute_ms += watch.elapsed_ms();
    return true;
  }

  // Whole sweeps (every rank: an area is not a set of targets), each compacted where it lies to
  // the vertices within the bound; only those cross to the host, not the rows.
  void solve_areas(const VertexIndex* sources, int count, double bound, AreaLists& areas) override {
    if (count <= 0) return;
    // The kernels keep what is at most the bound: an infinite one would keep the unreachable.
    bound = std::min(bound, std::numeric_limits<double>::max());
    Stopwatch watch;
    const double transfer_before = report_.transfer_ms;
    use_device(device_);
    prepare_hierarchy();
    DeviceSweepLayout& layout = full_;
    const int width = sweep_width(count, false, layout.positions);
    Stopwatch sweeping;
    upward_ms_ = rows_back_ms_ = 0;
    int sweeps = 0;
    std::int64_t entries = 0;
    find_seeds(layout, sources, std::min(width, count), seeds_[0]);
    for (int first = 0; first < count; first += width) {
      options_.cancel.throw_if_requested();
      const int now = std::min(width, count - first);
      sweep(layout, seeds_[sweeps % 2], now, width);
      const int next = first + width;
      if (next < count)
        find_seeds(layout, sources + next, std::min(width, count - next), seeds_[(sweeps + 1) % 2]);
      entries += deliver_areas(now, bound, areas);
      ++sweeps;
    }
    char note[200];
    std::snprintf(note, sizeof note,
                  "last solve: service areas, %d sweeps of up to %d sources, upward searches "
                  "%.1f ms, sweeps %.1f ms more, %lld vertices within the distance back in "
                  "%.1f ms; ",
                  sweeps, width, upward_ms_,
                  std::max(0.0, sweeping.elapsed_ms() - upward_ms_ - rows_back_ms_),
                  static_cast<long long>(entries), rows_back_ms_);
    report_.notes = note + hierarchy_note_;
    report_.rounds += count;
    report_.compute_ms += watch.elapsed_ms() - (report_.transfer_ms - transfer_before);
  }

  void solve(const SolveRequest& request) override {
    Stopwatch watch;
    const double transfer_before = report_.transfer_ms;
    use_device(device_);
    prepare_hierarchy();
    if (request.own_target_distances &&
        (request.target_offsets == nullptr || request.predecessor_arcs == nullptr))
      throw RoutingError(ErrorKind::kInternal,
                         "paths without rows need each source's targets and predecessor rows");
    const bool compact = request.compact_targets && request.targets != nullptr;
    if (compact) prepare_targets(request);
    if (request.predecessor_arcs != nullptr) prepare_reverse();
    const std::size_t n = static_cast<std::size_t>(graph_.vertex_count());
    const bool paths = request.predecessor_arcs != nullptr || request.own_target_distances;
    DeviceSweepLayout& layout = compact && restricted_for_targets_ ? restricted_ : full_;
    const int width = sweep_width(request.source_count, paths, layout.positions);
    Stopwatch sweeping;
    upward_ms_ = rows_back_ms_ = 0;
    int sweeps = 0;
    find_seeds(layout, request.sources, std::min(width, request.source_count), seeds_[0]);
    for (int first = 0; first < request.source_count; first += width) {
      options_.cancel.throw_if_requested();
      const int count = std::min(width, request.source_count - first);
      sweep(layout, seeds_[sweeps % 2], count, width);
      // The next sweep's upward searches run on the host while the GPU sweeps this one (New
      // York, 1024 sources: about 8 ms on 15 threads, as long as the sweep).
      const int next = first + width;
      if (next < request.source_count)
        find_seeds(layout, request.sources + next, std::min(width, request.source_count - next),
                   seeds_[(sweeps + 1) % 2]);
      deliver(request, first, count, compact, n);
      ++sweeps;
    }
    // Where this solve's time went, first: notes are cut to their room (the service's slot, 512
    // bytes; gpu_routing_last_run, 640).
    char note[200];
    std::snprintf(note, sizeof note,
                  "last solve: %d sweeps of up to %d sources, upward searches %.1f ms, sweeps "
                  "%.1f ms more, rows back %.1f ms; ",
                  sweeps, width, upward_ms_,
                  std::max(0.0, sweeping.elapsed_ms() - upward_ms_ - rows_back_ms_), rows_back_ms_);
    report_.notes =
        note + (&layout == &restricted_ ? targets_note_ : std::string()) + hierarchy_note_;
    report_.rounds += request.source_count;
    report_.compute_ms += watch.elapsed_ms() - (report_.transfer_ms - transfer_before);
  }

 private:
  const Cch& index() {
    if (options_.road_index != nullptr) return *options_.road_index;
    if (!own_.customized()) {
      own_ = make_road_index(graph_, options_.cancel, options_.threads, &built_note_);
      built_note_ += "; ";
    }

    return own_;
  }

  static int max_sources_per_sweep() {
    return g_sources_per_sweep > 0 ? g_sources_per_sweep : kMaxSourcesPerSweep;
  }

  // Sources a sweep for this solve: all of them up to the maximum, halved (not below
  // kSourcesPerSweep) while the table would not fit gpu_routing.max_memory beside what is held.
  // A restricted sweep (`positions` below the vertices) starts from
  // kMaxRestrictedSourcesPerSweep: its table is that much smaller a source.
  int sweep_width(int sources, bool paths, VertexIndex positions) const {
    int width =
        paths ? std::min(kSourcesPerSweep, max_sources_per_sweep()) : max_sources_per_sweep();
    const std::size_t n = static_cast<std::size_t>(graph_.vertex_count());
    const auto cells = static_cast<std::size_t>(std::max<VertexIndex>(positions, 1));
    if (!paths && g_sources_per_sweep == 0 && cells < n) width = kMaxRestrictedSourcesPerSweep;
    const std::size_t held = held_bytes() - table_bytes_;
    const std::size_t limit = options_.budget.limit_bytes();
    while (width > kSourcesPerSweep &&
           saturating_add(held, saturating_multiply(2 * cells * sizeof(double),
                                                    static_cast<std::size_t>(width))) > limit)
      width /= 2;
    return std::max(1, std::min(width, std::max(sources, 1)));
  }

  // Rows to the host: small ones straight, large ones through two pinned buffers in turn, each
  // copied out on every host thread while the next part comes over.
  void download_rows(const double* device_rows, double* host, std::size_t count,
                     cudaStream_t stream) {
    const std::size_t bytes = count * sizeof(double);
    if (bytes < kStagedDownloadBytes) {
      GPU_ROUTING_CUDA_CHECK(
          cudaMemcpyAsync(host, device_rows, bytes, cudaMemcpyDeviceToHost, stream));
      GPU_ROUTING_CUDA_CHECK(cudaStreamSynchronize(stream));
      return;
    }
    const std::size_t part = kStagingBytes / sizeof(double);
    for (auto& buffer : staging_) buffer.reserve(part);
    if (!staging_done_[0]) {
      for (auto& done : staging_done_)
        GPU_ROUTING_CUDA_CHECK(cudaEventCreateWithFlags(&done, cudaEventDisableTiming));
    }
    // Every host thread, whatever the call's own thread setting (the GPU's calls ask for one):
    // the copy-out is the host's share of the transfer, and page faults bound it.
    const int threads = resolve_thread_count(0);
    std::size_t parts = (count + part - 1) / part;
    auto enqueue = [&](std::size_t p) {
      const std::size_t begin = p * part, cells = std::min(part, count - begin);
      GPU_ROUTING_CUDA_CHECK(cudaMemcpyAsync(staging_[p % 2].data(), device_rows + begin,
                                             cells * sizeof(double), cudaMemcpyDeviceToHost,
                                             stream));
      GPU_ROUTING_CUDA_CHECK(cudaEventRecord(staging_done_[p % 2], stream));
    };
    enqueue(0);
    for (std::size_t p = 0; p < parts; ++p) {
      GPU_ROUTING_CUDA_CHECK(cudaEventSynchronize(staging_done_[p % 2]));
      if (p + 1 < parts) enqueue(p + 1);
      const std::size_t begin = p * part, cells = std::min(part, count - begin);
      parallel_copy(host + begin, staging_[p % 2].data(), cells * sizeof(double), threads);
    }
  }

  std::size_t held_bytes() const {
    return hierarchy_bytes_ + restricted_.bytes + table_bytes_ + reverse_bytes_ + paths_bytes_ +
           area_bytes_ + target_positions_.size() * sizeof(VertexIndex);
  }
  void require(std::size_t more, const std::string& what) const {
    options_.budget.require(saturating_add(held_bytes(), more), what);
    require_device_memory(device_, more, what, MemoryBudget());
  }

  // The hierarchy on the device, for the index this call uses (uploaded again only when the
  // kept graph's index is another one).
  void prepare_hierarchy() {
    const Cch& cch = index();
    const int limit = subtree_limit(cch.vertex_count());
    if (uploaded_ == &cch && uploaded_limit_ == limit && uploaded_lanes_ == g_lanes) return;
    Stopwatch build;
    SweepLayout layout = make_sweep_layout(cch, limit, g_lanes);
    const std::size_t n = layout.position_of_vertex.size();
    const std::size_t bytes = DeviceSweepLayout::bytes_of(layout) + n * sizeof(VertexIndex);
    forget_targets();
    full_.release();
    position_of_vertex_.release();
    hierarchy_bytes_ = 0;
    uploaded_ = nullptr;
    require(bytes, "the road index's copy on the GPU");
    const double layout_ms = build.elapsed_ms();
    Stopwatch copy;
    full_.upload(layout, stream_->get());
    position_of_vertex_.allocate(std::max<std::size_t>(n, 1));
    if (n > 0) position_of_vertex_.upload(layout.position_of_vertex.data(), n, stream_->get());
    stream_->synchronize();
    report_.transfer_ms += copy.elapsed_ms();
    hierarchy_bytes_ = bytes;
    full_host_ = std::move(layout);
    uploaded_ = &cch;
    uploaded_limit_ = limit;
    uploaded_lanes_ = g_lanes;
    char note[320];
    std::snprintf(note, sizeof note,
                  "%sPHAST on the GPU: %d top levels, then %d groups of subtrees of at most %d "
                  "ranks in one launch; hierarchy laid out in %.0f ms and copied in %.0f ms",
                  options_.road_index != nullptr ? "the kept graph's road index (shared); "
                                                 : built_note_.c_str(),
                  full_.top_levels, full_.groups, limit, layout_ms, copy.elapsed_ms());
    hierarchy_note_ = note;
    report_.notes = hierarchy_note_;
    targets_note_.clear();
  }

  void forget_targets() {
    targets_host_.clear();
    target_positions_.release();
    restricted_.release();
    restricted_for_targets_ = false;
    closure_checked_ = false;
    targets_note_.clear();
  }

  // A cost matrix's targets: where the sweep leaves their distances, and whether the sweep may
  // skip the ranks outside their closure (RPHAST, restrict_sweep_layout). The closure is the union
  // of the targets' elimination-tree ancestors; it is used while it holds at most
  // kRestrictedShare of the ranks, for a solve of at least g_restrict_from_sources sources (laying
  // it out walks the whole hierarchy once: New York 9-21 ms, more than a few sweeps save). The
  // restricted layout is kept for the next solves with the same targets: a call's batches share
  // them.
  void prepare_targets(const SolveRequest& request) {
    const bool same = targets_host_.size() == static_cast<std::size_t>(request.target_count) &&
                      !targets_host_.empty() && targets_restrict_setting_ == g_restrict &&
                      std::equal(targets_host_.begin(), targets_host_.end(), request.targets);
    if (!same) {
      forget_targets();
      upload_target_positions(full_, request);
      targets_host_.assign(request.targets, request.targets + request.target_count);
      targets_restrict_setting_ = g_restrict;
    }
    if (!g_restrict || closure_checked_ || request.source_count < g_restrict_from_sources) return;
    closure_checked_ = true;
    Stopwatch build;
    const Cch& cch = index();
    const VertexIndex n = cch.vertex_count();
    std::vector<char> in_closure;  // by rank
    const VertexIndex closure =
        cch.ancestor_closure(request.targets, request.target_count, &in_closure).ranks;
    if (closure > kRestrictedShare * static_cast<double>(n)) return;
    SweepLayout restricted = restrict_sweep_layout(full_host_, in_closure);
    const double layout_ms = build.elapsed_ms();
    // Where gpu_routing.max_memory cannot hold the restricted copy beside the full one, the
    // sweeps stay whole (the full one's target positions are still in place).
    const std::size_t bytes = DeviceSweepLayout::bytes_of(restricted);
    if (saturating_add(held_bytes(), bytes) > options_.budget.limit_bytes()) return;
    Stopwatch copy;
    try {
      restricted_.upload(restricted, stream_->get());
    } catch (const RoutingError& error) {
      restricted_.release();
      if (error.kind() == ErrorKind::kOutOfMemory) return;  // the device is full: whole sweeps
      throw;
    }
    report_.transfer_ms += copy.elapsed_ms();
    try {
      upload_target_positions(restricted_, request);
    } catch (...) {
      forget_targets();  // the next solve starts over: no half-made layout is used
      throw;
    }
    restricted_for_targets_ = true;
    char note[200];
    std::snprintf(note, sizeof note,
                  "RPHAST: the targets' closure, %d of %d ranks (%.0f%%), laid out in %.1f ms; ",
                  closure, n, 100.0 * closure / std::max<VertexIndex>(n, 1), layout_ms);
    targets_note_ = note;
  }

  // The targets' positions in `layout`'s table, on the device.
  void upload_target_positions(const DeviceSweepLayout& layout, const SolveRequest& request) {
    const auto rank_of = index().rank_of_vertex();
    std::vector<VertexIndex> positions(static_cast<std::size_t>(request.target_count));
    for (int i = 0; i < request.target_count; ++i)
      positions[static_cast<std::size_t>(i)] = layout.position_of_rank[static_cast<std::size_t>(
          rank_of[static_cast<std::size_t>(request.targets[i])])];
    target_positions_.release();
    require(positions.size() * sizeof(VertexIndex), "the cost matrix's targets on the GPU");
    target_positions_.allocate(std::max<std::size_t>(positions.size(), 1));
    if (!positions.empty())
      target_positions_.upload(positions.data(), positions.size(), stream_->get());
    stream_->synchronize();
  }

  void prepare_reverse() {
    if (reverse_bytes_ > 0) return;
    const std::size_t bytes =
        DeviceCsr::bytes(graph_.reverse, true) + predecessor_pass_bytes(graph_.vertex_count());
    require(bytes, "the road index's predecessor pass");
    Stopwatch copy;
    reverse_.upload(graph_.reverse, true, stream_->get());
    predecessor_pass_.reserve(graph_.vertex_count());
    report_.transfer_ms += copy.elapsed_ms();
    reverse_bytes_ = bytes;
  }

  // A sweep's seeds: the upward searches' distances at their table slots.
  struct SweepSeeds {
    std::vector<std::int64_t> slots;
    std::vector<double> values;
  };

  // The seeds of `count` sources' sweep (host only: the next sweep's are found while the GPU runs
  // the current one).
  void find_seeds(const DeviceSweepLayout& layout, const VertexIndex* sources, int count,
                  SweepSeeds& out) {
    const Cch& cch = index();
    const std::int64_t n = cch.vertex_count();
    // Upward searches on the host, a few hundred ranks each, on every host thread: one after
    // another they took longer than the sweep of 256 sources. Each thread's workspace spans the
    // graph (24 bytes a vertex, its pages touched along the chains): at most kUpwardScratchBytes
    // of them in all (New York: 6.3 MB each; a graph of 20M vertices would get one).
    const std::size_t scratch = 24 * static_cast<std::size_t>(std::max<std::int64_t>(n, 1));
    const int threads = std::max(
        1,
        std::min({resolve_thread_count(options_.threads), count,
                  static_cast<int>(std::min<std::size_t>(kUpwardScratchBytes / scratch, 1024))}));
    if (static_cast<int>(upward_.size()) < threads)
      upward_.resize(static_cast<std::size_t>(threads));
    if (static_cast<int>(reached_.size()) < count) reached_.resize(static_cast<std::size_t>(count));
    Stopwatch upward;
    parallel_for_each(count, threads, [&](int j, int thread) {
      cch.upward_search(sources[j], reached_[static_cast<std::size_t>(j)],
                        upward_[static_cast<std::size_t>(thread)]);
    });
    out.slots.clear();
    out.values.clear();
    for (int j = 0; j < count; ++j) {
      for (const auto& [rank, distance] : reached_[static_cast<std::size_t>(j)]) {
        // A rank a restricted sweep leaves out reaches no target.
        const VertexIndex position = layout.position_of_rank[static_cast<std::size_t>(rank)];
        if (position < 0) continue;
        out.slots.push_back(static_cast<std::int64_t>(position) * count + j);
        out.values.push_back(distance);
      }
    }
    upward_ms_ += upward.elapsed_ms();
  }

  // Distances of `count` sources in the table (the layout's positions x count), from their seeds.
  void sweep(DeviceSweepLayout& layout, const SweepSeeds& seeds_of, int count, int width) {
    const std::size_t room = static_cast<std::size_t>(std::max<VertexIndex>(layout.positions, 1)) *
                             static_cast<std::size_t>(width);
    if (table_.size() < room) {
      // The table and the rows it is turned into, for a whole sweep.
      const std::size_t bytes = 2 * room * sizeof(double);
      table_bytes_ = 0;
      full_.graphs.clear();  // captured with the old table's pointer
      restricted_.graphs.clear();
      table_.allocate(0);
      rows_.allocate(0);
      require(bytes, "the road index's PHAST table on the GPU");
      table_.allocate(room);
      rows_.allocate(room);
      table_bytes_ = bytes;
    }
    const std::size_t cells =
        static_cast<std::size_t>(layout.positions) * static_cast<std::size_t>(count);
    Stopwatch copy;
    const std::size_t seeds = seeds_of.slots.size();
    if (seed_slot_device_.size() < seeds) {
      seed_slot_device_.allocate(seeds);
      seed_value_device_.allocate(seeds);
      seed_slot_host_.allocate(seeds);
      seed_value_host_.allocate(seeds);
    }
    // The previous sweep's uploads from these pinned buffers are done: its rows were waited for.
    std::memcpy(seed_slot_host_.data(), seeds_of.slots.data(), seeds * sizeof(std::int64_t));
    std::memcpy(seed_value_host_.data(), seeds_of.values.data(), seeds * sizeof(double));
    seed_slot_device_.upload(seed_slot_host_.data(), seeds, stream_->get());
    seed_value_device_.upload(seed_value_host_.data(), seeds, stream_->get());
    report_.transfer_ms += copy.elapsed_ms();

    cudaStream_t stream = stream_->get();
    fill_kernel<<<blocks_for(static_cast<std::int64_t>(cells), kSweepBlock), kSweepBlock, 0,
                  stream>>>(table_.data(), static_cast<std::int64_t>(cells), kInfinity);
    GPU_ROUTING_CUDA_CHECK_LAUNCH();
    if (seeds > 0) {
      seed_kernel<<<blocks_for(static_cast<std::int64_t>(seeds), kSweepBlock), kSweepBlock, 0,
                    stream>>>(seed_slot_device_.data(), seed_value_device_.data(),
                              static_cast<int>(seeds), table_.data());
      GPU_ROUTING_CUDA_CHECK_LAUNCH();
    }
    if (!g_graphs) {
      enqueue_levels(layout, count, stream);
      return;
    }
    if (layout.graphs.size() < static_cast<std::size_t>(count))
      layout.graphs.resize(static_cast<std::size_t>(count));
    std::unique_ptr<SweepGraph>& graph = layout.graphs[static_cast<std::size_t>(count) - 1];
    const SweepSettings settings = current_sweep_settings();
    if (graph == nullptr || !graph->made_with(settings))
      graph = capture_sweep(stream, settings,
                            [&](cudaStream_t s) { enqueue_levels(layout, count, s); });
    GPU_ROUTING_CUDA_CHECK(cudaGraphLaunch(graph->exec(), stream));
  }

  // The downward sweep's launches for `count` sources a position: the top level by level, then
  // the bottom's groups in one launch. Every pointer they take stays the same until the hierarchy
  // or the table is allocated again, which drops the graphs captured from them.
  void enqueue_levels(const DeviceSweepLayout& layout, int count, cudaStream_t stream) {
    const std::int64_t one_block_threads =
        static_cast<std::int64_t>(kOneBlockThreads) * std::max(1, g_one_block_passes);
    auto threads_of = [&](int l) {
      return static_cast<std::int64_t>(layout.step_first_host[static_cast<std::size_t>(l) + 1] -
                                       layout.step_first_host[static_cast<std::size_t>(l)]) *
             count * layout.step_lanes_host[static_cast<std::size_t>(l)];
    };
    int level = 0;
    while (level < layout.top_levels) {
      if (threads_of(level) <= one_block_threads) {
        int end = level;
        while (end < layout.top_levels && threads_of(end) <= one_block_threads) ++end;
        sweep_levels_one_block_kernel<<<1, kOneBlockThreads, 0, stream>>>(
            layout.first.data(), layout.head.data(), layout.down.data(), table_.data(),
            layout.step_first.data(), layout.step_lanes.data(), level, end, count);
        GPU_ROUTING_CUDA_CHECK_LAUNCH();
        level = end;
      } else {
        sweep_level_kernel<<<blocks_for(round_to_warps(threads_of(level)), kSweepBlock),
                             kSweepBlock, 0, stream>>>(
            layout.first.data(), layout.head.data(), layout.down.data(), table_.data(),
            layout.step_first_host[static_cast<std::size_t>(level)],
            layout.step_first_host[static_cast<std::size_t>(level) + 1], count,
            layout.step_lanes_host[static_cast<std::size_t>(level)]);
        GPU_ROUTING_CUDA_CHECK_LAUNCH();
        ++level;
      }
    }
    if (layout.groups > 0) {
      const int per_block = group_sources(count);
      const dim3 grid(static_cast<unsigned>(layout.groups),
                      static_cast<unsigned>((count + per_block - 1) / per_block));
      sweep_groups_kernel<<<grid, group_block(), 0, stream>>>(
          layout.first.data(), layout.head.data(), layout.down.data(), table_.data(),
          layout.group_step.data(), layout.step_first.data(), layout.step_lanes.data(), count,
          per_block);
      GPU_ROUTING_CUDA_CHECK_LAUNCH();
    }
  }

  void deliver(const SolveRequest& request, int first, int count, bool compact, std::size_t n) {
    cudaStream_t stream = stream_->get();
    if (request.own_target_distances) {
      deliver_paths(request, first, count, n);
      return;
    }
    if (compact) {
      const std::size_t cells =
          static_cast<std::size_t>(count) * static_cast<std::size_t>(request.target_count);
      rows_.reserve(cells);
      gather_kernel<<<blocks_for(static_cast<std::int64_t>(cells), kSweepBlock), kSweepBlock, 0,
                      stream>>>(table_.data(), target_positions_.data(), request.target_count,
                                count, count, rows_.data());
      GPU_ROUTING_CUDA_CHECK_LAUNCH();
      stream_->synchronize();  // the sweep counts as compute, the copy as transfer
      Stopwatch copy;
      download_rows(rows_.data(),
                    request.distances + static_cast<std::size_t>(first) *
                                            static_cast<std::size_t>(request.target_count),
                    cells, stream);
      report_.transfer_ms += copy.elapsed_ms();
      rows_back_ms_ += copy.elapsed_ms();
      return;
    }
    const std::size_t cells = static_cast<std::size_t>(count) * n;
    rows_kernel<<<blocks_for(static_cast<std::int64_t>(cells), kSweepBlock), kSweepBlock, 0,
                  stream>>>(table_.data(), position_of_vertex_.data(), static_cast<std::int64_t>(n),
                            count, count, rows_.data());
    GPU_ROUTING_CUDA_CHECK_LAUNCH();
    stream_->synchronize();
    Stopwatch copy;
    double* host_rows = request.distances + static_cast<std::size_t>(first) * n;
    download_rows(rows_.data(), host_rows, cells, stream);
    report_.transfer_ms += copy.elapsed_ms();
    rows_back_ms_ += copy.elapsed_ms();
    if (request.predecessor_arcs == nullptr) return;
    for (int j = 0; j < count; ++j) {
      options_.cancel.throw_if_requested();
      const std::size_t offset = static_cast<std::size_t>(first + j) * n;
      const VertexIndex source = request.sources[first + j];
      predecessor_pass_.enqueue(reverse_, rows_.data() + static_cast<std::size_t>(j) * n, source,
                                request.predecessor_arcs + offset, stream);
      stream_->synchronize();
      predecessor_pass_.finish(graph_.reverse, request.distances + offset, source,
                               request.predecessor_arcs + offset);
    }
  }

  // A sweep's areas: counted per source, laid out by the counts, written, and brought back.
  std::int64_t deliver_areas(int count, double bound, AreaLists& areas) {
    cudaStream_t stream = stream_->get();
    const std::int64_t n = graph_.vertex_count();
    const auto sources = static_cast<std::size_t>(count);
    if (area_counts_.size() < sources) {
      area_counts_.allocate(sources);
      area_counts_host_.allocate(sources);
    }
    GPU_ROUTING_CUDA_CHECK(
        cudaMemsetAsync(area_counts_.data(), 0, sources * sizeof(unsigned long long), stream));
    const std::int64_t cells = n * count;
    area_count_kernel<<<blocks_for(cells, kSweepBlock), kSweepBlock, 0, stream>>>(
        table_.data(), position_of_vertex_.data(), n, count, bound, area_counts_.data());
    GPU_ROUTING_CUDA_CHECK_LAUNCH();
    area_counts_.download(area_counts_host_.data(), sources, stream);
    stream_->synchronize();
    // Each source's offset, then the cursors the writing pass advances from it.
    unsigned long long* counts = area_counts_host_.data();
    std::vector<std::int64_t> offsets(sources + 1, 0);
    for (std::size_t j = 0; j < sources; ++j)
      offsets[j + 1] = offsets[j] + static_cast<std::int64_t>(counts[j]);
    const auto total = static_cast<std::size_t>(offsets[sources]);
    for (std::size_t j = 0; j < sources; ++j)
      counts[j] = static_cast<unsigned long long>(offsets[j]);
    if (total > 0) {
      if (area_vertices_.size() < total) {
        area_vertices_.allocate(0);
        area_distances_.allocate(0);
        area_bytes_ = 0;
        const std::size_t room = total + total / 4;
        const std::size_t bytes = room * (sizeof(VertexIndex) + sizeof(double));
        require(bytes, "the service areas on the GPU");
        area_vertices_.allocate(room);
        area_distances_.allocate(room);
        area_bytes_ = bytes;
      }
      area_counts_.upload(counts, sources, stream);
      area_write_kernel<<<blocks_for(cells, kSweepBlock), kSweepBlock, 0, stream>>>(
          table_.data(), position_of_vertex_.data(), n, count, bound, area_counts_.data(),
          area_vertices_.data(), area_distances_.data());
      GPU_ROUTING_CUDA_CHECK_LAUNCH();
      stream_->synchronize();  // the sweep and the compaction count as compute
    }
    Stopwatch copy;
    const std::size_t base = areas.vertices.size();
    areas.vertices.resize(base + total);
    areas.distances.resize(base + total);
    if (total > 0) {
      area_vertices_.download(areas.vertices.data() + base, total, stream);
      area_distances_.download(areas.distances.data() + base, total, stream);
      stream_->synchronize();
    }
    for (std::size_t j = 0; j < sources; ++j)
      areas.ends.push_back(static_cast<std::int64_t>(base) + offsets[j + 1]);
    report_.transfer_ms += copy.elapsed_ms();
    rows_back_ms_ += copy.elapsed_ms();
    return static_cast<std::int64_t>(total);
  }

  // Paths without rows: the rule's first stage on the device for each row; the predecessor rows
  // and the sources' own targets' distances to the host. A row the rule left vertices pending in
  // (zero-cost ties) comes to the host too, and the rule's second stage runs there.
  void deliver_paths(const SolveRequest& request, int first, int count, std::size_t n) {
    cudaStream_t stream = stream_->get();
    if (paths_bytes_ == 0) {
      const std::size_t bytes =
          n * kSourcesPerSweep * sizeof(ArcIndex) + kSourcesPerSweep * sizeof(unsigned int);
      require(bytes, "the road index's predecessor rows on the GPU");
      predecessor_rows_.allocate(n * kSourcesPerSweep);
      pending_.allocate(kSourcesPerSweep);
      pending_host_.allocate(kSourcesPerSweep);
      paths_bytes_ = bytes;
    }
    const std::size_t cells = static_cast<std::size_t>(count) * n;
    rows_kernel<<<blocks_for(static_cast<std::int64_t>(cells), kSweepBlock), kSweepBlock, 0,
                  stream>>>(table_.data(), position_of_vertex_.data(), static_cast<std::int64_t>(n),
                            count, count, rows_.data());
    GPU_ROUTING_CUDA_CHECK_LAUNCH();
    GPU_ROUTING_CUDA_CHECK(cudaMemsetAsync(
        pending_.data(), 0, static_cast<std::size_t>(count) * sizeof(unsigned int), stream));
    for (int j = 0; j < count; ++j)
      launch_predecessor_first_stage(
          reverse_, rows_.data() + static_cast<std::size_t>(j) * n, request.sources[first + j],
          predecessor_rows_.data() + static_cast<std::size_t>(j) * n, pending_.data() + j, stream);
    const int own_begin = request.target_offsets[first];
    const int own_count = request.target_offsets[first + count] - own_begin;
    if (own_count > 0) {
      const auto own = static_cast<std::size_t>(own_count);
      if (own_slot_host_.size() < own) {
        own_slot_host_.allocate(own);
        own_slot_device_.allocate(own);
        own_distances_.allocate(own);
      }
      for (int j = 0; j < count; ++j)
        for (int i = request.target_offsets[first + j]; i < request.target_offsets[first + j + 1];
             ++i)
          own_slot_host_.data()[i - own_begin] =
              static_cast<std::int64_t>(j) * static_cast<std::int64_t>(n) + request.targets[i];
      own_slot_device_.upload(own_slot_host_.data(), own, stream);
      gather_slots_kernel<<<blocks_for(own_count, kSweepBlock), kSweepBlock, 0, stream>>>(
          rows_.data(), own_slot_device_.data(), own_count, own_distances_.data());
      GPU_ROUTING_CUDA_CHECK_LAUNCH();
    }
    stream_->synchronize();  // the sweep and the rule count as compute, the copies as transfer
    Stopwatch copy;
    predecessor_rows_.download(request.predecessor_arcs + static_cast<std::size_t>(first) * n,
                               cells, stream);
    if (own_count > 0)
      own_distances_.download(request.distances + own_begin, static_cast<std::size_t>(own_count),
                              stream);
    pending_.download(pending_host_.data(), static_cast<std::size_t>(count), stream);
    stream_->synchronize();
    for (int j = 0; j < count; ++j) {
      if (pending_host_.data()[j] == 0) continue;
      options_.cancel.throw_if_requested();
      pending_row_.resize(n);
      GPU_ROUTING_CUDA_CHECK(cudaMemcpyAsync(pending_row_.data(),
                                             rows_.data() + static_cast<std::size_t>(j) * n,
                                             n * sizeof(double), cudaMemcpyDeviceToHost, stream));
      stream_->synchronize();
      resolve_pending_predecessors(
          graph_.reverse, pending_row_.data(), request.sources[first + j],
          request.predecessor_arcs + static_cast<std::size_t>(first + j) * n);
    }
    report_.transfer_ms += copy.elapsed_ms();
  }

  int device_ = 0;
  std::unique_ptr<Stream> stream_;
  Cch own_;
  std::string built_note_;
  CchWorkspace workspace_;
  std::vector<CchWorkspace> upward_;                                  // one per host thread
  std::vector<std::vector<std::pair<VertexIndex, double>>> reached_;  // per source of a sweep
  PinnedBuffer<double> staging_[2];
  cudaEvent_t staging_done_[2] = {nullptr, nullptr};
  const Cch* uploaded_ = nullptr;
  int uploaded_limit_ = 0, uploaded_lanes_ = 0;  // the settings the layout was made with
  // The whole hierarchy's layout, on the host (restricted layouts are cut from it) and the device.
  SweepLayout full_host_;
  DeviceSweepLayout full_;
  DeviceBuffer<VertexIndex> position_of_vertex_;  // the full layout's, for rows by vertex
  std::size_t hierarchy_bytes_ = 0;               // full_ and position_of_vertex_
  std::string hierarchy_note_;
  std::string targets_note_;                 // the restriction, while restricted_for_targets_
  double upward_ms_ = 0, rows_back_ms_ = 0;  // this solve's
  // The last cost matrix's targets: their table positions, and the restricted layout they use
  // when restricted_for_targets_.
  std::vector<VertexIndex> targets_host_;
  DeviceBuffer<VertexIndex> target_positions_;
  DeviceSweepLayout restricted_;
  bool restricted_for_targets_ = false;
  bool targets_restrict_setting_ = true;  // g_restrict when they were prepared
  bool closure_checked_ = false;          // whether their closure was measured
  DeviceBuffer<double> table_;
  DeviceBuffer<double> rows_;
  std::size_t table_bytes_ = 0;  // the table and rows
  SweepSeeds seeds_[2];          // this sweep's and the next one's
  DeviceBuffer<std::int64_t> seed_slot_device_;
  DeviceBuffer<double> seed_value_device_;
  PinnedBuffer<std::int64_t> seed_slot_host_;
  PinnedBuffer<double> seed_value_host_;
  DeviceCsr reverse_;
  DevicePredecessorPass predecessor_pass_;
  std::size_t reverse_bytes_ = 0;
  // Paths without rows (deliver_paths).
  DeviceBuffer<ArcIndex> predecessor_rows_;
  DeviceBuffer<unsigned int> pending_;
  PinnedBuffer<unsigned int> pending_host_;
  PinnedBuffer<std::int64_t> own_slot_host_;
  DeviceBuffer<std::int64_t> own_slot_device_;
  DeviceBuffer<double> own_distances_;
  std::vector<double> pending_row_;
  std::size_t paths_bytes_ = 0;
  // Service areas (deliver_areas): each source's count, then its cursor; the areas compacted.
  DeviceBuffer<unsigned long long> area_counts_;
  PinnedBuffer<unsigned long long> area_counts_host_;
  DeviceBuffer<VertexIndex> area_vertices_;
  DeviceBuffer<double> area_distances_;
  std::size_t area_bytes_ = 0;
};

// The hierarchy on the device (about 12 bytes per hierarchy arc, 5-6 arcs per road vertex), a
// sweep's table and rows, the host's own index when the graph has no shared one (cch_bytes of the
// CPU engine covers it), and the predecessor pass.
std::size_t gpu_cch_bytes(const Graph& graph, int) {
  const auto n = static_cast<std::size_t>(graph.vertex_count());
  return saturating_add(
      saturating_add(saturating_multiply(n, 200 + 8 * 12),
                     saturating_multiply(static_cast<std::size_t>(graph.arc_count()), 8 + 16)),
      saturating_multiply(n, 2 * kSourcesPerSweep * sizeof(double)));
}

}  // namespace

void set_phast_one_block_passes(int passes) {
  g_one_block_passes = std::max(1, passes);
}
void set_phast_graphs(bool on) {
  g_graphs = on;
}
void set_phast_subtree_vertices(int vertices) {
  g_subtree_vertices = vertices;
}
void set_phast_group_block(int threads) {
  g_group_block = threads >= 32 && threads <= 1024 && threads % 32 == 0 ? threads : 0;
}
void set_phast_group_sources(int sources) {
  g_group_sources = std::max(0, sources);
}
void set_phast_sources_per_sweep(int sources) {
  g_sources_per_sweep = std::max(0, sources);
}
void set_phast_restrict(bool on) {
  g_restrict = on;
}
void set_phast_restrict_from_sources(int sources) {
  g_restrict_from_sources = sources > 0 ? sources : kRestrictFromSources;
}
void set_phast_lanes(int lanes) {
  g_lanes = lanes > 0 && lanes <= 32 && (lanes & (lanes - 1)) == 0 ? lanes : 0;
}

const std::vector<EngineInfo>& cch_engines() {
  static const std::vector<EngineInfo> table = {
      {"cch", Device::kGpu, true, true, false,
       "the road index on the GPU: PHAST sweeps of the customizable contraction hierarchy, "
       "up to 256 sources a sweep: the top separators level by level, the small subtrees below "
       "them in one launch (the hierarchy made on the host, kept with a kept graph)",
       [](const Graph& g, const EngineOptions& o) -> std::unique_ptr<ShortestPathEngine> {
         return std::make_unique<GpuCchEngine>(g, o);
       },
       gpu_cch_bytes},
  };
  return table;
}

}  // namespace gpu_routing::gpu
