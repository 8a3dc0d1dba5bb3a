// gpu_routing_service: the process that owns the GPUs for a PostgreSQL server (issue 10).
//
// Started by the supervisor (a background worker of the server, src/pg/service.cpp) with
// posix_spawn, so it is no child of the postmaster: a CUDA fault that kills it never restarts the
// server. It maps the control segment the supervisor made, probes the GPUs, and serves requests
// (ServiceDispatcher) until asked to stop, until its supervisor goes, or until a CUDA error that
// may have poisoned a context (then it exits and the supervisor starts a fresh one).
//
//   gpu_routing_service --control /gpu_routing.<postmaster pid> --mode gpu|cpu --supervisor PID
#include <execinfo.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <string>

#include "engine/gpu.hpp"
#include "service/service_dispatcher.hpp"
#include "service/service_protocol.hpp"

namespace {

std::atomic<bool> g_stop{false};
long g_supervisor_pid = 0;

void on_stop_signal(int) {
  g_stop.store(true);
}

// A crash leaves its stack in the server log (the supervisor restarts the process): the frames
// as addresses in the program, and where the program was mapped, for addr2line.
void on_crash_signal(int signal_number) {
  char line[160];
  int length =
      std::snprintf(line, sizeof line, "gpu_routing service: signal %d; stack:\n", signal_number);
  if (length > 0) (void)!write(STDERR_FILENO, line, static_cast<std::size_t>(length));
  void* frames[64];
  const int count = backtrace(frames, 64);
  backtrace_symbols_fd(frames, count, STDERR_FILENO);
  const int maps = open("/proc/self/maps", O_RDONLY);
  if (maps >= 0) {
    const ssize_t got = read(maps, line, sizeof line - 1);
    if (got > 0) {
      (void)!write(STDERR_FILENO, "gpu_routing service: first mapping: ", 36);
      (void)!write(STDERR_FILENO, line, static_cast<std::size_t>(got));
      (void)!write(STDERR_FILENO, "\n", 1);
    }
    close(maps);
  }
  signal(signal_number, SIG_DFL);
  raise(signal_number);
}

bool supervisor_alive() {
  return getppid() == g_supervisor_pid;
}

void usage() {
  std::fprintf(stderr,
               "usage: gpu_routing_service --control NAME --mode gpu|cpu --supervisor PID\n"
               "Started by the gpu_routing supervisor of a PostgreSQL server; not run by hand.\n");
}

}  // namespace

int main(int argc, char** argv) {
  using namespace gpu_routing;
  using namespace gpu_routing::service;
  std::string control;
  std::string mode_text = "gpu";
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--control") == 0)
      control = argv[i + 1];
    else if (std::strcmp(argv[i], "--mode") == 0)
      mode_text = argv[i + 1];
    else if (std::strcmp(argv[i], "--supervisor") == 0)
      g_supervisor_pid = std::atol(argv[i + 1]);
  }
  if (control.empty() || g_supervisor_pid <= 0 || (mode_text != "gpu" && mode_text != "cpu")) {
    usage();
    return 64;
  }
  // Nothing of the server's: its sockets, pipes and files stay with it.
  syscall(SYS_close_range, 3U, ~0U, 0);
  // Leave with the supervisor (and so with the server).
  prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (!supervisor_alive()) return kExitStopped;
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGINT, &action, nullptr);
  for (int crash : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) signal(crash, on_crash_signal);
  signal(SIGPIPE, SIG_IGN);
  signal(SIGHUP, SIG_IGN);
  setvbuf(stderr, nullptr, _IOLBF, 0);

  SharedMapping mapping;
  try {
    mapping = SharedMapping::open(control, true);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "gpu_routing service: %s\n", error.what());
    return 1;
  }
  if (mapping.size() < sizeof(ControlHeader)) {
    std::fprintf(stderr, "gpu_routing service: %s is not a control segment\n", control.c_str());
    return 1;
  }
  auto* header = static_cast<ControlHeader*>(mapping.data());
  if (header->magic != kMagic || header->layout_version != kLayoutVersion) {
    std::fprintf(stderr, "gpu_routing service: %s has another layout (a different build?)\n",
                 control.c_str());
    return 1;
  }
  const ServiceMode mode = mode_text == "cpu" ? ServiceMode::kCpu : ServiceMode::kGpu;
  header->service_pid.store(static_cast<std::int32_t>(getpid()));
  header->started_at_ns.store(realtime_ns());
  header->state.store(static_cast<std::uint32_t>(ServiceState::kStarting));
  copy_field(header->build, sizeof header->build, gpu::build_description());

  std::size_t automatic_budget = std::size_t{4} << 30;  // CPU mode: the engines' host memory
  const int requested = std::max(0, header->requested_devices);
  // What a previous process left in an entry (the dispatcher zeroes the counters when it runs).
  auto reset_entry = [&](int d) {
    DeviceEntry& entry = header->devices[d];
    entry.state.store(static_cast<std::uint32_t>(WorkerState::kIdle));
    entry.failure[0] = '\0';
    entry.context_bytes = 0;
  };
  if (mode == ServiceMode::kGpu) {
    const gpu::Availability& gpus = gpu::availability();
    if (!gpus.usable) {
      copy_field(header->reason, sizeof header->reason, gpus.reason);
      header->state.store(static_cast<std::uint32_t>(ServiceState::kNoGpu));
      std::fprintf(stderr, "gpu_routing service: no usable GPU (%s); calls run on the CPU\n",
                   gpus.reason.c_str());
      return kExitNoGpu;
    }
    // Every GPU, or as many devices as gpu_routing.service_devices asks: fewer leaves GPUs to
    // other programs; more shares the GPUs round robin (tests of several devices on one GPU).
    // Each device gets `lanes` workers (entries), lane-major within a device.
    const int real = static_cast<int>(gpus.devices.size());
    const int devices = requested > 0 ? requested : real;
    const int lanes =
        std::max(1, std::min(header->requested_lanes > 0 ? header->requested_lanes : kDefaultLanes,
                             kMaxDevices / std::max(1, std::min(devices, kMaxDevices))));
    header->device_count = std::min(devices * lanes, kMaxDevices);
    std::size_t smallest = 0;
    int opened = 0;
    for (int d = 0; d < header->device_count; ++d) {
      const gpu::DeviceInfo& info = gpus.devices[static_cast<std::size_t>((d / lanes) % real)];
      DeviceEntry& entry = header->devices[d];
      reset_entry(d);
      entry.lane = d % lanes;
      copy_field(entry.name, sizeof entry.name, info.name);
      entry.compute_major = info.compute_major;
      entry.compute_minor = info.compute_minor;
      entry.multiprocessors = info.multiprocessors;
      entry.total_memory_bytes = info.total_memory_bytes;
      entry.physical = info.index;
      if (smallest == 0 || info.total_memory_bytes < smallest) smallest = info.total_memory_bytes;
      // Each device's context is made now, so the first request does not pay for it. A device
      // whose context cannot be made stays out; the others serve.
      try {
        gpu::open_context(info.index);
        entry.context_bytes = gpu::context_memory_bytes(info.index);
        ++opened;
      } catch (const std::exception& error) {
        copy_field(entry.failure, sizeof entry.failure, error.what());
        entry.state.store(static_cast<std::uint32_t>(WorkerState::kFailed));
        std::fprintf(stderr, "gpu_routing service: device %d: %s\n", d, error.what());
      }
    }
    if (opened == 0) {
      copy_field(header->reason, sizeof header->reason, header->devices[0].failure);
      return kExitDeviceFault;
    }
    // Automatic budget, per device: 80% of the smallest device's memory beyond its context.
    const std::size_t context = gpu::context_memory_bytes(header->devices[0].physical);
    automatic_budget = smallest > context ? (smallest - context) / 10 * 8 : smallest / 2;
  } else {
    // CPU mode: workers that run the CPU engines, one unless asked for more (tests).
    header->device_count = std::min(std::max(1, requested), kMaxDevices);
    for (int d = 0; d < header->device_count; ++d) {
      reset_entry(d);
      copy_field(header->devices[d].name, sizeof header->devices[d].name, "CPU");
      header->devices[d].physical = -1;
      header->devices[d].lane = 0;
    }
  }
  header->reason[0] = '\0';
  header->state.store(static_cast<std::uint32_t>(ServiceState::kReady));
  std::fprintf(stderr, "gpu_routing service: ready (%s mode, pid %d)\n", mode_text.c_str(),
               static_cast<int>(getpid()));

  int code = kExitStopped;
  {
    ServiceDispatcher dispatcher(header, mode, automatic_budget);
    code = dispatcher.run(g_stop, supervisor_alive);
  }
  if (code == kExitStopped) std::fprintf(stderr, "gpu_routing service: stopped\n");
  return code;
}
