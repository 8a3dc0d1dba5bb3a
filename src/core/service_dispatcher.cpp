#include "service_dispatcher.hpp"

#include <algorithm>
#include <cstring>
#include <cstdlib>
#include <new>

#include "gpu.hpp"

namespace gpu_routing::service {

namespace {

constexpr std::int64_t kSweepIntervalNs = 1000000000LL;  // forgotten segments, dead owners
constexpr int kIdleWaitMs = 100;
constexpr std::size_t kMaxBatch = 1024;      // single-source requests in one launch
constexpr std::size_t kMaxIoMappings = 512;  // backends' I/O segments kept mapped
// Scratch rows when the service makes compact rows itself: at most this many bytes at once.
constexpr std::size_t kScratchBytes = std::size_t{256} << 20;

// What the engines' cancel poll reads: the slots of the group in flight. The poll is a plain
// function (CancelToken), so it reads these; only the dispatcher thread writes them, between
// launches, while no engine polls.
ControlHeader* g_poll_header = nullptr;
const std::atomic<bool>* g_poll_stop = nullptr;
std::vector<int> g_poll_slots;

bool group_abandoned() {
  if (g_poll_stop != nullptr && g_poll_stop->load(std::memory_order_relaxed)) return true;
  if (g_poll_header == nullptr || g_poll_slots.empty()) return false;
  for (int slot : g_poll_slots)
    if (static_cast<SlotState>(g_poll_header->slots[slot].state.load(std::memory_order_relaxed)) !=
        SlotState::kAbandoned)
      return false;
  return true;
}

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

}  // namespace

ServiceDispatcher::ServiceDispatcher(ControlHeader* header, ServiceMode mode,
                                     std::size_t automatic_budget_bytes)
    : header_(header), mode_(mode), automatic_budget_bytes_(automatic_budget_bytes) {}

ServiceDispatcher::~ServiceDispatcher() {
  // Engines first: they reference the graphs' mappings.
  engines_.clear();
  graphs_.clear();
}

std::size_t ServiceDispatcher::budget_bytes() const {
  const std::uint64_t configured = header_->device_budget_bytes.load();
  return configured > 0 ? static_cast<std::size_t>(configured) : automatic_budget_bytes_;
}

std::size_t ServiceDispatcher::device_bytes_in_use() const {
  std::size_t total = 0;
  for (const auto& e : engines_) total += e->device_bytes;
  return total;
}

int ServiceDispatcher::run(const std::atomic<bool>& stop, bool (*keep_going)()) {
  g_poll_header = header_;
  g_poll_stop = &stop;
  while (!stop.load() && (keep_going == nullptr || keep_going())) {
    const std::uint32_t bell = header_->doorbell.load(std::memory_order_acquire);
    collect();
    if (monotonic_ns() - last_sweep_ns_ > kSweepIntervalNs) sweep();
    if (pending_.empty()) {
      futex_wait(&header_->doorbell, bell, kIdleWaitMs);
      continue;
    }
    std::vector<Job> group = next_group();
    if (group.empty()) continue;
    if (!run_group(group)) return kExitDeviceFault;
  }
  return kExitStopped;
}

void ServiceDispatcher::collect() {
  for (int i = 0; i < kSlotCount; ++i) {
    RequestSlot& slot = header_->slots[i];
    std::uint32_t state = slot.state.load(std::memory_order_acquire);
    if (static_cast<SlotState>(state) == SlotState::kAbandoned) {
      // Only requests not in pending_ can be abandoned here unseen: those in pending_ are
      // dropped when their turn comes (still_wanted), and freed there.
      bool queued = false;
      for (const Job& job : pending_) queued = queued || job.slot == i;
      if (!queued) release_slot_if(&slot, state);
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
    pending_.push_back(std::move(job));
  }
  std::sort(pending_.begin(), pending_.end(),
            [](const Job& a, const Job& b) { return a.ticket < b.ticket; });
}

bool ServiceDispatcher::same_group(const Job& a, const Job& b) const {
  constexpr std::uint32_t kFaults = kFlagFaultDevice | kFlagFaultMemory;
  return (a.flags & kFlagBatchable) && (b.flags & kFlagBatchable) && !(a.flags & kFaults) &&
         !(b.flags & kFaults) && a.graph_segment == b.graph_segment && a.engine == b.engine &&
         a.index_segment == b.index_segment && a.threads == b.threads &&
         a.block_size == b.block_size && a.streams == b.streams &&
         (a.flags & kFlagPredecessors) == (b.flags & kFlagPredecessors);
}

std::vector<ServiceDispatcher::Job> ServiceDispatcher::next_group() {
  // Drop what was abandoned while it waited.
  pending_.erase(std::remove_if(pending_.begin(), pending_.end(),
                                [&](const Job& job) {
                                  if (still_wanted(job)) return false;
                                  release_slot(&header_->slots[job.slot]);
                                  return true;
                                }),
                 pending_.end());
  if (pending_.empty()) return {};
  const Job first = pending_.front();
  auto take = [&](std::size_t limit) {
    std::vector<Job> group;
    std::vector<Job> rest;
    for (Job& job : pending_) {
      if (group.size() < limit &&
          (group.empty() ? job.ticket == first.ticket : same_group(first, job)))
        group.push_back(std::move(job));
      else
        rest.push_back(std::move(job));
    }
    pending_ = std::move(rest);
    return group;
  };
  if (!(first.flags & kFlagBatchable)) return take(1);

  // Requests that arrive within the batch window of the oldest one's submission share its launch
  // (requests that arrived while the previous launch ran are already here).
  const std::int64_t window = static_cast<std::int64_t>(header_->batch_window_ns.load());
  const std::int64_t deadline = first.submitted_ns + window;
  for (;;) {
    std::size_t size = 0;
    for (const Job& job : pending_)
      if (job.ticket == first.ticket || same_group(first, job)) ++size;
    const std::int64_t now = monotonic_ns();
    if (window <= 0 || size >= kMaxBatch || now >= deadline) break;
    const std::uint32_t bell = header_->doorbell.load(std::memory_order_acquire);
    futex_wait_ns(&header_->doorbell, bell, deadline - now);
    collect();
  }
  return take(kMaxBatch);
}

bool ServiceDispatcher::still_wanted(const Job& job) const {
  return static_cast<SlotState>(header_->slots[job.slot].state.load(std::memory_order_acquire)) ==
         SlotState::kRunning;
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

char* ServiceDispatcher::io_for(const Job& job) {
  auto found = io_.find(job.io_segment);
  // A name can come back with another segment behind it: a backend pid used again restarts the
  // sequence its segments' names carry. The mapping of the old, unlinked segment would take the
  // answer while the backend reads its new one (the sweep notices only within a second).
  if (found != io_.end() && found->second.mapping.inode() != segment_inode(job.io_segment)) {
    io_.erase(found);
    found = io_.end();
  }
  if (found == io_.end()) {
    if (io_.size() >= kMaxIoMappings) {
      auto oldest = std::min_element(io_.begin(), io_.end(), [](const auto& a, const auto& b) {
        return a.second.last_used < b.second.last_used;
      });
      io_.erase(oldest);
    }
    Io io;
    io.mapping = SharedMapping::open(job.io_segment, true);
    found = io_.emplace(job.io_segment, std::move(io)).first;
  }
  found->second.last_used = ++clock_;
  return static_cast<char*>(found->second.mapping.data());
}

void ServiceDispatcher::check_job(const Job& job, const char* io, const Graph& graph) const {
  const auto found = io_.find(job.io_segment);
  const std::size_t io_bytes = found != io_.end() ? found->second.mapping.size() : 0;
  const std::size_t n = static_cast<std::size_t>(graph.vertex_count());
  const std::size_t sources = static_cast<std::size_t>(std::max(job.source_count, 0));
  const std::size_t targets = static_cast<std::size_t>(std::max(job.target_count, 0));
  const std::size_t width = (job.flags & kFlagCompact) ? targets : n;
  auto ends_inside = [&](std::uint64_t offset, std::size_t bytes) {
    return offset <= io_bytes && bytes <= io_bytes - offset;
  };
  bool ok =
      job.source_count >= 0 && job.target_count >= 0 &&
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

void ServiceDispatcher::make_room(std::size_t needed, const CachedEngine* keep) {
  const std::size_t budget = budget_bytes();
  for (;;) {
    std::size_t used = 0;
    for (const auto& e : engines_)
      if (e.get() != keep) used += e->device_bytes;
    if (used + needed <= budget) return;
    // The least recently used engine other than the one about to run.
    auto victim = engines_.end();
    for (auto it = engines_.begin(); it != engines_.end(); ++it)
      if (it->get() != keep &&
          (victim == engines_.end() || (*it)->last_used < (*victim)->last_used))
        victim = it;
    if (victim == engines_.end()) return;
    std::fprintf(stderr, "gpu_routing service: evicting %s (%s) to make room\n",
                 (*victim)->graph->segment.c_str(), format_bytes((*victim)->device_bytes).c_str());
    engines_.erase(victim);
  }
}

ServiceDispatcher::CachedEngine& ServiceDispatcher::engine_for(const Job& job,
                                                               std::size_t sources) {
  std::shared_ptr<CachedGraph> graph = graph_for(job.graph_segment);
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
  const std::size_t budget = budget_bytes();
  if (needed > budget)
    throw RoutingError(ErrorKind::kOutOfMemory,
                       "this call needs " + format_bytes(needed) + " of " +
                           (mode_ == ServiceMode::kCpu ? std::string("service memory")
                                                       : std::string("GPU memory")) +
                           " (a graph of " + format_bytes(graph_bytes) +
                           " and the engine's buffers for " + std::to_string(sources) +
                           " sources), more than the GPU service's budget of " +
                           format_bytes(budget) + " (gpu_routing.gpu_graph_memory)",
                       "Raise gpu_routing.gpu_graph_memory, ask for fewer sources per call, or set "
                       "gpu_routing.device = cpu.");
  CachedEngine* cached = nullptr;
  for (auto& e : engines_)
    if (e->key == key) cached = e.get();
  if (cached != nullptr && needed > cached->device_bytes) {
    make_room(needed, cached);
    cached->device_bytes = needed;
  }
  if (cached == nullptr) {
    make_room(needed, nullptr);
    EngineOptions options;
    options.threads = job.threads;
    options.block_size = block_size;
    options.streams = job.streams;
    options.budget = MemoryBudget(budget);
    options.cancel = CancelToken(group_abandoned);
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
    entry->engine = info->create(graph->graph, options);
    entry->device_bytes = needed;
    engines_.push_back(std::move(entry));
    cached = engines_.back().get();
    publish_graphs();
  }
  cached->last_used = ++clock_;
  return *cached;
}

bool ServiceDispatcher::run_group(std::vector<Job>& group) {
  // Sharing a launch is the service's choice, not the callers': when the whole group's launch
  // would need more than the device budget while fewer of its requests fit, as many as fit run
  // now and the rest stay queued (they run next, oldest first). Without this, batching turned
  // requests that fit alone into "more than the budget" failures.
  if (group.size() > 1) {
    std::size_t fitting = group.size();
    try {
      const EngineInfo* info = find_service_engine(group.front().engine, mode_);
      const Graph& graph = graph_for(group.front().graph_segment)->graph;
      const std::size_t budget = budget_bytes();
      while (info != nullptr && fitting > 1 &&
             info->estimate_bytes(graph, static_cast<int>(fitting)) > budget)
        --fitting;
    } catch (const RoutingError&) {
      fitting = group.size();  // engine_for reports it for the whole group
    }
    if (fitting < group.size()) {
      for (std::size_t i = fitting; i < group.size(); ++i) pending_.push_back(std::move(group[i]));
      group.resize(fitting);
      std::sort(pending_.begin(), pending_.end(),
                [](const Job& a, const Job& b) { return a.ticket < b.ticket; });
    }
  }
  report_ = GroupReport();
  report_.launched_ns = monotonic_ns();
  report_.group_size = group.size();
  g_poll_slots.clear();
  for (const Job& job : group) g_poll_slots.push_back(job.slot);
  bool keep_running = true;
  ErrorKind kind = ErrorKind::kInternal;
  std::string message, hint;
  bool ok = false;
  try {
    if (group.front().flags & kFlagFaultDevice)
      throw RoutingError(ErrorKind::kInternal,
                         "CUDA error 700 (cudaErrorIllegalAddress: an illegal memory access was "
                         "encountered) in a launch (injected by gpu_routing.test_fault)");
    if (group.front().flags & kFlagFaultMemory)
      throw RoutingError(ErrorKind::kOutOfMemory,
                         "out of GPU memory: CUDA error 2 (cudaErrorMemoryAllocation) in "
                         "cudaMalloc (injected by gpu_routing.test_fault)");
    std::size_t sources = 0;
    for (const Job& job : group) sources += static_cast<std::size_t>(job.source_count);
    CachedEngine& cached = engine_for(group.front(), sources);
    cached.engine->rebind([&] {
      EngineOptions options = cached.engine->options();
      options.cancel = CancelToken(group_abandoned);
      options.budget = MemoryBudget(budget_bytes());
      return options;
    }());
    solve_group(group, cached);
    cached.requests += group.size();
    ok = true;
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
    if (is_device_fault(error)) {
      keep_running = false;
      hint = "The GPU service restarts with a fresh GPU context; run the call again.";
    }
    if (kind == ErrorKind::kOutOfMemory && message.find("budget") == std::string::npos) {
      // Device memory ran out under the budget (other processes): start from an empty cache.
      engines_.clear();
      scratch_distances_.release();
      scratch_arcs_.release();
      if (hint.empty())
        hint =
            "The GPU service freed the graphs it kept on the device; run the call again, or "
            "lower gpu_routing.gpu_graph_memory if other programs share the GPU.";
      publish_graphs();
    }
  } catch (const std::bad_alloc&) {
    kind = ErrorKind::kOutOfMemory;
    message = "the GPU service ran out of host memory";
  } catch (const std::exception& error) {
    message = std::string("the GPU service failed: ") + error.what();
  }
  g_poll_slots.clear();
  header_->batches.fetch_add(1);
  header_->batched_requests.fetch_add(group.size());
  header_->requests.fetch_add(group.size());
  if (!ok) header_->failed_requests.fetch_add(group.size());
  for (const Job& job : group) answer(job, ok, kind, message, hint);
  if (!keep_running) {
    std::fprintf(stderr, "gpu_routing service: device fault, restarting: %s\n", message.c_str());
    engines_.clear();
  }
  return keep_running;
}

void ServiceDispatcher::solve_group(std::vector<Job>& group, CachedEngine& cached) {
  ShortestPathEngine& engine = *cached.engine;
  const Graph& graph = cached.graph->graph;
  const std::size_t n = static_cast<std::size_t>(graph.vertex_count());
  const EngineReport before = engine.report();
  const Job& first = group.front();
  const bool predecessors = (first.flags & kFlagPredecessors) != 0;
  if (predecessors && !has_reverse(graph))
    throw RoutingError(ErrorKind::kInternal,
                       "predecessors asked for on a graph image without its reversed CSR");

  if (group.size() == 1) {
    // Alone: the engine writes straight into the backend's segment.
    char* io = io_for(first);
    check_job(first, io, graph);
    SolveRequest request;
    request.sources = reinterpret_cast<const VertexIndex*>(io + first.sources_offset);
    request.source_count = first.source_count;
    const bool with_targets = (first.flags & kFlagTargets) != 0;
    if (with_targets) {
      request.targets = reinterpret_cast<const VertexIndex*>(io + first.targets_offset);
      request.target_count = first.target_count;
    }
    request.distances = reinterpret_cast<double*>(io + first.distances_offset);
    if (predecessors)
      request.predecessor_arcs = reinterpret_cast<ArcIndex*>(io + first.predecessors_offset);
    const bool compact = (first.flags & kFlagCompact) != 0;
    if (!compact || engine.supports_compact_targets()) {
      request.compact_targets = compact;
      engine.solve(request);
    } else {
      // Compact rows made here from full ones, a few sources at a time.
      const std::size_t per_chunk =
          std::max<std::size_t>(1, kScratchBytes / std::max<std::size_t>(1, n * sizeof(double)));
      std::vector<double> scratch;
      const std::size_t targets = static_cast<std::size_t>(first.target_count);
      for (std::size_t done = 0; done < static_cast<std::size_t>(first.source_count);) {
        const std::size_t count =
            std::min(per_chunk, static_cast<std::size_t>(first.source_count) - done);
        scratch.resize(count * n);
        SolveRequest part;
        part.sources = request.sources + done;
        part.source_count = static_cast<int>(count);
        part.targets = request.targets;
        part.target_count = request.target_count;
        part.distances = scratch.data();
        engine.solve(part);
        for (std::size_t r = 0; r < count; ++r)
          for (std::size_t t = 0; t < targets; ++t)
            request.distances[(done + r) * targets + t] =
                scratch[r * n + static_cast<std::size_t>(request.targets[t])];
        done += count;
      }
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
    bool all_targets = true;
    std::vector<VertexIndex> targets;
    std::vector<int> target_offsets{0};
    for (const Job& job : group) {
      // A request abandoned while it waited for this launch (cancelled during the batch window)
      // may have had its I/O segment removed by its owner already: it gets a row that nobody
      // reads (vertex 0, its own target: done at once) rather than failing the whole launch.
      const char* io = nullptr;
      try {
        io = io_for(job);
      } catch (const RoutingError&) {
        if (still_wanted(job)) throw;
      }
      if (io == nullptr) {
        sources.push_back(0);
        targets.push_back(0);
        target_offsets.push_back(static_cast<int>(targets.size()));
        continue;
      }
      check_job(job, io, graph);
      sources.push_back(*reinterpret_cast<const VertexIndex*>(io + job.sources_offset));
      if (!(job.flags & kFlagTargets) || job.target_count <= 0) {
        all_targets = false;
      } else if (all_targets) {
        const auto* own = reinterpret_cast<const VertexIndex*>(io + job.targets_offset);
        targets.insert(targets.end(), own, own + job.target_count);
        target_offsets.push_back(static_cast<int>(targets.size()));
      }
    }
    auto* distances =
        static_cast<double*>(scratch_distances_.get(group.size() * n * sizeof(double)));
    auto* arcs =
        predecessors
            ? static_cast<ArcIndex*>(scratch_arcs_.get(group.size() * n * sizeof(ArcIndex)))
            : nullptr;
    SolveRequest request;
    request.sources = sources.data();
    request.source_count = static_cast<int>(sources.size());
    request.distances = distances;
    if (predecessors) request.predecessor_arcs = arcs;
    if (all_targets && !predecessors && !targets.empty()) {
      request.targets = targets.data();
      request.target_count = static_cast<int>(targets.size());
      request.target_offsets = target_offsets.data();
    }
    engine.solve(request);
    Stopwatch copy;
    std::vector<char*> destinations(group.size(), nullptr);
    for (std::size_t i = 0; i < group.size(); ++i) {
      const Job& job = group[i];
      if (!still_wanted(job)) continue;
      try {
        destinations[i] = io_for(job);
      } catch (const RoutingError&) {
        if (still_wanted(job)) throw;  // else abandoned just now, its segment gone with it
      }
    }
    // The rows go out in parallel: 64 New York rows are 135 MB, ~13 ms for one thread.
    const int copiers = static_cast<int>(std::min<std::size_t>(group.size(), 8));
#pragma omp parallel for num_threads(copiers) schedule(dynamic, 1)
    for (std::size_t i = 0; i < group.size(); ++i) {
      char* io = destinations[i];
      if (io == nullptr) continue;
      std::memcpy(io + group[i].distances_offset, distances + i * n, n * sizeof(double));
      if (predecessors)
        std::memcpy(io + group[i].predecessors_offset, arcs + i * n, n * sizeof(ArcIndex));
    }
    report_.transfer_ms += copy.elapsed_ms();
  }
  const EngineReport& after = engine.report();
  report_.device_name = after.device_name;
  report_.compute_ms += after.compute_ms - before.compute_ms;
  report_.transfer_ms += after.transfer_ms - before.transfer_ms;
  report_.rounds = after.rounds - before.rounds;
  report_.notes = after.notes;
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

void ServiceDispatcher::answer(const Job& job, bool ok, ErrorKind kind, const std::string& message,
                               const std::string& hint) {
  RequestSlot& slot = header_->slots[job.slot];
  std::uint32_t expected = static_cast<std::uint32_t>(SlotState::kRunning);
  if (static_cast<SlotState>(slot.state.load()) == SlotState::kRunning) {
    slot.error_kind = static_cast<std::int32_t>(kind);
    slot.batch_size = static_cast<std::int32_t>(report_.group_size);
    slot.wait_ms = static_cast<double>(report_.launched_ns - job.submitted_ns) / 1e6;
    slot.compute_ms = report_.compute_ms;
    slot.transfer_ms = report_.transfer_ms;
    slot.rounds = report_.rounds;
    copy_field(slot.device_name, sizeof slot.device_name, report_.device_name);
    copy_field(slot.notes, sizeof slot.notes, report_.notes);
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
  // Graphs whose segment is gone or replaced (a kept graph rebuilt or evicted, an edges_sql call
  // that ended): their engines and mappings go.
  bool changed = false;
  for (auto it = graphs_.begin(); it != graphs_.end();) {
    if (segment_inode(it->first) != it->second->inode) {
      const CachedGraph* gone = it->second.get();
      const auto before = engines_.size();
      engines_.erase(std::remove_if(engines_.begin(), engines_.end(),
                                    [&](const auto& e) { return e->graph.get() == gone; }),
                     engines_.end());
      changed = changed || engines_.size() != before;
      it = graphs_.erase(it);
    } else {
      ++it;
    }
  }
  for (auto it = io_.begin(); it != io_.end();) {
    if (segment_inode(it->first) != it->second.mapping.inode())
      it = io_.erase(it);
    else
      ++it;
  }
  reclaim_dead_owners(header_);
  if (changed) publish_graphs();
}

void ServiceDispatcher::publish_graphs() {
  header_->graphs_seq.fetch_add(1, std::memory_order_acq_rel);  // odd: being written
  int count = 0;
  std::size_t total = 0;
  for (const auto& e : engines_) {
    total += e->device_bytes;
    if (count >= kMaxListedGraphs) continue;
    ListedGraph& listed = header_->graphs[count++];
    copy_field(listed.segment, sizeof listed.segment, e->graph->segment);
    copy_field(listed.engine, sizeof listed.engine, e->info->name);
    listed.device = 0;
    listed.vertices = e->graph->graph.vertex_count();
    listed.arcs = e->graph->graph.arc_count();
    listed.device_bytes = e->device_bytes;
    listed.requests = e->requests;
  }
  header_->graph_count = count;
  header_->device_bytes_used.store(total);
  header_->device_budget_in_use.store(budget_bytes());
  header_->graphs_seq.fetch_add(1, std::memory_order_acq_rel);  // even: consistent
}

}  // namespace gpu_routing::service
