#include "service/service_client.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <thread>

#include "base/parallel.hpp"
#include "base/parallel_for.hpp"

namespace gpu_routing::service {

namespace {

constexpr int kWaitSliceMs = 20;  // a cancel is seen within this (plus the engine's own poll)
// Exchange segments up to this size are kept for the session's next call; larger ones are dropped
// at the end of the call unless set_kept_exchange_bytes allows them (gpu_routing.retained_memory).
constexpr std::size_t kIoKeepBytes = std::size_t{64} << 20;
std::atomic<std::size_t> g_kept_exchange_bytes{kIoKeepBytes};

std::size_t align8(std::size_t bytes) {
  return (bytes + 7) & ~std::size_t{7};
}

RequestSlot* slot_at(ControlHeader* header, int index) {
  return &header->slots[index];
}

// The answer out of the exchange segment: large ones (from 8 MB) on every core. One thread took
// 0.2 s for 10,000 New York rows to 10,000 targets (800 MB), bound by page faults on both sides.
constexpr std::size_t kParallelCopyFrom = std::size_t{8} << 20;

void copy_out(void* to, const char* from, std::size_t bytes) {
  if (bytes < kParallelCopyFrom)
    std::memcpy(to, from, bytes);
  else
    parallel_copy(to, from, bytes, resolve_thread_count(0));
}

// `rows` rows of `width` doubles, packed in the exchange segment, to rows `stride` doubles apart
// (0: packed too), on every core from 8 MB on.
void copy_rows_out(double* to, std::size_t stride, const char* from, std::size_t width,
                   std::size_t rows) {
  if (stride == 0 || stride == width) {
    copy_out(to, from, rows * width * sizeof(double));
    return;
  }
  const auto* packed = reinterpret_cast<const double*>(from);
  const std::size_t row_bytes = width * sizeof(double);
  const int threads = rows * row_bytes < kParallelCopyFrom ? 1 : resolve_thread_count(0);
  parallel_for_each(static_cast<int>(rows), threads, [&](int r, int) {
    std::memcpy(to + static_cast<std::size_t>(r) * stride,
                packed + static_cast<std::size_t>(r) * width, row_bytes);
  });
}

// `rows` rows of `width` doubles, packed in the exchange segment, each to where the caller wants
// it (SolveRequest::row_pointers: the arrays the session sends), on every core from 8 MB on.
// Going there through the call's buffer cost a second copy of every row (New York, 10,000 x
// 10,000: 800 MB).
// With `columns` (SolveRequest::row_columns) each row is gathered into the caller's order as it
// goes: New York's 10,000 x 10,000 to unsorted targets went through the call's buffer and a
// second pass over its 800 MB (83 ms of 363 on the H200 host).
void copy_rows_to(double* const* to, const char* from, std::size_t width, std::size_t rows,
                  const std::int64_t* columns, std::size_t column_count) {
  const auto* packed = reinterpret_cast<const double*>(from);
  const std::size_t row_bytes = (columns != nullptr ? column_count : width) * sizeof(double);
  const int threads = rows * row_bytes < kParallelCopyFrom ? 1 : resolve_thread_count(0);
  parallel_for_each(static_cast<int>(rows), threads, [&](int r, int) {
    const double* row = packed + static_cast<std::size_t>(r) * width;
    if (columns == nullptr) {
      std::memcpy(to[r], row, row_bytes);
      return;
    }
    gather_row_columns(row, width, columns, column_count, to[r]);
  });
}

}  // namespace

ServiceClient::ServiceClient(long postmaster_pid, long backend_pid, long owner_pid)
    : postmaster_pid_(postmaster_pid),
      backend_pid_(backend_pid),
      owner_pid_(owner_pid > 0 ? owner_pid : backend_pid) {}

ServiceClient::~ServiceClient() {
  release();
}

bool ServiceClient::connect() {
  if (header_ != nullptr) return true;
  const std::string name = control_segment_name(postmaster_pid_);
  if (segment_inode(name) == 0) return false;
  try {
    control_ = SharedMapping::open(name, true);
  } catch (const RoutingError&) {
    return false;
  }
  if (control_.size() < sizeof(ControlHeader)) {
    control_.reset();
    return false;
  }
  auto* header = static_cast<ControlHeader*>(control_.data());
  if (header->magic != kMagic || header->layout_version != kLayoutVersion) {
    control_.reset();
    return false;
  }
  header_ = header;
  return true;
}

ServiceState ServiceClient::state() const {
  if (header_ == nullptr) return ServiceState::kStopped;
  return static_cast<ServiceState>(header_->state.load(std::memory_order_acquire));
}

ServiceMode ServiceClient::mode() const {
  if (header_ == nullptr) return ServiceMode::kOff;
  return static_cast<ServiceMode>(header_->mode);
}

gpu::Availability ServiceClient::availability() const {
  gpu::Availability answer;
  answer.built_with_cuda = true;
  const ServiceState s = state();
  if (header_ == nullptr) {
    answer.reason = "the GPU service has not started";
    return answer;
  }
  if (mode() == ServiceMode::kCpu) {
    answer.reason = "the GPU service runs the CPU engines (gpu_routing.service = cpu, for tests)";
    return answer;
  }
  if (s != ServiceState::kReady) {
    const std::string why = header_->reason;
    switch (s) {
      case ServiceState::kNoGpu:
        answer.reason = "the GPU service found no usable GPU" + (why.empty() ? "" : ": " + why);
        break;
      case ServiceState::kStarting:
        answer.reason = "the GPU service is starting";
        break;
      case ServiceState::kStopping:
        answer.reason = "the server is shutting down";
        break;
      default:
        answer.reason = "the GPU service is not running" + (why.empty() ? "" : " (" + why + ")");
        break;
    }
    return answer;
  }
  for (int d = 0; d < std::min(header_->device_count, kMaxDevices); ++d) {
    const DeviceEntry& entry = header_->devices[d];
    // A device out of service after a CUDA error serves nothing until the service restarts.
    if (static_cast<WorkerState>(entry.state.load()) == WorkerState::kFailed) continue;
    gpu::DeviceInfo info;
    info.index = d;
    info.physical = entry.physical;
    info.name = entry.name;
    info.compute_major = entry.compute_major;
    info.compute_minor = entry.compute_minor;
    info.total_memory_bytes = entry.total_memory_bytes;
    info.multiprocessors = entry.multiprocessors;
    answer.devices.push_back(info);
  }
  answer.usable = !answer.devices.empty();
  if (!answer.usable)
    answer.reason = "every GPU of the GPU service is out of service (it restarts)";
  return answer;
}

bool ServiceClient::wait_ready(int timeout_ms, const CancelToken& cancel) const {
  Stopwatch watch;
  for (;;) {
    const ServiceState s = state();
    if (s == ServiceState::kReady) return true;
    if (s == ServiceState::kNoGpu || s == ServiceState::kStopping) return false;
    if (watch.elapsed_ms() >= timeout_ms) return false;
    cancel.throw_if_requested();
    std::this_thread::sleep_for(std::chrono::milliseconds(kWaitSliceMs));
  }
}

bool ServiceClient::serves(const EngineInfo& info) const {
  if (header_ == nullptr || state() != ServiceState::kReady) return false;
  // GPU mode: the GPU engines (no backend opens a CUDA context). CPU mode (tests): every engine.
  return mode() == ServiceMode::kCpu || info.device == Device::kGpu;
}

std::unique_ptr<ShortestPathEngine> ServiceClient::create(
    const EngineInfo& info, const Graph& graph, const EngineOptions& options,
    const std::string& image_segment, const std::string& index_segment, std::size_t index_bytes) {
  return std::make_unique<ServiceEngine>(*this, info, graph, options, image_segment, index_segment,
                                         index_bytes);
}

void ServiceClient::set_kept_exchange_bytes(std::size_t bytes) {
  g_kept_exchange_bytes.store(std::max(kIoKeepBytes, bytes), std::memory_order_relaxed);
}

SharedMapping& ServiceClient::io_segment(std::size_t bytes, bool* made) {
  const bool make = !io_.valid() || io_.size() < bytes;
  if (made != nullptr) *made = make;
  if (make) {
    drop_io_segment();
    // Room to grow: the next request of a similar size reuses it.
    const std::size_t size = std::max<std::size_t>(align8(bytes + bytes / 4), std::size_t{1} << 20);
    io_ = SharedMapping::create(io_segment_name(postmaster_pid_, backend_pid_, ++sequence_), size);
  }
  return io_;
}

void ServiceClient::drop_io_segment() {
  if (!io_.valid()) return;
  const std::string name = io_.name();
  io_.reset();
  unlink_segment(name);
}

void ServiceClient::drop_io_segment_over_kept() {
  if (solves_in_flight_.load(std::memory_order_acquire) > 0) return;  // a call is using it
  if (io_segment_bytes() > g_kept_exchange_bytes.load(std::memory_order_relaxed)) drop_io_segment();
}

std::string ServiceClient::new_graph_segment_name() {
  return graph_segment_name(postmaster_pid_, backend_pid_, ++sequence_);
}

void ServiceClient::release() {
  closing_.store(true, std::memory_order_release);
  // A solve on the call's thread sees closing_ within one wait slice and abandons its request.
  for (int waited = 0; solves_in_flight_.load(std::memory_order_acquire) > 0 && waited < 2000;
       waited += 5)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  if (header_ != nullptr && held_slot_ >= 0) {
    RequestSlot* slot = slot_at(header_, held_slot_);
    std::uint32_t state = slot->state.load();
    for (;;) {
      const auto s = static_cast<SlotState>(state);
      SlotState next;
      if (s == SlotState::kSubmitted || s == SlotState::kRunning)
        next = SlotState::kAbandoned;
      else if (s == SlotState::kFilling || s == SlotState::kDone || s == SlotState::kFailed)
        next = SlotState::kFree;
      else
        break;
      if (next == SlotState::kFree
              ? release_slot_if(slot, state)
              : slot->state.compare_exchange_weak(state, static_cast<std::uint32_t>(next)))
        break;
      state = slot->state.load();
    }
    held_slot_ = -1;
  }
  drop_io_segment();
}

// --- ServiceEngine ----------------------------------------------------------------------------

ServiceEngine::ServiceEngine(ServiceClient& client, const EngineInfo& info, const Graph& graph,
                             const EngineOptions& options, std::string image_segment,
                             std::string index_segment, std::size_t index_bytes)
    : ShortestPathEngine(graph, options),
      client_(client),
      info_(info),
      image_segment_(std::move(image_segment)),
      index_segment_(std::move(index_segment)),
      index_bytes_(index_bytes) {
  const ControlHeader* header = client_.header();
  std::string device = header != nullptr && header->device_count > 0 &&
                               static_cast<ServiceMode>(header->mode) == ServiceMode::kGpu
                           ? std::string(header->devices[0].name)
                           : std::string("CPU");
  report_.device_name = device + ", through the GPU service";
}

ServiceEngine::~ServiceEngine() {
  if (owns_image_) unlink_segment(image_segment_);
  if (drop_io_at_end_) client_.drop_io_segment();
}

int ServiceEngine::preferred_batch_size() const {
  return preferred_batch_size_for_rows(static_cast<std::size_t>(graph_.vertex_count()));
}

int ServiceEngine::preferred_batch_size_for_rows(std::size_t row_width) const {
  if (!info_.many_source) return 1;
  // About 1 GB of distance rows per request, as the engines' own batches, at most 1024 sources.
  // A cost matrix's compact rows are narrower than whole ones: sized by whole rows, New York's
  // 10,000 x 10,000 went in 20 requests of 507 sources, each a sweep of the GPU's road index
  // that takes 1024 at about the same cost. The road index's compact rows go up to 2048 sources
  // a request: two sweeps, the second's upward searches on the host beside the first's sweep, and
  // half the round trips (other engines' buffers grow with their sources: near_far's for 2048
  // New York sources passed the service's budget of a lane).
  const std::size_t row = std::max<std::size_t>(1, row_width * sizeof(double));
  const bool road_index_rows = std::strcmp(info_.name, "cch") == 0 &&
                               row_width < static_cast<std::size_t>(graph_.vertex_count());
  const std::size_t most = road_index_rows ? 2048 : 1024;
  return static_cast<int>(std::clamp<std::size_t>((std::size_t{1} << 30) / row, 1, most));
}

void ServiceEngine::publish_image() {
  if (!image_segment_.empty()) return;
  // An edges_sql call's graph: written once per call into a segment of this backend, which the
  // service maps (and uploads) by name; removed when the call's engine goes.
  const std::size_t bytes = graph_image_bytes(graph_);
  std::string name = client_.new_graph_segment_name();
  SharedMapping mapping = SharedMapping::create(name, bytes);
  write_graph_image(graph_, mapping.data());
  image_segment_ = name;
  image_bytes_ = bytes;
  owns_image_ = true;
}

void ServiceEngine::solve(const SolveRequest& request) {
  exchange(request, nullptr);
}

void ServiceEngine::solve_areas(const VertexIndex* sources, int count, double bound,
                                AreaLists& areas) {
  if (count <= 0) return;
  SolveRequest request;
  request.sources = sources;
  request.source_count = count;
  exchange(request, nullptr, &areas, bound);
}

bool ServiceEngine::solve_paths(VertexIndex source, const VertexIndex* targets, int target_count,
                                TracedPaths& paths) {
  if (target_count <= 0 || !has_reverse(graph_)) return false;
  SolveRequest request;
  request.sources = &source;
  request.source_count = 1;
  request.targets = targets;
  request.target_count = target_count;
  return exchange(request, &paths);
}

bool ServiceEngine::exchange(const SolveRequest& request, TracedPaths* paths, AreaLists* areas,
                             double bound) {
  if (request.source_count <= 0) return true;
  Stopwatch whole;
  client_.enter_solve();
  struct LeaveSolve {
    ServiceClient& client;
    ~LeaveSolve() { client.leave_solve(); }
  } leave{client_};
  if (client_.closing()) throw Cancelled();
  if (request.compact_targets && (request.targets == nullptr || request.target_count <= 0))
    return true;
  options_.cancel.throw_if_requested();
  ControlHeader* header = client_.mutable_header();
  if (header == nullptr || static_cast<ServiceState>(header->state.load()) != ServiceState::kReady)
    throw RoutingError(ErrorKind::kNoDevice, "the GPU service is not running",
                       "It restarts by itself; calls with gpu_routing.device = auto use the CPU "
                       "engine meanwhile.");
  publish_image();

  // The I/O segment: sources, targets, distances, predecessor arcs.
  const std::size_t n = static_cast<std::size_t>(graph_.vertex_count());
  const std::size_t sources = static_cast<std::size_t>(request.source_count);
  const bool with_targets = request.targets != nullptr && request.target_count > 0;
  const std::size_t targets = with_targets ? static_cast<std::size_t>(request.target_count) : 0;
  // Traced paths come back as the targets' distances (one each) and the paths.
  // Areas come back compacted in their own rooms (area_layout), no row.
  const std::size_t row_width =
      request.compact_targets || paths != nullptr || areas != nullptr ? targets : n;
  const std::size_t sources_offset = 0;
  const std::size_t targets_offset = align8(sources_offset + sources * sizeof(VertexIndex));
  const std::size_t distances_offset = align8(targets_offset + targets * sizeof(VertexIndex));
  const std::size_t distance_bytes = saturating_multiply(sources * sizeof(double), row_width);
  const std::size_t predecessors_offset = align8(saturating_add(distances_offset, distance_bytes));
  const std::size_t predecessor_bytes =
      request.predecessor_arcs != nullptr ? saturating_multiply(sources * sizeof(ArcIndex), n) : 0;
  const std::size_t paths_offset = align8(saturating_add(predecessors_offset, predecessor_bytes));
  // Room for two whole-graph paths, the bytes of the row it replaces (so gpu_routing.max_memory
  // allows what it allowed the row): the paths of one or two targets always fit, more while they
  // average under 2n / targets arcs (New York: about 750 paths of a typical 700 arcs). Pages
  // never written cost nothing.
  const std::size_t path_capacity =
      paths != nullptr ? saturating_multiply(std::min<std::size_t>(targets, 2), n) : 0;
  const std::size_t paths_bytes =
      paths != nullptr ? saturating_add(targets * sizeof(std::int64_t),
                                        saturating_multiply(path_capacity, sizeof(ArcIndex)))
                       : 0;
  const AreaLayout area_room = area_layout(paths_offset, sources, areas != nullptr ? n : 0);
  const std::size_t total =
      areas != nullptr ? area_room.end : saturating_add(paths_offset, paths_bytes);
  options_.budget.require(saturating_add(total, 0),
                          "the GPU service's exchange of " + std::to_string(sources) + " rows");
  bool fresh_segment = false;
  SharedMapping& io = client_.io_segment(total, &fresh_segment);
  if (fresh_segment) totals_.fresh_segment_bytes = std::max(totals_.fresh_segment_bytes, io.size());
  auto* base = static_cast<char*>(io.data());
  std::memcpy(base + sources_offset, request.sources, sources * sizeof(VertexIndex));
  if (with_targets)
    std::memcpy(base + targets_offset, request.targets, targets * sizeof(VertexIndex));

  // A free slot.
  int index = -1;
  RequestSlot* slot = nullptr;
  for (int attempt = 0; index < 0; ++attempt) {
    for (int i = 0; i < kSlotCount; ++i) {
      std::uint32_t expected = static_cast<std::uint32_t>(SlotState::kFree);
      if (header->slots[i].state.compare_exchange_strong(
              expected, static_cast<std::uint32_t>(SlotState::kFilling))) {
        index = i;
        break;
      }
    }
    if (index >= 0) break;
    options_.cancel.throw_if_requested();
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  slot = &header->slots[index];
  client_.set_held_slot(index);
  slot->owner_pid = static_cast<std::int32_t>(client_.owner_pid());
  copy_field(slot->graph_segment, sizeof slot->graph_segment, image_segment_);
  slot->graph_bytes = image_bytes_;
  copy_field(slot->index_segment, sizeof slot->index_segment, index_segment_);
  slot->index_bytes = index_bytes_;
  copy_field(slot->engine, sizeof slot->engine, info_.name);
  slot->threads = options_.threads;
  slot->block_size = options_.block_size;
  slot->streams = options_.streams;
  std::uint32_t flags = 0;
  if (request.predecessor_arcs != nullptr) flags |= kFlagPredecessors;
  if (with_targets) flags |= kFlagTargets;
  if (request.compact_targets) flags |= kFlagCompact;
  if (request.source_count == 1 && !request.compact_targets && areas == nullptr)
    flags |= kFlagBatchable;
  if (paths != nullptr) flags |= kFlagTracePaths;
  if (areas != nullptr) flags |= kFlagAreas;
  flags |= client_.test_fault_flags();
  slot->flags = flags;
  slot->max_memory_bytes = options_.budget.limit_bytes();
  copy_field(slot->io_segment, sizeof slot->io_segment, io.name());
  slot->io_bytes = io.size();
  slot->source_count = request.source_count;
  slot->target_count = static_cast<std::int32_t>(targets);
  slot->sources_offset = sources_offset;
  slot->targets_offset = targets_offset;
  slot->distances_offset = distances_offset;
  slot->predecessors_offset = predecessors_offset;
  slot->paths_offset = paths_offset;
  slot->path_capacity = areas != nullptr ? n : path_capacity;
  slot->area_bound = bound;
  slot->paths_traced = 0;
  slot->error_kind = 0;
  slot->batch_size = 0;
  slot->wait_ms = slot->compute_ms = slot->transfer_ms = 0;
  slot->rounds = 0;
  slot->message[0] = slot->hint[0] = slot->notes[0] = slot->device_name[0] = '\0';
  slot->ticket = header->next_ticket.fetch_add(1);
  slot->submitted_ns = monotonic_ns();
  const std::uint32_t generation = header->generation.load();
  slot->generation = generation;
  slot->state.store(static_cast<std::uint32_t>(SlotState::kSubmitted), std::memory_order_release);
  header->doorbell.fetch_add(1, std::memory_order_release);
  futex_wake_all(&header->doorbell);

  // Wait for the answer in slices: a cancel abandons the request (the service drops it), and a
  // service that died (generation raised by the supervisor) fails it.
  Stopwatch watch;
  for (;;) {
    const std::uint32_t state = slot->state.load(std::memory_order_acquire);
    const auto s = static_cast<SlotState>(state);
    if (s == SlotState::kDone || s == SlotState::kFailed) break;
    const bool cancelled = options_.cancel.requested() || client_.closing();
    const bool service_gone = header->generation.load() != generation;
    if (cancelled || service_gone) {
      std::uint32_t expected = state;
      if (slot->state.compare_exchange_strong(expected,
                                              static_cast<std::uint32_t>(SlotState::kAbandoned))) {
        client_.set_held_slot(-1);
        client_.drop_io_segment();  // the service may still write into it
        if (cancelled) throw Cancelled();
        throw RoutingError(ErrorKind::kNoDevice,
                           "the GPU service stopped while answering this call",
                           "It restarts by itself; run the call again (gpu_routing.device = auto "
                           "uses the CPU engine while it is down).");
      }
      continue;  // the state changed under us: read it again
    }
    futex_wait(&slot->state, state, kWaitSliceMs);
  }

  const bool failed = static_cast<SlotState>(slot->state.load()) == SlotState::kFailed;
  if (failed) {
    const auto kind = static_cast<ErrorKind>(slot->error_kind);
    std::string message = slot->message;
    std::string hint = slot->hint;
    release_slot(slot);
    client_.set_held_slot(-1);
    throw RoutingError(kind, message.empty() ? "the GPU service failed this call" : message, hint);
  }
  Stopwatch copy;
  bool answered = true;
  if (paths != nullptr) {
    answered = slot->paths_traced == 1;
    if (answered) {
      const auto* distances = reinterpret_cast<const double*>(base + distances_offset);
      const auto* ends = reinterpret_cast<const std::int64_t*>(base + paths_offset);
      const auto* arcs =
          reinterpret_cast<const ArcIndex*>(base + paths_offset + targets * sizeof(std::int64_t));
      const std::int64_t used = targets > 0 ? ends[targets - 1] : 0;
      // What the service wrote is checked before it is trusted: ends rise within the room.
      for (std::size_t j = 0; answered && j < targets; ++j)
        answered = ends[j] >= (j > 0 ? ends[j - 1] : 0) &&
                   static_cast<std::size_t>(ends[j]) <= path_capacity;
      if (answered) {
        paths->distances.assign(distances, distances + targets);
        paths->ends.assign(ends, ends + targets);
        paths->arcs.assign(arcs, arcs + used);
        const ArcIndex arc_count = graph_.reverse.arc_count();
        for (ArcIndex arc : paths->arcs) answered = answered && arc >= 0 && arc < arc_count;
      }
    }
  } else if (areas != nullptr) {
    answered = read_areas(base, area_room, sources, n, areas);
    if (!answered)
      throw RoutingError(ErrorKind::kInternal,
                         "the GPU service answered service areas that do not fit their graph",
                         "Run the call again; if it repeats, report it.");
  } else if (request.row_pointers != nullptr) {
    copy_rows_to(request.row_pointers, base + distances_offset, row_width, sources,
                 request.row_columns, request.row_column_count);
  } else {
    copy_rows_out(request.distances, request.row_stride, base + distances_offset, row_width,
                  sources);
    if (request.predecessor_arcs != nullptr)
      copy_out(request.predecessor_arcs, base + predecessors_offset, predecessor_bytes);
  }
  report_.device_name = std::string(slot->device_name) + ", through the GPU service";
  report_.compute_ms += slot->compute_ms;
  report_.transfer_ms += slot->transfer_ms + copy.elapsed_ms();
  report_.rounds += slot->rounds;
  ++totals_.requests;
  totals_.answered_ms += watch.elapsed_ms() - copy.elapsed_ms();
  totals_.engine_ms += slot->compute_ms + slot->transfer_ms;
  totals_.copy_ms += copy.elapsed_ms();
  totals_.before_submit_ms += whole.elapsed_ms() - watch.elapsed_ms();
  report_.notes = call_totals_note() + slot->notes;
  service_report_.batch_size = std::max(service_report_.batch_size, slot->batch_size);
  service_report_.wait_ms += slot->wait_ms;
  release_slot(slot);
  client_.set_held_slot(-1);
  // A large segment is dropped when the call ends (~ServiceEngine), not after each request: the
  // call's next batches reuse it, already mapped and its pages present on both sides. Made again
  // for each 80 MB request, its page faults took most of the transfer of a 10,000 x 10,000 New
  // York matrix (260 ms of 930 on the H200 host).
  if (io.size() > g_kept_exchange_bytes.load(std::memory_order_relaxed)) drop_io_at_end_ = true;
  return answered;
}

std::string ServiceEngine::call_totals_note() const {
  char note[200];
  int length = std::snprintf(note, sizeof note, "%d request%s", totals_.requests,
                             totals_.requests == 1 ? "" : "s");
  if (totals_.fresh_segment_bytes > 0)
    length +=
        std::snprintf(note + length, sizeof note - length, " (a fresh exchange segment of %.0f MB)",
                      static_cast<double>(totals_.fresh_segment_bytes) / (1 << 20));
  std::snprintf(note + length, sizeof note - length,
                ", set up in %.1f ms, answered in %.1f ms (the engine's part %.1f), rows copied "
                "into the session in %.1f ms; ",
                totals_.before_submit_ms, totals_.answered_ms, totals_.engine_ms, totals_.copy_ms);
  return note;
}

const ServiceRequestReport* service_report_of(const ShortestPathEngine& engine) {
  const auto* remote = dynamic_cast<const ServiceEngine*>(&engine);
  return remote != nullptr ? &remote->service_report() : nullptr;
}

}  // namespace gpu_routing::service
