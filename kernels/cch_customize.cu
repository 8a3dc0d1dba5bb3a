// The road index's customization on the GPU (gpu::CchCustomizer, src/core/engine/gpu.hpp): the
// weights and vias of Cch::customize (src/core/road_index/cch_customize.cpp), bit for bit.
//
// The CPU sweeps the middle ranks u in increasing order and pushes each lower triangle v -> u -> w
// into arc v-w, replacing on strict improvement, after the original arcs. So an arc's final weight
// is the least of its original arcs' weights and its triangles' sums, and its via the original arc
// where that reaches the least (the first in CSR order of equally cheap ones), else the lowest
// middle that does. Here each arc v-w pulls instead: over v's downward neighbours u (the ranks
// below with an arc into v, ascending), arc u-w is looked up by binary search in u's row (the heads
// above v; chordality puts every such head among v's upward neighbours), and the candidates are the
// same single additions as the CPU's (down[uv] + up[uw] upward, down[uw] + up[uv] downward), so the
// same bits. An arc's triangles read arcs leaving its lower end's descendants in the elimination
// tree, so arcs are taken level by level (a rank's level: its height in the tree, leaves 0), one
// data-parallel step a level. A group of threads (a power of two) shares an arc's middles: each
// thread scans its share in increasing order with strict improvement, then the group keeps the
// least (weight, middle) pair, the original arc counting as middle -1: that is the one sweep's
// answer, whatever the split.
//
// Optionally (set_cch_customize_triangle_lists) the customizer lists each arc's lower triangles
// once (its arcs u-v and u-w, by increasing u: 8 bytes a triangle, New York 13.9 M), so that a
// middle costs two index loads and four weight loads instead of a binary search. On New York that
// saved 3 % of the compute for 6 times the customizer's making and twice its device memory, so
// rows are searched by default.
//
// The top levels are single ranks of the top separators (New York: 378 levels, the last hundred of
// one or two ranks with up to 450 middles an arc), so their arcs get many threads each; the
// smallest levels run in one block's loop, a block barrier between levels instead of a launch.
#include <algorithm>
#include <climits>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include <math_constants.h>

#include "road_index/cch.hpp"
#include "engine/gpu.hpp"
#include "cuda_common.cuh"
#include "gpu_engines.hpp"

namespace gpu_routing::gpu {
namespace {

constexpr int kLevelBlock = 256;  // threads a block for a level's launch (groups up to this)
constexpr int kOneBlockThreads = 1024;
constexpr int kMaxWarps = kOneBlockThreads / 32;
// Middles each thread of a group scans (the group size is the least power of two that gives at
// most this many on the level's average arc, up to a block; set_cch_customize_middles_per_thread
// for the bench). phast_bench on an H100, New York, compute: 1 middle 3.1 ms, 2 3.2, 4 3.9, 8 4.9,
// 16 7.3 (the top levels are latency-bound: the more threads an arc, the shorter its chain).
int g_middles_per_thread = 1;
// Levels with at most this many middles in all (arc x middle pairs) run in the one-block loop.
int g_one_block_pairs = 8192;
// Whether a customizer lists each arc's lower triangles (8 bytes each; New York 13.9 M, 111 MB)
// when the device has the room, or searches rows for them (the default). phast_bench on an H100:
// New York 3.0 ms of compute with the lists against 3.1 without, but 241 ms to make the customizer
// against 42 (the lists built on one host core); Rome 0.31 against 0.58 ms, 1.8 against 0.4 ms.
bool g_triangle_lists = false;
constexpr std::int64_t kMaxTriangles = 2147483647;  // ArcIndex offsets

// An arc's best candidate so far: the weight and its middle rank (-1: the original arc; INT_MAX:
// none yet).
struct Best {
  double weight;
  int middle;
};

__device__ __forceinline__ void keep_better(Best& best, double weight, int middle) {
  if (weight < best.weight || (weight == best.weight && middle < best.middle)) {
    best.weight = weight;
    best.middle = middle;
  }
}

// The group's least (weight, middle) across `width` lanes (<= 32) of a warp: every lane of the warp
// calls it.
__device__ __forceinline__ void reduce_in_warp(Best& best, int width) {
  for (int offset = width / 2; offset > 0; offset /= 2) {
    const double weight = __shfl_xor_sync(0xffffffffu, best.weight, offset, width);
    const int middle = __shfl_xor_sync(0xffffffffu, best.middle, offset, width);
    keep_better(best, weight, middle);
  }
}

struct Topology {
  const ArcIndex* first;          // by rank: upward arcs first[r] .. first[r + 1] - 1
  const VertexIndex* head;        // by arc: the higher rank, ascending within a row
  const ArcIndex* down_first;     // by rank x: x's downward neighbours down_first[x] .. [x + 1] - 1
  const VertexIndex* down_tail;   // the lower rank u, ascending
  const ArcIndex* down_arc;       // arc u-x
  const ArcIndex* level_arc;      // arcs by level of their lower end, then by arc
  const VertexIndex* level_tail;  // the lower end of level_arc[i]
  // With triangle lists: arc v-w's lower triangles tri_first[vw] .. tri_first[vw + 1] - 1, as
  // their arcs u-v (tri_uv) and u-w (tri_uw), in increasing u (so increasing u-v); arc_tail[uv]
  // gives u back.
  const ArcIndex* tri_first;
  const ArcIndex* tri_uv;
  const ArcIndex* tri_uw;
  const VertexIndex* arc_tail;
};

struct Weights {
  double* up;
  double* down;
  std::int32_t* up_via;
  std::int32_t* down_via;
};

// The arc-of-level `item`'s share for thread `lane` of its group of `group` threads. Every thread
// of the block calls it together (warp shuffles, and block barriers for groups over a warp), valid
// or not. `scratch`: shared memory of two entries a warp of the block. kTriangles: the middles come
// from the triangle lists (Best::middle holds arc u-v until the end), else from v's downward
// neighbours and a search of each one's row.
template <bool kTriangles>
__device__ __forceinline__ void relax_item(const Topology& topology, const Weights& weights,
                                           std::int64_t level_begin, std::int64_t items, int group,
                                           std::int64_t t, Best* scratch) {
  const std::int64_t item = t / group;
  const int lane = static_cast<int>(t % group);
  const bool valid = item < items;
  Best up{CUDART_INF, INT_MAX}, down{CUDART_INF, INT_MAX};
  ArcIndex vw = 0;
  if (valid) {
    vw = topology.level_arc[level_begin + item];
    const VertexIndex v = topology.level_tail[level_begin + item];
    const VertexIndex w = topology.head[vw];
    if (lane == 0) {
      up = {weights.up[vw], -1};
      down = {weights.down[vw], -1};
    }
    if (kTriangles) {
      const ArcIndex end = topology.tri_first[vw + 1];
      for (ArcIndex k = topology.tri_first[vw] + lane; k < end; k += group) {
        const ArcIndex uv = topology.tri_uv[k], uw = topology.tri_uw[k];
        const double v_to_w = weights.down[uv] + weights.up[uw];
        const double w_to_v = weights.down[uw] + weights.up[uv];
        if (v_to_w < up.weight) up = {v_to_w, uv};  // strict: the lower middle stays on a tie
        if (w_to_v < down.weight) down = {w_to_v, uv};
      }
    }
    const ArcIndex end = kTriangles ? 0 : topology.down_first[v + 1];
    for (ArcIndex j = kTriangles ? 0 : topology.down_first[v] + lane; j < end; j += group) {
      const VertexIndex u = topology.down_tail[j];
      const ArcIndex uv = topology.down_arc[j];
      // Arc u-w: among u's heads after v.
      ArcIndex low = uv + 1, high = topology.first[u + 1];
      while (low < high) {
        const ArcIndex mid = low + (high - low) / 2;
        if (topology.head[mid] < w)
          low = mid + 1;
        else
          high = mid;
      }
      if (low == topology.first[u + 1] || topology.head[low] != w) continue;
      const ArcIndex uw = low;
      const double u_to_v = weights.up[uv], v_to_u = weights.down[uv];
      const double v_to_w = v_to_u + weights.up[uw];
      const double w_to_v = weights.down[uw] + u_to_v;
      if (v_to_w < up.weight) up = {v_to_w, u};  // strict: the lower middle stays on a tie
      if (w_to_v < down.weight) down = {w_to_v, u};
    }
  }
  const int width = group < 32 ? group : 32;
  reduce_in_warp(up, width);
  reduce_in_warp(down, width);
  if (group > 32) {  // uniform in the block: the whole block reaches both barriers
    const int warp = static_cast<int>(threadIdx.x) / 32;
    if (threadIdx.x % 32 == 0) {
      scratch[2 * warp] = up;
      scratch[2 * warp + 1] = down;
    }
    __syncthreads();
    if (lane == 0) {
      for (int other = warp + 1; other < warp + group / 32; ++other) {
        keep_better(up, scratch[2 * other].weight, scratch[2 * other].middle);
        keep_better(down, scratch[2 * other + 1].weight, scratch[2 * other + 1].middle);
      }
    }
    __syncthreads();
  }
  if (valid && lane == 0) {
    if (kTriangles) {
      if (up.middle >= 0) up.middle = topology.arc_tail[up.middle];
      if (down.middle >= 0) down.middle = topology.arc_tail[down.middle];
    }
    // Cch::encode_middle(u) is -2 - u; middle -1 keeps the original arc's value and via.
    if (up.middle >= 0) {
      weights.up[vw] = up.weight;
      weights.up_via[vw] = -2 - up.middle;
    }
    if (down.middle >= 0) {
      weights.down[vw] = down.weight;
      weights.down_via[vw] = -2 - down.middle;
    }
  }
}

// One level: its arcs level_arc[begin .. end), `group` threads each.
template <bool kTriangles>
__global__ void relax_level_kernel(Topology topology, Weights weights, std::int64_t begin,
                                   std::int64_t end, int group) {
  __shared__ Best scratch[2 * (kLevelBlock / 32)];
  const std::int64_t t = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  relax_item<kTriangles>(topology, weights, begin, end - begin, group, t, scratch);
}

// Levels [level_begin, level_end) in one block, a barrier after each.
template <bool kTriangles>
__global__ void relax_levels_one_block_kernel(Topology topology, Weights weights,
                                              const ArcIndex* __restrict__ level_first,
                                              const int* __restrict__ level_group, int level_begin,
                                              int level_end) {
  __shared__ Best scratch[2 * kMaxWarps];
  for (int level = level_begin; level < level_end; ++level) {
    const std::int64_t begin = level_first[level];
    const std::int64_t items = level_first[level + 1] - begin;
    const int group = level_group[level];
    const std::int64_t threads =
        (items * group + blockDim.x - 1) / blockDim.x * blockDim.x;  // whole rounds of the block
    for (std::int64_t t = threadIdx.x; t < threads; t += blockDim.x)
      relax_item<kTriangles>(topology, weights, begin, items, group, t, scratch);
    __syncthreads();
  }
}

// The original arcs: each hierarchy arc's cheapest in each direction, the first in CSR order of
// equally cheap ones (as the CPU's pass, whose order is the CSR's).
__global__ void apply_original_arcs_kernel(ArcIndex arcs, const ArcIndex* __restrict__ up_first,
                                           const ArcIndex* __restrict__ up_input,
                                           const ArcIndex* __restrict__ down_first,
                                           const ArcIndex* __restrict__ down_input,
                                           const double* __restrict__ input_weight,
                                           Weights weights) {
  const std::int64_t arc = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (arc >= arcs) return;
  double best = CUDART_INF;
  std::int32_t via = kNoArc;
  for (ArcIndex k = up_first[arc]; k < up_first[arc + 1]; ++k) {
    const double weight = input_weight[up_input[k]];
    if (weight < best) {
      best = weight;
      via = up_input[k];
    }
  }
  weights.up[arc] = best;
  weights.up_via[arc] = via;
  best = CUDART_INF;
  via = kNoArc;
  for (ArcIndex k = down_first[arc]; k < down_first[arc + 1]; ++k) {
    const double weight = input_weight[down_input[k]];
    if (weight < best) {
      best = weight;
      via = down_input[k];
    }
  }
  weights.down[arc] = best;
  weights.down_via[arc] = via;
}

int group_for(double middles_per_arc, int largest) {
  int group = 1;
  while (group < largest && group * g_middles_per_thread < middles_per_arc) group *= 2;
  return group;
}

template <typename T>
void upload_vector(DeviceBuffer<T>& buffer, const std::vector<T>& host, cudaStream_t stream) {
  buffer.allocate(std::max<std::size_t>(host.size(), 1));
  if (!host.empty()) buffer.upload(host.data(), host.size(), stream);
}

}  // namespace

struct CchCustomizer::State {
  int device = 0;
  VertexIndex vertices = 0;
  ArcIndex arcs = 0;
  std::size_t input_arcs = 0;
  std::unique_ptr<Stream> stream;
  // Topology.
  DeviceBuffer<ArcIndex> first, down_first, down_arc, level_arc, up_input_first, up_input,
      down_input_first, down_input, level_first;
  DeviceBuffer<VertexIndex> head, down_tail, level_tail;
  DeviceBuffer<int> level_group;
  bool triangles = false;  // the triangle lists are there
  DeviceBuffer<ArcIndex> tri_first, tri_uv, tri_uw;
  DeviceBuffer<VertexIndex> arc_tail;
  // By level: its arcs level_first_host[l] .. [l + 1] - 1 and their middles in all (the
  // triangles with triangle lists; the downward neighbours of their lower ends otherwise).
  std::vector<ArcIndex> level_first_host;
  std::vector<std::int64_t> level_pairs;
  std::vector<int> level_group_host;
  // The settings the groups were chosen with (g_middles_per_thread 0: none chosen yet).
  int groups_middles = 0, groups_one_block_pairs = 0;
  std::uint64_t fingerprint = 0;  // the graph topology's (Cch::topology_fingerprint)
  // Per customization.
  DeviceBuffer<double> input_weight, up, down;
  DeviceBuffer<std::int32_t> up_via, down_via;
  double topology_ms = 0;  // reported by the first customization
};

CchCustomizer::CchCustomizer(const Cch& cch, const Graph& graph, int device)
    : state_(std::make_unique<State>()) {
  Stopwatch watch;
  State& s = *state_;
  s.device = device;
  if (!cch.same_topology(graph))
    throw RoutingError(ErrorKind::kInvalidParameter,
                       "the graph has another topology than the contraction hierarchy");
  use_device(device);
  const VertexIndex n = cch.vertex_count();
  const ArcIndex m = cch.arc_count();
  const auto un = static_cast<std::size_t>(n), um = static_cast<std::size_t>(m);
  s.vertices = n;
  s.arcs = m;
  s.input_arcs = cch.input_arc_span_.count;
  const ArcIndex* first = cch.first_.data;
  const VertexIndex* head = cch.head_.data;

  // Downward neighbours: arcs in increasing order have increasing lower ends.
  std::vector<ArcIndex> down_first(un + 1, 0), down_arc(um);
  std::vector<VertexIndex> down_tail(um);
  for (std::size_t a = 0; a < um; ++a) ++down_first[static_cast<std::size_t>(head[a]) + 1];
  for (std::size_t r = 0; r < un; ++r) down_first[r + 1] += down_first[r];
  {
    std::vector<ArcIndex> next(down_first.begin(), down_first.end() - 1);
    for (VertexIndex u = 0; u < n; ++u)
      for (ArcIndex a = first[u]; a < first[u + 1]; ++a) {
        const auto at = static_cast<std::size_t>(next[static_cast<std::size_t>(head[a])]++);
        down_tail[at] = u;
        down_arc[at] = a;
      }
  }
  // Levels: heights in the elimination tree (a rank's parent is above it).
  std::vector<int> level(un, 0);
  int levels = n > 0 ? 1 : 0;
  const VertexIndex* parent = cch.parent_span_.data;
  for (std::size_t r = 0; r < un; ++r) {
    if (parent[r] != kNoVertex)
      level[static_cast<std::size_t>(parent[r])] =
          std::max(level[static_cast<std::size_t>(parent[r])], level[r] + 1);
    levels = std::max(levels, level[r] + 1);
  }
  s.level_first_host.assign(static_cast<std::size_t>(levels) + 1, 0);
  s.level_pairs.assign(static_cast<std::size_t>(levels), 0);
  for (std::size_t r = 0; r < un; ++r) {
    const ArcIndex out = first[r + 1] - first[r];
    s.level_first_host[static_cast<std::size_t>(level[r]) + 1] += out;
    s.level_pairs[static_cast<std::size_t>(level[r])] +=
        static_cast<std::int64_t>(out) * (down_first[r + 1] - down_first[r]);
  }
  for (std::size_t l = 0; l < static_cast<std::size_t>(levels); ++l)
    s.level_first_host[l + 1] += s.level_first_host[l];
  std::vector<ArcIndex> level_arc(um);
  std::vector<VertexIndex> level_tail(um);
  {
    std::vector<ArcIndex> next(s.level_first_host.begin(), s.level_first_host.end() - 1);
    for (VertexIndex r = 0; r < n; ++r)
      for (ArcIndex a = first[r]; a < first[r + 1]; ++a) {
        const auto at = static_cast<std::size_t>(next[static_cast<std::size_t>(level[r])]++);
        level_arc[at] = a;
        level_tail[at] = r;
      }
  }
  const std::size_t topology_bytes =
      (2 * (un + 1) + s.level_first_host.size() + 2 * (um + 1)) * sizeof(ArcIndex) +
      um * (3 * sizeof(ArcIndex) + 3 * sizeof(VertexIndex)) +
      s.input_arcs * sizeof(ArcIndex);  // the input arcs' lists (follow_arc_order)
  const std::size_t weight_bytes =
      um * 2 * (sizeof(double) + sizeof(std::int32_t)) + s.input_arcs * sizeof(double);
  // The triangle lists where wanted and the device has the room for them too.
  std::int64_t triangle_count = 0;
  for (std::size_t r = 0; r < un; ++r) {
    const std::int64_t out = first[r + 1] - first[r];
    triangle_count += out * (out - 1) / 2;
  }
  s.triangles = g_triangle_lists && triangle_count <= kMaxTriangles;
  const std::size_t triangle_bytes =
      s.triangles ? static_cast<std::size_t>(triangle_count) * 2 * sizeof(ArcIndex) +
                        (um + 1) * sizeof(ArcIndex) + um * sizeof(VertexIndex)
                  : 0;
  if (s.triangles) {
    try {
      require_device_memory(device, topology_bytes + weight_bytes + triangle_bytes,
                            "the road index's customization on the GPU", MemoryBudget());
    } catch (const RoutingError& e) {
      if (e.kind() != ErrorKind::kOutOfMemory) throw;
      s.triangles = false;  // rows searched instead
    }
  }
  if (!s.triangles)
    require_device_memory(device, topology_bytes + weight_bytes,
                          "the road index's customization on the GPU", MemoryBudget());
  std::vector<ArcIndex> tri_first, tri_uv, tri_uw;
  if (s.triangles) {
    // For each middle u, increasing, every pair of its upward arcs u-v, u-w (v < w) is a lower
    // triangle of arc v-w, found by a forward scan of v's row (as the CPU's sweep finds it).
    tri_first.assign(um + 1, 0);
    auto for_each_triangle = [&](auto&& visit) {
      for (VertexIndex u = 0; u < n; ++u)
        for (ArcIndex uv = first[u]; uv < first[u + 1]; ++uv) {
          ArcIndex vw = first[head[uv]];
          for (ArcIndex uw = uv + 1; uw < first[u + 1]; ++uw) {
            while (head[vw] < head[uw]) ++vw;
            visit(uv, uw, vw);
          }
        }
    };
    for_each_triangle(
        [&](ArcIndex, ArcIndex, ArcIndex vw) { ++tri_first[static_cast<std::size_t>(vw) + 1]; });
    for (std::size_t a = 0; a < um; ++a) tri_first[a + 1] += tri_first[a];
    tri_uv.resize(static_cast<std::size_t>(triangle_count));
    tri_uw.resize(static_cast<std::size_t>(triangle_count));
    std::vector<ArcIndex> next(tri_first.begin(), tri_first.end() - 1);
    for_each_triangle([&](ArcIndex uv, ArcIndex uw, ArcIndex vw) {
      const auto at = static_cast<std::size_t>(next[static_cast<std::size_t>(vw)]++);
      tri_uv[at] = uv;
      tri_uw[at] = uw;
    });
    // The levels' middles are their triangles now.
    for (std::size_t l = 0; l < s.level_pairs.size(); ++l) {
      s.level_pairs[l] = 0;
      for (ArcIndex i = s.level_first_host[l]; i < s.level_first_host[l + 1]; ++i) {
        const auto vw = static_cast<std::size_t>(level_arc[static_cast<std::size_t>(i)]);
        s.level_pairs[l] += tri_first[vw + 1] - tri_first[vw];
      }
    }
  }
  s.stream = std::make_unique<Stream>();
  const cudaStream_t stream = s.stream->get();
  upload_vector(s.first, std::vector<ArcIndex>(first, first + un + 1), stream);
  upload_vector(s.head, std::vector<VertexIndex>(head, head + um), stream);
  upload_vector(s.down_first, down_first, stream);
  upload_vector(s.down_tail, down_tail, stream);
  upload_vector(s.down_arc, down_arc, stream);
  upload_vector(s.level_arc, level_arc, stream);
  upload_vector(s.level_tail, level_tail, stream);
  upload_vector(s.level_first, s.level_first_host, stream);
  if (s.triangles) {
    std::vector<VertexIndex> arc_tail(um);
    for (VertexIndex r = 0; r < n; ++r)
      std::fill(arc_tail.begin() + first[r], arc_tail.begin() + first[r + 1], r);
    upload_vector(s.tri_first, tri_first, stream);
    upload_vector(s.tri_uv, tri_uv, stream);
    upload_vector(s.tri_uw, tri_uw, stream);
    upload_vector(s.arc_tail, arc_tail, stream);
  }
  s.level_group.allocate(static_cast<std::size_t>(std::max(levels, 1)));
  s.input_weight.allocate(std::max<std::size_t>(s.input_arcs, 1));
  s.up.allocate(std::max<std::size_t>(um, 1));
  s.down.allocate(std::max<std::size_t>(um, 1));
  s.up_via.allocate(std::max<std::size_t>(um, 1));
  s.down_via.allocate(std::max<std::size_t>(um, 1));
  s.stream->synchronize();  // the host vectors go out of scope
  follow_arc_order(cch, graph);
  s.topology_ms = watch.elapsed_ms();
}

// The graph arcs each hierarchy arc draws from, by direction, in CSR order (so ascending): the
// part of the layout that depends on the order the graph's arcs came in.
void CchCustomizer::follow_arc_order(const Cch& cch, const Graph& graph) {
  State& s = *state_;
  if (cch.vertex_count() != s.vertices || cch.arc_count() != s.arcs ||
      cch.input_arc_span_.count != s.input_arcs || !cch.same_topology(graph))
    throw RoutingError(ErrorKind::kInvalidParameter,
                       "the contraction hierarchy is not the one the GPU customizer was made for");
  use_device(s.device);
  const auto um = static_cast<std::size_t>(s.arcs);
  const CsrGraph& forward = graph.forward;
  const ArcIndex* input_to_arc = cch.input_arc_span_.data;
  const VertexIndex* rank_of_vertex = cch.rank_.data;
  std::vector<ArcIndex> up_input_first(um + 1, 0), down_input_first(um + 1, 0);
  auto for_each_input = [&](auto&& visit) {
    for (VertexIndex x = 0; x < forward.vertex_count; ++x) {
      const VertexIndex rank_x = rank_of_vertex[x];
      for (ArcIndex a = forward.begin(x); a < forward.end(x); ++a) {
        const ArcIndex arc = input_to_arc[a];
        if (arc == kNoArc) continue;  // a self loop
        visit(a, arc, rank_x < rank_of_vertex[forward.heads[static_cast<std::size_t>(a)]]);
      }
    }
  };
  for_each_input([&](ArcIndex, ArcIndex arc, bool upward) {
    ++(upward ? up_input_first : down_input_first)[static_cast<std::size_t>(arc) + 1];
  });
  for (std::size_t a = 0; a < um; ++a) {
    up_input_first[a + 1] += up_input_first[a];
    down_input_first[a + 1] += down_input_first[a];
  }
  std::vector<ArcIndex> up_input(static_cast<std::size_t>(up_input_first[um])),
      down_input(static_cast<std::size_t>(down_input_first[um]));
  {
    std::vector<ArcIndex> up_next(up_input_first.begin(), up_input_first.end() - 1),
        down_next(down_input_first.begin(), down_input_first.end() - 1);
    for_each_input([&](ArcIndex a, ArcIndex arc, bool upward) {
      if (upward)
        up_input[static_cast<std::size_t>(up_next[static_cast<std::size_t>(arc)]++)] = a;
      else
        down_input[static_cast<std::size_t>(down_next[static_cast<std::size_t>(arc)]++)] = a;
    });
  }

  const cudaStream_t stream = s.stream->get();
  upload_vector(s.up_input_first, up_input_first, stream);
  upload_vector(s.up_input, up_input, stream);
  upload_vector(s.down_input_first, down_input_first, stream);
  upload_vector(s.down_input, down_input, stream);
  s.stream->synchronize();  // the host vectors go out of scope
  s.fingerprint = cch.fingerprint_;
}

CchCustomizer::~CchCustomizer() = default;
CchCustomizer::CchCustomizer(CchCustomizer&&) noexcept = default;
CchCustomizer& CchCustomizer::operator=(CchCustomizer&&) noexcept = default;

CchCustomizationTimes CchCustomizer::customize(Cch& cch, const Graph& graph,
                                               const CancelToken& cancel) {
  Stopwatch watch;
  State& s = *state_;
  if (cch.vertex_count() != s.vertices || cch.arc_count() != s.arcs ||
      cch.input_arc_span_.count != s.input_arcs || cch.fingerprint_ != s.fingerprint)
    throw RoutingError(ErrorKind::kInvalidParameter,
                       "the contraction hierarchy is not the one the GPU customizer was made for");
  cch.begin_customization(graph);
  CchCustomizationTimes times;
  times.topology_ms = s.topology_ms;
  s.topology_ms = 0;
  use_device(s.device);
  const cudaStream_t stream = s.stream->get();
  const auto um = static_cast<std::size_t>(s.arcs);
  const int levels = static_cast<int>(s.level_pairs.size());
  if (s.groups_middles != g_middles_per_thread || s.groups_one_block_pairs != g_one_block_pairs) {
    // Groups a level: enough threads for the level's average arc, up to a block's worth; in the
    // one-block loop no more than the block holds for the level's arcs.
    s.level_group_host.assign(static_cast<std::size_t>(levels), 1);
    for (int l = 0; l < levels; ++l) {
      const auto arcs = s.level_first_host[static_cast<std::size_t>(l) + 1] -
                        s.level_first_host[static_cast<std::size_t>(l)];
      if (arcs == 0) continue;
      const double middles = static_cast<double>(s.level_pairs[static_cast<std::size_t>(l)]) / arcs;
      int largest = kLevelBlock;
      if (s.level_pairs[static_cast<std::size_t>(l)] <= g_one_block_pairs) {
        largest = 1;
        while (largest * 2 <= kOneBlockThreads && largest * 2 * arcs <= kOneBlockThreads)
          largest *= 2;
      }
      s.level_group_host[static_cast<std::size_t>(l)] = group_for(middles, largest);
    }
    if (levels > 0)
      s.level_group.upload(s.level_group_host.data(), static_cast<std::size_t>(levels), stream);
    s.groups_middles = g_middles_per_thread;
    s.groups_one_block_pairs = g_one_block_pairs;
  }
  cancel.throw_if_requested();

  Stopwatch upload;
  if (s.input_arcs > 0) s.input_weight.upload(graph.forward.weights.data(), s.input_arcs, stream);
  s.stream->synchronize();
  times.upload_ms = upload.elapsed_ms();

  Stopwatch compute;
  const Weights weights{s.up.data(), s.down.data(), s.up_via.data(), s.down_via.data()};
  const Topology topology{s.first.data(),      s.head.data(),      s.down_first.data(),
                          s.down_tail.data(),  s.down_arc.data(),  s.level_arc.data(),
                          s.level_tail.data(), s.tri_first.data(), s.tri_uv.data(),
                          s.tri_uw.data(),     s.arc_tail.data()};
  if (s.arcs > 0) {
    apply_original_arcs_kernel<<<blocks_for(s.arcs, kDefaultBlockSize), kDefaultBlockSize, 0,
                                 stream>>>(s.arcs, s.up_input_first.data(), s.up_input.data(),
                                           s.down_input_first.data(), s.down_input.data(),
                                           s.input_weight.data(), weights);
    GPU_ROUTING_CUDA_CHECK_LAUNCH();
  }
  // Level 0 (leaves) has no triangles.
  int level = 1;
  while (level < levels) {
    cancel.throw_if_requested();
    const auto begin =
        static_cast<std::int64_t>(s.level_first_host[static_cast<std::size_t>(level)]);
    const auto end =
        static_cast<std::int64_t>(s.level_first_host[static_cast<std::size_t>(level) + 1]);
    if (s.level_pairs[static_cast<std::size_t>(level)] <= g_one_block_pairs) {
      int last = level;
      while (last < levels && s.level_pairs[static_cast<std::size_t>(last)] <= g_one_block_pairs)
        ++last;
      if (s.triangles)
        relax_levels_one_block_kernel<true><<<1, kOneBlockThreads, 0, stream>>>(
            topology, weights, s.level_first.data(), s.level_group.data(), level, last);
      else
        relax_levels_one_block_kernel<false><<<1, kOneBlockThreads, 0, stream>>>(
            topology, weights, s.level_first.data(), s.level_group.data(), level, last);
      GPU_ROUTING_CUDA_CHECK_LAUNCH();
      level = last;
      continue;
    }
    const int group = s.level_group_host[static_cast<std::size_t>(level)];
    const std::int64_t threads = (end - begin) * group;
    if (s.triangles)
      relax_level_kernel<true><<<blocks_for(threads, kLevelBlock), kLevelBlock, 0, stream>>>(
          topology, weights, begin, end, group);
    else
      relax_level_kernel<false><<<blocks_for(threads, kLevelBlock), kLevelBlock, 0, stream>>>(
          topology, weights, begin, end, group);
    GPU_ROUTING_CUDA_CHECK_LAUNCH();
    ++level;
  }
  s.stream->synchronize();
  times.compute_ms = compute.elapsed_ms();
  cancel.throw_if_requested();

  Stopwatch download;
  if (um > 0) {
    s.up.download(cch.up_weight_.data(), um, stream);
    s.down.download(cch.down_weight_.data(), um, stream);
    s.up_via.download(cch.up_via_.data(), um, stream);
    s.down_via.download(cch.down_via_.data(), um, stream);
  }
  s.stream->synchronize();
  times.download_ms = download.elapsed_ms();
  cch.finish_customization(watch.elapsed_ms(), Cch::CustomizationSplit());
  return times;
}

CchCustomizationTimes customize_cch_on_device(Cch& cch, const Graph& graph,
                                              const CancelToken& cancel, int device) {
  return CchCustomizer(cch, graph, device).customize(cch, graph, cancel);
}

void set_cch_customize_middles_per_thread(int middles) {
  g_middles_per_thread = middles > 0 ? middles : 1;
}
void set_cch_customize_triangle_lists(bool on) {
  g_triangle_lists = on;
}
void set_cch_customize_one_block_pairs(int pairs) {
  g_one_block_pairs = pairs >= 0 ? pairs : 8192;
}

}  // namespace gpu_routing::gpu
