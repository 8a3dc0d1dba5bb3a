#include "service/service_protocol.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <ctime>
#include <vector>

#include "base/predecessors.hpp"

namespace gpu_routing::service {

namespace {

std::string errno_text(int error) {
  return std::strerror(error);
}

std::string control_prefix(long postmaster_pid) {
  return "/gpu_routing." + std::to_string(postmaster_pid);
}

}  // namespace

const char* state_label(ServiceState state) {
  switch (state) {
    case ServiceState::kStopped:
      return "stopped";
    case ServiceState::kStarting:
      return "starting";
    case ServiceState::kReady:
      return "ready";
    case ServiceState::kNoGpu:
      return "found no usable GPU";
    case ServiceState::kStopping:
      return "stopping";
  }
  return "unknown";
}

std::string control_segment_name(long postmaster_pid) {
  return control_prefix(postmaster_pid);
}

std::string io_segment_name(long postmaster_pid, long backend_pid, std::uint64_t sequence) {
  return control_prefix(postmaster_pid) + ".io." + std::to_string(backend_pid) + "." +
         std::to_string(sequence);
}

std::string graph_segment_name(long postmaster_pid, long backend_pid, std::uint64_t sequence) {
  return control_prefix(postmaster_pid) + ".graph." + std::to_string(backend_pid) + "." +
         std::to_string(sequence);
}

void remove_leftover_segments(long postmaster_pid, bool all) {
  // POSIX shared memory lives in /dev/shm on Linux, under the name without its slash.
  const std::string prefix = control_prefix(postmaster_pid).substr(1) + ".";
  DIR* dir = opendir("/dev/shm");
  if (dir == nullptr) return;
  while (dirent* entry = readdir(dir)) {
    const std::string name = entry->d_name;
    if (name.compare(0, prefix.size(), prefix) != 0) continue;
    // <prefix>io.<pid>.<seq> or <prefix>graph.<pid>.<seq>
    const std::size_t kind_end = name.find('.', prefix.size());
    if (kind_end == std::string::npos) continue;
    const long owner = std::strtol(name.c_str() + kind_end + 1, nullptr, 10);
    if (all || owner <= 0 || !process_alive(owner)) shm_unlink(("/" + name).c_str());
  }
  closedir(dir);
}

bool remove_service_segments(long postmaster_pid) {
  const bool control_was_there = shm_unlink(control_segment_name(postmaster_pid).c_str()) == 0;
  remove_leftover_segments(postmaster_pid, true);
  return control_was_there;
}

SharedMapping& SharedMapping::operator=(SharedMapping&& other) noexcept {
  if (this == &other) return *this;
  reset();
  data_ = other.data_;
  size_ = other.size_;
  inode_ = other.inode_;
  name_ = std::move(other.name_);
  other.data_ = nullptr;
  other.size_ = 0;
  other.inode_ = 0;
  return *this;
}

SharedMapping SharedMapping::create(const std::string& name, std::size_t bytes) {
  shm_unlink(name.c_str());
  const int fd = shm_open(name.c_str(), O_RDWR | O_CREAT | O_EXCL, 0600);
  if (fd < 0)
    throw RoutingError(ErrorKind::kInternal,
                       "could not create shared memory " + name + ": " + errno_text(errno));
  if (ftruncate(fd, static_cast<off_t>(bytes)) != 0) {
    const int error = errno;
    close(fd);
    shm_unlink(name.c_str());
    throw RoutingError(ErrorKind::kOutOfMemory,
                       "could not size shared memory " + name + " to " + format_bytes(bytes) +
                           ": " + errno_text(error),
                       "The GPU service exchanges graphs and results through /dev/shm: it needs "
                       "room there for them.");
  }
  struct stat info {};
  fstat(fd, &info);
  void* data = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  const int error = errno;
  close(fd);
  if (data == MAP_FAILED) {
    shm_unlink(name.c_str());
    throw RoutingError(ErrorKind::kOutOfMemory,
                       "could not map shared memory " + name + ": " + errno_text(error));
  }
  return SharedMapping(data, bytes, static_cast<std::uint64_t>(info.st_ino), name);
}

SharedMapping SharedMapping::open(const std::string& name, bool writable) {
  const int fd = shm_open(name.c_str(), writable ? O_RDWR : O_RDONLY, 0);
  if (fd < 0)
    throw RoutingError(ErrorKind::kInternal,
                       "could not open shared memory " + name + ": " + errno_text(errno));
  struct stat info {};
  if (fstat(fd, &info) != 0 || info.st_size <= 0) {
    close(fd);
    throw RoutingError(ErrorKind::kInternal, "shared memory " + name + " is empty");
  }
  const std::size_t bytes = static_cast<std::size_t>(info.st_size);
  void* data =
      mmap(nullptr, bytes, writable ? PROT_READ | PROT_WRITE : PROT_READ, MAP_SHARED, fd, 0);
  const int error = errno;
  close(fd);
  if (data == MAP_FAILED)
    throw RoutingError(ErrorKind::kInternal,
                       "could not map shared memory " + name + ": " + errno_text(error));
  return SharedMapping(data, bytes, static_cast<std::uint64_t>(info.st_ino), name);
}

void SharedMapping::reset() {
  if (data_ != nullptr) munmap(data_, size_);
  data_ = nullptr;
  size_ = 0;
  inode_ = 0;
  name_.clear();
}

std::uint64_t segment_inode(const std::string& name) {
  if (name.empty() || name[0] != '/') return 0;
  struct stat info {};
  if (stat(("/dev/shm" + name).c_str(), &info) != 0) return 0;
  return static_cast<std::uint64_t>(info.st_ino);
}

void unlink_segment(const std::string& name) {
  if (!name.empty()) shm_unlink(name.c_str());
}

void futex_wait(std::atomic<std::uint32_t>* word, std::uint32_t expected, int timeout_ms) {
  futex_wait_ns(word, expected, static_cast<std::int64_t>(timeout_ms) * 1000000LL);
}

void futex_wait_ns(std::atomic<std::uint32_t>* word, std::uint32_t expected,
                   std::int64_t timeout_ns) {
  if (timeout_ns <= 0) return;
  timespec timeout{};
  timeout.tv_sec = static_cast<time_t>(timeout_ns / 1000000000LL);
  timeout.tv_nsec = static_cast<long>(timeout_ns % 1000000000LL);
  syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(word), FUTEX_WAIT, expected, &timeout,
          nullptr, 0);
}

void futex_wake_all(std::atomic<std::uint32_t>* word) {
  syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(word), FUTEX_WAKE, INT_MAX, nullptr, nullptr,
          0);
}

std::int64_t monotonic_ns() {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<std::int64_t>(now.tv_sec) * 1000000000LL + now.tv_nsec;
}

std::int64_t realtime_ns() {
  timespec now{};
  clock_gettime(CLOCK_REALTIME, &now);
  return static_cast<std::int64_t>(now.tv_sec) * 1000000000LL + now.tv_nsec;
}

bool process_alive(long pid) {
  if (pid <= 0) return false;
  return kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM;
}

void copy_field(char* field, std::size_t size, const std::string& text) {
  if (size == 0) return;
  const std::size_t n = std::min(size - 1, text.size());
  std::memcpy(field, text.data(), n);
  field[n] = '\0';
}

void initialize_header(ControlHeader* header, ServiceMode mode, long supervisor_pid) {
  std::memset(static_cast<void*>(header), 0, sizeof(ControlHeader));
  header->magic = kMagic;
  header->layout_version = kLayoutVersion;
  header->mode = static_cast<std::uint32_t>(mode);
  header->supervisor_pid = static_cast<std::int32_t>(supervisor_pid);
  header->state.store(static_cast<std::uint32_t>(ServiceState::kStopped));
  header->next_ticket.store(1);
}

void fail_in_flight(ControlHeader* header, const std::string& message) {
  // Raised first: a waiter that sees the new generation knows its request will not be answered
  // by the process that took it, whatever state it reads.
  header->generation.fetch_add(1);
  for (auto& slot : header->slots) {
    std::uint32_t state = slot.state.load();
    for (;;) {
      const auto s = static_cast<SlotState>(state);
      if (s == SlotState::kSubmitted || s == SlotState::kRunning) {
        // Write the answer before publishing the state (the owner reads it after the state).
        slot.error_kind = static_cast<std::int32_t>(ErrorKind::kNoDevice);
        copy_field(slot.message, sizeof slot.message, message);
        copy_field(slot.hint, sizeof slot.hint,
                   "Calls with gpu_routing.device = auto use the CPU engine until the service "
                   "is back; it restarts by itself.");
        if (slot.state.compare_exchange_weak(state, static_cast<std::uint32_t>(SlotState::kFailed)))
          break;
      } else if (s == SlotState::kAbandoned) {
        if (release_slot_if(&slot, state)) break;
        state = slot.state.load();
      } else {
        break;
      }
    }
    futex_wake_all(&slot.state);
  }
}

int reclaim_dead_owners(ControlHeader* header) {
  // Abandoned and running slots are the service's to free: it may still be writing a running
  // request's answer, and it frees abandoned ones between launches.
  int freed = 0;
  for (auto& slot : header->slots) {
    std::uint32_t state = slot.state.load();
    const auto s = static_cast<SlotState>(state);
    if (s == SlotState::kFree || s == SlotState::kRunning || s == SlotState::kAbandoned) continue;
    const std::int32_t owner = slot.owner_pid;
    if (owner <= 0 || process_alive(owner)) continue;
    if (s == SlotState::kSubmitted) {
      if (slot.state.compare_exchange_strong(state,
                                             static_cast<std::uint32_t>(SlotState::kAbandoned)))
        ++freed;
    } else if (release_slot_if(&slot, state)) {
      ++freed;
    }
  }
  return freed;
}

void release_slot(RequestSlot* slot) {
  slot->owner_pid = 0;
  slot->state.store(static_cast<std::uint32_t>(SlotState::kFree), std::memory_order_release);
}

bool release_slot_if(RequestSlot* slot, std::uint32_t expected) {
  if (slot->state.load(std::memory_order_acquire) != expected) return false;
  slot->owner_pid = 0;
  return slot->state.compare_exchange_strong(expected, static_cast<std::uint32_t>(SlotState::kFree),
                                             std::memory_order_acq_rel);
}

bool write_traced_paths(char* io, const TracedPathsRoom& room, const double* row,
                        const double* own_distances, const ArcIndex* predecessor_row,
                        const Graph& graph) {
  const std::size_t targets = room.targets;
  const VertexIndex source = *reinterpret_cast<const VertexIndex*>(io + room.sources_offset);
  const auto* target_ids = reinterpret_cast<const VertexIndex*>(io + room.targets_offset);
  auto* distances = reinterpret_cast<double*>(io + room.distances_offset);
  auto* ends = reinterpret_cast<std::int64_t*>(io + room.paths_offset);
  auto* arcs = reinterpret_cast<ArcIndex*>(io + room.paths_offset + targets * sizeof(std::int64_t));
  // An image without its reversed CSR cannot be traced here: the backend solves the row instead.
  bool fits = has_reverse(graph);
  std::uint64_t used = 0;
  for (std::size_t j = 0; j < targets; ++j) {
    const VertexIndex target = target_ids[j];
    distances[j] = row != nullptr ? row[target] : own_distances[j];
    if (fits && target != source && distances[j] < kInfinity) {
      const std::vector<ArcIndex> path =
          row != nullptr ? trace_path(graph.reverse, row, source, target)
                         : path_from_predecessors(graph.reverse, predecessor_row, source, target);
      if (path.size() > room.path_capacity - used) {
        fits = false;  // more path than room: the backend asks for the row instead
      } else {
        std::memcpy(arcs + used, path.data(), path.size() * sizeof(ArcIndex));
        used += path.size();
      }
    }
    ends[j] = static_cast<std::int64_t>(used);
  }
  return fits;
}

bool write_areas(const AreaLists& areas, char* io, const AreaLayout& room, std::size_t first,
                 std::size_t vertices) {
  auto* counts = reinterpret_cast<std::int64_t*>(io + room.counts_offset);
  auto* ids = reinterpret_cast<VertexIndex*>(io + room.vertices_offset);
  auto* distances = reinterpret_cast<double*>(io + room.distances_offset);
  std::int64_t begin = 0;
  for (std::size_t i = 0; i < areas.ends.size(); ++i) {
    const std::int64_t end = areas.ends[i];
    const auto count = static_cast<std::size_t>(end - begin);
    if (end < begin || count > vertices) return false;
    const std::size_t source = first + i;
    counts[source] = static_cast<std::int64_t>(count);
    std::memcpy(ids + source * vertices, areas.vertices.data() + begin,
                count * sizeof(VertexIndex));
    std::memcpy(distances + source * vertices, areas.distances.data() + begin,
                count * sizeof(double));
    begin = end;
  }
  return true;
}

bool read_areas(const char* io, const AreaLayout& room, std::size_t sources, std::size_t vertices,
                AreaLists* areas) {
  const auto* counts = reinterpret_cast<const std::int64_t*>(io + room.counts_offset);
  const auto* ids = reinterpret_cast<const VertexIndex*>(io + room.vertices_offset);
  const auto* distances = reinterpret_cast<const double*>(io + room.distances_offset);
  std::size_t total = areas->vertices.size();
  for (std::size_t i = 0; i < sources; ++i) {
    if (counts[i] < 0 || static_cast<std::size_t>(counts[i]) > vertices) return false;
    total += static_cast<std::size_t>(counts[i]);
  }
  areas->vertices.reserve(total);
  areas->distances.reserve(total);
  for (std::size_t i = 0; i < sources; ++i) {
    const auto count = static_cast<std::size_t>(counts[i]);
    const VertexIndex* own = ids + i * vertices;
    for (std::size_t k = 0; k < count; ++k)
      if (own[k] < 0 || static_cast<std::size_t>(own[k]) >= vertices) return false;
    areas->vertices.insert(areas->vertices.end(), own, own + count);
    areas->distances.insert(areas->distances.end(), distances + i * vertices,
                            distances + i * vertices + count);
    areas->ends.push_back(static_cast<std::int64_t>(areas->vertices.size()));
  }
  return true;
}

}  // namespace gpu_routing::service
