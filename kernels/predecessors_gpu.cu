// The first stage of the predecessor rule on the device (see predecessors_gpu.cuh).
#include <algorithm>
#include <vector>

#include "predecessors_gpu.cuh"

namespace gpu_routing::gpu {

namespace {

constexpr int kPredecessorBlockSize = 256;
// Vertices with more incoming arcs than this are scanned by their whole warp (lanes stride the
// arcs, a shuffle reduction picks the best), so one hub of a power-law graph does not hold a
// lone thread for its tens of thousands of arcs.
constexpr ArcIndex kWarpScanDegree = 32;
constexpr unsigned kFullWarp = 0xffffffffu;

// The rule's key; smaller is better. Unused slots hold reach = +inf and arc = kNoArc.
struct ArcKey {
  double reach;
  int non_strict;
  long long edge_id;
  ArcIndex arc;
};

__device__ __forceinline__ bool key_less(const ArcKey& a, const ArcKey& b) {
  if (a.reach != b.reach) return a.reach < b.reach;
  if (a.non_strict != b.non_strict) return a.non_strict < b.non_strict;
  if (a.edge_id != b.edge_id) return a.edge_id < b.edge_id;
  return a.arc < b.arc;
}

__device__ __forceinline__ ArcKey no_key() {
  return ArcKey{kInfinity, 1, 0, kNoArc};
}

// Folds arc `a` (an arc of the reversed graph entering the vertex whose distance is dist_v) into
// `best`, exactly as best_incoming_arc() on the host does.
__device__ __forceinline__ void consider_arc(ArcIndex a, double dist_v, const VertexIndex* heads,
                                             const double* weights, const std::int64_t* edge_ids,
                                             const double* distances, ArcKey& best) {
  const double dist_u = distances[heads[a]];
  if (!(dist_u < kInfinity)) return;
  ArcKey key{dist_u + weights[a], dist_u < dist_v ? 0 : 1, static_cast<long long>(edge_ids[a]), a};
  if (best.arc == kNoArc || key_less(key, best)) best = key;
}

__device__ __forceinline__ ArcKey shuffle_key(const ArcKey& key, int offset) {
  ArcKey other;
  other.reach = __shfl_down_sync(kFullWarp, key.reach, offset);
  other.non_strict = __shfl_down_sync(kFullWarp, key.non_strict, offset);
  other.edge_id = __shfl_down_sync(kFullWarp, key.edge_id, offset);
  other.arc = __shfl_down_sync(kFullWarp, key.arc, offset);
  return other;
}

// One thread per vertex for ordinary in-degrees; the warp together for heavy ones. Every lane
// reaches the ballot, so the grid must be a whole number of warps (block sizes are).
__global__ void predecessor_first_stage_kernel(
    VertexIndex vertex_count, const ArcIndex* __restrict__ row_offsets,
    const VertexIndex* __restrict__ heads, const double* __restrict__ weights,
    const std::int64_t* __restrict__ edge_ids, const double* __restrict__ distances,
    VertexIndex source, ArcIndex* predecessor_arcs, unsigned int* pending_count) {
  const std::int64_t index = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int lane = threadIdx.x & 31;
  const bool valid = index < vertex_count;
  const VertexIndex v = valid ? static_cast<VertexIndex>(index) : 0;
  double dist_v = kInfinity;
  ArcIndex begin = 0, end = 0;
  bool needs_arc = false;
  if (valid) {
    dist_v = distances[v];
    needs_arc = v != source && dist_v < kInfinity;
    if (needs_arc) {
      begin = row_offsets[v];
      end = row_offsets[v + 1];
    }
  }
  const bool heavy = needs_arc && end - begin > kWarpScanDegree;
  ArcKey best = no_key();
  if (needs_arc && !heavy)
    for (ArcIndex a = begin; a < end; ++a)
      consider_arc(a, dist_v, heads, weights, edge_ids, distances, best);

  unsigned heavy_lanes = __ballot_sync(kFullWarp, heavy);
  while (heavy_lanes != 0) {
    const int leader = __ffs(heavy_lanes) - 1;
    heavy_lanes &= heavy_lanes - 1;
    const ArcIndex leader_begin = __shfl_sync(kFullWarp, begin, leader);
    const ArcIndex leader_end = __shfl_sync(kFullWarp, end, leader);
    const double leader_dist = __shfl_sync(kFullWarp, dist_v, leader);
    ArcKey shared_best = no_key();
    for (ArcIndex a = leader_begin + lane; a < leader_end; a += 32)
      consider_arc(a, leader_dist, heads, weights, edge_ids, distances, shared_best);
    for (int offset = 16; offset > 0; offset >>= 1) {
      ArcKey other = shuffle_key(shared_best, offset);
      if (other.arc != kNoArc && (shared_best.arc == kNoArc || key_less(other, shared_best)))
        shared_best = other;
    }
    // Lane 0 holds the warp's best; hand it to the vertex's own lane.
    ArcKey reduced;
    reduced.reach = __shfl_sync(kFullWarp, shared_best.reach, 0);
    reduced.non_strict = __shfl_sync(kFullWarp, shared_best.non_strict, 0);
    reduced.edge_id = __shfl_sync(kFullWarp, shared_best.edge_id, 0);
    reduced.arc = __shfl_sync(kFullWarp, shared_best.arc, 0);
    if (lane == leader) best = reduced;
  }

  if (!valid) return;
  ArcIndex chosen = best.arc;
  if (chosen != kNoArc && best.non_strict != 0) {
    chosen = kPendingArc;
    atomicAdd(pending_count, 1u);
  }
  predecessor_arcs[v] = chosen;
}

}  // namespace

std::size_t predecessor_pass_bytes(VertexIndex vertex_count) {
  return static_cast<std::size_t>(vertex_count) * sizeof(ArcIndex) + sizeof(unsigned int);
}

void launch_predecessor_first_stage(const DeviceCsr& reverse, const double* d_distances,
                                    VertexIndex source, ArcIndex* d_predecessor_arcs,
                                    unsigned int* d_pending_count, cudaStream_t stream,
                                    int block_size) {
  const VertexIndex n = reverse.vertex_count;
  if (n == 0) return;
  if (reverse.arc_count > 0 && reverse.edge_ids.data() == nullptr)
    throw RoutingError(ErrorKind::kInternal,
                       "predecessor kernel needs the reversed graph uploaded with edge ids");
  int threads = block_size > 0 ? block_size : kPredecessorBlockSize;
  threads = (threads + 31) / 32 * 32;  // whole warps: the kernel's ballot needs every lane
  predecessor_first_stage_kernel<<<blocks_for(n, threads), threads, 0, stream>>>(
      n, reverse.row_offsets.data(), reverse.heads.data(), reverse.weights.data(),
      reverse.edge_ids.data(), d_distances, source, d_predecessor_arcs, d_pending_count);
  GPU_ROUTING_CUDA_CHECK_LAUNCH();
}

void DevicePredecessorPass::reserve(VertexIndex vertex_count) {
  arcs_.reserve(static_cast<std::size_t>(std::max<VertexIndex>(vertex_count, 1)));
  if (pending_.size() == 0) pending_.allocate(1);
  if (pending_host_.size() == 0) pending_host_.allocate(1);
}

void DevicePredecessorPass::enqueue(const DeviceCsr& reverse, const double* d_distances,
                                    VertexIndex source, ArcIndex* h_predecessor_arcs,
                                    cudaStream_t stream, int block_size) {
  const VertexIndex n = reverse.vertex_count;
  reserve(n);
  GPU_ROUTING_CUDA_CHECK(cudaMemsetAsync(pending_.data(), 0, sizeof(unsigned int), stream));
  launch_predecessor_first_stage(reverse, d_distances, source, arcs_.data(), pending_.data(),
                                 stream, block_size);
  if (n > 0) arcs_.download(h_predecessor_arcs, static_cast<std::size_t>(n), stream);
  pending_.download(pending_host_.data(), 1, stream);
}

std::int64_t DevicePredecessorPass::finish(const CsrGraph& host_reverse, const double* h_distances,
                                           VertexIndex source, ArcIndex* h_predecessor_arcs) const {
  const std::int64_t pending = pending_host_.data()[0];
  if (pending > 0)
    resolve_pending_predecessors(host_reverse, h_distances, source, h_predecessor_arcs);
  return pending;
}

void compute_predecessors_on_device(const DeviceCsr& reverse, const double* d_distances,
                                    VertexIndex source, ArcIndex* d_predecessor_arcs,
                                    ArcIndex* h_predecessor_arcs, const double* h_distances_or_null,
                                    const CsrGraph& host_reverse, cudaStream_t stream) {
  const VertexIndex n = reverse.vertex_count;
  if (n == 0) return;
  DeviceBuffer<unsigned int> pending(1);
  GPU_ROUTING_CUDA_CHECK(cudaMemsetAsync(pending.data(), 0, sizeof(unsigned int), stream));
  launch_predecessor_first_stage(reverse, d_distances, source, d_predecessor_arcs, pending.data(),
                                 stream);
  unsigned int pending_count = 0;
  GPU_ROUTING_CUDA_CHECK(cudaMemcpyAsync(h_predecessor_arcs, d_predecessor_arcs,
                                         static_cast<std::size_t>(n) * sizeof(ArcIndex),
                                         cudaMemcpyDeviceToHost, stream));
  GPU_ROUTING_CUDA_CHECK(cudaMemcpyAsync(&pending_count, pending.data(), sizeof(unsigned int),
                                         cudaMemcpyDeviceToHost, stream));
  GPU_ROUTING_CUDA_CHECK(cudaStreamSynchronize(stream));
  if (pending_count == 0) return;
  std::vector<double> downloaded;
  const double* h_distances = h_distances_or_null;
  if (h_distances == nullptr) {
    downloaded.resize(static_cast<std::size_t>(n));
    GPU_ROUTING_CUDA_CHECK(cudaMemcpyAsync(downloaded.data(), d_distances,
                                           static_cast<std::size_t>(n) * sizeof(double),
                                           cudaMemcpyDeviceToHost, stream));
    GPU_ROUTING_CUDA_CHECK(cudaStreamSynchronize(stream));
    h_distances = downloaded.data();
  }
  resolve_pending_predecessors(host_reverse, h_distances, source, h_predecessor_arcs);
}

}  // namespace gpu_routing::gpu
