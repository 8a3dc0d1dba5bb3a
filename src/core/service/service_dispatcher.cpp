#include "service/service_dispatcher.hpp"

#include <algorithm>
#include <cstring>
#include <cstdlib>
#include <new>

#include "engine/compact_rows.hpp"
#include "engine/gpu.hpp"
#include "base/predecessors.hpp"

namespace gpu_routing::service {

namespace {

constexpr std::int64_t kSweepIntervalNs = 1000000000LL;  // forgotten segments, dead owners
constexpr int kIdleWaitMs = 100;
constexpr std::size_t kMaxBatch = 1024;      // single-source requests in one launch
constexpr std::size_t kMaxIoMappings = 512;  // backends' I/O segments kept mapped
// Scratch rows when the service makes compact rows itself: at most this many bytes at once.
constexpr std::size_t kScratchBytes = std::size_t{256} << 20;

bool is_device_fault(const RoutingError& error) {
  return error.kind() == ErrorKind::kInternal &&
         std::string(error.what()).find("CUDA error") != std::string::npos;
}

// The engine a request names: the mode's own kind first (GPU engines in GPU mode).
const EngineInfo* find_service_engine(const std::string& name, ServiceMode mode) {
  const Device device = mode == ServiceMode::kCpu ? Device::kCpu : Device::kGpu;
  const EngineInfo* info = find_engine(name, device);
  if (info == nullptr)
    info = find_engine(name, device == Device::kCpu ? Device::kGpu : Device::kCpu);
  return info;
}

// Single-source requests share launches of a few to a few dozen sources, which near_far runs one
// thread block per source. With its default 128-thread blocks it runs 16 to 64 sources one after
// another on the whole GPU instead (its frontier measure favours that), and one-to-one New York
// routes go at ~330 a second; with 1024-thread blocks, 1,285 (16 sources), 1,970 (32) and 2,721
// (64), and a lone request takes the same 2.1 ms (bench/route_batch_bench, H100). So the service
// runs near_far's shareable requests with 1024-thread blocks unless the caller set a block size.
constexpr int kSharedLaunchBlockSize = 1024;

int effective_block_size(const std::string& engine, int block_size, std::uint32_t flags,
                         ServiceMode mode) {
  if (block_size != 0 || mode != ServiceMode::kGpu || !(flags & kFlagBatchable) ||
      engine != "near_far")
    return block_size;
  return kSharedLaunchBlockSize;
}

std::string engine_key(const std::string& segment, std::uint64_t inode, const std::string& engine,
                       int threads, int block_size, int streams) {
  return segment + "#" + std::to_string(inode) + "/" + engine + "/" + std::to_string(threads) +
         "/" + std::to_string(block_size) + "/" + std::to_string(streams);
}

void set_worker_state(DeviceEntry& entry, WorkerState state) {
  entry.state.store(static_cast<std::uint32_t>(state));
}

}  // namespace

ServiceDispatcher::ServiceDispatcher(ControlHeader* header, ServiceMode mode,
                                     std::size_t automatic_budget_bytes)
    : header_(header), mode_(mode), automatic_budget_bytes_(automatic_budget_bytes) {
  const int count = std::max(1, std::min(header_->device_count, kMaxDevices));
  for (int d = 0; d < count; ++d) {
    auto worker = std::make_unique<Worker>();
    worker->index = d;
    worker->device = mode_ == ServiceMode::kGpu ? header_->devices[d].physical : -1;
    worker->owner = this;
    // A device whose context could not be made at start is out from the beginning.
    worker->failed =
        static_cast<WorkerState>(header_->devices[d].state.load()) == WorkerState::kFailed;
    workers_.push_back(std::move(worker));
  }
  for (auto& worker : workers_) {
    if (worker->device < 0) continue;  // CPU mode: nothing shared
    worker->sharing =
        static_cast<int>(std::count_if(workers_.begin(), workers_.end(), [&](const auto& other) {
          return other->device == worker->device;
        }));
    auto& lock = device_locks_[worker->device];
    if (!lock) lock = std::make_unique<std::shared_mutex>();
    worker->device_lock = lock.get();
  }
}

void ServiceDispatcher::remove_engines(Worker& worker,
                                       const std::function<bool(const CachedEngine&)>& which) {
  std::vector<std::unique_ptr<CachedEngine>> removed;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto it = worker.engines.begin(); it != worker.engines.end();) {
      if (which(**it)) {
        removed.push_back(std::move(*it));
        it = worker.engines.erase(it);
      } else {
        ++it;
      }
    }
    if (removed.empty()) return;
    publish_graphs();
  }
  // Freed outside the dispatcher's lock: device memory is given back at the device's speed.
  std::unique_lock<std::shared_mutex> exclusive;
  if (worker.device_lock != nullptr)
    exclusive = std::unique_lock<std::shared_mutex>(*worker.device_lock);
  removed.clear();
}

void ServiceDispatcher::take_out(Worker& worker, const std::string& why) {
  DeviceEntry& entry = header_->devices[worker.index];
  worker.failed = true;
  copy_field(entry.failure, sizeof entry.failure, why);
  set_worker_state(entry, WorkerState::kFailed);
}

void ServiceDispatcher::requeue(std::vector<Job>& jobs) {
  for (Job& job : jobs) pending_.push_back(std::move(job));
  jobs.clear();
  std::stable_sort(pending_.begin(), pending_.end(),
                   [](const Job& a, const Job& b) { return a.ticket < b.ticket; });
  header_->queued.store(static_cast<std::uint32_t>(pending_.size()));
  work_.notify_all();
}

ServiceDispatcher::~ServiceDispatcher() {
  // Engines first: they reference the graphs' mappings.
  for (auto& worker : workers_) worker->engines.clear();
  graphs_.clear();
}

std::size_t ServiceDispatcher::budget_bytes() const {
  const std::uint64_t configured = header_->device_budget_bytes.load();
  return configured > 0 ? static_cast<std::size_t>(configured) : automatic_budget_bytes_;
}

std::size_t ServiceDispatcher::worker_budget(const Worker& worker) const {
  // The lanes of one GPU share its memory.
  return budget_bytes() / static_cast<std::size_t>(std::max(1, worker.sharing));
}

std::size_t ServiceDispatcher::device_bytes_in_use() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::size_t total = 0;
  for (const auto& worker : workers_)
    for (const auto& e : worker->engines) total += e->device_bytes;
  return total;
}

std::size_t ServiceDispatcher::cached_engines() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::size_t total = 0;
  for (const auto& worker : workers_) total += worker->engines.size();
  return total;
}

int ServiceDispatcher::live_workers() const {
  int live = 0;
  for (const auto& worker : workers_) live += worker->failed ? 0 : 1;
  return live;
}

std::vector<int> ServiceDispatcher::live_devices() const {
  std::vector<int> devices;
  for (const auto& worker : workers_)
    if (!worker->failed && worker->device >= 0 &&
        std::find(devices.begin(), devices.end(), worker->device) == devices.end())
      devices.push_back(worker->device);
  return devices;
}

bool ServiceDispatcher::device_live(int device) const {
  for (const auto& worker : workers_)
    if (!worker->failed && worker->device == device) return true;
  return false;
}

bool ServiceDispatcher::poll_worker(const void* context) {
  const auto* worker = static_cast<const Worker*>(context);
  const ServiceDispatcher* self = worker->owner;
  if (self->stop_ != nullptr && self->stop_->load(std::memory_order_relaxed)) return true;
  if (worker->poll_slots.empty()) return false;
  for (int slot : worker->poll_slots)
    if (static_cast<SlotState>(self->header_->slots[slot].state.load(std::memory_order_relaxed)) !=
        SlotState::kAbandoned)
      return false;
  return true;
}

int ServiceDispatcher::run(const std::atomic<bool>& stop, bool (*keep_going)()) {
  stop_ = &stop;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (live_workers() == 0) return kExitDeviceFault;
    for (auto& worker : workers_) {
      DeviceEntry& entry = header_->devices[worker->index];
      entry.requests.store(0);
      entry.batches.store(0);
      entry.busy_ns.store(0);
      entry.in_flight.store(0);
      if (worker->failed) continue;
      set_worker_state(entry, WorkerState::kIdle);
      entry.failure[0] = '\0';
    }
  }
  for (auto& worker : workers_)
    if (!worker->failed)
      worker->thread = std::thread([this, w = worker.get()] { worker_loop(*w); });

  int code = kExitStopped;
  while (!stop.load() && (keep_going == nullptr || keep_going())) {
    const std::uint32_t bell = header_->doorbell.load(std::memory_order_acquire);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      collect();
      if (monotonic_ns() - last_sweep_ns_ > kSweepIntervalNs) sweep();
      if (fault_exit_) {
        code = kExitDeviceFault;
        break;
      }
      bool idle = pending_.empty();
      for (const auto& worker : workers_) idle = idle && !worker->busy;
      const std::int64_t now = monotonic_ns();
      if (!idle)
        idle_since_ns_ = 0;
      else if (idle_since_ns_ == 0)
        idle_since_ns_ = now;
      // A device lost to a CUDA error comes back when the process is replaced: once the service
      // has had nothing to do for a while (no request is in flight then).
      if (lost_device_ && idle && now - idle_since_ns_ > recover_after_idle_ns_.load()) {
        std::fprintf(stderr,
                     "gpu_routing service: idle with a device out of service: restarting to "
                     "take it back\n");
        code = kExitDeviceFault;
        break;
      }
    }
    work_.notify_all();
    futex_wait(&header_->doorbell, bell, kIdleWaitMs);
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    exiting_ = true;
  }
  work_.notify_all();
  for (auto& worker : workers_)
    if (worker->thread.joinable()) worker->thread.join();
  return code;
}

void ServiceDispatcher::collect() {
  std::vector<Job> collected;
  for (int i = 0; i < kSlotCount; ++i) {
    RequestSlot& slot = header_->slots[i];
    std::uint32_t state = slot.state.load(std::memory_order_acquire);
    if (static_cast<SlotState>(state) == SlotState::kAbandoned) {
      // Only requests not queued or running can be abandoned here unseen: the others are
      // dropped when their turn comes (still_wanted) or answered when their launch ends.
      bool ours = false;
      for (const Job& job : pending_) ours = ours || job.slot == i;
      for (const auto& worker : workers_) {
        for (int s : worker->poll_slots) ours = ours || s == i;
        ours = ours || (worker->window != nullptr && worker->window->slot == i);
      }
      if (!ours) release_slot_if(&slot, state);
      continue;
    }
    if (static_cast<SlotState>(state) != SlotState::kSubmitted) continue;
    if (!slot.state.compare_exchange_strong(state, static_cast<std::uint32_t>(SlotState::kRunning),
                                            std::memory_order_acq_rel))
      continue;
    Job job;
    job.slot = i;
    job.ticket = slot.ticket;
    job.submitted_ns = slot.submitted_ns;
    job.graph_segment = slot.graph_segment;
    job.index_segment = slot.index_segment;
    job.index_bytes = slot.index_bytes;
    job.engine = slot.engine;
    job.threads = slot.threads;
    job.block_size = slot.block_size;
    job.streams = slot.streams;
    job.flags = slot.flags;
    job.max_memory_bytes = slot.max_memory_bytes;
    job.io_segment = slot.io_segment;
    job.source_count = slot.source_count;
    job.target_count = slot.target_count;
    job.sources_offset = slot.sources_offset;
    job.targets_offset = slot.targets_offset;
    job.distances_offset = slot.distances_offset;
    job.predecessors_offset = slot.predecessors_offset;
    job.paths_offset = slot.paths_offset;
    job.path_capacity = slot.path_capacity;
    job.area_bound = slot.area_bound;
    // Many sources go to every device, a contiguous share each, as the in-backend multi-device
    // engines split them: one part a GPU (its lanes share its multiprocessors), one a worker in
    // CPU mode. Not the dense engines: each part would close the whole matrix.
    const EngineInfo* info = find_service_engine(job.engine, mode_);
    const std::vector<int> devices = live_devices();
    const int live = devices.empty() ? live_workers() : static_cast<int>(devices.size());
    const int parts = !(job.flags & kFlagBatchable) && info != nullptr && !info->dense &&
                              live > 1 && job.source_count > 1
                          ? std::min(live, job.source_count)
                          : 1;
    if (parts == 1) {
      collected.push_back(std::move(job));
      continue;
    }
    auto split = std::make_shared<Split>();
    split->remaining = parts;
    split->parts = parts;
    for (int p = 0; p < parts; ++p) {
      Job part = job;
      part.first_row = static_cast<int>(static_cast<std::int64_t>(job.source_count) * p / parts);
      const int next =
          static_cast<int>(static_cast<std::int64_t>(job.source_count) * (p + 1) / parts);
      part.row_count = next - part.first_row;
      part.split = split;
      if (!devices.empty()) part.part_device = devices[static_cast<std::size_t>(p)];
      collected.push_back(std::move(part));
    }
  }
  requeue(collected);
}

bool ServiceDispatcher::same_group(const Job& a, const Job& b) const {
  constexpr std::uint32_t kFaults = kFlagFaultDevice | kFlagFaultMemory;
  return (a.flags & kFlagBatchable) && (b.flags & kFlagBatchable) && !(a.flags & kFaults) &&
         !(b.flags & kFaults) && a.graph_segment == b.graph_segment && a.engine == b.engine &&
         a.index_segment == b.index_segment && a.threads == b.threads &&
         a.block_size == b.block_size && a.streams == b.streams &&
         (a.flags & kFlagPredecessors) == (b.flags & kFlagPredecessors);
}

bool ServiceDispatcher::holds(const Worker& worker, const Job& job) {
  for (const auto& e : worker.engines)
    if (e->graph->segment == job.graph_segment && job.engine == e->info->name) return true;
  return false;
}

bool ServiceDispatcher::reserved_by_other(const Worker& worker, const Job& job) const {
  for (const auto& other : workers_)
    if (other.get() != &worker && other->window != nullptr && same_group(*other->window, job))
      return true;
  return false;
}

bool ServiceDispatcher::another_lane_idle(const Worker& worker, const Job& job) const {
  for (const auto& other : workers_)
    if (other.get() != &worker && !other->busy && !other->failed && other->window == nullptr &&
        may_take(*other, job))
      return true;
  return false;
}

bool ServiceDispatcher::may_take(const Worker& worker, const Job& job) const {
  // A part is its GPU's; one meant for another GPU is left to it while that GPU serves.
  if (job.part_device >= 0) {
    if (job.part_device == worker.device) return true;
    if (device_live(job.part_device)) return false;
  }
  if (holds(worker, job)) return true;
  // An idle device that holds the graph takes it; a busy one that holds it is waited for only
  // when this device has no room for another copy (a graph lives on every device with room).
  bool held_by_busy = false;
  for (const auto& other : workers_) {
    if (other.get() == &worker || other->failed || !holds(*other, job)) continue;
    if (!other->busy) return false;
    held_by_busy = true;
  }
  if (!held_by_busy) return true;
  const EngineInfo* info = find_service_engine(job.engine, mode_);
  auto found = graphs_.find(job.graph_segment);
  if (info == nullptr || found == graphs_.end()) return true;
  std::size_t used = 0;
  for (const auto& e : worker.engines) used += e->device_bytes;
  return used + info->estimate_bytes(found->second->graph, std::max(1, job.rows())) <=
         worker_budget(worker);
}

std::vector<ServiceDispatcher::Job> ServiceDispatcher::next_group(
    Worker& worker, std::unique_lock<std::mutex>& lock) {
  for (;;) {
    // A worker taken out with another lane of its GPU takes nothing more.
    if (exiting_ || stop_->load() || worker.failed) return {};
    // Drop what was abandoned while it waited.
    for (auto it = pending_.begin(); it != pending_.end();) {
      if (still_wanted(*it)) {
        ++it;
        continue;
      }
      answer(*it, GroupReport(), false, ErrorKind::kInternal, "abandoned", "");
      it = pending_.erase(it);
    }
    std::size_t pick = pending_.size();
    for (std::size_t i = 0; i < pending_.size() && pick == pending_.size(); ++i)
      if (!reserved_by_other(worker, pending_[i]) && may_take(worker, pending_[i])) pick = i;
    if (pick == pending_.size()) {
      work_.wait_for(lock, std::chrono::milliseconds(kIdleWaitMs));
      if (monotonic_ns() - worker.last_sweep_ns > kSweepIntervalNs) {
        lock.unlock();
        sweep_engines(worker);
        lock.lock();
      }
      continue;
    }
    Job first = std::move(pending_[pick]);
    pending_.erase(pending_.begin() + static_cast<std::ptrdiff_t>(pick));
    std::vector<Job> group;
    if (first.flags & kFlagBatchable) {
      // Requests that arrive within the batch window of the oldest one's submission share its
      // launch (requests that arrived while the previous launch ran are already here). While
      // the window is open, the other workers leave the requests that would join it.
      //
      // A road-index group (cch) keeps no window while another lane that could take its
      // requests is idle: its sweep is short, and a window held open there only left that lane
      // idle beside it. On two H200s with three lanes each, New York routes: 5,961 routes/s with
      // the 1 ms window against 12,313 without (one GPU: 7,259 and 8,647), the lanes 14% busy
      // against 79% (docs/results/h200x2_service.md). near_far's launch lasts as long as its
      // longest search, whatever its size, so its groups wait out the window as before.
      const std::int64_t window = static_cast<std::int64_t>(header_->batch_window_ns.load());
      const std::int64_t deadline = first.submitted_ns + window;
      const bool short_sweeps = first.engine == "cch";
      worker.window = &first;
      for (;;) {
        std::size_t size = 1;
        for (const Job& job : pending_) size += same_group(first, job) ? 1 : 0;
        const std::int64_t now = monotonic_ns();
        if (window <= 0 || size >= kMaxBatch || now >= deadline || exiting_ || stop_->load()) break;
        if (short_sweeps && another_lane_idle(worker, first)) break;
        work_.wait_for(lock, std::chrono::nanoseconds(deadline - now));
      }
      worker.window = nullptr;
      group.push_back(std::move(first));
      std::vector<Job> rest;
      for (Job& job : pending_) {
        if (group.size() < kMaxBatch && same_group(group.front(), job))
          group.push_back(std::move(job));
        else
          rest.push_back(std::move(job));
      }
      pending_ = std::move(rest);
    } else {
      group.push_back(std::move(first));
    }
    header_->queued.store(static_cast<std::uint32_t>(pending_.size()));
    return group;
  }
}

void ServiceDispatcher::worker_loop(Worker& worker) {
  DeviceEntry& entry = header_->devices[worker.index];
  if (worker.device >= 0) {
    try {
      gpu::open_context(worker.device);  // current in this thread (made at start)
    } catch (const std::exception& error) {
      std::lock_guard<std::mutex> lock(mutex_);
      take_out(worker, error.what());
      if (live_workers() == 0) fault_exit_ = true;
      return;
    }
  }
  std::unique_lock<std::mutex> lock(mutex_);
  while (!worker.failed) {
    std::vector<Job> group = next_group(worker, lock);
    if (group.empty()) break;
    worker.busy = true;
    for (const Job& job : group) worker.poll_slots.push_back(job.slot);
    lock.unlock();
    set_worker_state(entry, WorkerState::kBusy);
    entry.in_flight.store(group.size());
    // Counted before the run: run_group answers the slots, and a client that has its answer
    // must already see it counted (gpu_routing_info, the tests).
    entry.batches.fetch_add(1);
    entry.requests.fetch_add(group.size());
    const std::int64_t began = monotonic_ns();
    run_group(worker, group);
    entry.busy_ns.fetch_add(static_cast<std::uint64_t>(monotonic_ns() - began));
    entry.in_flight.store(0);
    lock.lock();
    worker.poll_slots.clear();
    worker.busy = false;
    if (!worker.failed) set_worker_state(entry, WorkerState::kIdle);
  }
  if (worker.failed) {
    // Taken out with another lane of its GPU: what it holds goes (its last group, if it failed
    // too, was put back by run_group).
    lock.unlock();
    drop_engines(worker);
  }
}

bool ServiceDispatcher::still_wanted(const Job& job) const {
  const RequestSlot& slot = header_->slots[job.slot];
  return static_cast<SlotState>(slot.state.load(std::memory_order_acquire)) ==
             SlotState::kRunning &&
         slot.ticket == job.ticket;
}

std::shared_ptr<ServiceDispatcher::CachedGraph> ServiceDispatcher::graph_for(
    const std::string& segment) {
  const std::uint64_t inode = segment_inode(segment);
  if (inode == 0)
    throw RoutingError(ErrorKind::kInternal,
                       "the GPU service cannot find the graph's shared memory " + segment,
                       "The graph was freed before the service read it; run the call again.");
  auto found = graphs_.find(segment);
  if (found != graphs_.end() && found->second->inode == inode) return found->second;
  auto graph = std::make_shared<CachedGraph>();
  graph->segment = segment;
  graph->mapping = SharedMapping::open(segment, false);
  graph->inode = graph->mapping.inode();
  graph->graph = view_graph_image(graph->mapping.data(), graph->mapping.size());
  graphs_[segment] = graph;
  return graph;
}

std::shared_ptr<SharedMapping> ServiceDispatcher::io_for(const Job& job) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto found = io_.find(job.io_segment);
  // A name can come back with another segment behind it: a backend pid used again restarts the
  // sequence its segments' names carry. The mapping of the old, unlinked segment would take the
  // answer while the backend reads its new one (the sweep notices only within a second).
  if (found != io_.end() && found->second.mapping->inode() != segment_inode(job.io_segment)) {
    io_.erase(found);
    found = io_.end();
  }
  if (found == io_.end()) {
    if (io_.size() >= kMaxIoMappings) {
      auto oldest = std::min_element(io_.begin(), io_.end(), [](const auto& a, const auto& b) {
        return a.second.last_used < b.second.last_used;
      });
      io_.erase(oldest);  // a worker still writing into it holds its own reference
    }
    Io io;
    io.mapping = std::make_shared<SharedMapping>(SharedMapping::open(job.io_segment, true));
    found = io_.emplace(job.io_segment, std::move(io)).first;
  }
  found->second.last_used = ++clock_;
  return found->second.mapping;
}

void ServiceDispatcher::check_job(const Job& job, const SharedMapping& io_mapping,
                                  const Graph& graph) const {
  const char* io = static_cast<const char*>(io_mapping.data());
  const std::size_t io_bytes = io_mapping.size();
  const std::size_t n = static_cast<std::size_t>(graph.vertex_count());
  const std::size_t sources = static_cast<std::size_t>(std::max(job.source_count, 0));
  const std::size_t targets = static_cast<std::size_t>(std::max(job.target_count, 0));
  const bool traced = (job.flags & kFlagTracePaths) != 0;
  const bool areas = (job.flags & kFlagAreas) != 0;
  const std::size_t width = (job.flags & kFlagCompact) || traced || areas ? targets : n;
  auto ends_inside = [&](std::uint64_t offset, std::size_t bytes) {
    return offset <= io_bytes && bytes <= io_bytes - offset;
  };
  bool ok =
      job.source_count >= 0 && job.target_count >= 0 &&
      (!traced ||
       (job.source_count == 1 && (job.flags & kFlagTargets) && !(job.flags & kFlagCompact) &&
        !(job.flags & kFlagPredecessors) && job.path_capacity <= io_bytes &&
        ends_inside(job.paths_offset,
                    saturating_add(targets * sizeof(std::int64_t),
                                   saturating_multiply(job.path_capacity, sizeof(ArcIndex)))))) &&
      (!areas ||
       (!traced && !(job.flags & (kFlagCompact | kFlagPredecessors | kFlagTargets)) &&
        job.path_capacity == n && area_layout(job.paths_offset, sources, n).end <= io_bytes)) &&
      (job.row_count < 0 || (job.first_row >= 0 && job.row_count >= 0 &&
                             job.first_row + job.row_count <= job.source_count)) &&
      ends_inside(job.sources_offset, sources * sizeof(VertexIndex)) &&
      ends_inside(job.targets_offset, targets * sizeof(VertexIndex)) &&
      ends_inside(job.distances_offset, saturating_multiply(sources * sizeof(double), width)) &&
      (!(job.flags & kFlagPredecessors) ||
       ends_inside(job.predecessors_offset, saturating_multiply(sources * sizeof(ArcIndex), n)));
  if (ok) {
    const auto* source_ids = reinterpret_cast<const VertexIndex*>(io + job.sources_offset);
    for (std::size_t i = 0; ok && i < sources; ++i)
      ok = source_ids[i] >= 0 && static_cast<std::size_t>(source_ids[i]) < n;
    const auto* target_ids = reinterpret_cast<const VertexIndex*>(io + job.targets_offset);
    for (std::size_t i = 0; ok && (job.flags & kFlagTargets) && i < targets; ++i)
      ok = target_ids[i] >= 0 && static_cast<std::size_t>(target_ids[i]) < n;
  }
  if (!ok)
    throw RoutingError(ErrorKind::kInternal,
                       "the GPU service received a request that does not match its graph (" +
                           job.graph_segment + ", " + std::to_string(n) +
                           " vertices) or its "
                           "exchange segment",
                       "Run the call again; if it repeats, report it.");
}

void ServiceDispatcher::write_traced_paths(const Job& job, char* io, const double* row,
                                           const double* own_distances,
                                           const ArcIndex* predecessor_row, const Graph& graph) {
  const TracedPathsRoom room{job.sources_offset,   job.targets_offset,
                             job.distances_offset, job.paths_offset,
                             job.path_capacity,    static_cast<std::size_t>(job.target_count)};
  const bool fits =
      service::write_traced_paths(io, room, row, own_distances, predecessor_row, graph);
  // The slot is this job's until it is answered (a slot abandoned meanwhile is freed only then).
  header_->slots[job.slot].paths_traced = fits ? 1 : 0;
}

void ServiceDispatcher::make_room(Worker& worker, std::size_t needed, const CachedEngine* keep) {
  const std::size_t budget = worker_budget(worker);
  // Only this worker's thread changes its engine list, so it reads the list unlocked here.
  for (;;) {
    std::size_t used = 0;
    const CachedEngine* victim = nullptr;  // the least recently used but the one about to run
    for (const auto& e : worker.engines) {
      if (e.get() == keep) continue;
      used += e->device_bytes;
      if (victim == nullptr || e->last_used < victim->last_used) victim = e.get();
    }
    if (used + needed <= budget || victim == nullptr) return;
    std::fprintf(stderr, "gpu_routing service: evicting %s (%s) from device %d to make room\n",
                 victim->graph->segment.c_str(), format_bytes(victim->device_bytes).c_str(),
                 worker.index);
    remove_engines(worker, [victim](const CachedEngine& e) { return &e == victim; });
  }
}

void ServiceDispatcher::drop_engines(Worker& worker) {
  remove_engines(worker, [](const CachedEngine&) { return true; });
  worker.scratch_distances.release();
  worker.scratch_arcs.release();
}

void ServiceDispatcher::sweep_engines(Worker& worker) {
  worker.last_sweep_ns = monotonic_ns();
  // Engines of graphs whose segment is gone or replaced (a kept graph rebuilt or evicted, an
  // edges_sql call that ended).
  // Looked up before taking the dispatcher's lock (a stat each).
  std::vector<const CachedEngine*> gone;
  for (const auto& e : worker.engines)
    if (segment_inode(e->graph->segment) != e->graph->inode) gone.push_back(e.get());
  if (gone.empty()) return;
  remove_engines(worker, [&gone](const CachedEngine& e) {
    return std::find(gone.begin(), gone.end(), &e) != gone.end();
  });
}

ServiceDispatcher::CachedEngine& ServiceDispatcher::engine_for(Worker& worker, const Job& job,
                                                               std::size_t sources) {
  std::shared_ptr<CachedGraph> graph;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    graph = graph_for(job.graph_segment);
  }
  const int block_size = effective_block_size(job.engine, job.block_size, job.flags, mode_);
  // cch answers from the kept graph's road index when the request names one (a new index is a
  // new segment, hence a new engine).
  const bool with_index = job.engine == "cch" && !job.index_segment.empty();
  const std::string key = engine_key(job.graph_segment, graph->inode, job.engine, job.threads,
                                     block_size, job.streams) +
                          (with_index ? "/" + job.index_segment + "/" +
                                            std::to_string(segment_inode(job.index_segment)) + "/" +
                                            std::to_string(job.index_bytes)
                                      : std::string());
  const EngineInfo* info = find_service_engine(job.engine, mode_);
  if (info == nullptr)
    throw RoutingError(ErrorKind::kInvalidParameter,
                       "the GPU service has no engine named \"" + job.engine + "\"");
  // The graph's CSR (forward and reversed) and the engine's buffers for this many sources.
  const std::size_t graph_bytes =
      graph->graph.forward.memory_bytes() + graph->graph.reverse.memory_bytes();
  const std::size_t needed =
      saturating_add(info->estimate_bytes(graph->graph, static_cast<int>(sources)), 0);
  const std::size_t budget = worker_budget(worker);
  if (needed > budget)
    throw RoutingError(
        ErrorKind::kOutOfMemory,
        "this call needs " + format_bytes(needed) + " of " +
            (mode_ == ServiceMode::kCpu ? std::string("service memory")
                                        : std::string("GPU memory")) +
            " (a graph of " + format_bytes(graph_bytes) + " and the engine's buffers for " +
            std::to_string(sources) + " sources), more than the GPU service's budget of " +
            format_bytes(budget) +
            (worker.sharing > 1 ? " per lane (gpu_routing.gpu_graph_memory over " +
                                      std::to_string(worker.sharing) + " lanes of the GPU)"
                                : std::string(" (gpu_routing.gpu_graph_memory)")),
        "Raise gpu_routing.gpu_graph_memory, ask for fewer sources per call, or set "
        "gpu_routing.device = cpu.");
  CachedEngine* cached = nullptr;
  for (auto& e : worker.engines)
    if (e->key == key) cached = e.get();
  if (cached != nullptr && needed > cached->device_bytes) {
    make_room(worker, needed, cached);
    std::lock_guard<std::mutex> lock(mutex_);
    cached->device_bytes = needed;
  }
  if (cached == nullptr) {
    make_room(worker, needed, nullptr);
    EngineOptions options;
    options.threads = job.threads;
    options.block_size = block_size;
    options.streams = job.streams;
    options.budget = MemoryBudget(budget);
    options.cancel = CancelToken(poll_worker, &worker);
    options.device = worker.device;
    auto entry = std::make_unique<CachedEngine>();
    entry->key = key;
    entry->graph = graph;
    entry->info = info;
    if (with_index) {
      entry->index_mapping = SharedMapping::open(job.index_segment, false);
      if (job.index_bytes > entry->index_mapping.size())
        throw RoutingError(ErrorKind::kInternal,
                           "the GPU service found the road index's shared memory " +
                               job.index_segment + " smaller than the request says");
      entry->index = std::make_unique<Cch>(
          Cch::view_image(entry->index_mapping.data(), job.index_bytes, graph->graph));
      options.road_index = entry->index.get();
    }
    {
      std::unique_lock<std::shared_mutex> exclusive;
      if (worker.device_lock != nullptr)
        exclusive = std::unique_lock<std::shared_mutex>(*worker.device_lock);
      entry->engine = info->create(graph->graph, options);
    }
    entry->device_bytes = needed;
    std::lock_guard<std::mutex> lock(mutex_);
    worker.engines.push_back(std::move(entry));
    cached = worker.engines.back().get();
    publish_graphs();
  }
  cached->last_used = ++worker.clock;
  return *cached;
}

void ServiceDispatcher::run_group(Worker& worker, std::vector<Job>& group) {
  // Sharing a launch is the service's choice, not the callers': when the whole group's launch
  // would need more than the device budget while fewer of its requests fit, as many as fit run
  // now and the rest go back to the queue (they run next, oldest first). Without this, batching
  // turned requests that fit alone into "more than the budget" failures.
  if (group.size() > 1) {
    std::size_t fitting = group.size();
    try {
      const EngineInfo* info = find_service_engine(group.front().engine, mode_);
      std::shared_ptr<CachedGraph> graph;
      {
        std::lock_guard<std::mutex> lock(mutex_);
        graph = graph_for(group.front().graph_segment);
      }
      const std::size_t budget = worker_budget(worker);
      while (info != nullptr && fitting > 1 &&
             info->estimate_bytes(graph->graph, static_cast<int>(fitting)) > budget)
        --fitting;
    } catch (const RoutingError&) {
      fitting = group.size();  // engine_for reports it for the whole group
    }
    if (fitting < group.size()) {
      std::lock_guard<std::mutex> lock(mutex_);
      std::vector<Job> later(std::make_move_iterator(group.begin() + static_cast<long>(fitting)),
                             std::make_move_iterator(group.end()));
      group.resize(fitting);
      worker.poll_slots.clear();
      for (const Job& job : group) worker.poll_slots.push_back(job.slot);
      requeue(later);
    }
  }
  const Job& front = group.front();
  GroupReport& report = worker.report;
  report = GroupReport();
  report.launched_ns = monotonic_ns();
  report.group_size = front.split ? 1 : group.size();
  bool device_fault = false;
  ErrorKind kind = ErrorKind::kInternal;
  std::string message, hint;
  bool ok = false;
  try {
    // The injected device fault hits a request's first run only (its first part when split): a
    // retry on another device then succeeds, as after a real fault.
    if ((front.flags & kFlagFaultDevice) && front.attempts == 0 && front.first_row == 0)
      throw RoutingError(ErrorKind::kInternal,
                         "CUDA error 700 (cudaErrorIllegalAddress: an illegal memory access was "
                         "encountered) in a launch (injected by gpu_routing.test_fault)");
    if (front.flags & kFlagFaultMemory)
      throw RoutingError(ErrorKind::kOutOfMemory,
                         "out of GPU memory: CUDA error 2 (cudaErrorMemoryAllocation) in "
                         "cudaMalloc (injected by gpu_routing.test_fault)");
    std::size_t sources = 0;
    for (const Job& job : group) sources += static_cast<std::size_t>(job.rows());
    CachedEngine& cached = engine_for(worker, front, sources);
    std::shared_lock<std::shared_mutex> launching;
    if (worker.device_lock != nullptr)
      launching = std::shared_lock<std::shared_mutex>(*worker.device_lock);
    cached.engine->rebind([&] {
      EngineOptions options = cached.engine->options();
      options.cancel = CancelToken(poll_worker, &worker);
      options.budget = MemoryBudget(worker_budget(worker));
      return options;
    }());
    solve_group(worker, group, cached);
    cached.requests += group.size();
    ok = true;
    std::lock_guard<std::mutex> lock(mutex_);
    publish_graphs();
  } catch (const Cancelled&) {
    // Every request of the group was abandoned (or the service is stopping).
    kind = ErrorKind::kNoDevice;
    message = "the GPU service is stopping";
    hint = "It restarts by itself; run the call again.";
  } catch (const RoutingError& error) {
    kind = error.kind();
    message = error.what();
    hint = error.hint();
    device_fault = is_device_fault(error);
    if (kind == ErrorKind::kOutOfMemory && message.find("budget") == std::string::npos) {
      // Device memory ran out under the budget (other processes): start from an empty cache.
      drop_engines(worker);
      if (hint.empty())
        hint =
            "The GPU service freed the graphs it kept on the device; run the call again, or "
            "lower gpu_routing.gpu_graph_memory if other programs share the GPU.";
    }
  } catch (const std::bad_alloc&) {
    kind = ErrorKind::kOutOfMemory;
    message = "the GPU service ran out of host memory";
  } catch (const std::exception& error) {
    message = std::string("the GPU service failed: ") + error.what();
  }
  header_->batches.fetch_add(1);
  header_->batched_requests.fetch_add(group.size());
  if (device_fault) {
    // The context of this device may be poisoned: the device leaves the service, with the other
    // lanes of its GPU (they share the context; each drops its engines and puts back what it
    // runs when it notices). Its requests run again on another device; with none left the
    // process ends and a fresh one starts.
    std::fprintf(stderr, "gpu_routing service: device %d out of service: %s\n", worker.index,
                 message.c_str());
    drop_engines(worker);
    std::lock_guard<std::mutex> lock(mutex_);
    lost_device_ = true;
    take_out(worker, message);
    for (auto& other : workers_)
      if (!other->failed && worker.device >= 0 && other->device == worker.device)
        take_out(*other, "another lane of this GPU: " + message);
    if (live_workers() > 0) {
      for (Job& job : group) ++job.attempts;
      requeue(group);
      return;
    }
    fault_exit_ = true;
    hint = "The GPU service restarts with a fresh GPU context; run the call again.";
  }
  for (const Job& job : group) answer(job, report, ok, kind, message, hint);
}

// A request (or a split part) alone: the engine writes straight into the backend's segment,
// this part's rows only.
void ServiceDispatcher::solve_rows_alone(ShortestPathEngine& engine, const Job& first, char* io,
                                         std::size_t n) {
  const bool compact = (first.flags & kFlagCompact) != 0;
  const bool predecessors = (first.flags & kFlagPredecessors) != 0;
  const std::size_t row = static_cast<std::size_t>(std::max(first.first_row, 0));
  const int rows = first.rows();
  const std::size_t width = compact ? static_cast<std::size_t>(first.target_count) : n;
  SolveRequest request;
  request.sources = reinterpret_cast<const VertexIndex*>(io + first.sources_offset) + row;
  request.source_count = rows;
  const bool with_targets = (first.flags & kFlagTargets) != 0;
  if (with_targets) {
    request.targets = reinterpret_cast<const VertexIndex*>(io + first.targets_offset);
    request.target_count = first.target_count;
  }
  request.distances = reinterpret_cast<double*>(io + first.distances_offset) + row * width;
  if (predecessors)
    request.predecessor_arcs =
        reinterpret_cast<ArcIndex*>(io + first.predecessors_offset) + row * n;
  if (!compact || engine.supports_compact_targets()) {
    request.compact_targets = compact;
    if (rows > 0) engine.solve(request);
  } else {
    // Compact rows made here from full ones, a few sources at a time.
    std::vector<double> scratch;
    solve_compact_from_whole_rows(engine, request, scratch, kScratchBytes);
  }
}

void ServiceDispatcher::solve_areas_alone(ShortestPathEngine& engine, const Job& job, char* io,
                                          std::size_t n) {
  const std::size_t row = static_cast<std::size_t>(std::max(job.first_row, 0));
  const int rows = job.rows();
  if (rows <= 0) return;
  AreaLists areas;
  engine.solve_areas(reinterpret_cast<const VertexIndex*>(io + job.sources_offset) + row, rows,
                     job.area_bound, areas);
  if (areas.ends.size() != static_cast<std::size_t>(rows))
    throw RoutingError(ErrorKind::kInternal, "the engine returned another number of areas");
  if (!write_areas(areas, io,
                   area_layout(job.paths_offset, static_cast<std::size_t>(job.source_count), n),
                   row, n))
    throw RoutingError(ErrorKind::kInternal, "the engine returned an area larger than its graph");
}

void ServiceDispatcher::solve_group(Worker& worker, std::vector<Job>& group, CachedEngine& cached) {
  ShortestPathEngine& engine = *cached.engine;
  const Graph& graph = cached.graph->graph;
  const std::size_t n = static_cast<std::size_t>(graph.vertex_count());
  const EngineReport before = engine.report();
  GroupReport& report = worker.report;
  const Job& first = group.front();
  const bool predecessors = (first.flags & kFlagPredecessors) != 0;
  if (predecessors && !has_reverse(graph))
    throw RoutingError(ErrorKind::kInternal,
                       "predecessors asked for on a graph image without its reversed CSR");

  if (group.size() == 1) {
    // Alone (or a part of a split request).
    std::shared_ptr<SharedMapping> io_mapping = io_for(first);
    check_job(first, *io_mapping, graph);
    char* io = static_cast<char*>(io_mapping->data());
    if (first.flags & kFlagAreas) {
      solve_areas_alone(engine, first, io, n);
    } else if (first.flags & kFlagTracePaths) {
      // The paths to the targets go back: traced from the row, which stays here, or read from the
      // predecessors where the engine can leave its rows where they are.
      const bool without_rows = has_reverse(graph) && engine.supports_paths_without_rows();
      const int offsets[2] = {0, first.target_count};
      SolveRequest request;
      request.sources = reinterpret_cast<const VertexIndex*>(io + first.sources_offset);
      request.source_count = 1;
      request.targets = reinterpret_cast<const VertexIndex*>(io + first.targets_offset);
      request.target_count = first.target_count;
      request.distances = static_cast<double*>(worker.scratch_distances.get(
          (without_rows ? static_cast<std::size_t>(first.target_count) : n) * sizeof(double)));
      if (without_rows) {
        request.target_offsets = offsets;
        request.own_target_distances = true;
        request.predecessor_arcs =
            static_cast<ArcIndex*>(worker.scratch_arcs.get(n * sizeof(ArcIndex)));
      }
      engine.solve(request);
      Stopwatch trace;
      write_traced_paths(first, io, without_rows ? nullptr : request.distances,
                         without_rows ? request.distances : nullptr, request.predecessor_arcs,
                         graph);
      report.transfer_ms += trace.elapsed_ms();
    } else {
      solve_rows_alone(engine, first, io, n);
    }
  } else {
    // Single-source requests sharing one launch: each gets its own row, exactly the row it would
    // get alone (the same fixed point, the same predecessor rule). When every request gave
    // targets (one-to-one paths), each source keeps its own as its early-exit hint
    // (target_offsets); an engine that cannot stop sources separately treats them all as every
    // source's hint. Either way, every vertex nearer than a request's own targets is final, and
    // that is all its path is traced through.
    std::vector<VertexIndex> sources;
    sources.reserve(group.size());
    bool all_targets = true, all_traced = true;
    std::vector<VertexIndex> targets;
    std::vector<int> target_offsets{0};
    std::vector<std::shared_ptr<SharedMapping>> mappings(group.size());
    for (std::size_t i = 0; i < group.size(); ++i) {
      const Job& job = group[i];
      // A request abandoned while it waited for this launch (cancelled during the batch window)
      // may have had its I/O segment removed by its owner already: it gets a row that nobody
      // reads (vertex 0, its own target: done at once) rather than failing the whole launch.
      try {
        mappings[i] = io_for(job);
      } catch (const RoutingError&) {
        if (still_wanted(job)) throw;
      }
      if (mappings[i] == nullptr) {
        sources.push_back(0);
        targets.push_back(0);
        target_offsets.push_back(static_cast<int>(targets.size()));
        continue;
      }
      check_job(job, *mappings[i], graph);
      const char* io = static_cast<const char*>(mappings[i]->data());
      sources.push_back(*reinterpret_cast<const VertexIndex*>(io + job.sources_offset));
      if (!(job.flags & kFlagTracePaths)) all_traced = false;
      if (!(job.flags & kFlagTargets) || job.target_count <= 0) {
        all_targets = false;
      } else if (all_targets) {
        const auto* own = reinterpret_cast<const VertexIndex*>(io + job.targets_offset);
        targets.insert(targets.end(), own, own + job.target_count);
        target_offsets.push_back(static_cast<int>(targets.size()));
      }
    }
    // Every request a traced path, on an engine that can leave its rows where they are: only the
    // predecessors and each request's own targets' distances come back (a quarter of the bytes of
    // full rows and predecessors, half of the rows alone).
    const bool without_rows = all_traced && all_targets && !predecessors && has_reverse(graph) &&
                              target_offsets.size() == group.size() + 1 &&
                              engine.supports_paths_without_rows();
    auto* distances = static_cast<double*>(worker.scratch_distances.get(
        (without_rows ? targets.size() : group.size() * n) * sizeof(double)));
    auto* arcs =
        predecessors || without_rows
            ? static_cast<ArcIndex*>(worker.scratch_arcs.get(group.size() * n * sizeof(ArcIndex)))
            : nullptr;
    SolveRequest request;
    request.sources = sources.data();
    request.source_count = static_cast<int>(sources.size());
    request.distances = distances;
    if (predecessors || without_rows) request.predecessor_arcs = arcs;
    request.own_target_distances = without_rows;
    if (all_targets && !predecessors && !targets.empty()) {
      request.targets = targets.data();
      request.target_count = static_cast<int>(targets.size());
      request.target_offsets = target_offsets.data();
    }
    engine.solve(request);
    Stopwatch copy;
    std::vector<char*> destinations(group.size(), nullptr);
    for (std::size_t i = 0; i < group.size(); ++i)
      if (mappings[i] != nullptr && still_wanted(group[i]))
        destinations[i] = static_cast<char*>(mappings[i]->data());
    // The rows go out in parallel: 64 New York rows are 135 MB, ~13 ms for one thread.
    const int copiers = static_cast<int>(std::min<std::size_t>(group.size(), 8));
#pragma omp parallel for num_threads(copiers) schedule(dynamic, 1)
    for (std::size_t i = 0; i < group.size(); ++i) {
      char* io = destinations[i];
      if (io == nullptr) continue;
      if (without_rows) {
        write_traced_paths(group[i], io, nullptr, distances + target_offsets[i], arcs + i * n,
                           graph);
        continue;
      }
      if (group[i].flags & kFlagTracePaths) {
        write_traced_paths(group[i], io, distances + i * n, nullptr, nullptr, graph);
        continue;
      }
      std::memcpy(io + group[i].distances_offset, distances + i * n, n * sizeof(double));
      if (predecessors)
        std::memcpy(io + group[i].predecessors_offset, arcs + i * n, n * sizeof(ArcIndex));
    }
    report.transfer_ms += copy.elapsed_ms();
  }
  const EngineReport& after = engine.report();
  report.device_name = after.device_name;
  report.compute_ms += after.compute_ms - before.compute_ms;
  report.transfer_ms += after.transfer_ms - before.transfer_ms;
  report.rounds = after.rounds - before.rounds;
  report.notes = after.notes;
}

void* ServiceDispatcher::Scratch::get(std::size_t bytes) {
  if (bytes <= bytes_ && memory_ != nullptr) return memory_;
  release();
  const std::size_t size = std::max<std::size_t>(bytes + bytes / 4, std::size_t{1} << 20);
  memory_ = gpu::allocate_pinned(size);
  pinned_ = memory_ != nullptr;
  if (memory_ == nullptr) memory_ = std::malloc(size);
  if (memory_ == nullptr) throw std::bad_alloc();
  bytes_ = size;
  return memory_;
}

void ServiceDispatcher::Scratch::release() {
  if (memory_ != nullptr) {
    if (pinned_)
      gpu::free_pinned(memory_);
    else
      std::free(memory_);
  }
  memory_ = nullptr;
  bytes_ = 0;
}

void ServiceDispatcher::answer(const Job& job, const GroupReport& report, bool ok, ErrorKind kind,
                               const std::string& message, const std::string& hint) {
  if (!job.split) {
    answer_slot(job, report, ok, kind, message, hint);
    return;
  }
  // A part of a split request: the request is answered with the last part, with the first
  // failure if any part failed, and the parts' devices named together.
  Split& split = *job.split;
  GroupReport merged;
  std::string merged_message, merged_hint;
  bool merged_ok = false;
  ErrorKind merged_kind = ErrorKind::kInternal;
  {
    std::lock_guard<std::mutex> lock(split.mutex);
    if (!ok && split.ok) {
      split.ok = false;
      split.kind = kind;
      split.message = message;
      split.hint = hint;
    }
    if (!report.device_name.empty() &&
        split.device_names.find(report.device_name) == std::string::npos)
      split.device_names += (split.device_names.empty() ? "" : " and ") + report.device_name;
    if (split.notes.empty()) split.notes = report.notes;
    split.compute_ms = std::max(split.compute_ms, report.compute_ms);
    split.transfer_ms = std::max(split.transfer_ms, report.transfer_ms);
    split.rounds += report.rounds;
    if (report.launched_ns > 0 &&
        (split.launched_ns == 0 || report.launched_ns < split.launched_ns))
      split.launched_ns = report.launched_ns;
    if (--split.remaining > 0) return;
    merged.device_name = split.device_names;
    // First: the engines' notes are long and the slot's field is not.
    merged.notes = "rows split over " + std::to_string(split.parts) + " service workers" +
                   (split.notes.empty() ? "" : "; ") + split.notes;
    merged.compute_ms = split.compute_ms;
    merged.transfer_ms = split.transfer_ms;
    merged.rounds = split.rounds;
    merged.launched_ns = split.launched_ns;
    merged.group_size = 1;
    merged_ok = split.ok;
    merged_kind = split.kind;
    merged_message = split.message;
    merged_hint = split.hint;
  }
  answer_slot(job, merged, merged_ok, merged_kind, merged_message, merged_hint);
}

void ServiceDispatcher::answer_slot(const Job& job, const GroupReport& report, bool ok,
                                    ErrorKind kind, const std::string& message,
                                    const std::string& hint) {
  RequestSlot& slot = header_->slots[job.slot];
  // A slot freed and taken by another request meanwhile is not this job's any more (the service
  // frees a slot only after answering it, so this is a defence, not a path).
  if (slot.ticket != job.ticket) return;
  std::uint32_t expected = static_cast<std::uint32_t>(SlotState::kRunning);
  if (static_cast<SlotState>(slot.state.load()) == SlotState::kRunning) {
    header_->requests.fetch_add(1);
    if (!ok) header_->failed_requests.fetch_add(1);
    slot.error_kind = static_cast<std::int32_t>(kind);
    slot.batch_size = static_cast<std::int32_t>(std::max<std::size_t>(1, report.group_size));
    slot.wait_ms = report.launched_ns > 0
                       ? static_cast<double>(report.launched_ns - job.submitted_ns) / 1e6
                       : 0.0;
    slot.compute_ms = report.compute_ms;
    slot.transfer_ms = report.transfer_ms;
    slot.rounds = report.rounds;
    copy_field(slot.device_name, sizeof slot.device_name, report.device_name);
    copy_field(slot.notes, sizeof slot.notes, report.notes);
    copy_field(slot.message, sizeof slot.message, message);
    copy_field(slot.hint, sizeof slot.hint, hint);
  }
  const auto next = ok ? SlotState::kDone : SlotState::kFailed;
  if (!slot.state.compare_exchange_strong(expected, static_cast<std::uint32_t>(next),
                                          std::memory_order_acq_rel)) {
    // Abandoned while it ran: nobody reads the answer.
    if (static_cast<SlotState>(expected) == SlotState::kAbandoned) release_slot_if(&slot, expected);
  }
  futex_wake_all(&slot.state);
}

void ServiceDispatcher::sweep() {
  last_sweep_ns_ = monotonic_ns();
  // Graphs whose segment is gone or replaced: the mappings go (engines holding one keep it until
  // their worker's own sweep drops them).
  for (auto it = graphs_.begin(); it != graphs_.end();) {
    if (segment_inode(it->first) != it->second->inode)
      it = graphs_.erase(it);
    else
      ++it;
  }
  for (auto it = io_.begin(); it != io_.end();) {
    if (segment_inode(it->first) != it->second.mapping->inode())
      it = io_.erase(it);
    else
      ++it;
  }
  reclaim_dead_owners(header_);
}

void ServiceDispatcher::publish_graphs() {
  header_->graphs_seq.fetch_add(1, std::memory_order_acq_rel);  // odd: being written
  int count = 0;
  std::size_t total = 0;
  for (const auto& worker : workers_) {
    for (const auto& e : worker->engines) {
      total += e->device_bytes;
      if (count >= kMaxListedGraphs) continue;
      ListedGraph& listed = header_->graphs[count++];
      copy_field(listed.segment, sizeof listed.segment, e->graph->segment);
      copy_field(listed.engine, sizeof listed.engine, e->info->name);
      listed.device = worker->index;
      listed.vertices = e->graph->graph.vertex_count();
      listed.arcs = e->graph->graph.arc_count();
      listed.device_bytes = e->device_bytes;
      listed.requests = e->requests.load();
    }
  }
  header_->graph_count = count;
  header_->device_bytes_used.store(total);
  header_->device_budget_in_use.store(budget_bytes());
  header_->graphs_seq.fetch_add(1, std::memory_order_acq_rel);  // even: consistent
}

}  // namespace gpu_routing::service
