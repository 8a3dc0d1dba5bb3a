// The GPU service's work loop (service_protocol.hpp): claims submitted requests, keeps graphs
// and engines between requests, runs single-source requests on the same graph together as one
// many-source launch, and answers each request in its own slot.
//
// One worker thread per device (GPU mode: per GPU the service serves from; CPU mode: as many as
// gpu_routing.service_devices asks, one by default). Each worker keeps its own engines, so a kept
// graph lives on every GPU that ran it (least recently used evicted past each device's budget).
// A group goes to an idle worker that already holds its graph, else to an idle worker with room
// for it, else waits for the busy one that holds it; a request of many sources is split into one
// part per worker, each part's rows answered by its worker into the request's own arrays. A CUDA
// error takes its worker's device out of service and its requests are retried on the others; the
// process ends (the supervisor starts a fresh one) only when none is left, or after it idled for
// a while with a device out, to get that device back.
//
// Plain C++: the service executable runs it on the GPUs, the unit tests on the CPU engines.
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <thread>
#include <vector>

#include "road_index/cch.hpp"
#include "engine/engine.hpp"
#include "base/graph.hpp"
#include "service/service_protocol.hpp"

namespace gpu_routing::service {

class ServiceDispatcher {
 public:
  // `automatic_budget_bytes`: each device's budget when gpu_routing.gpu_graph_memory is 0. The
  // workers are header->devices[0 .. device_count) (at least one; device_count 0 = one worker).
  ServiceDispatcher(ControlHeader* header, ServiceMode mode, std::size_t automatic_budget_bytes);
  ~ServiceDispatcher();
  ServiceDispatcher(const ServiceDispatcher&) = delete;
  ServiceDispatcher& operator=(const ServiceDispatcher&) = delete;

  // Serves until `stop` is raised (or `keep_going` returns false). Returns kExitStopped, or
  // kExitDeviceFault when every device had a CUDA error that may have poisoned its context, or
  // when the service idled with a device out: the process then exits and the supervisor starts
  // a fresh one.
  int run(const std::atomic<bool>& stop, bool (*keep_going)() = nullptr);

  // How long the service idles with a device out of service before it ends itself (exit 3) so
  // that a fresh process takes the device back: 10 s; tests shorten it.
  void set_recover_after_idle_ns(std::int64_t ns) { recover_after_idle_ns_.store(ns); }

  // Bytes the cached engines hold (their estimates), over every device, for tests.
  std::size_t device_bytes_in_use() const;
  std::size_t cached_engines() const;

 private:
  struct Split;
  struct Job {
    int slot = -1;
    std::uint64_t ticket = 0;
    std::int64_t submitted_ns = 0;
    std::string graph_segment;
    std::string index_segment;  // the kept graph's road index, for cch
    std::uint64_t index_bytes = 0;
    std::string engine;
    int threads = 0, block_size = 0, streams = 0;
    std::uint32_t flags = 0;
    std::uint64_t max_memory_bytes = 0;
    std::string io_segment;
    int source_count = 0, target_count = 0;
    std::uint64_t sources_offset = 0, targets_offset = 0, distances_offset = 0,
                  predecessors_offset = 0, paths_offset = 0, path_capacity = 0;
    double area_bound = 0;  // kFlagAreas
    // A part of a request split over the workers: rows [first_row, first_row + row_count) of
    // it (row_count -1: the whole request); the request is answered when every part is.
    int first_row = 0, row_count = -1;
    std::shared_ptr<Split> split;
    // The GPU a part runs on (-1: any worker): one part a GPU, not a lane. Lanes of one GPU
    // share its multiprocessors, and a many-source engine fills them alone (near_far's New York
    // 100 x 100 matrix took 27 ms as two parts on one H100's two lanes, 288 ms as three on three).
    int part_device = -1;
    int attempts = 0;  // runs that ended in a device fault (retried on another device)
    // The sources this job solves: its part's rows, or the whole request's.
    int rows() const { return row_count >= 0 ? row_count : source_count; }
  };
  // What the parts of one split request share.
  struct Split {
    std::mutex mutex;
    int parts = 0, remaining = 0;
    bool ok = true;
    ErrorKind kind = ErrorKind::kInternal;
    std::string message, hint, device_names, notes;
    double compute_ms = 0, transfer_ms = 0;
    std::int64_t rounds = 0, launched_ns = 0;
  };
  struct CachedGraph {
    std::string segment;
    std::uint64_t inode = 0;
    SharedMapping mapping;
    Graph graph;
  };
  struct CachedEngine {
    std::string key;
    std::shared_ptr<CachedGraph> graph;
    const EngineInfo* info = nullptr;
    // The kept graph's road index the engine answers from (a view of the backend's segment),
    // declared before the engine so that it outlives it.
    SharedMapping index_mapping;
    std::unique_ptr<Cch> index;
    std::unique_ptr<ShortestPathEngine> engine;
    std::size_t device_bytes = 0;
    std::int64_t last_used = 0;
    std::atomic<std::uint64_t> requests{0};
  };
  struct Io {
    std::shared_ptr<SharedMapping> mapping;  // its size bounds the offsets of requests naming it
    std::int64_t last_used = 0;
  };
  // Host rows a shared launch writes before they are copied to each backend: kept between
  // launches (a fresh allocation per launch paid its page faults every time), page-locked when
  // CUDA can give it.
  class Scratch {
   public:
    ~Scratch() { release(); }
    void* get(std::size_t bytes);
    void release();

   private:
    void* memory_ = nullptr;
    std::size_t bytes_ = 0;
    bool pinned_ = false;
  };
  // What the group in flight reports back (filled by solve_group).
  struct GroupReport {
    std::string device_name, notes;
    double compute_ms = 0, transfer_ms = 0;
    std::int64_t rounds = 0;
    std::int64_t launched_ns = 0;
    std::size_t group_size = 0;
  };
  struct Worker {
    int index = 0;    // its DeviceEntry
    int device = -1;  // the CUDA device (GPU mode), -1 in CPU mode
    int sharing = 1;  // workers on that device (its lanes): they share its memory budget
    // Its GPU's lock (null in CPU mode): launches hold it shared, making and freeing an engine
    // exclusive. Engines synchronize the whole device and capture CUDA graphs while being made;
    // the driver crashed (SIGSEGV in cuCtxSynchronize) when another lane's engine was being made
    // beside it.
    std::shared_mutex* device_lock = nullptr;
    ServiceDispatcher* owner = nullptr;
    std::thread thread;
    // Changed only by this worker's thread, and only under mutex_ (others read it under mutex_
    // to see which graphs this device holds).
    std::vector<std::unique_ptr<CachedEngine>> engines;
    Scratch scratch_distances, scratch_arcs;
    GroupReport report;
    std::vector<int> poll_slots;  // the slots of the group in flight, read by the cancel poll
    const Split* poll_split = nullptr;
    bool busy = false;    // under mutex_
    bool failed = false;  // under mutex_
    // The first request of a group whose batch window is open (under mutex_): requests that
    // would join it are left for this worker.
    const Job* window = nullptr;
    std::int64_t clock = 0;
    std::int64_t last_sweep_ns = 0;
  };

  static bool poll_worker(const void* worker);
  void worker_loop(Worker& worker);
  void collect();  // under mutex_
  // The next group `worker` runs (under `lock`, which it may release while a batch window is
  // open); empty when it is to stop.
  std::vector<Job> next_group(Worker& worker, std::unique_lock<std::mutex>& lock);
  bool may_take(const Worker& worker, const Job& job) const;  // under mutex_
  // Whether another live lane waits for work and could take `job` (under mutex_).
  bool another_lane_idle(const Worker& worker, const Job& job) const;
  bool reserved_by_other(const Worker& worker, const Job& job) const;
  bool same_group(const Job& a, const Job& b) const;
  static bool holds(const Worker& worker, const Job& job);  // under mutex_
  void run_group(Worker& worker, std::vector<Job>& group);
  void solve_group(Worker& worker, std::vector<Job>& group, CachedEngine& cached);
  void solve_rows_alone(ShortestPathEngine& engine, const Job& job, char* io, std::size_t n);
  // kFlagAreas: this job's sources' service areas into their rooms (area_layout).
  void solve_areas_alone(ShortestPathEngine& engine, const Job& job, char* io, std::size_t n);
  CachedEngine& engine_for(Worker& worker, const Job& job, std::size_t sources);
  std::shared_ptr<CachedGraph> graph_for(const std::string& segment);  // under mutex_
  std::shared_ptr<SharedMapping> io_for(const Job& job);               // takes mutex_
  // Throws unless the job's arrays lie inside its I/O segment and its vertices inside `graph`:
  // a request names segments and offsets, and nothing else guarantees they agree.
  void check_job(const Job& job, const SharedMapping& io, const Graph& graph) const;
  // kFlagTracePaths: the job's targets' distances and the paths to them into its I/O segment
  // `io`, traced from `row` (its source's whole row) or, with row null, read from its
  // predecessor row with its targets' distances given; the slot says whether they fit.
  void write_traced_paths(const Job& job, char* io, const double* row, const double* own_distances,
                          const ArcIndex* predecessor_row, const Graph& graph);
  void make_room(Worker& worker, std::size_t needed, const CachedEngine* keep);
  // Takes the worker's engines that `which` picks out of its list (under mutex_, then the
  // graphs are published) and frees them with its GPU's lock held exclusively.
  void remove_engines(Worker& worker, const std::function<bool(const CachedEngine&)>& which);
  void drop_engines(Worker& worker);
  void sweep_engines(Worker& worker);
  // Marks the worker out of service with `why` (under mutex_).
  void take_out(Worker& worker, const std::string& why);
  // Puts jobs back in the queue, oldest first (under mutex_).
  void requeue(std::vector<Job>& jobs);
  std::size_t budget_bytes() const;  // a device's
  std::size_t worker_budget(const Worker& worker) const;
  void answer(const Job& job, const GroupReport& report, bool ok, ErrorKind kind,
              const std::string& message, const std::string& hint);
  void answer_slot(const Job& job, const GroupReport& report, bool ok, ErrorKind kind,
                   const std::string& message, const std::string& hint);
  bool still_wanted(const Job& job) const;
  void sweep();              // under mutex_
  void publish_graphs();     // under mutex_
  int live_workers() const;  // under mutex_
  // The GPUs with a live worker, in worker order (empty in CPU mode); under mutex_.
  std::vector<int> live_devices() const;
  // Whether a live worker serves `device` (may_take asks for every request: no allocation);
  // under mutex_.
  bool device_live(int device) const;

  ControlHeader* header_;
  ServiceMode mode_;
  std::size_t automatic_budget_bytes_;
  const std::atomic<bool>* stop_ = nullptr;

  mutable std::mutex mutex_;
  std::condition_variable work_;  // pending_ changed, or stopping
  std::vector<Job> pending_;
  std::map<std::string, std::shared_ptr<CachedGraph>> graphs_;
  std::map<std::string, Io> io_;
  std::vector<std::unique_ptr<Worker>> workers_;
  std::map<int, std::unique_ptr<std::shared_mutex>> device_locks_;  // by CUDA device
  std::int64_t last_sweep_ns_ = 0;
  std::int64_t clock_ = 0;  // use counter for the I/O mappings
  std::int64_t idle_since_ns_ = 0;
  std::atomic<std::int64_t> recover_after_idle_ns_{10LL * 1000000000LL};
  bool exiting_ = false;      // run() is ending: the workers stop
  bool fault_exit_ = false;   // every device failed: the process ends
  bool lost_device_ = false;  // a device failed while serving (a restart takes it back)
};

}  // namespace gpu_routing::service
