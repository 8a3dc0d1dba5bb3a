// The GPU service inside PostgreSQL: settings, the supervisor worker, the backends' connection.
//
// Why a supervisor and a separate executable (docs/design_gpu_service.md): PostgreSQL 15 attaches
// every background worker to shared memory, and the abnormal death of such a process restarts the
// whole server. A CUDA fault can kill the process that made the context, so that process is
// spawned by the supervisor and is no child of the postmaster: when it dies, only the requests in
// flight fail, and the supervisor starts a new one. The supervisor itself never touches CUDA.
#include "service.hpp"

#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>

#include "guard.hpp"
#include "service/service_protocol.hpp"

#include "postgres_headers.hpp"

extern "C" {
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/dsm_impl.h"
#include "storage/fd.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "utils/timestamp.h"
#include "utils/wait_event.h"

extern char** environ;
PGDLLEXPORT void gpu_routing_supervisor_main(Datum);
}

namespace gpu_routing::pg {

namespace {

using namespace gpu_routing::service;

enum ServiceSetting { kServiceAuto = 0, kServiceOff = 1, kServiceCpu = 2 };
const struct config_enum_entry kServiceOptions[] = {
    {"auto", kServiceAuto, false}, {"on", kServiceAuto, true}, {"off", kServiceOff, false},
    {"cpu", kServiceCpu, false},   {nullptr, 0, false},
};

enum TestFault { kFaultNone = 0, kFaultDeviceError = 1, kFaultDeviceMemory = 2 };
const struct config_enum_entry kTestFaultOptions[] = {
    {"none", kFaultNone, false},
    {"device_error", kFaultDeviceError, false},
    {"device_out_of_memory", kFaultDeviceMemory, false},
    {nullptr, 0, false},
};

int g_service = kServiceAuto;
int g_test_fault = kFaultNone;
int g_gpu_graph_memory_mb = 0;  // 0: automatic (80% of the GPU beyond the service's context)
double g_batch_window_ms = 1.0;
int g_service_devices = 0;  // 0: every GPU (one worker in CPU mode)
int g_service_lanes = 0;    // 0: kDefaultLanes workers per GPU
bool g_preloaded = false;

// Backend side.
ServiceClient* g_client = nullptr;
bool g_exit_registered = false;

constexpr int kReadyWaitMs = 15000;  // device = gpu while the service starts

void write_settings(ControlHeader* header) {
  header->device_budget_bytes.store(static_cast<std::uint64_t>(g_gpu_graph_memory_mb) * 1024 *
                                    1024);
  header->batch_window_ns.store(static_cast<std::uint64_t>(std::max(0.0, g_batch_window_ms) * 1e6));
  // Read by a service process when it starts.
  header->requested_devices = g_service_devices;
  header->requested_lanes = g_service_lanes;
}

void on_backend_exit(int, Datum) {
  if (g_client != nullptr) {
    g_client->release();
    // The client is left allocated: the process is exiting.
  }
}

ServiceClient* client() {
  if (!g_preloaded || g_service == kServiceOff) return nullptr;
  if (g_client == nullptr) {
    g_client = new (std::nothrow) ServiceClient(PostmasterPid, MyProcPid);
    if (g_client == nullptr) return nullptr;
  }
  if (!g_exit_registered) {
    // A backend that exits (pg_terminate_backend included) abandons its request and removes its
    // segments; one that crashes takes the server's shared memory with it anyway.
    before_shmem_exit(on_backend_exit, 0);
    g_exit_registered = true;
  }
  g_client->connect();
  return g_client;
}

}  // namespace

void trim_service_exchange() {
  if (g_client != nullptr) g_client->drop_io_segment_over_kept();
}

bool service_configured() {
  return g_preloaded && g_service != kServiceOff;
}

bool service_cpu_mode() {
  return g_service == kServiceCpu;
}

void write_service_settings(ControlHeader* header) {
  write_settings(header);
}

void service_init() {
  // The service's shape is fixed when the server starts, so its settings are PGC_POSTMASTER; but
  // PostgreSQL ends the session (FATAL) of a backend that defines such a setting after startup,
  // which is what CREATE EXTENSION, LOAD and session_preload_libraries do without preloading. As
  // pg_stat_statements, they are postmaster settings only while preloading; loaded later they
  // are sighup settings that say they take effect only with the library preloaded (nothing
  // reads them then), so postgresql.conf and ALTER SYSTEM keep them for the next start.
  const GucContext start_context =
      process_shared_preload_libraries_in_progress ? PGC_POSTMASTER : PGC_SIGHUP;
  DefineCustomEnumVariable(
      "gpu_routing.service",
      "Whether one process owns the GPUs for the whole server (the GPU service).",
      "auto (or on): with gpu_routing in shared_preload_libraries, a service process holds one "
      "CUDA context per GPU and the device copies of kept graphs, and every session's GPU work "
      "goes to it; off: each session opens its own CUDA context. cpu: the service runs the CPU "
      "engines and every call goes through it (for testing the service without a GPU).",
      &g_service, kServiceAuto, kServiceOptions, start_context, 0, nullptr, nullptr, nullptr);
  DefineCustomIntVariable(
      "gpu_routing.gpu_graph_memory",
      "GPU memory the service may give graphs and engine buffers (0 = 80% of the GPU).",
      "Graphs unused longest leave the GPU to make room; a call that alone needs more is refused "
      "naming the sizes.",
      &g_gpu_graph_memory_mb, 0, 0, INT_MAX / 2, PGC_SIGHUP, GUC_UNIT_MB, nullptr, nullptr,
      nullptr);
  DefineCustomRealVariable(
      "gpu_routing.batch_window",
      "How long the service waits for more single-source requests to share a launch (0 = never).",
      "Requests that arrive while the GPU is busy share the next launch whatever this is.",
      &g_batch_window_ms, 1.0, 0.0, 1000.0, PGC_SIGHUP, GUC_UNIT_MS, nullptr, nullptr, nullptr);
  DefineCustomIntVariable(
      "gpu_routing.service_devices", "How many GPUs the GPU service serves from (0 = every GPU).",
      "Each device gets its own worker, context and copies of the kept graphs. Fewer than the "
      "GPUs leaves the rest to other programs; more shares the GPUs round robin, which only "
      "tests want. With gpu_routing.service = cpu: how many workers run the CPU engines.",
      &g_service_devices, 0, 0, kMaxDevices, start_context, 0, nullptr, nullptr, nullptr);
  DefineCustomIntVariable(
      "gpu_routing.service_lanes",
      "Workers of the GPU service per GPU (0 = 3), whose launches overlap on the GPU.",
      "Each lane has its own engines (its own copy of a graph it serves) and CUDA stream: while "
      "one lane's launch of a few dozen routes runs, another's runs beside it on the "
      "multiprocessors the first leaves idle.",
      &g_service_lanes, 0, 0, 8, start_context, 0, nullptr, nullptr, nullptr);
  DefineCustomEnumVariable(
      "gpu_routing.test_fault",
      "Test hook: the GPU service fails this session's requests as a device fault would.",
      "device_error: as a CUDA error that poisons the context of the device the request runs "
      "on (the device leaves the service and the request runs again on another; with none "
      "left it fails and the service restarts); device_out_of_memory: as device memory running out "
      "(the request fails, the "
      "service empties its cache and goes on). For testing the recovery; superusers only.",
      &g_test_fault, kFaultNone, kTestFaultOptions, PGC_SUSET, GUC_NOT_IN_SAMPLE, nullptr, nullptr,
      nullptr);
  if (!process_shared_preload_libraries_in_progress) return;
  g_preloaded = true;
  if (g_service == kServiceOff) return;
  BackgroundWorker worker;
  memset(&worker, 0, sizeof worker);
  worker.bgw_flags = BGWORKER_SHMEM_ACCESS;
  worker.bgw_start_time = BgWorkerStart_PostmasterStart;
  worker.bgw_restart_time = 5;
  snprintf(worker.bgw_library_name, BGW_MAXLEN, "gpu_routing");
  snprintf(worker.bgw_function_name, BGW_MAXLEN, "gpu_routing_supervisor_main");
  snprintf(worker.bgw_name, BGW_MAXLEN, "gpu_routing service supervisor");
  snprintf(worker.bgw_type, BGW_MAXLEN, "gpu_routing supervisor");
  RegisterBackgroundWorker(&worker);
}

std::string kept_image_segment_name(unsigned handle) {
  if (dynamic_shared_memory_type != DSM_IMPL_POSIX) return std::string();
  char name[64];
  snprintf(name, sizeof name, "/PostgreSQL.%u", handle);
  return name;
}

void resolve_service(bool wait_for_gpu, bool gpus_wanted, ServiceUse* use) {
  *use = ServiceUse();
  if (!service_configured()) return;
  use->configured = true;
  ServiceClient* c = client();
  if (c == nullptr || !c->connected()) {
    use->gpus.built_with_cuda = true;
    use->gpus.reason = "the GPU service has not started";
    return;
  }
  if (wait_for_gpu && c->state() == ServiceState::kStarting)
    c->wait_ready(kReadyWaitMs, CancelToken(cancel_requested));
  if (gpus_wanted) use->gpus = c->availability();
  c->set_test_fault_flags(g_test_fault == kFaultDeviceError    ? kFlagFaultDevice
                          : g_test_fault == kFaultDeviceMemory ? kFlagFaultMemory
                                                               : 0);
  if (c->state() == ServiceState::kReady) use->remote = c;
}

long long service_device_bytes(const std::string& segment) {
  if (!service_configured()) return -1;
  ServiceClient* c = client();
  if (c == nullptr || !c->connected() || c->state() != ServiceState::kReady) return -1;
  const ControlHeader* h = c->header();
  for (int attempt = 0; attempt < 100; ++attempt) {
    const std::uint32_t before = h->graphs_seq.load(std::memory_order_acquire);
    if (before & 1u) continue;
    long long bytes = 0;
    for (int i = 0; i < std::min(h->graph_count, kMaxListedGraphs); ++i)
      if (segment == h->graphs[i].segment)
        bytes += static_cast<long long>(h->graphs[i].device_bytes);
    if (h->graphs_seq.load(std::memory_order_acquire) == before) return bytes;
  }
  return 0;
}

namespace {

void service_state_rows(std::vector<std::pair<std::string, std::string>>* rows) {
  char text[512];
  if (!g_preloaded) {
    rows->emplace_back("service",
                       "off: gpu_routing is not in shared_preload_libraries (each "
                       "session opens its own CUDA context)");
    return;
  }
  if (g_service == kServiceOff) {
    rows->emplace_back("service",
                       "off: gpu_routing.service = off (each session opens its own "
                       "CUDA context)");
    return;
  }
  ServiceClient* c = client();
  if (c == nullptr || !c->connected()) {
    rows->emplace_back("service", "not started: the supervisor has not made its control segment");
    return;
  }
  const ControlHeader* h = c->header();
  const ServiceState state = c->state();
  std::string line = state_label(state);
  line += c->mode() == ServiceMode::kCpu ? ", CPU engines (for tests)" : ", GPU engines";
  if (state == ServiceState::kReady || state == ServiceState::kStarting)
    line += ", pid " + std::to_string(h->service_pid.load());
  line += ", " + std::to_string(h->restarts.load()) + " restarts";
  if (h->reason[0] != '\0') line += ": " + std::string(h->reason);
  if (state == ServiceState::kNoGpu) line += " (GPU work runs in each session's CPU engine)";
  rows->emplace_back("service", line);
  if (state == ServiceState::kReady) {
    // One row per device (per worker in CPU mode): what it is, whether it serves, its load.
    const double alive_s =
        std::max(1e-3, static_cast<double>(realtime_ns() - h->started_at_ns.load()) / 1e9);
    const bool gpu_mode = c->mode() == ServiceMode::kGpu;
    for (int d = 0; d < std::min(h->device_count, kMaxDevices); ++d) {
      const DeviceEntry& e = h->devices[d];
      std::string line;
      if (gpu_mode) {
        // In use when the service made its context: the context, and whatever other processes
        // held on the device then (a measurement, not an audit).
        snprintf(text, sizeof text,
                 "%s (CUDA device %d, lane %d), %s, %s in use when the service started", e.name,
                 e.physical, e.lane, format_bytes(e.total_memory_bytes).c_str(),
                 format_bytes(e.context_bytes).c_str());
        line = text;
      } else {
        line = "CPU engines";
      }
      const auto worker_state = static_cast<WorkerState>(e.state.load());
      if (worker_state == WorkerState::kFailed) {
        line += "; out of service until the service restarts: " + std::string(e.failure);
      } else {
        snprintf(text, sizeof text, "; %s, %llu requests in %llu launches, busy %.0f%% of %.0f s",
                 worker_state == WorkerState::kBusy
                     ? ("running " + std::to_string(e.in_flight.load()) + " requests").c_str()
                     : "idle",
                 static_cast<unsigned long long>(e.requests.load()),
                 static_cast<unsigned long long>(e.batches.load()),
                 100.0 * static_cast<double>(e.busy_ns.load()) / 1e9 / alive_s, alive_s);
        line += text;
      }
      rows->emplace_back((gpu_mode ? "service lane " : "service worker ") + std::to_string(d),
                         line);
    }
  }
  // Graphs on the device: a consistent copy (the service rewrites the list under graphs_seq).
  std::vector<ListedGraph> graphs;
  std::uint64_t used = 0, budget = 0;
  for (int attempt = 0; attempt < 100; ++attempt) {
    const std::uint32_t before = h->graphs_seq.load(std::memory_order_acquire);
    if (before & 1u) continue;
    graphs.assign(h->graphs, h->graphs + std::min(h->graph_count, kMaxListedGraphs));
    used = h->device_bytes_used.load();
    budget = h->device_budget_in_use.load();
    if (h->graphs_seq.load(std::memory_order_acquire) == before) break;
  }
  snprintf(text, sizeof text, "%zu graphs, %s of %s (gpu_routing.gpu_graph_memory)", graphs.size(),
           format_bytes(used).c_str(), budget > 0 ? format_bytes(budget).c_str() : "automatic");
  rows->emplace_back("service graphs", text);
  for (const ListedGraph& g : graphs) {
    snprintf(text, sizeof text,
             "%s: %d vertices, %lld arcs, engine %s, %s on device %d, %llu requests", g.segment,
             g.vertices, static_cast<long long>(g.arcs), g.engine,
             format_bytes(g.device_bytes).c_str(), g.device,
             static_cast<unsigned long long>(g.requests));
    rows->emplace_back("service graph", text);
  }
  int waiting = 0, running = 0;
  for (const auto& slot : h->slots) {
    const auto s = static_cast<SlotState>(slot.state.load());
    waiting += s == SlotState::kSubmitted;
    running += s == SlotState::kRunning;
  }
  const std::uint64_t batches = h->batches.load();
  const std::uint64_t batched = h->batched_requests.load();
  snprintf(text, sizeof text,
           "%d waiting, %d claimed; %u queued for a device; %llu requests, %llu batches run, "
           "mean batch size %.2f, %llu failed",
           waiting, running, h->queued.load(), static_cast<unsigned long long>(h->requests.load()),
           static_cast<unsigned long long>(batches),
           batches > 0 ? static_cast<double>(batched) / static_cast<double>(batches) : 0.0,
           static_cast<unsigned long long>(h->failed_requests.load()));
  rows->emplace_back("service queue", text);
}

}  // namespace

void service_info(std::vector<std::pair<std::string, std::string>>* rows) {
  service_state_rows(rows);
  // The service's settings, whether it runs or not.
  rows->emplace_back("gpu_routing.service", g_service == kServiceOff   ? "off"
                                            : g_service == kServiceCpu ? "cpu"
                                                                       : "auto");
  rows->emplace_back("gpu_routing.gpu_graph_memory",
                     g_gpu_graph_memory_mb == 0
                         ? std::string("0 (80% of the GPU beyond the service's context)")
                         : format_bytes(static_cast<std::size_t>(g_gpu_graph_memory_mb) << 20));
  char window[64];
  snprintf(window, sizeof window, "%g ms", g_batch_window_ms);
  rows->emplace_back("gpu_routing.batch_window", window);
}

}  // namespace gpu_routing::pg

// --- The supervisor ---------------------------------------------------------------------------
// Plain C calls only (no C++ object with a destructor lives across a PostgreSQL call): an ERROR
// here ends the worker with exit code 1, which the postmaster restarts alone.

using namespace gpu_routing::service;
using gpu_routing::pg::Failure;

namespace {

constexpr int kSupervisorMaxBackoffMs = 30000;
volatile sig_atomic_t g_stop_requested = false;

void supervisor_sigterm(SIGNAL_ARGS) {
  const int save_errno = errno;
  g_stop_requested = true;
  SetLatch(MyLatch);
  errno = save_errno;
}

pid_t spawn_service(const char* path, const char* control, const char* mode) {
  char supervisor[32];
  snprintf(supervisor, sizeof supervisor, "%d", MyProcPid);
  char* argv[] = {const_cast<char*>(path),
                  const_cast<char*>("--control"),
                  const_cast<char*>(control),
                  const_cast<char*>("--mode"),
                  const_cast<char*>(mode),
                  const_cast<char*>("--supervisor"),
                  supervisor,
                  nullptr};
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  // The service gets default signal handling and an empty mask, whatever the worker had.
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&attributes, &none);
  posix_spawnattr_setsigdefault(&attributes, &all);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  pid_t pid = -1;
  const int error = posix_spawn(&pid, path, nullptr, &attributes, argv, environ);
  posix_spawnattr_destroy(&attributes);
  if (error != 0) {
    errno = error;
    return -1;
  }
  return pid;
}

// The postmaster whose service last ran on this data directory and the directory's path, in a
// file of the directory (the supervisor's working directory) that only the supervisor writes.
constexpr const char* kServiceServerFile = "gpu_routing_service.pid";

// A server that crashed or stopped in immediate mode left its segments (the control segment, and
// backends' io and graph segments) in /dev/shm under its postmaster's pid, and the next server of
// the same data directory has another pid, so its own sweep never saw them: they stayed until
// the machine restarted. They go here. The server the file names is gone where the file names
// this directory (PostgreSQL starts no second postmaster on a directory; its pid may still show,
// a zombie not yet reaped, right after an immediate stop); in a copy made by pg_basebackup, whose
// file names the primary's directory, only once no process has that pid (a primary on the same
// host is alive; on another host the pid names no segment here). Then the file names this server.
void remove_previous_servers_segments(long postmaster) {
  long previous = 0;
  char directory[MAXPGPATH] = "";
  if (FILE* file = AllocateFile(kServiceServerFile, "r")) {
    if (fscanf(file, "%ld\n", &previous) != 1) previous = 0;
    if (fgets(directory, sizeof directory, file) == nullptr) directory[0] = '\0';
    directory[strcspn(directory, "\n")] = '\0';
    FreeFile(file);
  }
  const bool same_directory = DataDir != nullptr && strcmp(directory, DataDir) == 0;
  if (previous > 0 && previous != postmaster && (same_directory || !process_alive(previous))) {
    // A clean stop removed them already; only a left control segment is worth a line.
    if (remove_service_segments(previous))
      ereport(LOG, (errmsg("gpu_routing supervisor: removed the GPU service's shared memory that "
                           "the server of postmaster pid %ld left behind",
                           previous)));
  }
  if (FILE* file = AllocateFile(kServiceServerFile, "w")) {
    fprintf(file, "%ld\n%s\n", postmaster, DataDir != nullptr ? DataDir : "");
    FreeFile(file);
  }
}

void stop_service(pid_t child) {
  if (child <= 0) return;
  kill(child, SIGTERM);
  for (int i = 0; i < 100; ++i) {  // 5 s, then SIGKILL
    if (waitpid(child, nullptr, WNOHANG) == child) return;
    pg_usleep(50000);
  }
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
}

}  // namespace

extern "C" void gpu_routing_supervisor_main(Datum) {
  pqsignal(SIGTERM, supervisor_sigterm);
  pqsignal(SIGHUP, SignalHandlerForConfigReload);
  pqsignal(SIGCHLD, SIG_DFL);  // waitpid collects the service
  BackgroundWorkerUnblockSignals();

  const long postmaster = static_cast<long>(PostmasterPid);
  char control_name[128];
  snprintf(control_name, sizeof control_name, "%s", control_segment_name(postmaster).c_str());
  char service_path[MAXPGPATH];
  snprintf(service_path, sizeof service_path, "%s/gpu_routing_service", pkglib_path);
  const bool cpu_mode = gpu_routing::pg::service_cpu_mode();

  // What a crashed server left behind (backends' segments) goes; the control segment is remade.
  remove_previous_servers_segments(postmaster);
  remove_leftover_segments(postmaster, true);
  static SharedMapping* control = nullptr;
  Failure failure;
  ControlHeader* header = nullptr;
  bool ok = gpu_routing::pg::guarded(&failure, [&] {
    control = new SharedMapping(SharedMapping::create(control_name, sizeof(ControlHeader)));
    header = static_cast<ControlHeader*>(control->data());
    initialize_header(header, cpu_mode ? ServiceMode::kCpu : ServiceMode::kGpu, MyProcPid);
  });
  if (!ok) {
    ereport(LOG, (errmsg("gpu_routing supervisor: %s", failure.message)));
    proc_exit(1);
  }
  gpu_routing::pg::write_service_settings(header);
  ereport(LOG, (errmsg("gpu_routing supervisor: started (%s mode); control segment %s",
                       cpu_mode ? "cpu" : "gpu", control_name)));

  pid_t child = -1;
  int backoff_ms = 1000;
  TimestampTz next_start = 0;
  TimestampTz child_started = 0;
  bool give_up = false;
  struct stat executable;
  if (stat(service_path, &executable) != 0) {
    copy_field(header->reason, sizeof header->reason,
               std::string("the service program is not installed at ") + service_path);
    header->state.store(static_cast<std::uint32_t>(ServiceState::kNoGpu));
    ereport(WARNING, (errmsg("gpu_routing supervisor: %s is missing; GPU work runs in each session",
                             service_path)));
    give_up = true;
  }

  while (!g_stop_requested) {
    if (ConfigReloadPending) {
      ConfigReloadPending = false;
      ProcessConfigFile(PGC_SIGHUP);
      gpu_routing::pg::write_service_settings(header);
    }
    if (child < 0 && !give_up && GetCurrentTimestamp() >= next_start) {
      header->state.store(static_cast<std::uint32_t>(ServiceState::kStarting));
      child = spawn_service(service_path, control_name, cpu_mode ? "cpu" : "gpu");
      child_started = GetCurrentTimestamp();
      if (child < 0) {
        ereport(WARNING, (errmsg("gpu_routing supervisor: could not start %s: %m", service_path)));
        header->state.store(static_cast<std::uint32_t>(ServiceState::kStopped));
        next_start = TimestampTzPlusMilliseconds(GetCurrentTimestamp(), backoff_ms);
        backoff_ms = std::min(backoff_ms * 2, kSupervisorMaxBackoffMs);
      }
    }
    if (child > 0) {
      int status = 0;
      const pid_t done = waitpid(child, &status, WNOHANG);
      if (done == child) {
        const bool exited = WIFEXITED(status);
        const int code = exited ? WEXITSTATUS(status) : -1;
        char why[160];
        if (exited)
          snprintf(why, sizeof why, "exit code %d", code);
        else
          snprintf(why, sizeof why, "signal %d (%s)", WTERMSIG(status),
                   strsignal(WTERMSIG(status)));
        child = -1;
        if (exited && code == kExitNoGpu) {
          // The service wrote state and reason: no GPU here; calls run in the backends' CPU engine.
          ereport(LOG, (errmsg("gpu_routing supervisor: the service found no usable GPU: %s",
                               header->reason)));
          fail_in_flight(header, "the GPU service found no usable GPU");
          header->state.store(static_cast<std::uint32_t>(ServiceState::kNoGpu));
          give_up = true;
        } else {
          header->state.store(static_cast<std::uint32_t>(ServiceState::kStopped));
          char message[256];
          snprintf(message, sizeof message,
                   "the GPU service stopped (%s) while answering this call", why);
          fail_in_flight(header, message);
          header->restarts.fetch_add(1);
          // A process that ran a while gets a quick restart; one that keeps dying backs off.
          if (TimestampDifferenceExceeds(child_started, GetCurrentTimestamp(), 60000))
            backoff_ms = 1000;
          const int delay = exited && code == kExitDeviceFault ? 100 : backoff_ms;
          if (!(exited && code == kExitDeviceFault))
            backoff_ms = std::min(backoff_ms * 2, kSupervisorMaxBackoffMs);
          copy_field(header->reason, sizeof header->reason, std::string("restarting after ") + why);
          ereport(LOG, (errmsg("gpu_routing supervisor: the service (pid %d) ended with %s; "
                               "restarting in %d ms",
                               static_cast<int>(done), why, delay)));
          next_start = TimestampTzPlusMilliseconds(GetCurrentTimestamp(), delay);
        }
      }
    }
    reclaim_dead_owners(header);
    (void)WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH, 50,
                    PG_WAIT_EXTENSION);
    ResetLatch(MyLatch);
  }

  header->state.store(static_cast<std::uint32_t>(ServiceState::kStopping));
  stop_service(child);
  fail_in_flight(header, "the server is shutting down");
  remove_service_segments(postmaster);
  proc_exit(0);
}
