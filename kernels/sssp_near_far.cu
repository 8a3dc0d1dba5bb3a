// The near_far engine: delta-stepping with a near queue and a far pile on the GPU (see
// near_far.cuh for the design and near_far_kernels.cuh for the device side).
//
// One source: a persistent cooperative kernel (one grid barrier per round, counters on the
// device, no host round trip until the search is done); the host polls options.cancel while it
// runs and raises a host-mapped flag the kernel reads every 16 rounds.
// Several sources: the first one runs on the whole grid and measures the frontier; narrow
// frontiers (road networks) then run one block per source, wide ones the grid kernel per source.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

#include "base/parallel.hpp"
#include "base/predecessors.hpp"
#include "gpu_engines.hpp"
#include "multi_device_engine.cuh"
#include "near_far.cuh"
#include "near_far_kernels.cuh"
#include "predecessors_gpu.cuh"

#ifdef _OPENMP
#include <omp.h>
#endif

namespace gpu_routing::gpu {

namespace {

namespace nf = near_far;

constexpr int kDefaultGridBlockSize = 512;
constexpr int kDefaultBatchBlockSize = 128;
constexpr int kInitBlockSize = 256;
// Mean out-degree up to which a graph counts as sparse (roads ~2.8, grids ~4).
constexpr double kSparseMeanDegree = 8.0;
// Rounds of grid searches that measure a graph's frontier before many sources choose a kernel.
constexpr long long kMeasuredRounds = 8;
// preferred_batch_size(): at most this many bytes of distance rows per batch.
constexpr std::size_t kPreferredBatchRowBytes = std::size_t{1} << 30;

int whole_warps(int threads, int fallback) {
  if (threads <= 0) threads = fallback;
  threads = (threads + 31) / 32 * 32;
  return std::clamp(threads, 32, 1024);
}

std::size_t graph_bytes(const Graph& graph) {
  const std::size_t n = static_cast<std::size_t>(graph.vertex_count());
  return DeviceCsr::bytes(graph.forward, false) + (n + 31) / 32 * sizeof(unsigned);
}

// Queue, pile and mark arrays of one search (without the distance row).
std::size_t search_arrays_bytes(std::size_t vertices, std::size_t chunk_capacity) {
  return vertices * (2 * sizeof(VertexIndex) + 2 * sizeof(VertexIndex) + 2 * sizeof(int)) +
         2 * chunk_capacity * sizeof(int2);
}

// Chunks all huge vertices together make (one entry each per round at most).
std::size_t count_chunks(const CsrGraph& csr, int huge_degree, int chunk_arcs) {
  std::size_t chunks = 0;
  for (VertexIndex v = 0; v < csr.vertex_count; ++v) {
    const ArcIndex degree = csr.end(v) - csr.begin(v);
    if (degree > huge_degree)
      chunks += static_cast<std::size_t>((degree + chunk_arcs - 1) / chunk_arcs);
  }
  return chunks;
}

// Page-locked int the kernels read through its device mapping: the host's stop request.
class MappedFlag {
 public:
  MappedFlag() {
    void* memory = nullptr;
    GPU_ROUTING_CUDA_CHECK(cudaHostAlloc(&memory, sizeof(int), cudaHostAllocMapped));
    host_ = static_cast<volatile int*>(memory);
    *host_ = 0;
    void* mapped = nullptr;
    GPU_ROUTING_CUDA_CHECK(cudaHostGetDevicePointer(&mapped, memory, 0));
    device_ = static_cast<int*>(mapped);
  }
  ~MappedFlag() {
    if (host_ != nullptr) cudaFreeHost(const_cast<int*>(host_));
  }
  MappedFlag(const MappedFlag&) = delete;
  MappedFlag& operator=(const MappedFlag&) = delete;
  void set(int value) {
    *host_ = value;
    std::atomic_thread_fence(std::memory_order_seq_cst);
  }
  const volatile int* device() const { return device_; }

 private:
  volatile int* host_ = nullptr;
  int* device_ = nullptr;
};

class NearFarEngine final : public ShortestPathEngine {
 public:
  NearFarEngine(const Graph& graph, const EngineOptions& options, const NearFarConfig& config,
                int device = 0)
      : ShortestPathEngine(graph, options), config_(config), device_(device) {
    use_device(device_);
    GPU_ROUTING_CUDA_CHECK(cudaGetDeviceProperties(&props_, device_));
    report_.device_name = std::string(props_.name) + " (device " + std::to_string(device_) + ")";
    stream_ = std::make_unique<Stream>();
    cancel_flag_ = std::make_unique<MappedFlag>();

    grid_block_ =
        whole_warps(config_.grid_block_size > 0 ? config_.grid_block_size : options.block_size,
                    kDefaultGridBlockSize);
    grid_kernel_ = reinterpret_cast<const void*>(nf::grid_search_kernel);
    if (config_.grid_wide_registers) {
      grid_block_ = std::min(grid_block_, 512);
      grid_kernel_ = reinterpret_cast<const void*>(nf::grid_search_kernel_wide);
    }
    batch_block_ =
        whole_warps(config_.batch_block_size > 0 ? config_.batch_block_size : options.block_size,
                    kDefaultBatchBlockSize);
    // Sparse graphs (roads, grids) are bound by dependent rounds, denser ones by the work of
    // their wide frontiers: see NearFarConfig::delta_scale and local_hops for the measurements.
    const double mean_degree =
        static_cast<double>(graph.arc_count()) / std::max<VertexIndex>(graph.vertex_count(), 1);
    const bool sparse = mean_degree <= kSparseMeanDegree;
    const bool explicit_hops = config_.local_hops >= 0;
    local_hops_ = explicit_hops ? config_.local_hops : (sparse ? 4 : 0);
    deep_hops_ = config_.deep_local_hops >= 0 ? config_.deep_local_hops
                 : explicit_hops              ? local_hops_
                                              : (sparse ? 32 : 0);
    batch_local_hops_ = explicit_hops ? config_.local_hops : 4;
    const double automatic_delta = near_far_auto_delta(graph);
    auto bucket_width = [&](double automatic_scale) {
      double width =
          config_.delta > 0
              ? config_.delta
              : automatic_delta * (config_.delta_scale > 0 ? config_.delta_scale : automatic_scale);
      return width > 0 && std::isfinite(width) ? width : 1.0;
    };
    delta_ = bucket_width(sparse ? 32.0 : 1.0);
    batch_delta_ = bucket_width(1.0);
    grid_shared_ = shared_bytes(grid_block_, std::max(local_hops_, deep_hops_));
    batch_shared_ = shared_bytes(batch_block_, batch_local_hops_);
    allow_shared(grid_kernel_, grid_shared_);
    allow_shared(reinterpret_cast<const void*>(nf::batch_search_kernel), batch_shared_);
    int per_sm = 0;
    GPU_ROUTING_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
        &per_sm, grid_kernel_, grid_block_, grid_shared_));
    if (config_.grid_blocks_per_sm > 0) per_sm = std::min(per_sm, config_.grid_blocks_per_sm);
    if (per_sm < 1)
      throw RoutingError(
          ErrorKind::kInvalidParameter,
          "near_far cannot run blocks of " + std::to_string(grid_block_) + " threads",
          "Set gpu_routing.block_size to 0 or a smaller value.");
    grid_blocks_ = per_sm * props_.multiProcessorCount;
    if (config_.grid_block_count > 0)
      grid_blocks_ = std::min(grid_blocks_, config_.grid_block_count);
    deep_frontier_ =
        config_.deep_frontier >= 0 ? config_.deep_frontier : grid_blocks_ * grid_block_ / 2;
    int batch_per_sm = 0;
    GPU_ROUTING_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
        &batch_per_sm, nf::batch_search_kernel, batch_block_, batch_shared_));
    max_slots_ = std::max(1, batch_per_sm) * props_.multiProcessorCount;

    const std::size_t n = static_cast<std::size_t>(std::max<VertexIndex>(graph.vertex_count(), 1));
    preferred_batch_ = static_cast<int>(std::max<std::size_t>(
        1, std::min<std::size_t>(static_cast<std::size_t>(max_slots_),
                                 kPreferredBatchRowBytes / (n * sizeof(double)))));

    small_frontier_ = config_.small_frontier < 0 ? grid_block_ : config_.small_frontier;
    small_far_pile_ = config_.small_far_pile < 0 ? 8 * small_frontier_ : config_.small_far_pile;
    stats_.delta = delta_;
    stats_.grid_blocks = grid_blocks_;
  }

  // Buffers and streams are freed with their own device current (a multi-GPU engine destroys
  // the engines of devices 1.. from whichever thread it is on).
  ~NearFarEngine() override { cudaSetDevice(device_); }

  const char* name() const override { return "near_far"; }
  Device device() const override { return Device::kGpu; }
  int preferred_batch_size() const override { return preferred_batch_; }
  bool supports_compact_targets() const override { return true; }
  const NearFarStats& stats() const { return stats_; }

  void solve(const SolveRequest& request) override {
    use_device(device_);  // the calling thread may have another device current
    const VertexIndex n = graph_.vertex_count();
    if (request.source_count < 0)
      throw RoutingError(ErrorKind::kInvalidParameter, "negative source count");
    for (int i = 0; i < request.source_count; ++i)
      if (request.sources[i] < 0 || request.sources[i] >= n)
        throw RoutingError(
            ErrorKind::kInvalidParameter,
            "source index " + std::to_string(request.sources[i]) + " is not a vertex");
    const bool with_targets = request.targets != nullptr && request.target_count > 0 &&
                              request.predecessor_arcs == nullptr;
    if (with_targets)
      for (int i = 0; i < request.target_count; ++i)
        if (request.targets[i] < 0 || request.targets[i] >= n)
          throw RoutingError(
              ErrorKind::kInvalidParameter,
              "target index " + std::to_string(request.targets[i]) + " is not a vertex");
    // Each source's own targets: only with whole rows (compact rows take one target list).
    const bool own_targets =
        with_targets && request.target_offsets != nullptr && !request.compact_targets;
    if (own_targets)
      for (int i = 0; i < request.source_count; ++i)
        if (request.target_offsets[i] < 0 ||
            request.target_offsets[i] > request.target_offsets[i + 1] ||
            request.target_offsets[i + 1] > request.target_count)
          throw RoutingError(ErrorKind::kInvalidParameter, "target offsets out of order");
    if (request.predecessor_arcs != nullptr && !has_reverse(graph_))
      throw RoutingError(ErrorKind::kInternal, "predecessors asked for without the reversed graph");
    options_.cancel.throw_if_requested();
    // Compact rows of no targets are empty: nothing to fill.
    if (request.compact_targets && (request.targets == nullptr || request.target_count <= 0))
      return;
    stats_.rounds = 0;
    stats_.frontier_items = 0;
    stats_.batch_slots = 0;
    stats_.block_per_source = false;
    stats_.kernel_ms = 0;
    if (request.source_count == 0 || n == 0) return;

    Stopwatch watch;
    const double transfer_before = report_.transfer_ms;
    prepare_graph();
    if (request.predecessor_arcs != nullptr) prepare_reverse();
    const VertexIndex* d_targets = nullptr;
    int target_count = 0;
    if (with_targets) {
      Stopwatch copy;
      targets_.reserve(static_cast<std::size_t>(request.target_count));
      targets_.upload(request.targets, static_cast<std::size_t>(request.target_count),
                      stream_->get());
      stream_->synchronize();
      report_.transfer_ms += copy.elapsed_ms();
      d_targets = targets_.data();
      target_count = request.target_count;
      if (own_targets) {
        target_offsets_.reserve(static_cast<std::size_t>(request.source_count) + 1);
        target_offsets_.upload(request.target_offsets,
                               static_cast<std::size_t>(request.source_count) + 1, stream_->get());
        stream_->synchronize();
        d_target_offsets_ = target_offsets_.data();
        host_target_offsets_ = request.target_offsets;
      }
    }
    // Cleared on every way out: the pointers belong to this request.
    struct ClearOffsets {
      NearFarEngine* engine;
      ~ClearOffsets() {
        engine->d_target_offsets_ = nullptr;
        engine->host_target_offsets_ = nullptr;
      }
    } clear_offsets{this};

    int done = 0;
    bool blocks = config_.batch == NearFarConfig::Batch::kBlockPerSource;
    if (request.source_count > 1 && config_.batch == NearFarConfig::Batch::kAuto) {
      // The first sources run on the whole grid until their rounds show how wide the
      // frontiers are (one isolated source says little).
      while (measured_rounds_ < kMeasuredRounds && done < request.source_count) {
        solve_on_grid(request, done, d_targets, target_count);
        ++done;
      }
      if (done < request.source_count)
        blocks = choose_block_per_source(request.source_count - done);
    }
    if (request.source_count > 1 && blocks) {
      solve_per_block(request, done, d_targets, target_count);
    } else {
      for (; done < request.source_count; ++done)
        solve_on_grid(request, done, d_targets, target_count);
    }
    report_.rounds += stats_.rounds;
    report_.compute_ms += watch.elapsed_ms() - (report_.transfer_ms - transfer_before);
    report_.notes = notes();
  }

 private:
  // Dynamic shared memory of a block of `threads`: the warps' local queues.
  static std::size_t shared_bytes(int threads, int local_hops) {
    return local_hops > 0 ? static_cast<std::size_t>(threads / 32) * nf::kLocalBytesPerWarp : 0;
  }

  // Opts in to the local queues of a 1024-thread block (96 kB): past 48 kB with the kernel's
  // static shared memory (the many-source kernel's 144 bytes) a launch fails without it. Always
  // the largest size, so engines with other block sizes in the same process never undo it.
  static void allow_shared(const void* kernel, std::size_t bytes) {
    if (bytes > 0)
      GPU_ROUTING_CUDA_CHECK(cudaFuncSetAttribute(kernel,
                                                  cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                  static_cast<int>(32 * nf::kLocalBytesPerWarp)));
  }

  // One block per source when a source's frontier fits a few blocks (road networks), or when the
  // sources' blocks together bring at least as many threads as one frontier has entries (then
  // running them side by side beats running them one after another on the whole grid).
  bool choose_block_per_source(int sources) {
    const double mean_frontier = static_cast<double>(measured_items_) /
                                 static_cast<double>(std::max<long long>(1, measured_rounds_));
    block_per_source_ = mean_frontier <= config_.block_per_source_frontier * batch_block_ ||
                        static_cast<double>(sources) * batch_block_ >= mean_frontier;
    return block_per_source_;
  }

  std::string notes() const {
    std::string many = "the whole GPU per source";
    if (config_.batch == NearFarConfig::Batch::kAuto && measured_rounds_ == 0)
      many = "chosen at the first many-source call";
    else if (config_.batch == NearFarConfig::Batch::kBlockPerSource ||
             (config_.batch == NearFarConfig::Batch::kAuto && block_per_source_))
      many = "one block of " + std::to_string(batch_block_) + " threads per source";
    char text[512];
    std::snprintf(text, sizeof text,
                  "one source: delta %.6g, %d local hops (%d while the frontier has at most %d "
                  "entries, %s), %d blocks x %d threads, one block alone up to %d frontier "
                  "entries; many sources: %s (delta %.6g, %d local hops)",
                  delta_, local_hops_, deep_hops_, deep_frontier_,
                  config_.block_local_hops ? "block-pooled" : "per warp", grid_blocks_, grid_block_,
                  small_frontier_, many.c_str(), batch_delta_, batch_local_hops_);
    return text;
  }

  nf::GraphView graph_view() const {
    nf::GraphView g;
    g.row_offsets = forward_.row_offsets.data();
    g.heads = forward_.heads.data();
    g.weights = forward_.weights.data();
    g.huge_bits = chunk_capacity_ > 0 ? huge_bits_.data() : nullptr;
    g.chunk_arcs = config_.chunk_arcs;
    g.vertex_count = graph_.vertex_count();
    return g;
  }

  std::size_t held_bytes() const {
    return (graph_ready_ ? graph_bytes(graph_) : 0) + single_bytes_ + batch_bytes_ + reverse_bytes_;
  }

  // Budget (everything this engine holds plus `more`) and free device memory (for `more`).
  void require(std::size_t more, const std::string& what) const {
    options_.budget.require(saturating_add(held_bytes(), more), what);
    require_device_memory(device_, more, what, MemoryBudget());
  }

  void prepare_graph() {
    if (graph_ready_) return;
    const CsrGraph& csr = graph_.forward;
    const std::size_t n = static_cast<std::size_t>(graph_.vertex_count());
    const int huge_degree = std::max(1, config_.huge_degree);
    config_.chunk_arcs = std::max(1, config_.chunk_arcs);
    chunk_capacity_ = count_chunks(csr, huge_degree, config_.chunk_arcs);
    require(graph_bytes(graph_), "the near_far copy of the graph");
    Stopwatch copy;
    forward_.upload(csr, false, stream_->get());
    if (chunk_capacity_ > 0) {
      std::vector<unsigned> bits((n + 31) / 32, 0u);
      for (VertexIndex v = 0; v < csr.vertex_count; ++v)
        if (csr.end(v) - csr.begin(v) > huge_degree)
          bits[static_cast<std::size_t>(v) / 32] |= 1u << (v % 32);
      huge_bits_.allocate(bits.size());
      huge_bits_.upload(bits.data(), bits.size(), stream_->get());
    }
    control_.allocate(1);
    control_host_.allocate(1);
    counters_.allocate(4);
    counters_host_.allocate(4);
    rounds_counter_.allocate(1);
    stream_->synchronize();
    report_.transfer_ms += copy.elapsed_ms();
    graph_ready_ = true;
  }

  void prepare_reverse() {
    if (reverse_ready_) return;
    const std::size_t bytes =
        DeviceCsr::bytes(graph_.reverse, true) + predecessor_pass_bytes(graph_.vertex_count());
    require(bytes, "the near_far predecessor pass");
    Stopwatch copy;
    reverse_.upload(graph_.reverse, true, stream_->get());
    predecessor_pass_.reserve(graph_.vertex_count());
    report_.transfer_ms += copy.elapsed_ms();
    reverse_bytes_ = bytes;
    reverse_ready_ = true;
  }

  void prepare_single() {
    if (single_bytes_ > 0) return;
    const std::size_t n = static_cast<std::size_t>(graph_.vertex_count());
    const std::size_t bytes = n * sizeof(double) + search_arrays_bytes(n, chunk_capacity_);
    require(bytes, "the near_far single-source search");
    single_dist_.allocate(n);
    single_near_.allocate(2 * n);
    single_far_.allocate(2 * n);
    single_marks_.allocate(2 * n);
    if (chunk_capacity_ > 0) single_chunks_.allocate(2 * chunk_capacity_);
    clear_single_marks();
    single_bytes_ = bytes;
  }

  void clear_single_marks() {
    GPU_ROUTING_CUDA_CHECK(cudaMemsetAsync(single_marks_.data(), 0xff,
                                           single_marks_.size() * sizeof(int), stream_->get()));
    near_base_ = 0;
    far_base_ = 0;
  }

  // Waits for the stream, polling options.cancel; true when cancelled (the kernel has stopped).
  bool wait_or_cancel() {
    Stopwatch waited;
    for (;;) {
      const cudaError_t status = cudaStreamQuery(stream_->get());
      if (status == cudaSuccess) return false;
      if (status != cudaErrorNotReady) GPU_ROUTING_CUDA_CHECK(status);
      if (options_.cancel.requested()) {
        cancel_flag_->set(1);
        GPU_ROUTING_CUDA_CHECK(cudaStreamSynchronize(stream_->get()));
        cancel_flag_->set(0);
        return true;
      }
      // Spin through short searches (a sleep would add its granularity to them); past 50 ms,
      // leave the core to others.
      if (waited.elapsed_ms() > 50.0)
        std::this_thread::sleep_for(std::chrono::microseconds(100));
      else
        std::this_thread::yield();
    }
  }

  // Runs the grid kernel for one source; the row stays in single_dist_.
  void run_grid_search(VertexIndex source, const VertexIndex* d_targets, int target_count) {
    prepare_single();
    const std::size_t n = static_cast<std::size_t>(graph_.vertex_count());
    nf::GraphView g = graph_view();
    nf::Workspace w{};
    w.dist = single_dist_.data();
    w.near = single_near_.data();
    w.chunks = chunk_capacity_ > 0 ? single_chunks_.data() : nullptr;
    w.far = single_far_.data();
    w.near_mark = single_marks_.data();
    w.far_mark = single_marks_.data() + n;
    w.near_capacity = static_cast<unsigned>(n);
    w.chunk_capacity = static_cast<unsigned>(chunk_capacity_);
    w.far_capacity = static_cast<unsigned>(n);
    w.near_base = near_base_;
    w.far_base = far_base_;
    nf::Control* control = control_.data();
    nf::SearchParams p;
    p.delta = delta_;
    p.targets = d_targets;
    p.target_count = target_count;
    p.precheck = config_.precheck;
    p.local_hops = local_hops_;
    p.deep_hops = deep_hops_;
    p.deep_frontier = static_cast<unsigned>(std::max(0, deep_frontier_));
    p.block_local = config_.block_local_hops;
    p.cancel_flag = cancel_flag_->device();
    nf::GridLimits limits;
    limits.small_frontier = static_cast<unsigned>(std::max(0, small_frontier_));
    limits.small_far_pile = static_cast<unsigned>(std::max(0, small_far_pile_));
    limits.stretch_rounds = std::max(1, config_.block_stretch_rounds);

    Stopwatch kernel;
    nf::init_search_kernel<<<blocks_for(static_cast<std::int64_t>(n), kInitBlockSize),
                             kInitBlockSize, 0, stream_->get()>>>(g, w, control, source);
    GPU_ROUTING_CUDA_CHECK_LAUNCH();
    void* args[] = {&g, &w, &control, &p, &limits};
    GPU_ROUTING_CUDA_CHECK(cudaLaunchCooperativeKernel(
        grid_kernel_, dim3(static_cast<unsigned>(grid_blocks_)),
        dim3(static_cast<unsigned>(grid_block_)), args, grid_shared_, stream_->get()));
    const bool cancelled = wait_or_cancel();
    control_.download(control_host_.data(), 1, stream_->get());
    stream_->synchronize();
    stats_.kernel_ms += kernel.elapsed_ms();
    const nf::Control& result = *control_host_.data();
    if (cancelled || result.cancelled != 0) {
      clear_single_marks();
      stream_->synchronize();
      throw Cancelled();
    }
    if (result.error != 0) {
      clear_single_marks();
      throw RoutingError(ErrorKind::kInternal, "near_far: a work queue overflowed");
    }
    near_base_ += result.final_round + 2;
    far_base_ += result.final_epoch + 2;
    if (near_base_ > nf::kStampLimit || far_base_ > nf::kStampLimit) clear_single_marks();
    measured_rounds_ += result.final_round;
    measured_items_ += static_cast<long long>(result.items);
    stats_.rounds += result.final_round;
    stats_.frontier_items += static_cast<long long>(result.items);
  }

  // Source i of the request on the whole grid, its row (and predecessors) delivered.
  void solve_on_grid(const SolveRequest& request, int i, const VertexIndex* d_targets,
                     int target_count) {
    if (host_target_offsets_ != nullptr && d_targets != nullptr) {
      // This source's own targets: it stops as soon as they are final.
      const int first = host_target_offsets_[i];
      run_grid_search(request.sources[i], d_targets + first, host_target_offsets_[i + 1] - first);
    } else {
      run_grid_search(request.sources[i], d_targets, target_count);
    }
    deliver_rows(request, i, 1, single_dist_.data(), d_targets, target_count);
  }

  // Copies rows [first, first + count) of the request from device rows `d_rows` to the host,
  // then their predecessors.
  void deliver_rows(const SolveRequest& request, int first, int count, const double* d_rows,
                    const VertexIndex* d_targets, int target_count) {
    const std::size_t n = static_cast<std::size_t>(graph_.vertex_count());
    double* rows = request.distances + static_cast<std::size_t>(first) * n;
    Stopwatch copy;
    if (d_targets == nullptr || !request.compact_targets) {
      // Whole rows: path tracing reads every vertex up to the farthest target, not only targets.
      GPU_ROUTING_CUDA_CHECK(cudaMemcpyAsync(rows, d_rows,
                                             static_cast<std::size_t>(count) * n * sizeof(double),
                                             cudaMemcpyDeviceToHost, stream_->get()));
      stream_->synchronize();
    } else {
      // Compact rows (cost matrices): gather the targets' columns on the device and copy only
      // those.
      const std::size_t cells =
          static_cast<std::size_t>(count) * static_cast<std::size_t>(target_count);
      gathered_.reserve(cells);
      gathered_host_.reserve(cells);
      nf::gather_targets_kernel<<<blocks_for(static_cast<std::int64_t>(cells), kInitBlockSize),
                                  kInitBlockSize, 0, stream_->get()>>>(
          d_rows, n, d_targets, target_count, count, gathered_.data());
      GPU_ROUTING_CUDA_CHECK_LAUNCH();
      gathered_.download(gathered_host_.data(), cells, stream_->get());
      stream_->synchronize();
      std::memcpy(request.distances +
                      static_cast<std::size_t>(first) * static_cast<std::size_t>(target_count),
                  gathered_host_.data(), cells * sizeof(double));
    }
    report_.transfer_ms += copy.elapsed_ms();
    if (request.predecessor_arcs == nullptr) return;
    for (int r = 0; r < count; ++r) {
      options_.cancel.throw_if_requested();
      const std::size_t offset = static_cast<std::size_t>(first + r) * n;
      const VertexIndex source = request.sources[first + r];
      predecessor_pass_.enqueue(reverse_, d_rows + static_cast<std::size_t>(r) * n, source,
                                request.predecessor_arcs + offset, stream_->get());
      stream_->synchronize();
      predecessor_pass_.finish(graph_.reverse, request.distances + offset, source,
                               request.predecessor_arcs + offset);
    }
  }

  // Bytes of one block-per-source slot (queues, piles, marks, stamp bases).
  std::size_t slot_bytes() const {
    return search_arrays_bytes(static_cast<std::size_t>(graph_.vertex_count()), chunk_capacity_) +
           2 * sizeof(int);
  }

  // Grows the block-per-source buffers to `slots` slots and `rows` distance rows.
  void prepare_batch(int slots, int rows) {
    if (slots <= batch_slots_ && rows <= batch_rows_) return;
    const std::size_t n = static_cast<std::size_t>(graph_.vertex_count());
    release_batch();
    const std::size_t bytes = static_cast<std::size_t>(slots) * slot_bytes() +
                              static_cast<std::size_t>(rows) * n * sizeof(double);
    require(bytes, "near_far with " + std::to_string(rows) + " sources at once");
    const std::size_t s = static_cast<std::size_t>(slots);
    batch_near_.allocate(s * 2 * n);
    batch_far_.allocate(s * 2 * n);
    batch_near_marks_.allocate(s * n);
    batch_far_marks_.allocate(s * n);
    if (chunk_capacity_ > 0) batch_chunks_.allocate(s * 2 * chunk_capacity_);
    batch_bases_.allocate(s * 2);
    batch_rows_buffer_.allocate(static_cast<std::size_t>(rows) * n);
    batch_sources_.allocate(static_cast<std::size_t>(rows));
    GPU_ROUTING_CUDA_CHECK(
        cudaMemsetAsync(batch_near_marks_.data(), 0xff, s * n * sizeof(int), stream_->get()));
    GPU_ROUTING_CUDA_CHECK(
        cudaMemsetAsync(batch_far_marks_.data(), 0xff, s * n * sizeof(int), stream_->get()));
    GPU_ROUTING_CUDA_CHECK(
        cudaMemsetAsync(batch_bases_.data(), 0, s * 2 * sizeof(int), stream_->get()));
    batch_slots_ = slots;
    batch_rows_ = rows;
    batch_bytes_ = bytes;
  }

  void release_batch() {
    batch_near_.release();
    batch_far_.release();
    batch_near_marks_.release();
    batch_far_marks_.release();
    batch_chunks_.release();
    batch_bases_.release();
    batch_rows_buffer_.release();
    batch_sources_.release();
    batch_slots_ = 0;
    batch_rows_ = 0;
    batch_bytes_ = 0;
  }

  // How many rows and slots fit in the budget and the free device memory.
  void plan_batch(int remaining, int* rows, int* slots) const {
    const std::size_t n = static_cast<std::size_t>(graph_.vertex_count());
    const std::size_t row = n * sizeof(double);
    const std::size_t slot = slot_bytes();
    std::size_t free_bytes = 0, total_bytes = 0;
    GPU_ROUTING_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    const std::size_t reserve = std::max<std::size_t>(std::size_t{256} << 20, total_bytes / 20);
    std::size_t room = (free_bytes > reserve ? free_bytes - reserve : 0) + batch_bytes_;
    const std::size_t others = held_bytes() - batch_bytes_;
    const std::size_t limit = options_.budget.limit_bytes();
    room = std::min(room, limit > others ? limit - others : 0);
    int r = remaining;
    int s = std::min(max_slots_, r);
    auto bytes = [&](int rr, int ss) {
      return static_cast<std::size_t>(ss) * slot + static_cast<std::size_t>(rr) * row;
    };
    while (r > 1 && bytes(r, s) > room) {
      if (r > s)
        r = std::max(s, r / 2);
      else {
        r = std::max(1, r / 2);
        s = std::min(s, r);
      }
    }
    *rows = r;
    *slots = std::max(1, s);
  }

  // Sources [first, count) of the request, one block per source.
  void solve_per_block(const SolveRequest& request, int first, const VertexIndex* d_targets,
                       int target_count) {
    stats_.block_per_source = true;
    const std::size_t n = static_cast<std::size_t>(graph_.vertex_count());
    int next = first;
    while (next < request.source_count) {
      int rows = 0, slots = 0;
      plan_batch(request.source_count - next, &rows, &slots);
      prepare_batch(slots, rows);
      slots = std::min(slots, rows);
      stats_.batch_slots = std::max(stats_.batch_slots, slots);
      Stopwatch copy;
      batch_sources_.upload(request.sources + next, static_cast<std::size_t>(rows), stream_->get());
      GPU_ROUTING_CUDA_CHECK(cudaMemsetAsync(counters_.data(), 0, 4 * sizeof(int), stream_->get()));
      GPU_ROUTING_CUDA_CHECK(
          cudaMemsetAsync(rounds_counter_.data(), 0, sizeof(unsigned long long), stream_->get()));
      report_.transfer_ms += copy.elapsed_ms();

      nf::BatchParams b;
      b.search.delta = batch_delta_;
      b.search.targets = d_targets;
      b.search.target_count = target_count;
      b.search.precheck = config_.precheck;
      b.search.local_hops = batch_local_hops_;
      b.search.deep_hops = batch_local_hops_;
      b.search.deep_frontier = 0;
      b.search.block_local = config_.batch_block_local_hops;
      b.search.cancel_flag = cancel_flag_->device();
      b.sources = batch_sources_.data();
      b.source_count = rows;
      b.target_offsets = d_target_offsets_ != nullptr ? d_target_offsets_ + next : nullptr;
      b.next_source = counters_.data();
      b.cancelled = counters_.data() + 1;
      b.error = counters_.data() + 2;
      b.distances = batch_rows_buffer_.data();
      b.near = batch_near_.data();
      b.chunks = chunk_capacity_ > 0 ? batch_chunks_.data() : nullptr;
      b.far = batch_far_.data();
      b.near_mark = batch_near_marks_.data();
      b.far_mark = batch_far_marks_.data();
      b.stamp_bases = batch_bases_.data();
      b.near_capacity = static_cast<unsigned>(n);
      b.chunk_capacity = static_cast<unsigned>(chunk_capacity_);
      b.far_capacity = static_cast<unsigned>(n);
      b.rounds = rounds_counter_.data();

      Stopwatch kernel;
      nf::batch_search_kernel<<<static_cast<unsigned>(slots), static_cast<unsigned>(batch_block_),
                                batch_shared_, stream_->get()>>>(graph_view(), b);
      GPU_ROUTING_CUDA_CHECK_LAUNCH();
      const bool cancelled = wait_or_cancel();
      counters_.download(counters_host_.data(), 4, stream_->get());
      unsigned long long rounds = 0;
      GPU_ROUTING_CUDA_CHECK(cudaMemcpyAsync(&rounds, rounds_counter_.data(), sizeof rounds,
                                             cudaMemcpyDeviceToHost, stream_->get()));
      stream_->synchronize();
      stats_.kernel_ms += kernel.elapsed_ms();
      if (cancelled || counters_host_.data()[1] != 0) throw Cancelled();
      if (counters_host_.data()[2] != 0)
        throw RoutingError(ErrorKind::kInternal, "near_far: a work queue overflowed");
      stats_.rounds += static_cast<long long>(rounds);
      deliver_rows(request, next, rows, batch_rows_buffer_.data(), d_targets, target_count);
      next += rows;
    }
  }

  NearFarConfig config_;
  int device_ = 0;
  cudaDeviceProp props_{};
  std::unique_ptr<Stream> stream_;
  std::unique_ptr<MappedFlag> cancel_flag_;
  int grid_block_ = kDefaultGridBlockSize;
  const void* grid_kernel_ = nullptr;
  int batch_block_ = kDefaultBatchBlockSize;
  int grid_blocks_ = 0;
  int max_slots_ = 1;
  int preferred_batch_ = 1;
  double delta_ = 1.0;        // one source (grid kernel)
  double batch_delta_ = 1.0;  // one block per source
  int local_hops_ = 0;
  int deep_hops_ = 0;
  int deep_frontier_ = 0;
  int batch_local_hops_ = 0;
  std::size_t grid_shared_ = 0;
  std::size_t batch_shared_ = 0;
  int small_frontier_ = 0;
  int small_far_pile_ = 0;

  bool graph_ready_ = false;
  DeviceCsr forward_;
  DeviceBuffer<unsigned> huge_bits_;
  std::size_t chunk_capacity_ = 0;
  DeviceBuffer<nf::Control> control_;
  PinnedBuffer<nf::Control> control_host_;
  DeviceBuffer<int> counters_;  // next source, cancelled, error
  PinnedBuffer<int> counters_host_;
  DeviceBuffer<unsigned long long> rounds_counter_;
  DeviceBuffer<VertexIndex> targets_;
  DeviceBuffer<int> target_offsets_;
  const int* d_target_offsets_ = nullptr;     // the request's per-source offsets, on the device
  const int* host_target_offsets_ = nullptr;  // and on the host (while a solve runs)
  DeviceBuffer<double> gathered_;
  PinnedBuffer<double> gathered_host_;

  bool reverse_ready_ = false;
  std::size_t reverse_bytes_ = 0;
  DeviceCsr reverse_;
  DevicePredecessorPass predecessor_pass_;

  std::size_t single_bytes_ = 0;
  DeviceBuffer<double> single_dist_;
  DeviceBuffer<VertexIndex> single_near_;
  DeviceBuffer<VertexIndex> single_far_;
  DeviceBuffer<int> single_marks_;  // near marks, then far marks
  DeviceBuffer<int2> single_chunks_;
  int near_base_ = 0;
  int far_base_ = 0;

  // Frontier entries and rounds of every grid search so far: how wide this graph's frontiers are.
  long long measured_items_ = 0;
  long long measured_rounds_ = 0;
  bool block_per_source_ = false;  // the last many-source call's choice
  int batch_slots_ = 0;
  int batch_rows_ = 0;
  std::size_t batch_bytes_ = 0;
  DeviceBuffer<VertexIndex> batch_near_;
  DeviceBuffer<VertexIndex> batch_far_;
  DeviceBuffer<int> batch_near_marks_;
  DeviceBuffer<int> batch_far_marks_;
  DeviceBuffer<int2> batch_chunks_;
  DeviceBuffer<int> batch_bases_;
  DeviceBuffer<double> batch_rows_buffer_;
  DeviceBuffer<VertexIndex> batch_sources_;

  NearFarStats stats_;
};

std::size_t near_far_bytes(const Graph& graph, int batch) {
  const std::size_t n = static_cast<std::size_t>(graph.vertex_count());
  const std::size_t chunks = count_chunks(graph.forward, 1024, 1024);
  std::size_t bytes =
      saturating_add(graph_bytes(graph), n * sizeof(double) + search_arrays_bytes(n, chunks));
  if (batch > 1) {
    const std::size_t slots = static_cast<std::size_t>(std::min(batch, 1024));
    bytes = saturating_add(bytes, saturating_multiply(slots, search_arrays_bytes(n, chunks)));
    bytes = saturating_add(
        bytes, saturating_multiply(static_cast<std::size_t>(batch), n * sizeof(double)));
  }
  return bytes;
}

}  // namespace

double near_far_auto_delta(const Graph& graph) {
  const CsrGraph& csr = graph.forward;
  const ArcIndex arcs = csr.arc_count();
  if (arcs == 0 || csr.vertex_count == 0) return 1.0;
  double sum = 0;
  for (double w : csr.weights) sum += w;
  const double mean_weight = sum / arcs;
  const double mean_degree = static_cast<double>(arcs) / csr.vertex_count;
  const double delta = 32.0 * mean_weight / mean_degree;
  return delta > 0 && std::isfinite(delta) ? delta : 1.0;
}

std::unique_ptr<ShortestPathEngine> make_near_far_engine(const Graph& graph,
                                                         const EngineOptions& options,
                                                         const NearFarConfig& config) {
  const int engines = config.devices > 0 ? config.devices : std::max(1, device_count());
  return make_multi_device_engine(
      graph, options, engines, [&graph, config](int device, const EngineOptions& share) {
        return std::make_unique<NearFarEngine>(graph, share, config, device);
      });
}

NearFarStats near_far_stats(const ShortestPathEngine& engine) {
  const auto* near_far = dynamic_cast<const NearFarEngine*>(&first_device_engine(engine));
  return near_far != nullptr ? near_far->stats() : NearFarStats{};
}

const std::vector<EngineInfo>& near_far_engines() {
  static const std::vector<EngineInfo> table = {
      {"near_far", Device::kGpu, true, true, false,
       "delta-stepping with a near queue and a far pile: one source on the whole GPU in a "
       "persistent kernel; many sources one thread block each",
       [](const Graph& g, const EngineOptions& o) -> std::unique_ptr<ShortestPathEngine> {
         return make_near_far_engine(g, o, NearFarConfig{});
       },
       near_far_bytes},
  };
  return table;
}

}  // namespace gpu_routing::gpu
