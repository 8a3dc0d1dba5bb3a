// The GPU service's work loop (service_protocol.hpp): claims submitted requests, keeps graphs
// and engines between requests (one device copy per graph for the whole server, least recently
// used evicted past the device budget), runs single-source requests on the same graph together
// as one many-source launch, and answers each request in its own slot.
//
// Plain C++: the service executable runs it on the GPUs, the unit tests on the CPU engines.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "cch.hpp"
#include "engine.hpp"
#include "graph.hpp"
#include "service_protocol.hpp"

namespace gpu_routing::service {

class ServiceDispatcher {
 public:
  // `automatic_budget_bytes`: the device budget when gpu_routing.gpu_graph_memory is 0.
  ServiceDispatcher(ControlHeader* header, ServiceMode mode, std::size_t automatic_budget_bytes);
  ~ServiceDispatcher();
  ServiceDispatcher(const ServiceDispatcher&) = delete;
  ServiceDispatcher& operator=(const ServiceDispatcher&) = delete;

  // Serves until `stop` is raised (or `keep_going` returns false). Returns kExitStopped, or
  // kExitDeviceFault after a CUDA error that may have poisoned a context: the process then exits
  // and the supervisor starts a fresh one.
  int run(const std::atomic<bool>& stop, bool (*keep_going)() = nullptr);

  // Bytes the cached engines hold (their estimates), for tests.
  std::size_t device_bytes_in_use() const;
  std::size_t cached_engines() const { return engines_.size(); }

 private:
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
                  predecessors_offset = 0;
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
    std::uint64_t requests = 0;
  };
  struct Io {
    SharedMapping mapping;  // its size bounds the offsets of the requests that name it
    std::int64_t last_used = 0;
  };

  void collect();
  std::vector<Job> next_group();
  bool same_group(const Job& a, const Job& b) const;
  // Returns false when the process must exit (device fault).
  bool run_group(std::vector<Job>& group);
  void solve_group(std::vector<Job>& group, CachedEngine& cached);
  CachedEngine& engine_for(const Job& job, std::size_t sources);
  std::shared_ptr<CachedGraph> graph_for(const std::string& segment);
  char* io_for(const Job& job);
  // Throws unless the job's arrays lie inside its I/O segment and its vertices inside `graph`:
  // a request names segments and offsets, and nothing else guarantees they agree.
  void check_job(const Job& job, const char* io, const Graph& graph) const;
  void make_room(std::size_t needed, const CachedEngine* keep);
  std::size_t budget_bytes() const;
  void answer(const Job& job, bool ok, ErrorKind kind, const std::string& message,
              const std::string& hint);
  bool still_wanted(const Job& job) const;
  void sweep();
  void publish_graphs();

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

  ControlHeader* header_;
  Scratch scratch_distances_, scratch_arcs_;
  ServiceMode mode_;
  std::size_t automatic_budget_bytes_;
  std::vector<Job> pending_;
  std::map<std::string, std::shared_ptr<CachedGraph>> graphs_;
  std::vector<std::unique_ptr<CachedEngine>> engines_;
  std::map<std::string, Io> io_;
  std::int64_t last_sweep_ns_ = 0;
  std::int64_t clock_ = 0;  // use counter for least-recently-used order
  // What the group in flight reports back (filled by solve_group).
  struct GroupReport {
    std::string device_name, notes;
    double compute_ms = 0, transfer_ms = 0;
    std::int64_t rounds = 0;
    std::int64_t launched_ns = 0;
    std::size_t group_size = 0;
  } report_;
};

}  // namespace gpu_routing::service
