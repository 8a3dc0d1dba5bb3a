// The GPU service's shared-memory protocol (issue 10): one process owns the GPUs and every
// backend asks it for distances through a control segment of request slots.
//
// Three parties, none of them sharing a pointer with another:
// - the supervisor (a PostgreSQL background worker, src/pg/service.cpp) creates the control
//   segment, starts the service executable and restarts it when it dies;
// - the service (service/gpu_routing_service.cpp, ServiceDispatcher) holds the CUDA contexts
//   and the device copies of graphs, and runs requests;
// - backends (ServiceClient, ServiceEngine) write a request into a free slot and wait on it.
//
// Everything crosses as POSIX shared memory named by the postmaster's pid: the control segment,
// each backend's I/O segment (sources in, distances and predecessor arcs out) and the graph
// images (a kept graph's own DSM segment, or one the backend writes for an edges_sql call).
// Waiting is futex(2) on words of the control segment, with short timeouts so that a cancel,
// a dead peer or a restarted service is noticed.
//
// Slot states (RequestSlot::state), and who moves them:
//   free -> filling        backend (compare-and-swap; owner_pid set)
//   filling -> submitted   backend, then rings the doorbell
//   submitted -> running   service (compare-and-swap)
//   running -> done|failed service (compare-and-swap), then wakes the slot
//   submitted|running -> abandoned   backend giving up (cancel, error, exit)
//   abandoned -> free      service (when it meets it) or supervisor
//   done|failed -> free    backend, after reading the answer
//   submitted|running -> failed      supervisor, when the service died (generation raised)
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

#include "base/common.hpp"
#include "base/graph.hpp"
#include "engine/engine.hpp"

namespace gpu_routing::service {

constexpr std::uint32_t kMagic = 0x47505253;  // "GPRS"
// 2: the road index's segment in a request; 3: a worker per GPU (DeviceEntry's state and load);
// 4: paths traced by the service (kFlagTracePaths); 5: notes of 512 bytes (where an engine's
// time went); 6: service areas (kFlagAreas, area_bound).
constexpr std::uint32_t kLayoutVersion = 6;
constexpr int kSlotCount = 256;
constexpr int kMaxDevices = 32;   // worker entries: GPUs x lanes
constexpr int kDefaultLanes = 3;  // gpu_routing.service_lanes = 0
constexpr int kMaxListedGraphs = 64;
constexpr std::size_t kNameBytes = 96;

// What runs the engines: the GPUs (production) or the CPU engines (gpu_routing.service = cpu,
// for testing the protocol, batching and faults on machines without a GPU).
enum class ServiceMode : std::uint32_t { kOff = 0, kGpu = 1, kCpu = 2 };

enum class ServiceState : std::uint32_t {
  kStopped = 0,   // no service process (not started yet, or between a death and its restart)
  kStarting = 1,  // a service process runs and is probing the GPUs
  kReady = 2,     // serving requests
  kNoGpu = 3,     // the service found no usable GPU and will not be restarted (reason says why)
  kStopping = 4,  // the server is shutting down
};
const char* state_label(ServiceState state);

enum class SlotState : std::uint32_t {
  kFree = 0,
  kFilling = 1,
  kSubmitted = 2,
  kRunning = 3,
  kDone = 4,
  kFailed = 5,
  kAbandoned = 6,
};

// Service process exit codes the supervisor acts on.
constexpr int kExitStopped = 0;      // asked to stop
constexpr int kExitNoGpu = 2;        // no usable GPU: stay stopped, report the reason
constexpr int kExitDeviceFault = 3;  // a CUDA error poisoned a context: restart at once

// A GPU's worker in the service (gpu_routing_info()).
enum class WorkerState : std::uint32_t {
  kIdle = 0,
  kBusy = 1,    // running a launch
  kFailed = 2,  // a CUDA error took it out of service until the service restarts (failure says)
};

// One device the service serves from: written by the service at start (name .. physical) and by
// its worker while it serves (the rest).
struct DeviceEntry {
  char name[kNameBytes];
  std::int32_t compute_major, compute_minor, multiprocessors;
  std::uint64_t total_memory_bytes;
  std::uint64_t context_bytes;  // device memory of the service's context on it
  // The CUDA device it runs on: a GPU has one entry per lane (gpu_routing.service_lanes), and
  // more devices than GPUs (gpu_routing.service_devices, tests) share them round robin.
  std::int32_t physical;
  std::int32_t lane;
  std::atomic<std::uint32_t> state;  // WorkerState
  std::atomic<std::uint64_t> requests, batches, busy_ns, in_flight;
  char failure[256];
};

// A graph held on a device, for gpu_routing_info(): written by the service under graphs_seq.
struct ListedGraph {
  char segment[kNameBytes];  // the image's shared-memory name
  char engine[32];
  std::int32_t device;
  std::int32_t vertices;
  std::int64_t arcs;
  std::uint64_t device_bytes;
  std::uint64_t requests;
};

struct RequestSlot {
  std::atomic<std::uint32_t> state;  // SlotState; also the futex word the owner waits on
  std::int32_t owner_pid;
  std::uint32_t generation;  // the header's generation when submitted
  std::uint32_t reserved0;
  std::uint64_t ticket;       // submission order
  std::int64_t submitted_ns;  // CLOCK_MONOTONIC, for the batch window and wait times

  // The graph: a position-independent image (write_graph_image) in shared memory.
  char graph_segment[kNameBytes];
  std::uint64_t graph_bytes;
  // The kept graph's road index (Cch::write_image) in shared memory, for the cch engine; empty
  // when none.
  char index_segment[kNameBytes];
  std::uint64_t index_bytes;
  // The engine and its settings, as the backend selected them.
  char engine[32];
  std::int32_t threads, block_size, streams;
  std::uint32_t flags;             // kFlag*
  std::uint64_t max_memory_bytes;  // the caller's gpu_routing.max_memory

  // The backend's I/O segment and where in it each array lies (byte offsets).
  char io_segment[kNameBytes];
  std::uint64_t io_bytes;
  std::int32_t source_count, target_count;
  std::uint64_t sources_offset;    // source_count VertexIndex
  std::uint64_t targets_offset;    // target_count VertexIndex (when kFlagTargets)
  std::uint64_t distances_offset;  // source_count rows of row_width doubles
  std::uint64_t
      predecessors_offset;  // source_count rows of vertex_count ArcIndex (kFlagPredecessors)
  // kFlagTracePaths: target_count path ends (int64, arcs of target j end at ends[j]), then room
  // for path_capacity ArcIndex (indices into the graph's reversed CSR, each path in path order).
  // kFlagAreas uses the same room (area_layout), path_capacity then the room a source (the graph's
  // vertices).
  std::uint64_t paths_offset;
  std::uint64_t path_capacity;
  double area_bound;  // kFlagAreas: the areas' distance

  // The answer.
  std::int32_t error_kind;  // ErrorKind, when failed
  std::int32_t batch_size;  // requests answered by the same launch (1: alone)
  double wait_ms;           // from submission until its launch began
  double compute_ms, transfer_ms;
  std::int64_t rounds;
  std::int32_t paths_traced;  // kFlagTracePaths: 1 = the paths are written, 0 = they did not fit
  std::int32_t reserved1;
  char device_name[128];
  char message[512];
  char hint[256];
  char notes[512];
};

constexpr std::uint32_t kFlagPredecessors = 1u << 0;  // fill predecessor arcs
constexpr std::uint32_t kFlagTargets = 1u << 1;       // targets given (early-exit hint)
constexpr std::uint32_t kFlagCompact = 1u << 2;       // compact rows (one column per target)
constexpr std::uint32_t kFlagBatchable = 1u << 3;     // one source: may share a launch
// One source and its targets: the service traces the paths to them next to the row it computed
// (trace_path's rule) and sends back the targets' distances (one per target, as compact rows)
// and the paths, not the row: a New York row is 2 MB, a path a few kilobytes.
constexpr std::uint32_t kFlagTracePaths = 1u << 4;
// Service areas: each source's vertices within area_bound and their distances go back
// (ShortestPathEngine::solve_areas), not its row; written in the paths' room.
constexpr std::uint32_t kFlagAreas = 1u << 5;
// Test hooks (gpu_routing.test_fault, superusers): the service fails the request as a CUDA error
// that poisons the context would (and restarts), or as device memory running out would.
constexpr std::uint32_t kFlagFaultDevice = 1u << 8;
constexpr std::uint32_t kFlagFaultMemory = 1u << 9;

// Where a kFlagAreas request's answer lies in its exchange segment, from paths_offset: each
// source's count, then a room of `vertices` entries a source for its vertices and one for their
// distances. Every source has a room of the graph's size, so split parts of a request write apart
// and nothing is counted twice; pages a small area never reaches are never written (no memory).
struct AreaLayout {
  std::uint64_t counts_offset = 0;     // source_count int64
  std::uint64_t vertices_offset = 0;   // source_count x vertices VertexIndex
  std::uint64_t distances_offset = 0;  // source_count x vertices double
  std::uint64_t end = 0;
};
inline AreaLayout area_layout(std::uint64_t offset, std::size_t sources, std::size_t vertices) {
  auto align8 = [](std::uint64_t x) { return (x + 7) & ~std::uint64_t{7}; };
  AreaLayout layout;
  layout.counts_offset = offset;
  layout.vertices_offset = align8(saturating_add(offset, sources * sizeof(std::int64_t)));
  layout.distances_offset = align8(saturating_add(
      layout.vertices_offset, saturating_multiply(sources * sizeof(VertexIndex), vertices)));
  layout.end = saturating_add(layout.distances_offset,
                              saturating_multiply(sources * sizeof(double), vertices));
  return layout;
}
// The service's side: `areas` (an engine's, ShortestPathEngine::solve_areas) into the rooms of
// the request's sources first .. first + areas.ends.size() - 1, each room `vertices` entries.
// false (nothing more written) at an area whose ends do not rise or that is larger than a room.
bool write_areas(const AreaLists& areas, char* io, const AreaLayout& room, std::size_t first,
                 std::size_t vertices);
// Where a kFlagTracePaths request's answer lies (the request's offsets, RequestSlot).
struct TracedPathsRoom {
  std::uint64_t sources_offset, targets_offset, distances_offset, paths_offset, path_capacity;
  std::size_t targets;
};
// The service's side of kFlagTracePaths: each target's distance, from the source's `row` (its
// paths traced from it by trace_path's rule) or, without one, from `own_distances` (one a target;
// the paths read from `predecessor_row`), then the path ends and arcs. false where the paths do
// not fit the room, or `graph` has no reversed CSR: the backend then asks for the row.
bool write_traced_paths(char* io, const TracedPathsRoom& room, const double* row,
                        const double* own_distances, const ArcIndex* predecessor_row,
                        const Graph& graph);
// The backend's side: the `sources` areas in the rooms, appended to `areas` once checked (each
// count within its room, each vertex in the graph); false where one is not.
bool read_areas(const char* io, const AreaLayout& room, std::size_t sources, std::size_t vertices,
                AreaLists* areas);

struct ControlHeader {
  std::uint32_t magic, layout_version;
  std::atomic<std::uint32_t> state;       // ServiceState
  std::atomic<std::uint32_t> generation;  // raised each time a service process starts
  std::atomic<std::uint32_t> doorbell;    // futex word the service waits on; backends ring it
  std::uint32_t mode;                     // ServiceMode, set by the supervisor
  std::int32_t supervisor_pid;
  std::atomic<std::int32_t> service_pid;
  // Settings, written by the supervisor (at start and on reload), read by the service per loop.
  std::atomic<std::uint64_t> device_budget_bytes;  // gpu_routing.gpu_graph_memory; 0 = automatic
  std::atomic<std::uint64_t> batch_window_ns;      // gpu_routing.batch_window
  std::atomic<std::uint64_t> next_ticket;
  // gpu_routing.service_devices (written by the supervisor before it starts the service): how
  // many devices to serve from; 0 = every GPU (GPU mode) or one worker (CPU mode).
  std::int32_t requested_devices;
  // gpu_routing.service_lanes: workers per GPU, each with its own engines and CUDA stream, whose
  // launches overlap on the GPU (a launch of a few dozen one-block searches leaves most of its
  // multiprocessors idle). 0 = the default.
  std::int32_t requested_lanes;
  // What the service found and does (gpu_routing_info()).
  char reason[256];  // why not ready (state kNoGpu / kStopped after a failure)
  char build[128];
  std::int32_t device_count;
  DeviceEntry devices[kMaxDevices];
  std::atomic<std::uint64_t> requests, batches, batched_requests, failed_requests, restarts;
  std::atomic<std::uint32_t> queued;  // requests claimed by the service and not yet launched
  std::atomic<std::uint64_t> device_bytes_used, device_budget_in_use;
  std::atomic<std::int64_t> started_at_ns;  // CLOCK_REALTIME of the current process's start
  std::atomic<std::uint32_t> graphs_seq;    // odd while the service rewrites graphs[]
  std::int32_t graph_count;
  ListedGraph graphs[kMaxListedGraphs];
  RequestSlot slots[kSlotCount];
};

// --- Names ---------------------------------------------------------------------------------
// Every segment's name starts with the control segment's, so the supervisor can remove what a
// crashed server left behind.
std::string control_segment_name(long postmaster_pid);
std::string io_segment_name(long postmaster_pid, long backend_pid, std::uint64_t sequence);
std::string graph_segment_name(long postmaster_pid, long backend_pid, std::uint64_t sequence);
// Removes /dev/shm entries of a postmaster's service (control segment excepted) whose owner
// process is gone (all of them when `all`).
void remove_leftover_segments(long postmaster_pid, bool all);
// Removes every /dev/shm entry of a postmaster's service, its control segment included (a service
// stopping, or one a crashed server left); true where the control segment was there.
bool remove_service_segments(long postmaster_pid);

// --- Shared memory -------------------------------------------------------------------------
// A POSIX shared-memory mapping, unmapped (never unlinked) on destruction.
class SharedMapping {
 public:
  SharedMapping() = default;
  ~SharedMapping() { reset(); }
  SharedMapping(const SharedMapping&) = delete;
  SharedMapping& operator=(const SharedMapping&) = delete;
  SharedMapping(SharedMapping&& other) noexcept { *this = std::move(other); }
  SharedMapping& operator=(SharedMapping&& other) noexcept;

  // Creates (replacing any of the same name) or opens a segment; throws RoutingError.
  static SharedMapping create(const std::string& name, std::size_t bytes);
  static SharedMapping open(const std::string& name, bool writable);
  void reset();

  void* data() const { return data_; }
  std::size_t size() const { return size_; }
  std::uint64_t inode() const { return inode_; }
  bool valid() const { return data_ != nullptr; }
  const std::string& name() const { return name_; }

 private:
  SharedMapping(void* data, std::size_t size, std::uint64_t inode, std::string name)
      : data_(data), size_(size), inode_(inode), name_(std::move(name)) {}
  void* data_ = nullptr;
  std::size_t size_ = 0;
  std::uint64_t inode_ = 0;
  std::string name_;
};

// The inode a name refers to now (0: no such segment): a segment replaced under the same name
// gets a new inode, so cached device copies key on it.
std::uint64_t segment_inode(const std::string& name);
void unlink_segment(const std::string& name);

// --- Waiting -------------------------------------------------------------------------------
// futex(2) on a 32-bit word of a shared mapping (never the private variant: the waiters and
// wakers are different processes). wait returns when the word differs from `expected`, when
// woken, or after timeout_ms.
void futex_wait(std::atomic<std::uint32_t>* word, std::uint32_t expected, int timeout_ms);
void futex_wait_ns(std::atomic<std::uint32_t>* word, std::uint32_t expected,
                   std::int64_t timeout_ns);
void futex_wake_all(std::atomic<std::uint32_t>* word);

std::int64_t monotonic_ns();
std::int64_t realtime_ns();
bool process_alive(long pid);

// Copies a string into a fixed field, always terminated.
void copy_field(char* field, std::size_t size, const std::string& text);

// Resets a header to its initial contents (the supervisor, when it creates the segment).
void initialize_header(ControlHeader* header, ServiceMode mode, long supervisor_pid);
// Fails every submitted or running request (the service died): each gets `message`, and the
// generation is raised so that waiters notice. Frees abandoned slots.
void fail_in_flight(ControlHeader* header, const std::string& message);
// Frees slots whose owner process is gone (a backend that exited without cleaning up); a
// submitted one is abandoned instead (the service frees it). Slots with no owner pid yet (just
// claimed) are left alone.
int reclaim_dead_owners(ControlHeader* header);
// Every way a slot becomes free clears its owner first, so a slot just claimed (owner not yet
// written) never shows the previous owner's pid to reclaim_dead_owners.
void release_slot(RequestSlot* slot);
// From `expected` (abandoned, done, failed, filling) to free, clearing the owner; false when the
// state was no longer `expected`.
bool release_slot_if(RequestSlot* slot, std::uint32_t expected);

}  // namespace gpu_routing::service
