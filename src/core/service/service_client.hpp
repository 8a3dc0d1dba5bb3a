// A backend's side of the GPU service (service_protocol.hpp): the connection to the control
// segment, and ServiceEngine, an engine whose solve() is answered by the service. RoutingCall
// uses it in place of the engine it selected, so batching, path tracing, progress and rows stay
// where they are; only the distances (and predecessor arcs) come from the service, or, for one
// source's paths, the paths the service traced next to the row (solve_paths).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/engine.hpp"
#include "engine/gpu.hpp"
#include "service/service_protocol.hpp"

namespace gpu_routing {

// What RoutingCall asks of a remote engine provider (the service client): whether it serves an
// engine, and an engine that forwards to it. Kept abstract so the core does not depend on how.
class RemoteEngines {
 public:
  virtual ~RemoteEngines() = default;
  virtual bool serves(const EngineInfo& info) const = 0;
  // `image_segment`: the graph's image already in shared memory (a kept graph), or empty: the
  // engine writes one itself. `index_segment` (`index_bytes`): the kept graph's road index image,
  // which the remote cch answers from, or empty.
  virtual std::unique_ptr<ShortestPathEngine> create(const EngineInfo& info, const Graph& graph,
                                                     const EngineOptions& options,
                                                     const std::string& image_segment,
                                                     const std::string& index_segment = {},
                                                     std::size_t index_bytes = 0) = 0;
};

namespace service {

class ServiceClient final : public RemoteEngines {
 public:
  // `backend_pid` names this client's segments; `owner_pid` is the process its requests belong to
  // (a request of a process that is gone is dropped). Backends pass their pid for both; tests
  // that run several clients in one process give each its own backend_pid.
  ServiceClient(long postmaster_pid, long backend_pid, long owner_pid = 0);
  ~ServiceClient() override;
  ServiceClient(const ServiceClient&) = delete;
  ServiceClient& operator=(const ServiceClient&) = delete;

  // Maps the control segment when the supervisor has made it; false while there is none.
  bool connect();
  bool connected() const { return header_ != nullptr; }
  const ControlHeader* header() const { return header_; }
  ServiceState state() const;
  ServiceMode mode() const;
  // The GPUs as the service found them: usable only while it is ready in GPU mode; otherwise
  // the reason says why (starting, restarting, no GPU).
  gpu::Availability availability() const;
  // Waits (in short slices, polling cancel) until the service is ready or can no longer become
  // ready (no GPU); true when ready.
  bool wait_ready(int timeout_ms, const CancelToken& cancel) const;

  bool serves(const EngineInfo& info) const override;
  std::unique_ptr<ShortestPathEngine> create(const EngineInfo& info, const Graph& graph,
                                             const EngineOptions& options,
                                             const std::string& image_segment,
                                             const std::string& index_segment = {},
                                             std::size_t index_bytes = 0) override;

  // At backend exit: makes a solve still in flight on another thread give up (it abandons its
  // request) and waits for it, then abandons a request still held and removes this backend's
  // segments. The exit callback runs before the call's objects are destroyed, so without the
  // wait the call's thread could read a segment already unmapped.
  void release();
  bool closing() const { return closing_.load(std::memory_order_acquire); }
  // Held by ServiceEngine::solve while it uses the slot and the I/O segment.
  void enter_solve() { solves_in_flight_.fetch_add(1, std::memory_order_acq_rel); }
  void leave_solve() { solves_in_flight_.fetch_sub(1, std::memory_order_acq_rel); }

  // For ServiceEngine.
  ControlHeader* mutable_header() { return header_; }
  // The exchange segment, of `bytes` at least; *made (when given) says whether it was made now.
  SharedMapping& io_segment(std::size_t bytes, bool* made = nullptr);
  // How large an exchange segment the session keeps between calls (at least 64 MB): one made
  // again each call faults in its pages on both sides (New York, 10,000 x 10,000: 205 MB).
  static void set_kept_exchange_bytes(std::size_t bytes);
  // After a request was abandoned the service may still write into the segment it named: the
  // next request gets a new one.
  void drop_io_segment();
  // Drops the exchange segment kept from an earlier call when it is larger than the session may
  // now keep (set_kept_exchange_bytes lowered), between calls: otherwise it stayed until the end
  // of the next call through the service.
  void drop_io_segment_over_kept();
  std::size_t io_segment_bytes() const { return io_.valid() ? io_.size() : 0; }
  std::string new_graph_segment_name();
  void set_held_slot(int slot) { held_slot_ = slot; }
  long backend_pid() const { return backend_pid_; }
  long owner_pid() const { return owner_pid_; }
  // Test hook: kFlagFaultDevice / kFlagFaultMemory added to this backend's next requests.
  void set_test_fault_flags(std::uint32_t flags) { test_fault_flags_ = flags; }
  std::uint32_t test_fault_flags() const { return test_fault_flags_; }

 private:
  long postmaster_pid_;
  long backend_pid_;
  long owner_pid_;
  SharedMapping control_;
  ControlHeader* header_ = nullptr;
  SharedMapping io_;
  std::uint64_t sequence_ = 0;
  int held_slot_ = -1;
  std::uint32_t test_fault_flags_ = 0;
  std::atomic<bool> closing_{false};
  std::atomic<int> solves_in_flight_{0};
};

// What the last request through the service reported, beyond EngineReport.
struct ServiceRequestReport {
  int batch_size = 0;  // 0: the call did not go through the service
  double wait_ms = 0;
};

// One source's paths to its targets as the service traced them (ServiceEngine::solve_paths).
struct TracedPaths {
  std::vector<double> distances;   // per target, kInfinity where unreachable
  std::vector<std::int64_t> ends;  // target j's arcs are arcs[ends[j - 1] .. ends[j])
  std::vector<ArcIndex> arcs;      // indices into graph.reverse, each path in path order
};

class ServiceEngine final : public ShortestPathEngine {
 public:
  ServiceEngine(ServiceClient& client, const EngineInfo& info, const Graph& graph,
                const EngineOptions& options, std::string image_segment,
                std::string index_segment = {}, std::size_t index_bytes = 0);
  ~ServiceEngine() override;

  const char* name() const override { return info_.name; }
  Device device() const override { return info_.device; }
  int preferred_batch_size() const override;
  int preferred_batch_size_for_rows(std::size_t row_width) const override;
  // The service makes compact rows from full ones for engines that cannot.
  bool supports_compact_targets() const override { return true; }
  bool supports_row_stride() const override { return true; }
  // Rows are copied out of the exchange segment; each can go wherever the caller wants it.
  bool supports_row_pointers() const override { return true; }
  // ... in the caller's order of columns, gathered as they are copied out.
  bool supports_row_columns() const override { return true; }
  void solve(const SolveRequest& request) override;
  // The areas come back from the service compacted (kFlagAreas), not as rows.
  void solve_areas(const VertexIndex* sources, int count, double bound, AreaLists& areas) override;
  // The paths from `source` to each of `targets` (distinct), traced by the service next to the
  // row it computed, by trace_path's rule: only the paths cross to this process, not the row
  // (2 MB for New York against a few kilobytes). False when they did not fit the room this
  // request gave them, or the graph has no reversed CSR: solve() the row instead.
  bool solve_paths(VertexIndex source, const VertexIndex* targets, int target_count,
                   TracedPaths& paths);

  const ServiceRequestReport& service_report() const { return service_report_; }

 private:
  void publish_image();
  // Submits the request and waits for its answer; with `paths`, the traced form (solve_paths);
  // with `areas`, the sources' areas within `bound` (solve_areas).
  bool exchange(const SolveRequest& request, TracedPaths* paths, AreaLists* areas = nullptr,
                double bound = 0);
  // "N requests (a fresh exchange segment of M MB), set up in ..., answered in ..., rows
  // copied ...; "
  std::string call_totals_note() const;

  ServiceClient& client_;
  const EngineInfo& info_;
  std::string image_segment_;
  std::size_t image_bytes_ = 0;
  std::string index_segment_;
  std::size_t index_bytes_ = 0;
  bool owns_image_ = false;
  bool drop_io_at_end_ = false;  // a request used an exchange segment too large to keep
  ServiceRequestReport service_report_;
  // Where the call's requests spent their time, all of them together (the engine's own notes are
  // its last solve's): the notes lead with it.
  struct CallTotals {
    int requests = 0;
    std::size_t fresh_segment_bytes = 0;  // the largest exchange segment made for the call
    double before_submit_ms = 0;          // from the call of solve() to its request's submission
    double answered_ms = 0;               // submitted to answered, the service's whole part
    double engine_ms = 0;  // of that, the engine's compute and transfers as it reports them
    double copy_ms = 0;    // rows copied out of the segment into the session
  };
  CallTotals totals_;
};

// The service report of an engine, when it is a ServiceEngine (null otherwise).
const ServiceRequestReport* service_report_of(const ShortestPathEngine& engine);

}  // namespace service
}  // namespace gpu_routing
