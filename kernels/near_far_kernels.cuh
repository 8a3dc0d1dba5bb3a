// Device side of the near_far engine: one delta-stepping search with a near queue and a far pile,
// written once for two scopes (the whole grid with grid barriers, or one block with block
// barriers). Only kernels/sssp_near_far.cu includes this.
//
// The search, per round:
//  - relax: every vertex u of the near queue relaxes its arcs with atomicMin on the distance bits
//    (exact: non-negative doubles order like their bits). A target improved to d < threshold joins
//    the next round's near queue, one improved to d >= threshold joins the far pile.
//  - split (when the near queue is empty): threshold moves up by delta (or jumps to the smallest
//    far distance + delta); far entries below the new threshold become the next near queue, the
//    others stay, stale ones (already below the old threshold: they went through the near queue)
//    are dropped.
//  - done when both are empty, or when every target is below the threshold (final).
// Any processing order reaches the same fixed point dist[v] = min(dist[u] + w) that Dijkstra
// reaches, so distances are bit-identical to the CPU's; the buckets only keep wasted work low.
//
// No queue can overflow: a vertex enters the near queue of a round once (near_mark holds the
// stamp of the round it was queued for) and the far pile of an epoch once (far_mark), so every
// queue holds at most vertex_count entries.
//
// Counters are triple-buffered by round (near, chunks) and by epoch (far, far_min, targets): in a
// phase every thread reads the counters of the current round/epoch, which nobody writes during
// that phase; pushes go to the next round's counters; rank 0 zeroes the counters of the round
// after next. So all threads of a scope take the same decision with no extra barrier, and each
// phase costs exactly one barrier.
#pragma once

#include <cooperative_groups.h>

#include "cuda_common.cuh"

namespace gpu_routing::gpu::near_far {

namespace cg = cooperative_groups;

constexpr unsigned kFullMask = 0xffffffffu;
constexpr int kArcsPerLane = 4;  // arcs one lane loads, checks and relaxes together
constexpr int kWarpDegree = 32;  // vertices with more arcs are relaxed by the whole warp
constexpr unsigned long long kInfinityBits = 0x7ff0000000000000ull;
constexpr int kNoStop = 0x7fffffff;
constexpr int kStampLimit = 1 << 30;  // marks are cleared before stamps grow past this

struct GraphView {
  const ArcIndex* row_offsets;
  const VertexIndex* heads;
  const double* weights;
  const unsigned* huge_bits;  // bit v set: vertex v is queued as chunks; null: no such vertex
  int chunk_arcs;
  VertexIndex vertex_count;
};

// What every thread of a scope keeps in registers and advances identically.
struct SearchState {
  int round;
  int epoch;
  double threshold;
};

struct Control {
  unsigned near_count[3];
  unsigned chunk_count[3];
  unsigned far_count[3];
  unsigned target_pending[3];
  unsigned long long far_min[3];
  // Grid kernel only.
  SearchState state[2];  // state after a stretch that block 0 ran alone, by phase parity
  int stop_phase;        // every thread leaves the loop at this phase (cancel)
  int cancelled;
  int error;  // a queue was full (never expected; reported as an internal error)
  int final_round;
  int final_epoch;
  unsigned long long items;  // frontier entries relaxed
};

// Per-search arrays. Stamps: a vertex is in round r's near queue iff near_mark == near_base + r,
// in epoch e's far pile iff far_mark == far_base + e.
struct Workspace {
  double* dist;
  // Two buffers each, one after the other, used by round / epoch parity.
  VertexIndex* near;  // 2 x near_capacity
  int2* chunks;       // 2 x chunk_capacity: (vertex, chunk index) of huge vertices
  VertexIndex* far;   // 2 x far_capacity
  int* near_mark;
  int* far_mark;
  unsigned near_capacity;
  unsigned chunk_capacity;
  unsigned far_capacity;
  int near_base;
  int far_base;
};

struct SearchParams {
  double delta;
  const VertexIndex* targets;  // stop once all are final; null = every vertex
  int target_count;
  bool precheck;
  int local_hops;                   // 0: every improved vertex waits for the next round
  int shallow_hops;                 // set by relax_phase: the local_hops of wide rounds
  int deep_hops;                    // local hops of rounds whose frontier is narrow:
  unsigned deep_frontier;           // at most this many near queue and chunk entries
  bool block_local;                 // the warps of a block pool their local queues (see below)
  const volatile int* cancel_flag;  // host-mapped; non-zero asks the kernel to stop
};

__device__ __forceinline__ unsigned lane_id() {
  return threadIdx.x & 31u;
}
__device__ __forceinline__ unsigned lanes_below() {
  return (1u << lane_id()) - 1u;
}
__device__ __forceinline__ unsigned load_volatile(const unsigned* p) {
  return *reinterpret_cast<const volatile unsigned*>(p);
}
__device__ __forceinline__ unsigned long long load_volatile(const unsigned long long* p) {
  return *reinterpret_cast<const volatile unsigned long long*>(p);
}
__device__ __forceinline__ int load_volatile(const int* p) {
  return *reinterpret_cast<const volatile int*>(p);
}
__device__ __forceinline__ double bits_to_distance(unsigned long long bits) {
  return __longlong_as_double(static_cast<long long>(bits));
}
__device__ __forceinline__ unsigned long long min_bits(unsigned long long a, unsigned long long b) {
  return a < b ? a : b;
}

// The whole grid (cooperative launch) or one block.
struct GridScope {
  __device__ unsigned rank() const { return blockIdx.x * blockDim.x + threadIdx.x; }
  __device__ unsigned size() const { return gridDim.x * blockDim.x; }
  __device__ unsigned warp() const { return rank() >> 5; }
  __device__ unsigned warps() const { return size() >> 5; }
  // Warps numbered across blocks first: a frontier of a few dozen tasks lands one task per
  // multiprocessor, leaving each block's other warps free to share its local hops.
  __device__ unsigned spread_warp() const { return (threadIdx.x >> 5) * gridDim.x + blockIdx.x; }
  __device__ void sync() const { cg::this_grid().sync(); }
};
struct BlockScope {
  __device__ unsigned rank() const { return threadIdx.x; }
  __device__ unsigned size() const { return blockDim.x; }
  __device__ unsigned warp() const { return threadIdx.x >> 5; }
  __device__ unsigned warps() const { return blockDim.x >> 5; }
  __device__ unsigned spread_warp() const { return threadIdx.x >> 5; }
  __device__ void sync() const { __syncthreads(); }
};

enum class Phase { kRelax, kSplit, kDone };
struct Decision {
  Phase phase;
  unsigned light;   // near queue entries
  unsigned chunks;  // chunk entries
  unsigned far;     // far pile entries (split phases)
};

// Reads only counters nobody writes during the phase about to start (see the file comment).
__device__ __forceinline__ Decision decide(const Control* c, const SearchState& s,
                                           bool have_targets) {
  Decision d;
  d.light = load_volatile(&c->near_count[s.round % 3]);
  d.chunks = load_volatile(&c->chunk_count[s.round % 3]);
  d.far = 0;
  if (have_targets && s.epoch > 0 && load_volatile(&c->target_pending[s.epoch % 3]) == 0) {
    d.phase = Phase::kDone;
    return d;
  }
  if (d.light + d.chunks > 0) {
    d.phase = Phase::kRelax;
    return d;
  }
  d.far = load_volatile(&c->far_count[s.epoch % 3]);
  d.phase = d.far == 0 ? Phase::kDone : Phase::kSplit;
  return d;
}

// The next bucket's upper end: at least one delta up, and straight past empty buckets to the
// smallest distance recorded in the far pile. +inf when delta no longer moves the threshold (the
// search then finishes as Bellman-Ford, still exact).
__device__ __forceinline__ double next_threshold(const Control* c, const SearchState& s,
                                                 double delta) {
  const double lowest = bits_to_distance(load_volatile(&c->far_min[s.epoch % 3]));
  const double next = fmax(s.threshold, lowest) + delta;
  return next > s.threshold ? next : kInfinity;
}

// Where one phase's pushes go.
struct PushTargets {
  VertexIndex* near;
  unsigned* near_count;
  int2* chunks;
  unsigned* chunk_count;
  int near_stamp;
  VertexIndex* far;
  unsigned* far_count;
  int far_stamp;
  unsigned near_capacity, chunk_capacity, far_capacity;
  int* error;
};

__device__ __forceinline__ bool is_huge(const GraphView& g, VertexIndex v) {
  return (__ldg(g.huge_bits + (v >> 5)) >> (v & 31)) & 1u;
}

// One lane queues every chunk of huge vertex v (rare: only vertices above huge_degree).
__device__ void push_chunks(const GraphView& g, const PushTargets& t, VertexIndex v) {
  const ArcIndex begin = __ldg(g.row_offsets + v);
  const ArcIndex end = __ldg(g.row_offsets + v + 1);
  const unsigned pieces = static_cast<unsigned>((end - begin + g.chunk_arcs - 1) / g.chunk_arcs);
  const unsigned first = atomicAdd(t.chunk_count, pieces);
  for (unsigned i = 0; i < pieces; ++i) {
    if (first + i < t.chunk_capacity)
      t.chunks[first + i] = make_int2(v, static_cast<int>(i));
    else
      *t.error = 1;
  }
}

// Warp-aggregated append: one atomicAdd per warp for all lanes' entries. Every lane calls it.
template <int N>
__device__ __forceinline__ void append_warp(const bool (&take)[N], const VertexIndex (&vertex)[N],
                                            VertexIndex* queue, unsigned* count, unsigned capacity,
                                            int* error) {
  unsigned masks[N];
  unsigned total = 0;
#pragma unroll
  for (int k = 0; k < N; ++k) {
    masks[k] = __ballot_sync(kFullMask, take[k]);
    total += __popc(masks[k]);
  }
  if (total == 0) return;
  unsigned base = 0;
  if (lane_id() == 0) base = atomicAdd(count, total);
  base = __shfl_sync(kFullMask, base, 0);
  const unsigned below = lanes_below();
#pragma unroll
  for (int k = 0; k < N; ++k) {
    if (take[k]) {
      const unsigned position = base + __popc(masks[k] & below);
      if (position < capacity)
        queue[position] = vertex[k];
      else
        *error = 1;
    }
    base += __popc(masks[k]);
  }
}

// Queues vertices flagged for the near queue and the far pile, once each (marks). Every lane
// calls it.
template <int N>
__device__ __forceinline__ void push_flagged(const GraphView& g, const Workspace& w,
                                             const PushTargets& t, bool (&to_near)[N],
                                             bool (&to_far)[N], const VertexIndex (&v)[N]) {
  // The exchanges are independent: issue them all before using any result.
#pragma unroll
  for (int k = 0; k < N; ++k)
    if (to_near[k]) to_near[k] = atomicExch(w.near_mark + v[k], t.near_stamp) != t.near_stamp;
#pragma unroll
  for (int k = 0; k < N; ++k)
    if (to_far[k]) to_far[k] = atomicExch(w.far_mark + v[k], t.far_stamp) != t.far_stamp;
  if (g.huge_bits != nullptr) {
#pragma unroll
    for (int k = 0; k < N; ++k) {
      if (to_near[k] && is_huge(g, v[k])) {
        to_near[k] = false;
        push_chunks(g, t, v[k]);
      }
    }
  }
  append_warp<N>(to_near, v, t.near, t.near_count, t.near_capacity, t.error);
  append_warp<N>(to_far, v, t.far, t.far_count, t.far_capacity, t.error);
}

// A warp's own short queue in shared memory (two buffers of kLocalCapacity entries): near
// vertices it improved and relaxes itself in the same round, kLocalHops hops deep, instead of
// waiting a round (and a barrier) for them. Entries are not marked; whatever is left after the
// last hop goes to the round's queue through the marks. Another warp improving such a vertex
// queues it as usual, so no improvement is lost; the price is a possible second relaxation.
struct LocalQueue {
  VertexIndex* vertex;  // 2 x kLocalCapacity
  double* reach;        // 2 x kLocalCapacity
};
constexpr unsigned kLocalCapacity = 128;
constexpr std::size_t kLocalBytesPerWarp =
    2 * kLocalCapacity * (sizeof(double) + sizeof(VertexIndex));

__device__ __forceinline__ unsigned char* dynamic_shared_memory() {
  extern __shared__ __align__(16) unsigned char near_far_dynamic_shared[];
  return near_far_dynamic_shared;
}

__device__ __forceinline__ LocalQueue warp_local_queue() {
  unsigned char* base = dynamic_shared_memory() + (threadIdx.x >> 5) * kLocalBytesPerWarp;
  LocalQueue q;
  q.reach = reinterpret_cast<double*>(base);
  q.vertex = reinterpret_cast<VertexIndex*>(base + 2 * kLocalCapacity * sizeof(double));
  return q;
}

// What one warp's relaxations in a phase need.
struct Relaxer {
  const GraphView& g;
  const Workspace& w;
  const PushTargets& t;
  const SearchParams& p;
  double threshold;
  unsigned long long& far_min;
  // Local queue buffer being filled (null: local hops off) and its warp-uniform count.
  VertexIndex* local_vertex;
  double* local_reach;
  unsigned& local_count;
  // Block-pooled queues: the count lives in shared memory (null: the warp's own queue) and the
  // buffer holds local_capacity entries.
  unsigned* shared_count = nullptr;
  unsigned local_capacity = kLocalCapacity;
};

// Moves near pushes into the warp's local buffer while it has room (huge vertices excepted).
template <int N>
__device__ __forceinline__ void keep_local(const Relaxer& r, bool (&to_near)[N],
                                           const VertexIndex (&v)[N], const double (&reach)[N]) {
  const unsigned below = lanes_below();
  if (r.shared_count != nullptr) {
    // The block's pool: one shared-memory atomic per warp and entry group. The count may pass
    // the capacity; entries past it stay flagged for the round's queue, readers clamp.
#pragma unroll
    for (int k = 0; k < N; ++k) {
      bool want = to_near[k];
      if (want && r.g.huge_bits != nullptr && is_huge(r.g, v[k])) want = false;
      const unsigned mask = __ballot_sync(kFullMask, want);
      if (mask == 0) continue;
      unsigned base = 0;
      if (lane_id() == 0) base = atomicAdd(r.shared_count, __popc(mask));
      base = __shfl_sync(kFullMask, base, 0);
      const unsigned slot = base + __popc(mask & below);
      if (want && slot < r.local_capacity) {
        r.local_vertex[slot] = v[k];
        r.local_reach[slot] = reach[k];
        to_near[k] = false;
      }
    }
    return;
  }
#pragma unroll
  for (int k = 0; k < N; ++k) {
    bool want = to_near[k];
    if (want && r.g.huge_bits != nullptr && is_huge(r.g, v[k])) want = false;
    const unsigned mask = __ballot_sync(kFullMask, want);
    const unsigned slot = r.local_count + __popc(mask & below);
    if (want && slot < kLocalCapacity) {
      r.local_vertex[slot] = v[k];
      r.local_reach[slot] = reach[k];
      to_near[k] = false;
    }
    r.local_count = min(r.local_count + __popc(mask), kLocalCapacity);
  }
}

// Relaxes up to N arcs per lane leaving vertices at distance du (per lane). Every lane calls it.
template <int N>
__device__ __forceinline__ void relax_arcs(const Relaxer& r, const unsigned (&arc)[N],
                                           const bool (&active)[N], double du) {
  VertexIndex v[N];
  double reach[N];
  bool live[N];
#pragma unroll
  for (int k = 0; k < N; ++k) {
    live[k] = active[k];
    v[k] = 0;
    reach[k] = 0;
    if (live[k]) {
      v[k] = __ldg(r.g.heads + arc[k]);
      reach[k] = du + __ldg(r.g.weights + arc[k]);
    }
  }
  if (r.p.precheck) {
#pragma unroll
    for (int k = 0; k < N; ++k)
      if (live[k]) live[k] = reach[k] < __ldcg(r.w.dist + v[k]);
  }
#pragma unroll
  for (int k = 0; k < N; ++k)
    if (live[k]) live[k] = reach[k] < atomic_min_distance(r.w.dist + v[k], reach[k]);
  bool to_near[N], to_far[N];
#pragma unroll
  for (int k = 0; k < N; ++k) {
    to_near[k] = live[k] && reach[k] < r.threshold;
    to_far[k] = live[k] && !(reach[k] < r.threshold);
    if (to_far[k]) r.far_min = min_bits(r.far_min, distance_bits(reach[k]));
  }
  if (r.local_vertex != nullptr) keep_local<N>(r, to_near, v, reach);
  push_flagged<N>(r.g, r.w, r.t, to_near, to_far, v);
}

// The whole warp relaxes arcs [begin, end) of one vertex at distance du (lanes take consecutive
// arcs: coalesced loads). Arc indices are below 2^31, so unsigned sums cannot wrap.
__device__ __forceinline__ void relax_range_warp(const Relaxer& r, unsigned begin, unsigned end,
                                                 double du) {
  const unsigned lane = lane_id();
  for (unsigned first = begin; first < end; first += 32 * kArcsPerLane) {
    unsigned arc[kArcsPerLane];
    bool active[kArcsPerLane];
#pragma unroll
    for (int k = 0; k < kArcsPerLane; ++k) {
      arc[k] = first + k * 32 + lane;
      active[k] = arc[k] < end;
    }
    relax_arcs<kArcsPerLane>(r, arc, active, du);
  }
}

// Each lane holds one vertex (or none): low-degree vertices are relaxed by their own lane,
// higher-degree ones by the whole warp in turn.
__device__ __forceinline__ void relax_vertices(const Relaxer& r, bool has, VertexIndex u,
                                               double du) {
  ArcIndex begin = 0, end = 0;
  if (has) {
    begin = __ldg(r.g.row_offsets + u);
    end = __ldg(r.g.row_offsets + u + 1);
  }
  const int degree = end - begin;
  unsigned wide = __ballot_sync(kFullMask, degree > kWarpDegree);
  while (wide != 0) {
    const int leader = __ffs(wide) - 1;
    wide &= wide - 1;
    const ArcIndex leader_begin = __shfl_sync(kFullMask, begin, leader);
    const ArcIndex leader_end = __shfl_sync(kFullMask, end, leader);
    const double leader_du = __shfl_sync(kFullMask, du, leader);
    relax_range_warp(r, leader_begin, leader_end, leader_du);
  }
  const int own = degree <= kWarpDegree ? degree : 0;
  const int most = static_cast<int>(__reduce_max_sync(kFullMask, static_cast<unsigned>(own)));
  for (int j = 0; j < most; j += kArcsPerLane) {
    unsigned arc[kArcsPerLane];
    bool active[kArcsPerLane];
#pragma unroll
    for (int k = 0; k < kArcsPerLane; ++k) {
      arc[k] = static_cast<unsigned>(begin + j + k);
      active[k] = j + k < own;
    }
    relax_arcs<kArcsPerLane>(r, arc, active, du);
  }
}

// Queues vertices a local queue kept but no hop relaxed, entries [first, count) in steps of
// `stride` (whole warps), for the round's queue through the marks. Every lane calls it.
__device__ __forceinline__ void push_kept(const GraphView& g, const Workspace& w,
                                          const PushTargets& t, const VertexIndex* vertices,
                                          unsigned count, unsigned first, unsigned stride) {
  for (; first < count; first += stride) {
    const unsigned i = first + lane_id();
    VertexIndex v[1] = {i < count ? vertices[i] : 0};
    bool to_near[1] = {i < count};
    bool to_far[1] = {false};
    push_flagged<1>(g, w, t, to_near, to_far, v);
  }
}

// The warp relaxes the vertices its last relaxations put in local buffer 0, then those these put
// in buffer 1, and so on for p.local_hops hops; what is left goes to the round's queue.
__device__ void run_local_hops(const GraphView& g, const Workspace& w, const PushTargets& t,
                               const SearchParams& p, double threshold, unsigned long long& far_min,
                               const LocalQueue& q, unsigned& count) {
  int current = 0;
  for (int hop = 0; hop < p.local_hops && count > 0; ++hop) {
    __syncwarp();
    const unsigned entries = count;
    const VertexIndex* vertices = q.vertex + current * kLocalCapacity;
    const double* reaches = q.reach + current * kLocalCapacity;
    unsigned next_count = 0;
    const Relaxer r{g,
                    w,
                    t,
                    p,
                    threshold,
                    far_min,
                    q.vertex + (current ^ 1) * kLocalCapacity,
                    q.reach + (current ^ 1) * kLocalCapacity,
                    next_count};
    for (unsigned first = 0; first < entries; first += 32) {
      const unsigned i = first + lane_id();
      const bool has = i < entries;
      relax_vertices(r, has, has ? vertices[i] : 0, has ? reaches[i] : 0.0);
    }
    count = next_count;
    current ^= 1;
  }
  __syncwarp();
  if (count > 0) {
    push_kept(g, w, t, q.vertex + current * kLocalCapacity, count, 0, 32);
    count = 0;
  }
  __syncwarp();
}

// The block-pooled local queue: every warp's share of dynamic shared memory taken together, two
// buffers of kLocalCapacity x (warps per block) entries.
__device__ __forceinline__ LocalQueue block_local_queue(unsigned capacity) {
  unsigned char* base = dynamic_shared_memory();
  LocalQueue q;
  q.reach = reinterpret_cast<double*>(base);
  q.vertex = reinterpret_cast<VertexIndex*>(base + 2 * capacity * sizeof(double));
  return q;
}

// Local hops shared by the whole block: the ncu profile of the grid kernel on a 1000 x 1000 grid
// showed 88% of stall cycles at barriers while a few warps worked through their own local queues
// (up to 128 entries, 32 at a time, per hop). Here the entries the block's warps kept are relaxed
// by all its warps, one barrier per hop. Hop h reads buffer h % 2 with count counts[h % 3],
// fills buffer (h + 1) % 2 with count counts[(h + 1) % 3] and zeroes counts[(h + 2) % 3], which
// nobody reads or writes during hop h, so one barrier per hop suffices. Every thread of the block
// calls it; the counts are zero on return.
__device__ void run_block_hops(const GraphView& g, const Workspace& w, const PushTargets& t,
                               const SearchParams& p, double threshold, unsigned long long& far_min,
                               const LocalQueue& q, unsigned capacity, unsigned* counts) {
  __syncthreads();  // the entries kept by this task round are all in buffer 0
  const unsigned warp = threadIdx.x >> 5;
  int hop = 0;
  for (; hop < p.local_hops; ++hop) {
    const unsigned entries = min(*reinterpret_cast<volatile unsigned*>(&counts[hop % 3]), capacity);
    // The same value in every thread: nobody writes it this hop. Past the shallow hops, a queue
    // that outgrows the block (random graphs: it triples each hop) goes to the round's queue,
    // where the whole GPU shares it; grids and roads keep a wavefront's width and go on.
    if (entries == 0 || (hop >= p.shallow_hops && entries > 2 * blockDim.x)) break;
    if (threadIdx.x == 0) counts[(hop + 2) % 3] = 0;
    const VertexIndex* vertices = q.vertex + (hop & 1) * capacity;
    const double* reaches = q.reach + (hop & 1) * capacity;
    unsigned unused = 0;
    const Relaxer r{g,
                    w,
                    t,
                    p,
                    threshold,
                    far_min,
                    q.vertex + ((hop + 1) & 1) * capacity,
                    q.reach + ((hop + 1) & 1) * capacity,
                    unused,
                    &counts[(hop + 1) % 3],
                    capacity};
    for (unsigned first = warp * 32; first < entries; first += blockDim.x) {
      const unsigned i = first + lane_id();
      const bool has = i < entries;
      relax_vertices(r, has, has ? vertices[i] : 0, has ? reaches[i] : 0.0);
    }
    __syncthreads();
  }
  // What the last hop kept goes to the round's queue through the marks.
  const unsigned left = min(*reinterpret_cast<volatile unsigned*>(&counts[hop % 3]), capacity);
  push_kept(g, w, t, q.vertex + (hop & 1) * capacity, left, warp * 32, blockDim.x);
  __syncthreads();
  if (threadIdx.x == 0) counts[0] = counts[1] = counts[2] = 0;
  __syncthreads();
}

// Warp-reduces the far pile minimum and folds it into *target.
__device__ __forceinline__ void flush_far_min(unsigned long long far_min,
                                              unsigned long long* target) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1)
    far_min = min_bits(far_min, __shfl_xor_sync(kFullMask, far_min, offset));
  if (lane_id() == 0 && far_min != kInfinityBits) atomicMin(target, far_min);
}

__device__ __forceinline__ PushTargets push_targets(const Workspace& w, Control* c,
                                                    const SearchState& s, int far_epoch) {
  PushTargets t;
  const int next = s.round + 1;
  t.near = w.near + (next & 1) * w.near_capacity;
  t.near_count = &c->near_count[next % 3];
  t.chunks = w.chunks + (next & 1) * w.chunk_capacity;
  t.chunk_count = &c->chunk_count[next % 3];
  t.near_stamp = w.near_base + next;
  t.far = w.far + (far_epoch & 1) * w.far_capacity;
  t.far_count = &c->far_count[far_epoch % 3];
  t.far_stamp = w.far_base + far_epoch;
  t.near_capacity = w.near_capacity;
  t.chunk_capacity = w.chunk_capacity;
  t.far_capacity = w.far_capacity;
  t.error = &c->error;
  return t;
}

// Relaxes task `task` of a relax phase: 32 near queue entries (one a lane) or one chunk of a huge
// vertex. Every lane of the warp calls it.
__device__ __forceinline__ void relax_task(const Relaxer& r, const Decision& d,
                                           const VertexIndex* entries, const int2* chunk_entries,
                                           unsigned light_tasks, unsigned task) {
  if (task < light_tasks) {
    const unsigned index = task * 32 + lane_id();
    const bool has = index < d.light;
    VertexIndex u = 0;
    double du = 0;
    if (has) {
      u = __ldcg(entries + index);
      du = __ldcg(r.w.dist + u);
    }
    relax_vertices(r, has, u, du);
    return;
  }
  const int2 chunk = __ldcg(chunk_entries + (task - light_tasks));
  const unsigned row_begin = static_cast<unsigned>(__ldg(r.g.row_offsets + chunk.x));
  const unsigned row_end = static_cast<unsigned>(__ldg(r.g.row_offsets + chunk.x + 1));
  const unsigned begin =
      row_begin + static_cast<unsigned>(chunk.y) * static_cast<unsigned>(r.g.chunk_arcs);
  const unsigned end = min(begin + static_cast<unsigned>(r.g.chunk_arcs), row_end);
  relax_range_warp(r, begin, end, __ldcg(r.w.dist + chunk.x));
}

// Relaxes the near queue of round s.round. Every thread of the scope calls it.
template <class Scope>
__device__ void relax_phase(const Scope& scope, const GraphView& g, const Workspace& w, Control* c,
                            const SearchParams& p, const SearchState& s, const Decision& d) {
  const PushTargets t = push_targets(w, c, s, s.epoch);
  const VertexIndex* entries = w.near + (s.round & 1) * w.near_capacity;
  const int2* chunk_entries = w.chunks + (s.round & 1) * w.chunk_capacity;
  const unsigned light_tasks = (d.light + 31) / 32;
  const unsigned tasks = light_tasks + d.chunks;
  unsigned long long far_min = kInfinityBits;
  // A narrow frontier leaves most of the GPU waiting at the round's barrier: deeper local hops
  // then cover more of the search per round. A wide one keeps the GPU busy, and deep hops only
  // leave a few warps with long chains (random graphs: 1.2 ms at 4 hops, 2.5 ms at 16). The
  // decision is the same in every thread (it reads the phase's counters).
  SearchParams hp = p;
  hp.shallow_hops = p.local_hops;
  if (d.light + d.chunks <= p.deep_frontier) hp.local_hops = max(p.local_hops, p.deep_hops);
  const bool local = hp.local_hops > 0;
  if (local && p.block_local) {
    // Task rounds uniform over the scope (the loop bound is the same in every thread), so that
    // each block can stop for its shared hops after every round.
    __shared__ unsigned hop_counts[3];
    const unsigned capacity = kLocalCapacity * (blockDim.x >> 5);
    const LocalQueue q = block_local_queue(capacity);
    if (threadIdx.x == 0) hop_counts[0] = hop_counts[1] = hop_counts[2] = 0;
    __syncthreads();
    unsigned unused = 0;
    const Relaxer r{g,        w,       t,      hp,         s.threshold, far_min,
                    q.vertex, q.reach, unused, hop_counts, capacity};
    for (unsigned base = 0; base < tasks; base += scope.warps()) {
      const unsigned task = base + scope.spread_warp();
      if (task < tasks) relax_task(r, d, entries, chunk_entries, light_tasks, task);
      run_block_hops(g, w, t, hp, s.threshold, far_min, q, capacity, hop_counts);
    }
  } else {
    const LocalQueue q = local ? warp_local_queue() : LocalQueue{nullptr, nullptr};
    unsigned local_count = 0;
    const Relaxer r{g, w, t, hp, s.threshold, far_min, q.vertex, q.reach, local_count};
    for (unsigned task = scope.warp(); task < tasks; task += scope.warps()) {
      relax_task(r, d, entries, chunk_entries, light_tasks, task);
      if (local) run_local_hops(g, w, t, hp, s.threshold, far_min, q, local_count);
    }
  }
  if (scope.rank() == 0) {
    c->near_count[(s.round + 2) % 3] = 0;
    c->chunk_count[(s.round + 2) % 3] = 0;
  }
  flush_far_min(far_min, &c->far_min[s.epoch % 3]);
}

// Splits the far pile of epoch s.epoch at next_threshold into round s.round + 1's near queue and
// epoch s.epoch + 1's pile; counts the targets not yet final. Every thread of the scope calls it.
template <class Scope>
__device__ void split_phase(const Scope& scope, const GraphView& g, const Workspace& w, Control* c,
                            const SearchParams& p, const SearchState& s, const Decision& d,
                            double next) {
  const PushTargets t = push_targets(w, c, s, s.epoch + 1);
  const VertexIndex* pile = w.far + (s.epoch & 1) * w.far_capacity;
  unsigned long long far_min = kInfinityBits;
  for (unsigned first = scope.warp() * 32; first < d.far; first += scope.warps() * 32) {
    const unsigned index = first + lane_id();
    VertexIndex v[1] = {0};
    double dv = kInfinity;
    if (index < d.far) {
      v[0] = __ldcg(pile + index);
      dv = __ldcg(w.dist + v[0]);
    }
    // dv < threshold: stale, the vertex went through a near queue at that distance.
    bool to_near[1] = {index < d.far && dv >= s.threshold && dv < next};
    bool to_far[1] = {index < d.far && dv >= next};
    if (to_far[0]) far_min = min_bits(far_min, distance_bits(dv));
    push_flagged<1>(g, w, t, to_near, to_far, v);
  }
  if (p.target_count > 0) {
    // Every vertex below the current threshold is final now that the near queue is empty.
    unsigned pending = 0;
    for (unsigned i = scope.rank(); i < static_cast<unsigned>(p.target_count); i += scope.size())
      pending += __ldcg(w.dist + p.targets[i]) < s.threshold ? 0u : 1u;
    pending = __reduce_add_sync(kFullMask, pending);
    if (lane_id() == 0 && pending != 0) atomicAdd(&c->target_pending[(s.epoch + 1) % 3], pending);
  }
  if (scope.rank() == 0) {
    c->near_count[(s.round + 2) % 3] = 0;
    c->chunk_count[(s.round + 2) % 3] = 0;
    c->far_count[(s.epoch + 2) % 3] = 0;
    c->far_min[(s.epoch + 2) % 3] = kInfinityBits;
    c->target_pending[(s.epoch + 2) % 3] = 0;
  }
  flush_far_min(far_min, &c->far_min[(s.epoch + 1) % 3]);
}

// One phase of the decided kind; advances s identically in every thread.
template <class Scope>
__device__ __forceinline__ void run_phase(const Scope& scope, const GraphView& g,
                                          const Workspace& w, Control* c, const SearchParams& p,
                                          SearchState& s, const Decision& d) {
  if (d.phase == Phase::kRelax) {
    relax_phase(scope, g, w, c, p, s, d);
    s.round += 1;
  } else {
    const double next = next_threshold(c, s, p.delta);
    split_phase(scope, g, w, c, p, s, d, next);
    s.round += 1;
    s.epoch += 1;
    s.threshold = next;
  }
}

// Zeroes the counters and queues the source for round 0 (one thread; the distance row already
// holds 0 at the source and +inf elsewhere).
__device__ void seed_search(const GraphView& g, const Workspace& w, Control* c,
                            VertexIndex source) {
  for (int i = 0; i < 3; ++i) {
    c->near_count[i] = 0;
    c->chunk_count[i] = 0;
    c->far_count[i] = 0;
    c->target_pending[i] = 0;
    c->far_min[i] = kInfinityBits;
  }
  c->stop_phase = kNoStop;
  c->cancelled = 0;
  c->error = 0;
  c->final_round = 0;
  c->final_epoch = 0;
  c->items = 0;
  w.near_mark[source] = w.near_base;
  if (g.huge_bits != nullptr && is_huge(g, source)) {
    const ArcIndex begin = g.row_offsets[source];
    const ArcIndex end = g.row_offsets[source + 1];
    const unsigned pieces = static_cast<unsigned>((end - begin + g.chunk_arcs - 1) / g.chunk_arcs);
    for (unsigned i = 0; i < pieces && i < w.chunk_capacity; ++i)
      w.chunks[i] = make_int2(source, static_cast<int>(i));
    c->chunk_count[0] = pieces;
  } else {
    w.near[0] = source;
    c->near_count[0] = 1;
  }
}

__global__ void init_search_kernel(GraphView g, Workspace w, Control* c, VertexIndex source) {
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < g.vertex_count) w.dist[i] = i == source ? 0.0 : kInfinity;
  if (i == 0) seed_search(g, w, c, source);
}

struct GridLimits {
  unsigned small_frontier;  // 0: block 0 never runs alone
  unsigned small_far_pile;
  int stretch_rounds;
};

// Block 0 alone: phases with block barriers only, while the frontier stays small.
__device__ void block_stretch(const GraphView& g, const Workspace& w, Control* c,
                              const SearchParams& p, const GridLimits& limits, SearchState& s,
                              Decision d, unsigned long long& items) {
  const BlockScope block;
  const bool have_targets = p.target_count > 0;
  for (int k = 0;; ++k) {
    items += d.phase == Phase::kRelax ? d.light + d.chunks : 0;
    run_phase(block, g, w, c, p, s, d);
    __syncthreads();
    if (k + 1 >= limits.stretch_rounds) break;
    if ((k & 15) == 15) {
      int stop = 0;
      if (threadIdx.x == 0) stop = *p.cancel_flag;
      if (__syncthreads_or(stop)) break;
    }
    d = decide(c, s, have_targets);
    if (d.phase == Phase::kDone) break;
    if (d.phase == Phase::kRelax && d.light + d.chunks > limits.small_frontier) break;
    if (d.phase == Phase::kSplit && d.far > limits.small_far_pile) break;
  }
}

// The single-source search: persistent, cooperative launch, one grid barrier per phase.
__device__ __forceinline__ void grid_search(const GraphView& g, const Workspace& w, Control* c,
                                            const SearchParams& p, const GridLimits& limits) {
  const GridScope grid;
  const bool have_targets = p.target_count > 0;
  SearchState s{0, 0, p.delta};
  unsigned long long items = 0;  // meaningful in rank 0
  bool reload = false;
  for (int phase = 0;; ++phase) {
    if (reload) {
      const volatile SearchState* saved = &c->state[phase & 1];
      s.round = saved->round;
      s.epoch = saved->epoch;
      s.threshold = saved->threshold;
    }
    if (phase >= load_volatile(&c->stop_phase)) break;
    if (grid.rank() == 0 && (reload || (phase & 15) == 0) && *p.cancel_flag != 0 &&
        load_volatile(&c->stop_phase) == kNoStop) {
      // Two phases ahead: every thread reads the new value before any reaches that phase.
      c->stop_phase = phase + 2;
      c->cancelled = 1;
    }
    const Decision d = decide(c, s, have_targets);
    if (d.phase == Phase::kDone) {
      if (grid.rank() == 0) {
        c->final_round = s.round;
        c->final_epoch = s.epoch;
        c->items = items;
      }
      break;
    }
    const bool alone = limits.small_frontier > 0 &&
                       ((d.phase == Phase::kRelax && d.light + d.chunks <= limits.small_frontier) ||
                        (d.phase == Phase::kSplit && d.far <= limits.small_far_pile));
    if (alone) {
      if (blockIdx.x == 0) {
        SearchState local = s;
        block_stretch(g, w, c, p, limits, local, d, items);
        if (threadIdx.x == 0) {
          volatile SearchState* saved = &c->state[(phase + 1) & 1];
          saved->round = local.round;
          saved->epoch = local.epoch;
          saved->threshold = local.threshold;
        }
      }
      reload = true;
    } else {
      items += d.phase == Phase::kRelax ? d.light + d.chunks : 0;
      run_phase(grid, g, w, c, p, s, d);
      reload = false;
    }
    grid.sync();
  }
}

// Register budgets: 64 per thread (up to 1024 threads a block, two 512-thread blocks a
// multiprocessor, some spills) or unlimited (no spills; one 512-thread block a multiprocessor).
__global__ void __launch_bounds__(1024)
    grid_search_kernel(GraphView g, Workspace w, Control* c, SearchParams p, GridLimits limits) {
  grid_search(g, w, c, p, limits);
}
__global__ void __launch_bounds__(512, 1)
    grid_search_kernel_wide(GraphView g, Workspace w, Control* c, SearchParams p,
                            GridLimits limits) {
  grid_search(g, w, c, p, limits);
}

// Many sources: one block per source, each on its own slot of queues and marks.
struct BatchParams {
  SearchParams search;
  const VertexIndex* sources;
  int source_count;
  // Null, or source_count + 1 offsets into search.targets: source i stops once its own targets
  // [target_offsets[i], target_offsets[i + 1]) are final (search.target_count is then ignored).
  const int* target_offsets;
  int* next_source;   // atomic counter
  double* distances;  // source_count rows of vertex_count
  // Slot arrays, slot-major.
  VertexIndex* near;  // 2 x near_capacity per slot
  int2* chunks;       // 2 x chunk_capacity per slot
  VertexIndex* far;   // 2 x far_capacity per slot
  int* near_mark;     // vertex_count per slot
  int* far_mark;      // vertex_count per slot
  int* stamp_bases;   // 2 per slot: near base, far base (carried across sources and calls)
  unsigned near_capacity, chunk_capacity, far_capacity;
  unsigned long long* rounds;  // summed over sources
  int* cancelled;
  int* error;
};

__global__ void __launch_bounds__(1024) batch_search_kernel(GraphView g, BatchParams b) {
  __shared__ Control control;
  __shared__ int next_index;
  const BlockScope block;
  const std::size_t slot = blockIdx.x;
  const std::size_t n = static_cast<std::size_t>(g.vertex_count);
  Workspace w;
  w.near = b.near + slot * 2 * b.near_capacity;
  w.chunks = b.chunks == nullptr ? nullptr : b.chunks + slot * 2 * b.chunk_capacity;
  w.far = b.far + slot * 2 * b.far_capacity;
  w.near_mark = b.near_mark + slot * n;
  w.far_mark = b.far_mark + slot * n;
  w.near_capacity = b.near_capacity;
  w.chunk_capacity = b.chunk_capacity;
  w.far_capacity = b.far_capacity;
  for (;;) {
    if (threadIdx.x == 0) {
      int index = atomicAdd(b.next_source, 1);
      if (*b.search.cancel_flag != 0) {
        index = b.source_count;
        *b.cancelled = 1;
      }
      next_index = index;
    }
    __syncthreads();
    const int index = next_index;
    if (index >= b.source_count) break;
    const VertexIndex source = b.sources[index];
    SearchParams search = b.search;
    if (b.target_offsets != nullptr) {
      const int first_target = __ldg(b.target_offsets + index);
      search.targets = b.search.targets + first_target;
      search.target_count = __ldg(b.target_offsets + index + 1) - first_target;
    }
    const bool have_targets = search.target_count > 0;
    w.dist = b.distances + static_cast<std::size_t>(index) * n;
    w.near_base = __ldcg(b.stamp_bases + 2 * slot);
    w.far_base = __ldcg(b.stamp_bases + 2 * slot + 1);
    if (w.near_base > kStampLimit || w.far_base > kStampLimit) {
      for (std::size_t v = threadIdx.x; v < n; v += blockDim.x) {
        w.near_mark[v] = -1;
        w.far_mark[v] = -1;
      }
      w.near_base = 0;
      w.far_base = 0;
    }
    for (std::size_t v = threadIdx.x; v < n; v += blockDim.x) w.dist[v] = kInfinity;
    __syncthreads();
    if (threadIdx.x == 0) {
      w.dist[source] = 0.0;
      seed_search(g, w, &control, source);
    }
    __syncthreads();
    SearchState s{0, 0, b.search.delta};
    for (int k = 0;; ++k) {
      const Decision d = decide(&control, s, have_targets);
      if (d.phase == Phase::kDone) break;
      if ((k & 31) == 31) {
        int stop = 0;
        if (threadIdx.x == 0) stop = *b.search.cancel_flag;
        if (__syncthreads_or(stop)) {
          if (threadIdx.x == 0) *b.cancelled = 1;
          break;
        }
      }
      run_phase(block, g, w, &control, search, s, d);
      __syncthreads();
    }
    if (threadIdx.x == 0) {
      b.stamp_bases[2 * slot] = w.near_base + s.round + 2;
      b.stamp_bases[2 * slot + 1] = w.far_base + s.epoch + 2;
      atomicAdd(b.rounds, static_cast<unsigned long long>(s.round));
      if (control.error != 0) *b.error = 1;
    }
    __syncthreads();  // control and next_index are reused by the next source
  }
}

// out[i * target_count + j] = distances[i * vertex_count + targets[j]]
__global__ void gather_targets_kernel(const double* distances, std::size_t vertex_count,
                                      const VertexIndex* targets, int target_count, int rows,
                                      double* out) {
  const std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::size_t total = static_cast<std::size_t>(rows) * static_cast<std::size_t>(target_count);
  if (i >= total) return;
  const std::size_t row = i / static_cast<std::size_t>(target_count);
  const std::size_t column = i % static_cast<std::size_t>(target_count);
  out[i] = distances[row * vertex_count + static_cast<std::size_t>(targets[column])];
}

}  // namespace gpu_routing::gpu::near_far
