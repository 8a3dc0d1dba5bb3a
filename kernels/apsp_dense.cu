// Dense all-pairs engines on the V x V matrix: blocked Floyd-Warshall (seed 002), the naive
// one-kernel-per-k Floyd-Warshall (seed 002's baseline) and recursive Kleene (seed 004).
//
// Everything heavy is one register-tiled min-plus product kernel, C = min(C, A (x) B), in the
// shape of a classic SGEMM: a CTA computes a 128-row tile, each thread an TM x TN block of words
// in registers, A and B staged through double-buffered shared memory one BK-deep slice at a time.
// Blocked Floyd-Warshall's phase 2 (with the closed diagonal tile as one factor) and phase 3 are
// such products; so are all six products of R-Kleene. The diagonal closure (phase 1, and
// R-Kleene's base case) is one CTA running Floyd-Warshall on a 128 x 128 tile held in registers,
// with row k and column k published through shared memory.
//
// Number modes: int32 (one VIADDMNMX per update on sm_90), int16x2 (two 16-bit lanes per word,
// twice the updates per instruction) and float64. The integer modes are exact whenever every
// distance stays below the sentinel, which resolve_dense_mode() checks from (V-1) * max_weight:
// every value the algorithms hold is the length of a simple path or the sentinel.
//
// In-place products. Several products read the tile they update (B = A*B in R-Kleene, the
// phase-2 panels), and in R-Kleene other CTAs of the same launch may read a tile while its owner
// rewrites it. That is safe because the other factor is closed (zero diagonal, triangle
// inequality): a candidate built from an already-updated value is still the length of a path of
// the allowed kind, never below the final value, and the candidate the final value comes from is
// still present. So any mix of old and new values gives the same integer result (float64: the
// same up to rounding, which the float64 mode does not promise to match anyway).
//
// Several GPUs (blocked_fw only; floyd_warshall and rkleene keep the whole matrix on device 0):
// the padded matrix's tile rows are split into contiguous row bands, one per device, each with a
// pivot buffer of one tile row. Step k needs from outside a band only tile row k after phase 1 and
// the row half of phase 2, which no later work of step k changes: its owner computes it, every
// other band pulls a copy, then each band runs the column half of phase 2 and phase 3 on its own
// rows. One host thread enqueues it all; events order the streams (see
// blocked_floyd_warshall_in_bands), and nothing waits on the host but the cancel poll.
//
// The device side (number modes, kernels, product shapes) is in apsp_dense_kernels.cuh; this file
// holds the engine: row bands over several GPUs, the algorithms' launch sequences, rows out.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>
#include <vector>

#include "engine/gpu.hpp"
#include "apsp_dense_kernels.cuh"
#include "apsp_engines.cuh"
#include "cuda_common.cuh"

namespace gpu_routing::gpu::apsp {

namespace {

std::int64_t padded_size(VertexIndex n) {
  return (static_cast<std::int64_t>(std::max<VertexIndex>(n, 1)) + kTile - 1) / kTile * kTile;
}

constexpr std::size_t kRowStagingBytes = std::size_t{64} << 20;

std::size_t staging_rows(VertexIndex n, int batch) {
  std::size_t per_row = sizeof(double) * static_cast<std::size_t>(std::max<VertexIndex>(n, 1));
  std::size_t rows = std::max<std::size_t>(1, kRowStagingBytes / per_row);
  rows = std::min<std::size_t>(rows, 65535);  // one grid row per source row
  return std::min<std::size_t>(rows, static_cast<std::size_t>(std::max(batch, 1)));
}

std::size_t staging_bytes(std::size_t rows, VertexIndex n) {
  return saturating_multiply(rows, sizeof(double) * std::size_t(n) + sizeof(VertexIndex));
}

// Syncs the streams and polls cancel once roughly every 20 ms of queued GPU work, estimated from
// the work each launch carries (the host enqueues far ahead of the GPU, so host time alone says
// nothing about progress). With row bands on several devices, `estimated_ms` is the busiest
// device's share.
class CancelPacer {
 public:
  CancelPacer(const CancelToken& cancel, cudaStream_t stream) : cancel_(cancel), streams_{stream} {}
  CancelPacer(const CancelToken& cancel, std::vector<cudaStream_t> streams)
      : cancel_(cancel), streams_(std::move(streams)) {}
  void add(double estimated_ms) {
    queued_ms_ += estimated_ms;
    if (queued_ms_ >= kSliceMs) poll();
  }
  void poll() {
    for (cudaStream_t stream : streams_) GPU_ROUTING_CUDA_CHECK(cudaStreamSynchronize(stream));
    queued_ms_ = 0;
    cancel_.throw_if_requested();
  }

 private:
  static constexpr double kSliceMs = 20.0;
  const CancelToken& cancel_;
  std::vector<cudaStream_t> streams_;
  double queued_ms_ = 0;
};

// ---------------------------------------------------------------------------------------------
// Row bands: where blocked_fw's matrix lives when it spreads over several GPUs.

// Below this many vertices the automatic choice keeps blocked_fw on one GPU: a step's phase 3 on
// a band must outweigh the serial phase 1 and row panel plus the pivot copy. A first guess, to be
// measured (apsp_bench --sections scaling).
constexpr VertexIndex kMultiGpuMinVertices = 4096;

// Devices that can run our kernels, by CUDA index (the probe's rule for `usable`).
std::vector<int> usable_devices() {
  std::vector<int> devices;
  for (const auto& info : availability().devices)
    if (info.compute_major >= 7) devices.push_back(info.index);
  if (devices.empty()) devices.push_back(0);
  return devices;
}

int automatic_band_count(VertexIndex n) {
  const int devices = int(usable_devices().size());
  return devices >= 2 && n >= kMultiGpuMinVertices ? devices : 1;
}

struct BandLayout {
  int device = 0;
  int first_row = 0;  // padded-matrix row of the band's row 0; a multiple of kTile
  int rows = 0;       // a multiple of kTile
};

// Contiguous bands of whole tile rows, sizes within one tile row of each other (at most one band
// per tile row); band b on devices[b % devices.size()].
std::vector<BandLayout> plan_row_bands(std::int64_t padded, int band_count,
                                       const std::vector<int>& devices) {
  const int tile_rows = int(padded / kTile);
  const int bands = std::clamp(band_count, 1, tile_rows);
  std::vector<BandLayout> layout(static_cast<std::size_t>(bands));
  for (int b = 0; b < bands; ++b) {
    const int first_tile = int(std::int64_t(tile_rows) * b / bands);
    const int end_tile = int(std::int64_t(tile_rows) * (b + 1) / bands);
    auto& band = layout[std::size_t(b)];
    band.device = devices[std::size_t(b) % devices.size()];
    band.first_row = first_tile * kTile;
    band.rows = (end_tile - first_tile) * kTile;
  }
  return layout;
}

std::vector<int> devices_of(const std::vector<BandLayout>& layout) {
  std::vector<int> devices;
  for (const auto& band : layout)
    if (std::find(devices.begin(), devices.end(), band.device) == devices.end())
      devices.push_back(band.device);
  return devices;
}

// A band's staging rows: never more than its own rows in one chunk of the row copy.
std::size_t band_staging_rows(VertexIndex n, int batch, const BandLayout& band) {
  return std::min(staging_rows(n, batch), std::size_t(band.rows));
}

// Device bytes of the dense engines on `device` (rows of the matrix it holds, pivot row, row
// staging, the graph while the matrix is built); device < 0: all devices together, the matrix
// counted once, which is what gpu_routing.max_memory limits.
std::size_t dense_footprint_bytes(VertexIndex n, DenseMode mode, int batch, std::size_t graph_bytes,
                                  const std::vector<BandLayout>& layout, int device) {
  const std::size_t padded = std::size_t(padded_size(n));
  const std::size_t row_bytes = saturating_multiply(padded, element_bytes(mode));
  if (layout.size() <= 1)
    return saturating_add(saturating_add(saturating_multiply(padded, row_bytes), graph_bytes),
                          staging_bytes(staging_rows(n, batch), n));
  std::size_t total = 0;
  for (const auto& band : layout) {
    if (device >= 0 && band.device != device) continue;
    total = saturating_add(total, saturating_multiply(std::size_t(band.rows) + kTile, row_bytes));
    total = saturating_add(total, staging_bytes(band_staging_rows(n, batch, band), n));
  }
  const std::size_t graph_copies = device >= 0 ? 1 : devices_of(layout).size();
  return saturating_add(total, saturating_multiply(graph_bytes, graph_copies));
}

// An event that only orders streams, possibly of different devices (no timing: cheaper).
class OrderingEvent {
 public:
  OrderingEvent() {
    GPU_ROUTING_CUDA_CHECK(cudaEventCreateWithFlags(&event_, cudaEventDisableTiming));
  }
  ~OrderingEvent() {
    if (event_ != nullptr) cudaEventDestroy(event_);
  }
  OrderingEvent(const OrderingEvent&) = delete;
  OrderingEvent& operator=(const OrderingEvent&) = delete;
  void record(cudaStream_t stream) { GPU_ROUTING_CUDA_CHECK(cudaEventRecord(event_, stream)); }
  // Work enqueued on `stream` after this waits for what the latest record() covered.
  void make_wait(cudaStream_t stream) const {
    GPU_ROUTING_CUDA_CHECK(cudaStreamWaitEvent(stream, event_, 0));
  }

 private:
  cudaEvent_t event_ = nullptr;
};

// One row band and what lives with it on its device. Construct with the band's device current.
struct RowBand {
  explicit RowBand(const BandLayout& band_layout) : layout(band_layout) {}
  ~RowBand() { cudaSetDevice(layout.device); }  // the members below are freed on their device
  RowBand(const RowBand&) = delete;
  RowBand& operator=(const RowBand&) = delete;

  BandLayout layout;
  Stream stream;
  OrderingEvent pivot_ready;      // recorded by the step's owner once its pivot tile row is final
  OrderingEvent pivot_copied[2];  // this band's copy of step k's pivot row is done (slot k & 1)
  DeviceBuffer<unsigned char> rows;   // layout.rows x padded elements
  DeviceBuffer<unsigned char> pivot;  // kTile x padded: a step's pivot row, owned by another band
  DeviceBuffer<double> staging;
  DeviceBuffer<VertexIndex> staging_sources;
};

std::string gpu_count_text(std::size_t count) {
  return std::to_string(count) + (count == 1 ? " GPU" : " GPUs");
}

void select_device(int device) {
  GPU_ROUTING_CUDA_CHECK(cudaSetDevice(device));  // the context exists: use_device() made it
}

// ---------------------------------------------------------------------------------------------
// The engine.

class DenseApspEngine final : public ShortestPathEngine {
 public:
  DenseApspEngine(const Graph& graph, const EngineOptions& options, DenseAlgorithm algorithm,
                  const DenseTuning& tuning)
      : ShortestPathEngine(graph, options), algorithm_(algorithm), tuning_(tuning) {
    const auto& gpus = availability();
    if (!gpus.usable) throw RoutingError(ErrorKind::kNoDevice, "no usable GPU: " + gpus.reason);
    if (tuning.devices < 0)
      throw RoutingError(ErrorKind::kInvalidParameter,
                         "dense engine devices must be 0 (automatic), 1 or a row band count");
    // A device named (options.device, the GPU service's workers): the whole matrix on it.
    home_device_ = std::max(0, options.device);
    report_.device_name = gpus.devices[std::size_t(home_device_) % gpus.devices.size()].name +
                          " (device " + std::to_string(home_device_) + ")";
    mode_ = resolve_dense_mode(graph, tuning.mode);
    const auto& variants = product_variants(mode_);
    if (tuning.product_variant < 0 || tuning.product_variant >= int(variants.size()))
      throw RoutingError(ErrorKind::kInvalidParameter, "no such min-plus kernel variant");
    product_ = variants[static_cast<std::size_t>(tuning.product_variant)].launch;
    small_product_ = small_tile_product(mode_);
    small_grid_limit_ = 2 * std::max(1, gpus.devices.front().multiprocessors);
    report_.notes = std::string("dense ") + dense_mode_name(mode_) + " matrix";
    // floyd_warshall and rkleene stay on one GPU: a naive step or a recursive product touches the
    // whole matrix, so neither splits into bands that exchange one tile row per step.
    padded_ = padded_size(graph.vertex_count());
    const int band_count = algorithm != DenseAlgorithm::kBlocked || options.device >= 0 ? 1
                           : tuning.devices == 0 ? automatic_band_count(graph.vertex_count())
                                                 : tuning.devices;
    band_layout_ =
        plan_row_bands(padded_, band_count,
                       options.device >= 0 ? std::vector<int>{home_device_} : usable_devices());
    if (in_bands()) {
      const auto devices = devices_of(band_layout_);
      std::string list;
      for (int device : devices) list += (list.empty() ? "" : ", ") + std::to_string(device);
      std::string first_name = gpus.devices.front().name;
      for (const auto& info : gpus.devices)
        if (info.index == devices.front()) first_name = info.name;
      report_.device_name = first_name + (devices.size() > 1 ? " (devices " : " (device ") + list +
                            "; " + std::to_string(band_layout_.size()) + " row bands)";
      report_.notes += ", " + std::to_string(band_layout_.size()) + " row bands on " +
                       gpu_count_text(devices.size());
    }
  }

  const char* name() const override {
    switch (algorithm_) {
      case DenseAlgorithm::kBlocked:
        return "blocked_fw";
      case DenseAlgorithm::kNaive:
        return "floyd_warshall";
      default:
        return "rkleene";
    }
  }
  Device device() const override { return Device::kGpu; }
  int preferred_batch_size() const override {
    return std::max<VertexIndex>(1, graph_.vertex_count());
  }

  void solve(const SolveRequest& request) override {
    const VertexIndex n = graph_.vertex_count();
    if (request.source_count <= 0) return;
    for (int i = 0; i < request.source_count; ++i)
      if (request.sources[i] < 0 || request.sources[i] >= n)
        throw RoutingError(ErrorKind::kInvalidParameter, "source index out of range");
    use_device(home_device_);
    if (!closed_) close_matrix(request.source_count);
    if (in_bands()) {
      copy_rows_out_of_bands(request);
      use_device(home_device_);
    } else {
      copy_rows_out(request);
    }
    if (request.predecessor_arcs != nullptr) {
      Stopwatch watch;
      fill_predecessors_on_host(request);
      report_.compute_ms += watch.elapsed_ms();
    }
  }

 private:
  bool in_bands() const { return band_layout_.size() > 1; }

  std::string matrix_description() const {
    const std::string n = std::to_string(graph_.vertex_count());
    return std::string(dense_mode_name(mode_)) + " " + n + " x " + n + " distance matrix";
  }

  void close_matrix(int batch) {
    options_.cancel.throw_if_requested();
    const std::size_t graph_bytes = DeviceCsr::bytes(graph_.forward, false);
    if (in_bands()) {
      allocate_bands(batch, graph_bytes);
    } else {
      const std::size_t needed =
          dense_footprint_bytes(graph_.vertex_count(), mode_, batch, graph_bytes, band_layout_, -1);
      require_device_memory(home_device_, needed,
                            std::string(name()) + " (" + matrix_description() + ")",
                            options_.budget);
      if (!stream_) stream_ = std::make_unique<Stream>();
    }
    Stopwatch build_watch;
    if (!in_bands())
      matrix_.allocate(saturating_multiply(
          saturating_multiply(std::size_t(padded_), std::size_t(padded_)), element_bytes(mode_)));
    switch (mode_) {
      case DenseMode::kInt16x2:
        build_and_close<Int16x2Mode>();
        break;
      case DenseMode::kFloat64:
        build_and_close<Float64Mode>();
        break;
      default:
        build_and_close<Int32Mode>();
        break;
    }
    report_.transfer_ms += build_watch.elapsed_ms() - closure_ms_;
    report_.compute_ms += closure_ms_;
    closed_ = true;
  }

  // Checks the budget (the whole call) and every device's free memory (its own share), then
  // allocates each band on its device.
  void allocate_bands(int batch, std::size_t graph_bytes) {
    const VertexIndex n = graph_.vertex_count();
    const int band_count = int(band_layout_.size());
    const auto devices = devices_of(band_layout_);
    bands_.clear();  // a closure cancelled earlier may have left its bands
    options_.budget.require(dense_footprint_bytes(n, mode_, batch, graph_bytes, band_layout_, -1),
                            std::string(name()) + " (" + matrix_description() + " in " +
                                std::to_string(band_count) + " row bands on " +
                                gpu_count_text(devices.size()) + ")");
    for (int device : devices) {
      int bands_here = 0;
      for (const auto& band : band_layout_) bands_here += band.device == device ? 1 : 0;
      use_device(device);
      require_device_memory(
          device, dense_footprint_bytes(n, mode_, batch, graph_bytes, band_layout_, device),
          std::string(name()) + " on each device it uses (here " + std::to_string(bands_here) +
              " of the " + std::to_string(band_count) + " row bands of the " +
              matrix_description() + ", a pivot tile row per band, row staging and the graph)",
          MemoryBudget{});  // the budget covers the whole call, checked above
    }
    enable_peer_access(devices);
    const std::size_t row_bytes = std::size_t(padded_) * element_bytes(mode_);
    for (const auto& layout : band_layout_) {
      use_device(layout.device);
      auto band = std::make_unique<RowBand>(layout);
      band->rows.allocate(std::size_t(layout.rows) * row_bytes);
      band->pivot.allocate(std::size_t(kTile) * row_bytes);
      bands_.push_back(std::move(band));
    }
  }

  // Direct copies between devices where the hardware allows; cudaMemcpyPeerAsync stages through
  // the host where it does not, so this only changes the speed of the pivot copies.
  void enable_peer_access(const std::vector<int>& devices) {
    int pairs = 0, enabled = 0;
    for (int device : devices) {
      for (int peer : devices) {
        if (peer == device) continue;
        ++pairs;
        int can_access = 0;
        GPU_ROUTING_CUDA_CHECK(cudaDeviceCanAccessPeer(&can_access, device, peer));
        if (!can_access) continue;
        select_device(device);
        const cudaError_t status = cudaDeviceEnablePeerAccess(peer, 0);
        if (status == cudaErrorPeerAccessAlreadyEnabled)
          cudaGetLastError();  // enabled by an earlier call in this process: fine
        else
          GPU_ROUTING_CUDA_CHECK(status);
        ++enabled;
      }
    }
    if (pairs > 0 && !peer_access_noted_) {
      report_.notes += ", peer access on " + std::to_string(enabled) + " of " +
                       std::to_string(pairs) + " device pairs";
      peer_access_noted_ = true;
    }
  }

  template <class T>
  void build_and_close() {
    if (in_bands()) {
      build_bands<T>();
      // Wall time from the first launch until every band's stream is done: the bands run on
      // several devices, so no one stream's events span the closure.
      Stopwatch closure_watch;
      std::vector<cudaStream_t> streams;
      for (const auto& band : bands_) streams.push_back(band->stream.get());
      CancelPacer pacer(options_.cancel, std::move(streams));
      blocked_floyd_warshall_in_bands<T>(pacer);
      pacer.poll();
      closure_ms_ = closure_watch.elapsed_ms();
      return;
    }
    cudaStream_t stream = stream_->get();
    const VertexIndex n = graph_.vertex_count();
    const int fill_blocks = std::min(blocks_for(padded_ * padded_, kDefaultBlockSize), 1 << 16);
    fill_matrix_kernel<T>
        <<<fill_blocks, kDefaultBlockSize, 0, stream>>>(matrix_.data(), padded_, padded_, 0);
    GPU_ROUTING_CUDA_CHECK_LAUNCH();
    if (graph_.arc_count() > 0) {
      DeviceCsr csr;
      csr.upload(graph_.forward, false, stream);
      scatter_arcs_kernel<T>
          <<<blocks_for(std::int64_t(n) * 32, kDefaultBlockSize), kDefaultBlockSize, 0, stream>>>(
              matrix_.data(), padded_, 0, n, csr.row_offsets.data(), csr.heads.data(),
              csr.weights.data());
      GPU_ROUTING_CUDA_CHECK_LAUNCH();
      GPU_ROUTING_CUDA_CHECK(cudaStreamSynchronize(stream));  // before csr is freed
    }
    GPU_ROUTING_CUDA_CHECK(cudaStreamSynchronize(stream));
    // The closure alone is timed (events), so the benchmark's updates/s exclude the build.
    Event start, stop;
    start.record(stream);
    CancelPacer pacer(options_.cancel, stream);
    switch (algorithm_) {
      case DenseAlgorithm::kBlocked:
        blocked_floyd_warshall<T>(pacer);
        break;
      case DenseAlgorithm::kNaive:
        naive_floyd_warshall<T>(pacer);
        break;
      default:
        recursive_kleene<T>(0, int(padded_), pacer);
        break;
    }
    stop.record(stream);
    pacer.poll();
    float ms = 0;
    GPU_ROUTING_CUDA_CHECK(cudaEventElapsedTime(&ms, start.get(), stop.get()));
    closure_ms_ = ms;
  }

  // Each band's rows of the initial matrix, built on its device from its own copy of the graph
  // (one band at a time, so a device holds one copy of the graph at most).
  template <class T>
  void build_bands() {
    const VertexIndex n = graph_.vertex_count();
    for (const auto& band : bands_) {
      const BandLayout& layout = band->layout;
      cudaStream_t stream = band->stream.get();
      select_device(layout.device);
      const int fill_blocks =
          std::min(blocks_for(std::int64_t(layout.rows) * padded_, kDefaultBlockSize), 1 << 16);
      fill_matrix_kernel<T><<<fill_blocks, kDefaultBlockSize, 0, stream>>>(
          band->rows.data(), layout.rows, padded_, layout.first_row);
      GPU_ROUTING_CUDA_CHECK_LAUNCH();
      const int first_vertex = layout.first_row;
      const int end_vertex = std::min<int>(layout.first_row + layout.rows, n);
      if (graph_.arc_count() > 0 && first_vertex < end_vertex) {
        DeviceCsr csr;
        csr.upload(graph_.forward, false, stream);
        scatter_arcs_kernel<T>
            <<<blocks_for(std::int64_t(end_vertex - first_vertex) * 32, kDefaultBlockSize),
               kDefaultBlockSize, 0, stream>>>(band->rows.data(), padded_, first_vertex, end_vertex,
                                               csr.row_offsets.data(), csr.heads.data(),
                                               csr.weights.data());
        GPU_ROUTING_CUDA_CHECK_LAUNCH();
        GPU_ROUTING_CUDA_CHECK(cudaStreamSynchronize(stream));  // before csr is freed
      }
      GPU_ROUTING_CUDA_CHECK(cudaStreamSynchronize(stream));
    }
  }

  // Updates per millisecond the pacer assumes (conservative: it only decides how often to poll).
  double product_ms(double rows, double cols, double depth) const {
    const double rate = mode_ == DenseMode::kInt16x2 ? 2.0e10
                        : mode_ == DenseMode::kInt32 ? 1.0e10
                                                     : 3.0e9;
    return rows * cols * depth / rate;
  }

  // Coordinates relative to three bases (see ProductArgs); product_args() puts all three on the
  // one-GPU matrix.
  ProductArgs based_product_args(void* c_matrix, const void* a_matrix, const void* b_matrix,
                                 int c_row, int c_col, int a_row, int a_col, int b_row, int b_col,
                                 int rows, int cols, int depth) const {
    ProductArgs args;
    args.c_matrix = c_matrix;
    args.a_matrix = a_matrix;
    args.b_matrix = b_matrix;
    args.ld = padded_;
    args.c_row = c_row;
    args.c_col = c_col;
    args.a_row = a_row;
    args.a_col = a_col;
    args.b_row = b_row;
    args.b_col = b_col;
    args.rows = rows;
    args.cols = cols;
    args.depth = depth;
    args.mask_row_begin = args.mask_row_end = 0;
    args.mask_col_begin = args.mask_col_end = 0;
    return args;
  }

  ProductArgs product_args(int c_row, int c_col, int a_row, int a_col, int b_row, int b_col,
                           int rows, int cols, int depth) const {
    return based_product_args(matrix_.data(), matrix_.data(), matrix_.data(), c_row, c_col, a_row,
                              a_col, b_row, b_col, rows, cols, depth);
  }

  // The tuned 128-row kernel, or the 64-row one where 128-row tiles would not fill the GPU.
  void launch_product(const ProductArgs& args, cudaStream_t stream) {
    const long long tiles = (long long)(args.rows / kTile) * (args.cols / kTile);
    const bool small =
        tuning_.small_tiles > 0 || (tuning_.small_tiles < 0 && tiles < small_grid_limit_);
    (small ? small_product_ : product_)(args, stream);
  }
  void launch_product(const ProductArgs& args) { launch_product(args, stream_->get()); }

  template <class T>
  void closure(int at, CancelPacer& pacer) {
    closure_kernel<T><<<1, 1024, 0, stream_->get()>>>(matrix_.data(), padded_, at, at);
    GPU_ROUTING_CUDA_CHECK_LAUNCH();
    pacer.add(0.02);
  }

  // Seed 002: per block row kb, phase 1 closes the diagonal tile, phase 2 multiplies the row and
  // column panels by it, phase 3 adds the product of the panels to every other tile.
  template <class T>
  void blocked_floyd_warshall(CancelPacer& pacer) {
    const int padded = int(padded_);
    for (int at = 0; at < padded; at += kTile) {
      closure<T>(at, pacer);
      ProductArgs row_panel = product_args(at, 0, at, at, at, 0, kTile, padded, kTile);
      row_panel.mask_col_begin = at;
      row_panel.mask_col_end = at + kTile;
      launch_product(row_panel);
      ProductArgs col_panel = product_args(0, at, 0, at, at, at, padded, kTile, kTile);
      col_panel.mask_row_begin = at;
      col_panel.mask_row_end = at + kTile;
      launch_product(col_panel);
      ProductArgs rest = product_args(0, 0, 0, at, at, 0, padded, padded, kTile);
      rest.mask_row_begin = rest.mask_col_begin = at;
      rest.mask_row_end = rest.mask_col_end = at + kTile;
      launch_product(rest);
      pacer.add(product_ms(padded, padded, kTile));
    }
  }

  // Seed 002 over row bands. Step `step` (pivot tile row at = step * kTile, held by `owner` at its
  // row `pivot_row`), on each band's stream:
  //   owner:        closure of (at, at); row panel (at, j) for all j; record pivot_ready
  //   other bands:  wait owner.pivot_ready; copy its tile row into their pivot buffer;
  //                 record pivot_copied[step & 1]
  //   every band:   column panel (i, at) and phase 3 (i, j) for its rows i != at, with the pivot
  //                 tile row (its own rows if it owns the step, else its pivot buffer) as B.
  // Two hazards remain, both ordered by stream order plus one wait:
  //   - a band's pivot buffer is overwritten only after its previous phase 3 read it (same stream);
  //   - the owner's tile row `at` changes again in the next step's column panel and phase 3; the
  //     previous owner waits there for every other band's pivot_copied of the previous step
  //     (two slots: a band records step k + 1's copy before the owner's wait for step k is
  //     enqueued).
  template <class T>
  void blocked_floyd_warshall_in_bands(CancelPacer& pacer) {
    const int padded = int(padded_);
    const std::size_t elem = element_bytes(mode_);
    const std::size_t row_bytes = std::size_t(padded_) * elem;
    // Step owners by tile row, and the busiest device's rows (what the pacer paces).
    std::vector<RowBand*> owner_of_tile_row;
    std::vector<std::pair<int, int>> rows_per_device;
    for (const auto& band : bands_) {
      for (int r = 0; r < band->layout.rows; r += kTile) owner_of_tile_row.push_back(band.get());
      auto it = std::find_if(rows_per_device.begin(), rows_per_device.end(),
                             [&](const auto& entry) { return entry.first == band->layout.device; });
      if (it == rows_per_device.end())
        rows_per_device.emplace_back(band->layout.device, band->layout.rows);
      else
        it->second += band->layout.rows;
    }
    int busiest_rows = 0;
    for (const auto& entry : rows_per_device) busiest_rows = std::max(busiest_rows, entry.second);

    RowBand* previous_owner = nullptr;
    for (int step = 0, at = 0; at < padded; ++step, at += kTile) {
      RowBand& owner = *owner_of_tile_row[std::size_t(step)];
      const int pivot_row = at - owner.layout.first_row;  // within the owner's band
      unsigned char* owner_pivot = owner.rows.data() + std::size_t(pivot_row) * row_bytes;

      // Phase 1 and the row half of phase 2: tile row `at` becomes final for this step.
      select_device(owner.layout.device);
      cudaStream_t owner_stream = owner.stream.get();
      closure_kernel<T><<<1, 1024, 0, owner_stream>>>(owner.rows.data(), padded_, pivot_row, at);
      GPU_ROUTING_CUDA_CHECK_LAUNCH();
      ProductArgs row_panel =
          based_product_args(owner.rows.data(), owner.rows.data(), owner.rows.data(), pivot_row, 0,
                             pivot_row, at, pivot_row, 0, kTile, padded, kTile);
      row_panel.mask_col_begin = at;
      row_panel.mask_col_end = at + kTile;
      launch_product(row_panel, owner_stream);
      owner.pivot_ready.record(owner_stream);

      // Every other band pulls the pivot tile row on its own stream.
      for (const auto& band : bands_) {
        if (band.get() == &owner) continue;
        select_device(band->layout.device);
        cudaStream_t stream = band->stream.get();
        owner.pivot_ready.make_wait(stream);
        GPU_ROUTING_CUDA_CHECK(cudaMemcpyPeerAsync(band->pivot.data(), band->layout.device,
                                                   owner_pivot, owner.layout.device,
                                                   std::size_t(kTile) * row_bytes, stream));
        band->pivot_copied[step & 1].record(stream);
      }

      // The column half of phase 2 and phase 3, every band on its own rows.
      for (const auto& band : bands_) {
        const bool owns = band.get() == &owner;
        select_device(band->layout.device);
        cudaStream_t stream = band->stream.get();
        if (band.get() == previous_owner)
          for (const auto& other : bands_)
            if (other.get() != previous_owner)
              other->pivot_copied[(step - 1) & 1].make_wait(stream);
        const unsigned char* pivot = owns ? owner_pivot : band->pivot.data();
        const int rows = band->layout.rows;
        ProductArgs col_panel = based_product_args(band->rows.data(), band->rows.data(), pivot, 0,
                                                   at, 0, at, 0, at, rows, kTile, kTile);
        ProductArgs rest = based_product_args(band->rows.data(), band->rows.data(), pivot, 0, 0, 0,
                                              at, 0, 0, rows, padded, kTile);
        if (owns) {
          col_panel.mask_row_begin = rest.mask_row_begin = pivot_row;
          col_panel.mask_row_end = rest.mask_row_end = pivot_row + kTile;
        }
        rest.mask_col_begin = at;
        rest.mask_col_end = at + kTile;
        launch_product(col_panel, stream);
        launch_product(rest, stream);
      }
      previous_owner = &owner;
      pacer.add(0.02 + product_ms(busiest_rows, padded, kTile));
    }
  }

  template <class T>
  void naive_floyd_warshall(CancelPacer& pacer) {
    const int n = graph_.vertex_count();
    dim3 block(32, 8);
    dim3 grid((n + 31) / 32, (n + 7) / 8);
    const double step_ms = double(n) * n * 3.0 * sizeof(typename T::Elem) / 1.5e9;
    for (int k = 0; k < n; ++k) {
      naive_step_kernel<T><<<grid, block, 0, stream_->get()>>>(matrix_.data(), padded_, n, k);
      GPU_ROUTING_CUDA_CHECK_LAUNCH();
      pacer.add(step_ms + 0.003);
    }
  }

  // Seed 004 on the square [at, at + size): split into A B / C D at a multiple of the tile.
  template <class T>
  void recursive_kleene(int at, int size, CancelPacer& pacer) {
    if (size <= kTile) {
      closure<T>(at, pacer);
      return;
    }
    const int n1 = (size / kTile + 1) / 2 * kTile;
    const int n2 = size - n1;
    const int a = at, d = at + n1;  // A = (a, a), B = (a, d), C = (d, a), D = (d, d)
    auto product = [&](int c_row, int c_col, int a_row, int a_col, int b_row, int b_col, int rows,
                       int cols, int depth) {
      launch_product(product_args(c_row, c_col, a_row, a_col, b_row, b_col, rows, cols, depth));
      pacer.add(product_ms(rows, cols, depth));
    };
    recursive_kleene<T>(a, n1, pacer);      // A = A*
    product(a, d, a, a, a, d, n1, n2, n1);  // B = A B
    product(d, a, d, a, a, a, n2, n1, n1);  // C = C A
    product(d, d, d, a, a, d, n2, n2, n1);  // D = D + C B
    recursive_kleene<T>(d, n2, pacer);      // D = D*
    product(a, d, a, d, d, d, n1, n2, n2);  // B = B D
    product(d, a, d, d, d, a, n2, n1, n2);  // C = D C
    product(a, a, a, d, d, a, n1, n1, n2);  // A = A + B C
  }

  // Distances as float64 rows: out[r][v] = matrix[rows[r]][v] for v < n.
  void launch_gather(const void* matrix, const VertexIndex* rows, int count, double* out,
                     cudaStream_t stream) const {
    const VertexIndex n = graph_.vertex_count();
    dim3 grid((n + 255) / 256, count);
    switch (mode_) {
      case DenseMode::kInt16x2:
        gather_rows_kernel<Int16x2Mode><<<grid, 256, 0, stream>>>(matrix, padded_, n, rows, out);
        break;
      case DenseMode::kFloat64:
        gather_rows_kernel<Float64Mode><<<grid, 256, 0, stream>>>(matrix, padded_, n, rows, out);
        break;
      default:
        gather_rows_kernel<Int32Mode><<<grid, 256, 0, stream>>>(matrix, padded_, n, rows, out);
        break;
    }
    GPU_ROUTING_CUDA_CHECK_LAUNCH();
  }

  void copy_rows_out(const SolveRequest& request) {
    Stopwatch watch;
    const VertexIndex n = graph_.vertex_count();
    cudaStream_t stream = stream_->get();
    const std::size_t rows = staging_rows(n, request.source_count);
    staging_.reserve(rows * std::size_t(n));
    staging_sources_.reserve(rows);
    for (int first = 0; first < request.source_count; first += int(rows)) {
      const int count = std::min<int>(int(rows), request.source_count - first);
      staging_sources_.upload(request.sources + first, std::size_t(count), stream);
      launch_gather(matrix_.data(), staging_sources_.data(), count, staging_.data(), stream);
      staging_.download(request.distances + std::size_t(first) * n, std::size_t(count) * n, stream);
      GPU_ROUTING_CUDA_CHECK(cudaStreamSynchronize(stream));
      options_.cancel.throw_if_requested();
    }
    report_.transfer_ms += watch.elapsed_ms();
  }

  // Each source row from the band holding it; consecutive request rows gathered from one band
  // come back in one copy.
  void copy_rows_out_of_bands(const SolveRequest& request) {
    Stopwatch watch;
    const VertexIndex n = graph_.vertex_count();
    std::vector<int> positions;          // indices into request.sources
    std::vector<VertexIndex> band_rows;  // the same sources, as rows of the band
    for (const auto& band : bands_) {
      const BandLayout& layout = band->layout;
      positions.clear();
      band_rows.clear();
      for (int i = 0; i < request.source_count; ++i) {
        const VertexIndex source = request.sources[i];
        if (source < layout.first_row || source >= layout.first_row + layout.rows) continue;
        positions.push_back(i);
        band_rows.push_back(source - layout.first_row);
      }
      if (positions.empty()) continue;
      select_device(layout.device);
      cudaStream_t stream = band->stream.get();
      const std::size_t chunk = band_staging_rows(n, request.source_count, layout);
      band->staging.reserve(chunk * std::size_t(n));
      band->staging_sources.reserve(chunk);
      for (std::size_t first = 0; first < positions.size(); first += chunk) {
        const int count = int(std::min(chunk, positions.size() - first));
        band->staging_sources.upload(band_rows.data() + first, std::size_t(count), stream);
        launch_gather(band->rows.data(), band->staging_sources.data(), count, band->staging.data(),
                      stream);
        for (int run_begin = 0; run_begin < count;) {
          int run_end = run_begin + 1;
          while (run_end < count && positions[first + std::size_t(run_end)] ==
                                        positions[first + std::size_t(run_end) - 1] + 1)
            ++run_end;
          GPU_ROUTING_CUDA_CHECK(cudaMemcpyAsync(
              request.distances + std::size_t(positions[first + std::size_t(run_begin)]) * n,
              band->staging.data() + std::size_t(run_begin) * n,
              std::size_t(run_end - run_begin) * n * sizeof(double), cudaMemcpyDeviceToHost,
              stream));
          run_begin = run_end;
        }
        GPU_ROUTING_CUDA_CHECK(cudaStreamSynchronize(stream));
        options_.cancel.throw_if_requested();
      }
    }
    report_.transfer_ms += watch.elapsed_ms();
  }

  DenseAlgorithm algorithm_;
  DenseTuning tuning_;
  DenseMode mode_ = DenseMode::kInt32;
  ProductLauncher product_ = nullptr;
  ProductLauncher small_product_ = nullptr;
  int small_grid_limit_ = 264;
  bool closed_ = false;
  bool peer_access_noted_ = false;
  double closure_ms_ = 0;
  std::int64_t padded_ = 0;
  // One GPU: the whole matrix on home_device_ (0 unless options.device names another).
  int home_device_ = 0;
  std::unique_ptr<Stream> stream_;
  DeviceBuffer<unsigned char> matrix_;
  DeviceBuffer<double> staging_;
  DeviceBuffer<VertexIndex> staging_sources_;
  // Several (blocked_fw): one entry per band; bands_ is allocated by the first solve().
  std::vector<BandLayout> band_layout_;
  std::vector<std::unique_ptr<RowBand>> bands_;
};

}  // namespace

const char* dense_mode_name(DenseMode mode) {
  switch (mode) {
    case DenseMode::kInt16x2:
      return "int16x2";
    case DenseMode::kInt32:
      return "int32";
    case DenseMode::kFloat64:
      return "float64";
    default:
      return "auto";
  }
}

DenseMode resolve_dense_mode(const Graph& graph, DenseMode requested) {
  // Every finite distance is at most (V - 1) * max_weight; the integer modes need it below their
  // sentinel (and each weight itself, for V = 1 with self loops).
  const double longest =
      std::max(1.0, double(graph.vertex_count()) - 1.0) * std::max(0.0, graph.max_weight);
  const bool fits16 = graph.integer_weights && longest <= Int16x2Mode::kMaxDistance;
  const bool fits32 = graph.integer_weights && longest <= Int32Mode::kMaxDistance;
  auto refuse = [&](const char* mode, const char* limit) {
    throw RoutingError(ErrorKind::kInvalidParameter,
                       std::string("the ") + mode +
                           " dense mode needs integer weights and (V - 1) * max_weight <= " +
                           limit + "; this graph has V = " + std::to_string(graph.vertex_count()) +
                           ", max_weight = " + std::to_string(graph.max_weight) +
                           (graph.integer_weights ? "" : " and non-integer weights"));
  };
  switch (requested) {
    case DenseMode::kInt16x2:
      if (!fits16) refuse("int16x2", "32766");
      return requested;
    case DenseMode::kInt32:
      if (!fits32) refuse("int32", "2^30 - 2");
      return requested;
    case DenseMode::kFloat64:
      return requested;
    default:
      return fits16 ? DenseMode::kInt16x2 : fits32 ? DenseMode::kInt32 : DenseMode::kFloat64;
  }
}

int dense_product_variant_count(DenseMode mode) {
  return int(product_variants(mode).size());
}

std::string dense_product_variant_name(DenseMode mode, int variant) {
  const auto& variants = product_variants(mode);
  if (variant < 0 || variant >= int(variants.size())) return "?";
  return variants[std::size_t(variant)].name;
}

std::unique_ptr<ShortestPathEngine> create_dense_engine(const Graph& graph,
                                                        const EngineOptions& options,
                                                        DenseAlgorithm algorithm,
                                                        const DenseTuning& tuning) {
  return std::make_unique<DenseApspEngine>(graph, options, algorithm, tuning);
}

// The engine table gives the three dense engines this one estimate, so it assumes blocked_fw's
// automatic band count: for floyd_warshall and rkleene on a machine with several GPUs it counts
// the other devices' pivot rows, staging and graph copies too (small next to the matrix).
std::size_t estimate_dense_bytes(const Graph& graph, int batch) {
  const VertexIndex n = graph.vertex_count();
  const DenseMode mode = resolve_dense_mode(graph, DenseMode::kAuto);
  const auto layout = plan_row_bands(padded_size(n), automatic_band_count(n), usable_devices());
  return dense_footprint_bytes(n, mode, batch, DeviceCsr::bytes(graph.forward, false), layout, -1);
}

}  // namespace gpu_routing::gpu::apsp
