// The machine's speeds for auto (cost_model.hpp): gpu_routing_calibrate() measures them and
// stores them in the server's data directory (one file per server, whatever the database), and
// each backend reads that file again when it changes (looked at once a second at most).
#include "speeds.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>

#include "calibration/calibration.hpp"
#include "guard.hpp"
#include "base/parallel.hpp"
#include "result_store.hpp"
#include "service.hpp"
#include "settings.hpp"

#include "postgres_headers.hpp"
#include "owned.hpp"

namespace gpu_routing::pg {

namespace {

constexpr const char* kSpeedsFile = "gpu_routing_speeds.conf";

std::string speeds_path() {
  return std::string(DataDir) + "/" + kSpeedsFile;
}

// The last file read, by modification time and size (a rewrite changes one of them).
struct Loaded {
  bool valid = false;
  struct timespec mtime = {};
  off_t size = 0;
  MachineSpeeds speeds;
  std::string cpu, gpus;  // the hardware the stored speeds are for
};
Loaded g_loaded;

std::string cpu_part(const std::string& hardware) {
  const std::size_t semicolon = hardware.find(';');
  return semicolon == std::string::npos ? hardware : hardware.substr(0, semicolon);
}

std::string gpu_part(const std::string& hardware) {
  const std::size_t semicolon = hardware.find(';');
  return semicolon == std::string::npos ? "" : hardware.substr(semicolon + 2);
}

// Writing result rows, per row: 500,000 rows of (bigint, bigint, float8), gpu_apsp's shape, as
// a call writes them (result_store.hpp: a fresh row arena, the pre-formed tuple, spilling past
// work_mem), the median of three passes. Each pass pays for its arena's memory as a call does:
// timed through plain tuplestore_putvalues, a first pass took 294 ns a row and a second 35,
// while calls wrote 135-150 ns a row on the same machine.
double measure_emit_row_ns() {
  constexpr int kRows = 500000;
  TupleDesc desc = CreateTemplateTupleDesc(3);
  TupleDescInitEntry(desc, 1, "start_vid", INT8OID, -1, 0);
  TupleDescInitEntry(desc, 2, "end_vid", INT8OID, -1, 0);
  TupleDescInitEntry(desc, 3, "agg_cost", FLOAT8OID, -1, 0);
  bool nulls[3] = {false, false, false};
  double passes[3];
  for (double& pass : passes) {
    MemoryContext arena = create_result_arena(CurrentMemoryContext);
    ResultStore* store =
        make_result_store(desc, arena, false, static_cast<std::size_t>(work_mem) * 1024);
    const Stopwatch watch;
    for (int i = 0; i < kRows; ++i) {
      if ((i & 0xffff) == 0) CHECK_FOR_INTERRUPTS();
      Datum values[3] = {Int64GetDatum(i / 1000), Int64GetDatum(i), Float8GetDatum(i * 0.5)};
      put_result_row(store, values, nulls);
    }
    pass = watch.elapsed_ms() * 1e6 / kRows;
    tuplestore_end(store->store);
    MemoryContextDelete(arena);
  }
  FreeTupleDesc(desc);
  std::sort(passes, passes + 3);
  return passes[1];
}

}  // namespace

namespace {

MachineSpeeds speeds_from_file(const gpu::Availability& gpus) {
  struct stat info;
  if (stat(speeds_path().c_str(), &info) != 0) {
    g_loaded.valid = false;
    return MachineSpeeds();
  }
  if (!g_loaded.valid || info.st_mtim.tv_sec != g_loaded.mtime.tv_sec ||
      info.st_mtim.tv_nsec != g_loaded.mtime.tv_nsec || info.st_size != g_loaded.size) {
    std::ifstream in(speeds_path());
    std::stringstream text;
    text << in.rdbuf();
    Loaded loaded;
    loaded.valid = loaded.speeds.parse(text.str());
    loaded.mtime = info.st_mtim;
    loaded.size = info.st_size;
    // "hardware = <cpu> x N threads; <gpus>" (calibration.hpp's hardware_description).
    const std::string all = text.str();
    const std::size_t at = all.find("\nhardware = ");
    if (at != std::string::npos) {
      const std::size_t end = all.find('\n', at + 1);
      const std::string hardware = all.substr(at + 12, end - (at + 12));
      loaded.cpu = cpu_part(hardware);
      loaded.gpus = gpu_part(hardware);
    }
    g_loaded = loaded;
  }
  if (!g_loaded.valid) {
    MachineSpeeds defaults;
    defaults.origin = "built-in (" + std::string(kSpeedsFile) + " unreadable)";
    return defaults;
  }
  // Calibrated on other hardware (the file came with a copied data directory, or the machine
  // changed): the built-in speeds are the better guess.
  const std::string now = hardware_description(gpus, resolve_thread_count(0));
  const bool cpu_differs = cpu_part(now) != g_loaded.cpu;
  const bool gpu_differs = gpus.usable && gpu_part(now) != g_loaded.gpus;
  if (cpu_differs || gpu_differs) {
    MachineSpeeds defaults;
    defaults.origin = "built-in: the calibration stored is for other hardware (" + g_loaded.cpu +
                      (g_loaded.gpus.empty() ? "" : "; " + g_loaded.gpus) +
                      "), run gpu_routing_calibrate()";
    return defaults;
  }
  return g_loaded.speeds;
}

// The speeds last answered, for which GPUs and when the file was last looked at. The file is
// looked at once a second at most: its stat and the hardware's description on every call were 3%
// of a one-pair call on a kept graph. A calibration in another session reaches this one within a
// second; this session's own at once (forget_speeds).
struct Answered {
  bool valid = false;
  const gpu::Availability* gpus = nullptr;
  bool gpus_usable = false;
  TimestampTz checked_at = 0;
  MachineSpeeds speeds;
};
Answered g_answered;
constexpr TimestampTz kRecheckMicroseconds = 1000000;

void forget_speeds() {
  g_answered.valid = false;
}

}  // namespace

MachineSpeeds current_speeds(const gpu::Availability& gpus) {
  // The statement's start: no clock read of its own, and one answer for all calls of a statement.
  const TimestampTz now = GetCurrentStatementStartTimestamp();
  if (!g_answered.valid || g_answered.gpus != &gpus || g_answered.gpus_usable != gpus.usable ||
      now < g_answered.checked_at || now - g_answered.checked_at >= kRecheckMicroseconds) {
    g_answered.speeds = speeds_from_file(gpus);
    g_answered.gpus = &gpus;
    g_answered.gpus_usable = gpus.usable;
    g_answered.checked_at = now;
    g_answered.valid = true;
  }
  return g_answered.speeds;
}

}  // namespace gpu_routing::pg

using gpu_routing::pg::Failure;
using gpu_routing::pg::guarded;

namespace {

// What a calibration holds in C++, owned by the call's memory context: the file's write and the
// rows come after the guarded part, where an ERROR longjmps past destructors.
struct CalibrationRun {
  gpu_routing::pg::Settings settings;
  gpu_routing::Calibration calibration;
  gpu_routing::pg::ServiceUse service;
  std::string path, temporary, text, hardware;
  // The rows: each speed, and whether it was measured.
  std::vector<std::pair<std::string, double>> values;
  std::vector<char> measured;
};

}  // namespace

extern "C" {
PG_FUNCTION_INFO_V1(gpu_routing_calibrate);
}

// gpu_routing_calibrate(): measures, stores, and returns each speed with whether it was measured.
extern "C" Datum gpu_routing_calibrate(PG_FUNCTION_ARGS) {
  if (!superuser())
    ereport(ERROR, (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
                    errmsg("gpu_routing_calibrate() must be run by a superuser"),
                    errdetail("It writes the server's speeds, which every database's auto "
                              "reads, into the data directory.")));
  InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC);
  ReturnSetInfo* rsinfo = reinterpret_cast<ReturnSetInfo*>(fcinfo->resultinfo);
  using namespace gpu_routing;
  // Writing rows is PostgreSQL's work: measured first, before any C++ object lives (a cancel
  // here leaves nothing behind).
  const double emit_row_ns = pg::measure_emit_row_ns();
  pg::OwnedObject* slot = pg::new_owned_slot();
  CalibrationRun* run = nullptr;
  Failure failure;
  bool ok = guarded(&failure, [&] {
    run = pg::own(slot, new CalibrationRun());
    run->settings = pg::current_settings();
    run->path = pg::speeds_path();
    run->temporary = run->path + ".tmp";
    const pg::Settings& settings = run->settings;
    pg::ServiceUse* service = &run->service;
    const int threads = resolve_thread_count(settings.threads);
    prepare_worker_threads(threads);
    CalibrationOptions options;
    options.threads = threads;
    options.cancel = CancelToken(pg::cancel_requested);
    pg::resolve_service(false, true, service);
    // With the GPU service the GPUs are its own (no CUDA context in a backend); without it, this
    // session's, as a call with device = gpu.
    gpu::Availability probed = settings.device == DeviceSetting::kCpu ? gpu::Availability()
                               : service->configured                  ? service->gpus
                                                                      : gpu::availability();
    if (settings.device == DeviceSetting::kCpu) probed.reason = "gpu_routing.device = cpu";
    options.gpus = &probed;
    if (service->configured && service->remote != nullptr) {
      RemoteEngines* remote = service->remote;
      options.through_service = true;
      options.make_gpu_engine = [remote](const EngineInfo& info, const Graph& graph,
                                         const EngineOptions& engine_options) {
        return remote->create(info, graph, engine_options, std::string());
      };
    } else if (!service->configured) {
      options.make_gpu_engine = [](const EngineInfo& info, const Graph& graph,
                                   const EngineOptions& engine_options) {
        return info.create(graph, engine_options);
      };
    } else if (probed.usable) {
      probed.usable = false;
      probed.reason = "the GPU service is not running";
    }
    Calibration& calibration = run->calibration;
    calibration = calibrate(options);
    calibration.speeds.emit_row_ns = emit_row_ns;
    calibration.measured.emplace_back("emit_row_ns");
    // The machine's processors, whatever this session's gpu_routing.threads (current_speeds).
    run->hardware = hardware_description(probed, resolve_thread_count(0));
    char stamp[64];
    const pg_time_t now = static_cast<pg_time_t>(time(nullptr));
    pg_strftime(stamp, sizeof stamp, "%Y-%m-%d %H:%M:%S %Z", pg_localtime(&now, log_timezone));
    calibration.speeds.origin = std::string("calibrated ") + stamp;
    run->text = calibration.speeds.serialize() + "hardware = " + run->hardware + "\n";
    run->values = calibration.speeds.values();
    for (const auto& value : run->values)
      run->measured.push_back(std::find(calibration.measured.begin(), calibration.measured.end(),
                                        value.first) != calibration.measured.end());
  });
  if (!ok) pg::raise_failure(&failure);  // the slot deletes what was made
  // Written whole, then renamed over the old file: a backend reads either one, never half.
  const char* temporary = run->temporary.c_str();
  FILE* file = AllocateFile(temporary, PG_BINARY_W);
  if (file == nullptr)
    ereport(ERROR, (errcode_for_file_access(), errmsg("could not write \"%s\": %m", temporary)));
  if (fwrite(run->text.data(), 1, run->text.size(), file) != run->text.size() ||
      FreeFile(file) != 0)
    ereport(ERROR, (errcode_for_file_access(), errmsg("could not write \"%s\": %m", temporary)));
  durable_rename(temporary, run->path.c_str(), ERROR);
  gpu_routing::pg::forget_speeds();  // this session's next call reads the new file
  for (const auto& note : run->calibration.notes) ereport(NOTICE, (errmsg("%s", note.c_str())));
  for (std::size_t i = 0; i < run->values.size(); ++i) {
    Datum values[3] = {CStringGetTextDatum(run->values[i].first.c_str()),
                       Float8GetDatum(run->values[i].second),
                       CStringGetTextDatum(run->measured[i] ? "measured" : "built-in")};
    bool nulls[3] = {false, false, false};
    tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
  }
  ereport(NOTICE, (errmsg("speeds stored in %s for %s", run->path.c_str(), run->hardware.c_str())));
  pg::destroy_owned(slot);  // now, not when the context goes
  return (Datum)0;
}
