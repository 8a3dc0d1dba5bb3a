// The predecessor rule of src/core/base/predecessors.hpp on the device, for every single-source GPU
// engine: the first stage (the best incoming arc of each vertex by the key
// (dist[u] + w, dist[u] < dist[v] ? 0 : 1, edge id, arc index)) runs as one kernel over the
// reversed CSR; vertices whose best arc is not strict (zero-cost ties) are marked kPendingArc and
// counted on the device, and only when that count is non-zero does the host run
// resolve_pending_predecessors(). The result equals compute_predecessors() exactly.
//
// Two ways to use it:
//  - compute_predecessors_on_device(): one call, synchronous on `stream`; enough for an engine
//    that solves one source at a time.
//  - DevicePredecessorPass: enqueue() then, after the stream has been synchronised, finish();
//    for engines that keep several streams busy and must not wait in between.
//
// Either way the reversed graph must be on the device WITH edge ids
// (DeviceCsr::upload(graph.reverse, true, stream)), and arc indices refer to graph.reverse.
#pragma once

#include "base/predecessors.hpp"
#include "cuda_common.cuh"

namespace gpu_routing::gpu {

// Device memory one pass needs for a graph of `vertex_count` vertices (arcs + counter).
std::size_t predecessor_pass_bytes(VertexIndex vertex_count);

// Scratch of one predecessor pass: the device row of arcs and a pending counter (device and
// pinned host copies). One per stream; reused across sources.
class DevicePredecessorPass {
 public:
  DevicePredecessorPass() = default;
  // Grows the device row to `vertex_count` arcs (no-op when large enough).
  void reserve(VertexIndex vertex_count);

  // Enqueues on `stream`: the first-stage kernel writing arcs() for `source`, and the copies of
  // the row into `h_predecessor_arcs` (vertex_count entries; pinned memory keeps the copy
  // asynchronous, pageable memory works too) and of the pending count. `d_distances` is the
  // final distance row on the device. block_size 0 = default.
  void enqueue(const DeviceCsr& reverse_with_edge_ids, const double* d_distances,
               VertexIndex source, ArcIndex* h_predecessor_arcs, cudaStream_t stream,
               int block_size = 0);

  // After `stream` has been synchronised: resolves the kPendingArc entries on the host when the
  // kernel left any. `h_distances` is the same row as on the device, in host memory.
  // Returns the number of pending vertices the kernel left (0 almost always).
  std::int64_t finish(const CsrGraph& host_reverse, const double* h_distances, VertexIndex source,
                      ArcIndex* h_predecessor_arcs) const;

  ArcIndex* arcs() const { return arcs_.data(); }

 private:
  DeviceBuffer<ArcIndex> arcs_;
  DeviceBuffer<unsigned int> pending_;
  PinnedBuffer<unsigned int> pending_host_;
};

// Launches only the first-stage kernel: d_predecessor_arcs[v] = best strict arc, kPendingArc, or
// kNoArc (source, unreachable); adds the number of kPendingArc entries to *d_pending_count
// (which the caller zeroed). For engines that keep the row on the device.
void launch_predecessor_first_stage(const DeviceCsr& reverse_with_edge_ids,
                                    const double* d_distances, VertexIndex source,
                                    ArcIndex* d_predecessor_arcs, unsigned int* d_pending_count,
                                    cudaStream_t stream, int block_size = 0);

// The whole rule for one source, synchronous on `stream`: fills h_predecessor_arcs
// (vertex_count entries, indices into host_reverse). `d_predecessor_arcs` is device scratch of
// vertex_count entries. `h_distances_or_null`: the distance row on the host when the caller has
// it (it is only read when pending vertices exist; null = downloaded from d_distances then).
void compute_predecessors_on_device(const DeviceCsr& reverse_with_edge_ids,
                                    const double* d_distances, VertexIndex source,
                                    ArcIndex* d_predecessor_arcs, ArcIndex* h_predecessor_arcs,
                                    const double* h_distances_or_null, const CsrGraph& host_reverse,
                                    cudaStream_t stream);

}  // namespace gpu_routing::gpu
