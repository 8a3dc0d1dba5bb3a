// multi_source (seed 000, Okuyama, Ino and Hagihara): many SSSP problems per launch on top of
// Harish's per-vertex scatter/check iteration.
//
// A warp is one vertex v in 32 problems (sources): lane s relaxes v's arcs for source s. The warp
// reads v's adjacency once, 32 arcs at a time, into shared memory and every lane walks it, so the
// graph is read once for 32 sources. Per-source arrays are interleaved (index (g * V + v) * 32 + s)
// so a warp's loads and atomics touch 32 consecutive entries. Several groups g of 32 sources run
// in one launch when the graph alone would not fill the GPU. The scatter phase lowers
// updating[] with atomicMin on the float64 bits (no write-after-write race, seed 001's
// counterexample), the check phase moves improvements into cost[] and re-arms the mask.
//
// Termination stays on the device: check kernel i writes flags[i + 1] when anything changed, and
// every kernel of iteration i + 1 returns at once when flags[i + 1] is 0. Sixteen iterations are
// captured in one CUDA graph; the host replays it a few times between looks at the last flag,
// polling cancel in between (about every 10-30 ms).
//
// Path recording (seed 000 section 5.3): after convergence one kernel on the reversed graph picks
// each vertex's incoming arc by the rule of src/core/base/predecessors.hpp (smallest key
// (dist[u] + w, dist[u] < dist[v] ? 0 : 1, edge id, arc)), marking kPendingArc where the best arc
// is not strict; the host resolves those rows with resolve_pending_predecessors(), so paths equal
// the CPU engine's exactly.
//
// Several GPUs: the sources of a solve() are split over one host thread per device, each with
// its own copy of the graph.
#include <algorithm>
#include <atomic>
#include <exception>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "engine/gpu.hpp"
#include "base/parallel.hpp"
#include "base/predecessors.hpp"
#include "apsp_engines.cuh"
#include "cuda_common.cuh"

namespace gpu_routing::gpu::apsp {

namespace {

constexpr int kLanes = 32;                // sources per group: one warp
constexpr int kIterationsPerGraph = 16;   // scatter/check pairs captured in one CUDA graph
constexpr int kDefaultWarpsPerBlock = 4;  // seed 000's B = 4: 128 threads
constexpr std::int64_t kTargetThreads = std::int64_t{1} << 20;
constexpr int kMaxGroups = 64;

__global__ void init_groups_kernel(double* cost, double* updating, std::uint8_t* mask,
                                   const VertexIndex* lane_sources, int n, std::int64_t total) {
  const std::int64_t idx = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
  if (idx >= total) return;
  const int lane = int(idx % kLanes);
  const std::int64_t warp = idx / kLanes;
  const int v = int(warp % n);
  const int g = int(warp / n);
  const bool is_source = lane_sources[g * kLanes + lane] == v;
  const double d = is_source ? 0.0 : kInfinity;
  cost[idx] = d;
  updating[idx] = d;
  mask[idx] = is_source ? 1 : 0;
}

// Scatter: every (v, s) whose mask is set relaxes v's arcs for source s.
__global__ void scatter_kernel(const ArcIndex* row_offsets, const VertexIndex* heads,
                               const double* weights, const double* cost, double* updating,
                               std::uint8_t* mask, int n, std::int64_t warps, const int* go) {
  if (*go == 0) return;
  extern __shared__ double shared_words[];
  const int warp_in_block = threadIdx.x / kLanes;
  const int lane = threadIdx.x % kLanes;
  const int warps_per_block = blockDim.x / kLanes;
  double* shared_weights = shared_words + warp_in_block * kLanes;
  VertexIndex* shared_heads =
      reinterpret_cast<VertexIndex*>(shared_words + warps_per_block * kLanes) +
      warp_in_block * kLanes;
  const std::int64_t warp = blockIdx.x * std::int64_t(warps_per_block) + warp_in_block;
  if (warp >= warps) return;  // uniform per warp
  const int v = int(warp % n);
  const std::int64_t group_base = (warp / n) * std::int64_t(n) * kLanes;
  const std::int64_t idx = warp * kLanes + lane;
  const bool active = mask[idx] != 0;
  if (!__any_sync(0xffffffffu, active)) return;
  if (active) mask[idx] = 0;
  const double tentative = cost[idx];
  const ArcIndex begin = row_offsets[v], end = row_offsets[v + 1];
  for (ArcIndex chunk = begin; chunk < end; chunk += kLanes) {
    const ArcIndex a = chunk + lane;
    if (a < end) {
      shared_heads[lane] = heads[a];
      shared_weights[lane] = weights[a];
    }
    __syncwarp();
    const int count = min(kLanes, end - chunk);
    if (active) {
      for (int i = 0; i < count; ++i) {
        const double candidate = tentative + shared_weights[i];
        double* target = updating + group_base + std::int64_t(shared_heads[i]) * kLanes + lane;
        // A stale read is only ever too high (values only fall), so this filter never skips a
        // needed update; it spares most atomics once distances settle.
        if (candidate < *target) atomic_min_distance(target, candidate);
      }
    }
    __syncwarp();
  }
}

// Check: adopt improvements, re-arm the mask, and tell the next iteration whether to run.
__global__ void check_kernel(double* cost, const double* updating, std::uint8_t* mask,
                             std::int64_t total, const int* go, int* changed,
                             unsigned long long* rounds) {
  if (*go == 0) return;
  if (blockIdx.x == 0 && threadIdx.x == 0) atomicAdd(rounds, 1ull);
  const std::int64_t idx = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
  int improved = 0;
  if (idx < total) {
    const double u = updating[idx];
    if (u < cost[idx]) {
      cost[idx] = u;
      mask[idx] = 1;
      improved = 1;
    }
  }
  if (__syncthreads_or(improved) && threadIdx.x == 0) *changed = 1;
}

// Interleaved (g, v, s) distances -> rows (g * 32 + s) of n distances.
__global__ void rows_kernel(const double* cost, double* rows, int n, std::int64_t total) {
  const std::int64_t idx = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
  if (idx >= total) return;
  const int lane = int(idx % kLanes);
  const std::int64_t warp = idx / kLanes;
  const int v = int(warp % n);
  const std::int64_t g = warp / n;
  rows[(g * kLanes + lane) * n + v] = cost[idx];
}

// Path recording: lane s of warp (g, v) picks v's incoming arc for source s by the predecessor
// rule's first stage, the reversed adjacency shared by the warp.
__global__ void path_kernel(const ArcIndex* row_offsets, const VertexIndex* tails,
                            const double* weights, const std::int64_t* edge_ids, const double* cost,
                            const VertexIndex* lane_sources, int n, std::int64_t warps,
                            ArcIndex* pred_rows, int* row_pending) {
  extern __shared__ double shared_words[];
  const int warp_in_block = threadIdx.x / kLanes;
  const int lane = threadIdx.x % kLanes;
  const int warps_per_block = blockDim.x / kLanes;
  double* shared_weights = shared_words + warp_in_block * kLanes;
  std::int64_t* shared_edges =
      reinterpret_cast<std::int64_t*>(shared_words + warps_per_block * kLanes) +
      warp_in_block * kLanes;
  VertexIndex* shared_tails =
      reinterpret_cast<VertexIndex*>(shared_words + 2 * warps_per_block * kLanes) +
      warp_in_block * kLanes;
  const std::int64_t warp = blockIdx.x * std::int64_t(warps_per_block) + warp_in_block;
  if (warp >= warps) return;
  const int v = int(warp % n);
  const std::int64_t g = warp / n;
  const std::int64_t group_base = g * n * kLanes;
  const VertexIndex source = lane_sources[g * kLanes + lane];
  const double dist_v = cost[warp * kLanes + lane];
  const bool needed = source >= 0 && source != v && dist_v < kInfinity;
  double best_reach = kInfinity;
  int best_non_strict = 2;
  std::int64_t best_edge = 0;
  ArcIndex best_arc = kNoArc;
  if (__any_sync(0xffffffffu, needed)) {
    const ArcIndex begin = row_offsets[v], end = row_offsets[v + 1];
    for (ArcIndex chunk = begin; chunk < end; chunk += kLanes) {
      const ArcIndex a = chunk + lane;
      if (a < end) {
        shared_tails[lane] = tails[a];
        shared_weights[lane] = weights[a];
        shared_edges[lane] = edge_ids[a];
      }
      __syncwarp();
      const int count = min(kLanes, end - chunk);
      if (needed) {
        for (int i = 0; i < count; ++i) {
          const double dist_u = cost[group_base + std::int64_t(shared_tails[i]) * kLanes + lane];
          if (!(dist_u < kInfinity)) continue;
          const double reach = dist_u + shared_weights[i];
          const int non_strict = dist_u < dist_v ? 0 : 1;
          const std::int64_t edge = shared_edges[i];
          const ArcIndex arc = chunk + i;
          bool better = reach != best_reach             ? reach < best_reach
                        : non_strict != best_non_strict ? non_strict < best_non_strict
                        : edge != best_edge             ? edge < best_edge
                                                        : arc < best_arc;
          if (best_arc == kNoArc) better = true;
          if (better) {
            best_reach = reach;
            best_non_strict = non_strict;
            best_edge = edge;
            best_arc = arc;
          }
        }
      }
      __syncwarp();
    }
  }
  if (source < 0) return;
  ArcIndex result = needed ? best_arc : kNoArc;
  if (result != kNoArc && best_non_strict != 0) {
    result = kPendingArc;
    row_pending[g * kLanes + lane] = 1;
  }
  pred_rows[(g * kLanes + lane) * n + v] = result;
}

int default_groups(VertexIndex n) {
  const std::int64_t per_group = std::int64_t(std::max<VertexIndex>(n, 1)) * kLanes;
  const std::int64_t groups = (kTargetThreads + per_group - 1) / per_group;
  return int(std::clamp<std::int64_t>(groups, 1, kMaxGroups));
}

std::size_t per_group_bytes(VertexIndex n, bool with_predecessors) {
  const std::size_t entries = std::size_t(std::max<VertexIndex>(n, 1)) * kLanes;
  return entries * (2 * sizeof(double) + 1 + (with_predecessors ? sizeof(ArcIndex) : 0)) +
         kLanes * (sizeof(VertexIndex) + sizeof(int));
}

// One device's share of the work: its graph copy, buffers and captured iteration graphs.
struct Worker {
  int device = 0;
  int groups = 1;
  int warps_per_block = kDefaultWarpsPerBlock;
  std::unique_ptr<Stream> stream;
  DeviceCsr forward, reverse;
  bool reverse_uploaded = false;
  DeviceBuffer<double> cost, updating;
  DeviceBuffer<std::uint8_t> mask;
  DeviceBuffer<VertexIndex> lane_sources;
  DeviceBuffer<int> flags;  // kIterationsPerGraph + 1
  DeviceBuffer<unsigned long long> rounds;
  DeviceBuffer<ArcIndex> pred_rows;
  DeviceBuffer<int> row_pending;
  PinnedBuffer<int> host_flag;
  PinnedBuffer<unsigned long long> host_rounds;
  std::vector<int> host_pending;
  std::map<int, cudaGraphExec_t> iteration_graphs;  // by active group count
  double path_ms = 0;
  std::int64_t rounds_total = 0;

  ~Worker() {
    if (!stream) return;
    cudaSetDevice(device);  // the buffers and the stream below belong to this device
    for (auto& [groups_key, exec] : iteration_graphs) cudaGraphExecDestroy(exec);
  }
};

class MultiSourceEngine final : public ShortestPathEngine {
 public:
  MultiSourceEngine(const Graph& graph, const EngineOptions& options,
                    const MultiSourceTuning& tuning)
      : ShortestPathEngine(graph, options) {
    const auto& gpus = availability();
    if (!gpus.usable) throw RoutingError(ErrorKind::kNoDevice, "no usable GPU: " + gpus.reason);
    // A device named (options.device): every worker on it; else the workers over every GPU.
    home_device_ = std::max(0, options.device);
    devices_ = options.device >= 0 ? 1 : std::max(1, device_count());
    worker_count_ = tuning.workers > 0 ? tuning.workers : devices_;
    groups_ = tuning.groups_per_launch > 0 ? std::min(tuning.groups_per_launch, kMaxGroups)
                                           : default_groups(graph.vertex_count());
    warps_per_block_ = options.block_size > 0 ? std::clamp(options.block_size / kLanes, 1, 32)
                                              : kDefaultWarpsPerBlock;
    report_.device_name = gpus.devices[std::size_t(home_device_) % gpus.devices.size()].name +
                          " (device " + std::to_string(home_device_) + ")";
    if (worker_count_ > 1 && options.device < 0)
      report_.device_name += ", " + std::to_string(worker_count_) + " workers on " +
                             std::to_string(std::min(worker_count_, devices_)) + " devices";
  }

  const char* name() const override { return "multi_source"; }
  Device device() const override { return Device::kGpu; }
  int preferred_batch_size() const override { return kLanes * groups_ * worker_count_; }
  double path_ms() const { return path_ms_; }

  void solve(const SolveRequest& request) override {
    const VertexIndex n = graph_.vertex_count();
    if (request.source_count <= 0) return;
    for (int i = 0; i < request.source_count; ++i)
      if (request.sources[i] < 0 || request.sources[i] >= n)
        throw RoutingError(ErrorKind::kInvalidParameter, "source index out of range");
    const bool with_predecessors = request.predecessor_arcs != nullptr;
    if (with_predecessors && !has_reverse(graph_))
      throw RoutingError(ErrorKind::kInternal, "predecessors asked for without the reversed graph");
    options_.cancel.throw_if_requested();
    Stopwatch watch;
    const int per_batch = kLanes * groups_;
    const int batches = (request.source_count + per_batch - 1) / per_batch;
    const int active_workers = std::min(worker_count_, batches);
    // gpu_routing.max_memory covers every device together.
    const std::size_t per_worker = worker_bytes(with_predecessors);
    options_.budget.require(saturating_multiply(per_worker, std::size_t(active_workers)),
                            "multi_source (" + std::to_string(active_workers) + " x " +
                                std::to_string(per_batch) + " sources over " + std::to_string(n) +
                                " vertices)");
    while (int(workers_.size()) < active_workers) {
      auto worker = std::make_unique<Worker>();
      worker->device = options_.device >= 0 ? home_device_ : int(workers_.size()) % devices_;
      workers_.push_back(std::move(worker));
    }
    path_ms_ = 0;
    std::atomic<int> next_batch{0};
    std::atomic<bool> stop{false};
    auto run_worker = [&](Worker& worker) {
      use_device(worker.device);
      prepare(worker, with_predecessors);
      while (!stop.load()) {
        const int batch = next_batch.fetch_add(1);
        if (batch >= batches) break;
        const int first = batch * per_batch;
        const int count = std::min(per_batch, request.source_count - first);
        run_batch(worker, request, first, count, stop);
      }
    };
    if (active_workers == 1) {
      run_worker(*workers_.front());
    } else {
      std::vector<std::exception_ptr> failures(static_cast<std::size_t>(active_workers));
      std::vector<std::thread> threads;
      {
        SignalBlock block;  // worker threads never run PostgreSQL's signal handlers
        for (int w = 0; w < active_workers; ++w)
          threads.emplace_back([&, w] {
            try {
              run_worker(*workers_[std::size_t(w)]);
            } catch (...) {
              failures[std::size_t(w)] = std::current_exception();
              stop.store(true);
            }
          });
      }
      for (auto& t : threads) t.join();
      use_device(home_device_);
      for (auto& failure : failures)
        if (failure) std::rethrow_exception(failure);
    }
    for (auto& worker : workers_) {
      report_.rounds += worker->rounds_total;
      worker->rounds_total = 0;
      path_ms_ += worker->path_ms;
      worker->path_ms = 0;
    }
    report_.compute_ms += watch.elapsed_ms();
  }

 private:
  std::size_t worker_bytes(bool with_predecessors) const {
    return saturating_add(
        saturating_add(DeviceCsr::bytes(graph_.forward, false),
                       with_predecessors ? DeviceCsr::bytes(graph_.reverse, true) : 0),
        saturating_multiply(per_group_bytes(graph_.vertex_count(), with_predecessors),
                            std::size_t(groups_)));
  }

  // Uploads the graph and allocates the buffers on the worker's device (once per engine).
  void prepare(Worker& worker, bool with_predecessors) {
    const VertexIndex n = graph_.vertex_count();
    const std::size_t entries = std::size_t(groups_) * n * kLanes;
    const bool need_reverse = with_predecessors && !worker.reverse_uploaded;
    if (worker.stream && !need_reverse) return;
    std::size_t needed =
        need_reverse ? DeviceCsr::bytes(graph_.reverse, true) + entries * sizeof(ArcIndex) : 0;
    if (!worker.stream) needed += worker_bytes(false);
    require_device_memory(worker.device, needed,
                          "multi_source (" + std::to_string(kLanes * groups_) +
                              " sources at a time over " + std::to_string(n) + " vertices)",
                          options_.budget);
    if (!worker.stream) {
      worker.stream = std::make_unique<Stream>();
      worker.groups = groups_;
      worker.warps_per_block = warps_per_block_;
      worker.forward.upload(graph_.forward, false, worker.stream->get());
      worker.cost.allocate(entries);
      worker.updating.allocate(entries);
      worker.mask.allocate(entries);
      worker.lane_sources.allocate(std::size_t(groups_) * kLanes);
      worker.flags.allocate(kIterationsPerGraph + 1);
      worker.rounds.allocate(1);
      worker.row_pending.allocate(std::size_t(groups_) * kLanes);
      worker.host_flag.allocate(1);
      worker.host_rounds.allocate(1);
    }
    if (need_reverse) {
      worker.reverse.upload(graph_.reverse, true, worker.stream->get());
      worker.pred_rows.allocate(entries);
      worker.reverse_uploaded = true;
    }
  }

  cudaGraphExec_t iteration_graph(Worker& worker, int groups) {
    auto found = worker.iteration_graphs.find(groups);
    if (found != worker.iteration_graphs.end()) return found->second;
    const VertexIndex n = graph_.vertex_count();
    const std::int64_t warps = std::int64_t(groups) * n;
    const std::int64_t total = warps * kLanes;
    const int threads = worker.warps_per_block * kLanes;
    const int scatter_blocks = int((warps + worker.warps_per_block - 1) / worker.warps_per_block);
    const int check_blocks = blocks_for(total, 256);
    const std::size_t scatter_shared =
        std::size_t(worker.warps_per_block) * kLanes * (sizeof(double) + sizeof(VertexIndex));
    cudaStream_t stream = worker.stream->get();
    int* flags = worker.flags.data();
    cudaGraph_t graph = nullptr;
    GPU_ROUTING_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    try {
      // flags[0] = the last flag of the previous replay; flags[1..K] = 0.
      GPU_ROUTING_CUDA_CHECK(cudaMemcpyAsync(flags, flags + kIterationsPerGraph, sizeof(int),
                                             cudaMemcpyDeviceToDevice, stream));
      GPU_ROUTING_CUDA_CHECK(
          cudaMemsetAsync(flags + 1, 0, sizeof(int) * kIterationsPerGraph, stream));
      for (int i = 0; i < kIterationsPerGraph; ++i) {
        scatter_kernel<<<scatter_blocks, threads, scatter_shared, stream>>>(
            worker.forward.row_offsets.data(), worker.forward.heads.data(),
            worker.forward.weights.data(), worker.cost.data(), worker.updating.data(),
            worker.mask.data(), n, warps, flags + i);
        GPU_ROUTING_CUDA_CHECK_LAUNCH();
        check_kernel<<<check_blocks, 256, 0, stream>>>(worker.cost.data(), worker.updating.data(),
                                                       worker.mask.data(), total, flags + i,
                                                       flags + i + 1, worker.rounds.data());
        GPU_ROUTING_CUDA_CHECK_LAUNCH();
      }
    } catch (...) {
      cudaStreamEndCapture(stream, &graph);
      if (graph != nullptr) cudaGraphDestroy(graph);
      throw;
    }
    GPU_ROUTING_CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
    cudaGraphExec_t exec = nullptr;
    cudaError_t status = cudaGraphInstantiate(&exec, graph, 0);
    cudaGraphDestroy(graph);
    if (status != cudaSuccess) throw_cuda_error(status, "cudaGraphInstantiate", __FILE__, __LINE__);
    worker.iteration_graphs[groups] = exec;
    return exec;
  }

  void run_batch(Worker& worker, const SolveRequest& request, int first, int count,
                 const std::atomic<bool>& stop) {
    const VertexIndex n = graph_.vertex_count();
    const int groups = (count + kLanes - 1) / kLanes;
    const std::int64_t warps = std::int64_t(groups) * n;
    const std::int64_t total = warps * kLanes;
    cudaStream_t stream = worker.stream->get();

    // Captured first: the capture must not start behind work already queued on the stream.
    cudaGraphExec_t exec = iteration_graph(worker, groups);
    std::vector<VertexIndex> lanes(std::size_t(groups) * kLanes, -1);
    std::copy(request.sources + first, request.sources + first + count, lanes.begin());
    worker.lane_sources.upload(lanes.data(), lanes.size(), stream);
    init_groups_kernel<<<blocks_for(total, 256), 256, 0, stream>>>(
        worker.cost.data(), worker.updating.data(), worker.mask.data(), worker.lane_sources.data(),
        n, total);
    GPU_ROUTING_CUDA_CHECK_LAUNCH();
    GPU_ROUTING_CUDA_CHECK(cudaMemsetAsync(worker.flags.data() + kIterationsPerGraph, 1,
                                           sizeof(int), stream));  // nonzero: go
    GPU_ROUTING_CUDA_CHECK(
        cudaMemsetAsync(worker.rounds.data(), 0, sizeof(unsigned long long), stream));

    int replays = 1;
    while (true) {
      Stopwatch slice;
      for (int r = 0; r < replays; ++r) GPU_ROUTING_CUDA_CHECK(cudaGraphLaunch(exec, stream));
      GPU_ROUTING_CUDA_CHECK(cudaMemcpyAsync(worker.host_flag.data(),
                                             worker.flags.data() + kIterationsPerGraph, sizeof(int),
                                             cudaMemcpyDeviceToHost, stream));
      GPU_ROUTING_CUDA_CHECK(cudaMemcpyAsync(worker.host_rounds.data(), worker.rounds.data(),
                                             sizeof(unsigned long long), cudaMemcpyDeviceToHost,
                                             stream));
      GPU_ROUTING_CUDA_CHECK(cudaStreamSynchronize(stream));
      if (worker.host_flag.data()[0] == 0) break;
      options_.cancel.throw_if_requested();
      if (stop.load()) return;
      // Non-negative weights converge within V + 1 Bellman-Ford rounds.
      if (worker.host_rounds.data()[0] > static_cast<unsigned long long>(n) + 2)
        throw RoutingError(ErrorKind::kInternal, "multi_source did not converge");
      const double ms = slice.elapsed_ms();
      if (ms < 5.0)
        replays = std::min(replays * 2, 64);
      else if (ms > 30.0)
        replays = std::max(replays / 2, 1);
    }
    worker.rounds_total += std::int64_t(worker.host_rounds.data()[0]);

    const bool with_predecessors = request.predecessor_arcs != nullptr;
    if (with_predecessors) {
      Event start, stop_event;
      start.record(stream);
      GPU_ROUTING_CUDA_CHECK(
          cudaMemsetAsync(worker.row_pending.data(), 0, sizeof(int) * groups * kLanes, stream));
      const std::size_t shared = std::size_t(worker.warps_per_block) * kLanes *
                                 (sizeof(double) + sizeof(std::int64_t) + sizeof(VertexIndex));
      path_kernel<<<int((warps + worker.warps_per_block - 1) / worker.warps_per_block),
                    worker.warps_per_block * kLanes, shared, stream>>>(
          worker.reverse.row_offsets.data(), worker.reverse.heads.data(),
          worker.reverse.weights.data(), worker.reverse.edge_ids.data(), worker.cost.data(),
          worker.lane_sources.data(), n, warps, worker.pred_rows.data(), worker.row_pending.data());
      GPU_ROUTING_CUDA_CHECK_LAUNCH();
      stop_event.record(stream);
      stop_event.synchronize();
      float ms = 0;
      GPU_ROUTING_CUDA_CHECK(cudaEventElapsedTime(&ms, start.get(), stop_event.get()));
      worker.path_ms += ms;
    }
    // Rows go into updating[], free now.
    rows_kernel<<<blocks_for(total, 256), 256, 0, stream>>>(worker.cost.data(),
                                                            worker.updating.data(), n, total);
    GPU_ROUTING_CUDA_CHECK_LAUNCH();
    worker.updating.download(request.distances + std::size_t(first) * n, std::size_t(count) * n,
                             stream);
    if (with_predecessors) {
      worker.pred_rows.download(request.predecessor_arcs + std::size_t(first) * n,
                                std::size_t(count) * n, stream);
      worker.host_pending.resize(std::size_t(groups) * kLanes);
      worker.row_pending.download(worker.host_pending.data(), worker.host_pending.size(), stream);
    }
    GPU_ROUTING_CUDA_CHECK(cudaStreamSynchronize(stream));
    if (with_predecessors) {
      for (int i = 0; i < count; ++i) {
        if (worker.host_pending[std::size_t(i)] == 0) continue;
        resolve_pending_predecessors(graph_.reverse, request.distances + std::size_t(first + i) * n,
                                     request.sources[first + i],
                                     request.predecessor_arcs + std::size_t(first + i) * n);
      }
    }
  }

  int devices_ = 1;
  int home_device_ = 0;  // options.device, or 0
  int worker_count_ = 1;
  int groups_ = 1;
  int warps_per_block_ = kDefaultWarpsPerBlock;
  double path_ms_ = 0;
  std::vector<std::unique_ptr<Worker>> workers_;
};

}  // namespace

std::unique_ptr<ShortestPathEngine> create_multi_source_engine(const Graph& graph,
                                                               const EngineOptions& options,
                                                               const MultiSourceTuning& tuning) {
  return std::make_unique<MultiSourceEngine>(graph, options, tuning);
}

std::size_t estimate_multi_source_bytes(const Graph& graph, int batch) {
  const int groups =
      std::min(default_groups(graph.vertex_count()), std::max(1, (batch + kLanes - 1) / kLanes));
  return saturating_add(
      saturating_add(DeviceCsr::bytes(graph.forward, false), DeviceCsr::bytes(graph.reverse, true)),
      saturating_multiply(per_group_bytes(graph.vertex_count(), true), std::size_t(groups)));
}

double path_recording_ms(const ShortestPathEngine& engine) {
  const auto* multi = dynamic_cast<const MultiSourceEngine*>(&engine);
  return multi != nullptr ? multi->path_ms() : 0.0;
}

}  // namespace gpu_routing::gpu::apsp
