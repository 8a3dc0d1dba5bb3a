// Device discovery, context creation inside a backend, memory checks, and graph upload.
#include <atomic>
#include <cstdio>
#include <cstring>
#include <mutex>

#include "engine/gpu.hpp"
#include "base/parallel.hpp"
#include "cuda_common.cuh"

#ifndef GPU_ROUTING_CUDA_ARCHS
#define GPU_ROUTING_CUDA_ARCHS "unknown"
#endif

namespace gpu_routing::gpu {

namespace {
// Keep 256 MB (or 5%) of device memory free for other sessions' contexts and the driver.
constexpr std::size_t kDeviceMemoryReserve = std::size_t{256} << 20;
}  // namespace

void throw_cuda_error(cudaError_t status, const char* what, const char* file, int line) {
  cudaGetLastError();  // clear a sticky launch error so the next call of the session starts clean
  char location[256];
  std::snprintf(location, sizeof location, " (%s:%d)", file, line);
  std::string message = std::string("CUDA error ") + std::to_string(static_cast<int>(status)) +
                        " (" + cudaGetErrorName(status) + ": " + cudaGetErrorString(status) +
                        ") in " + what;
  if (status == cudaErrorMemoryAllocation)
    throw RoutingError(ErrorKind::kOutOfMemory, "out of GPU memory: " + message + location,
                       "Lower the number of sources per call, or set gpu_routing.device = cpu.");
  throw RoutingError(ErrorKind::kInternal, message + location);
}

const Availability& availability() {
  static Availability answer;
  static std::once_flag once;
  std::call_once(once, [] {
    answer.built_with_cuda = true;
    int count = 0;
    cudaError_t status = cudaSuccess;
    with_signals_blocked([&] { status = cudaGetDeviceCount(&count); });
    if (status != cudaSuccess) {
      cudaGetLastError();
      if (status == cudaErrorInsufficientDriver || status == cudaErrorNoDevice)
        answer.reason = status == cudaErrorNoDevice
                            ? "no CUDA device found"
                            : "no NVIDIA driver, or one older than this build's CUDA runtime";
      else
        answer.reason = std::string("CUDA cannot start: ") + cudaGetErrorName(status) + " (" +
                        cudaGetErrorString(status) + ")";
      answer.reason +=
          " [cudaGetDeviceCount returned " + std::to_string(static_cast<int>(status)) + "]";
      return;
    }
    for (int d = 0; d < count; ++d) {
      cudaDeviceProp props;
      if (cudaGetDeviceProperties(&props, d) != cudaSuccess) {
        cudaGetLastError();
        continue;
      }
      DeviceInfo info;
      info.index = d;
      info.name = props.name;
      info.compute_major = props.major;
      info.compute_minor = props.minor;
      info.total_memory_bytes = props.totalGlobalMem;
      info.multiprocessors = props.multiProcessorCount;
      answer.devices.push_back(info);
    }
    bool any = false;
    for (const auto& d : answer.devices) any = any || d.compute_major >= 7;
    answer.usable = any;
    if (!any)
      answer.reason = answer.devices.empty() ? "no CUDA device found"
                                             : "no device of compute capability 7.0 or newer";
  });
  return answer;
}

std::string build_description() {
  return "CUDA " + std::to_string(CUDART_VERSION / 1000) + "." +
         std::to_string((CUDART_VERSION % 1000) / 10) + ", " + GPU_ROUTING_CUDA_ARCHS;
}

namespace {
// Each device's context footprint: what the device lost when this process first made it
// current. Other processes allocating at the same moment blur this, so it is a measurement, not
// an audit.
constexpr int kMeasuredDevices = 16;
std::mutex g_context_mutex;
std::atomic<bool> g_context_measured[kMeasuredDevices] = {};
std::size_t g_context_bytes[kMeasuredDevices] = {};
}  // namespace

std::size_t context_memory_bytes(int device) {
  if (device < 0 || device >= kMeasuredDevices) return 0;
  return g_context_measured[device].load(std::memory_order_acquire) ? g_context_bytes[device] : 0;
}

std::size_t context_memory_bytes() {
  return context_memory_bytes(0);
}

int device_count() {
  return static_cast<int>(availability().devices.size());
}

void use_device(int device) {
  const Availability& gpus = availability();
  if (!gpus.usable) throw RoutingError(ErrorKind::kNoDevice, "no usable GPU: " + gpus.reason);
  cudaError_t status = cudaSuccess;
  with_signals_blocked([&] {
    status = cudaSetDevice(device);
    // cudaFree(0) forces the context into existence now, while signals are blocked.
    if (status == cudaSuccess) status = cudaFree(nullptr);
  });
  if (status != cudaSuccess)
    throw_cuda_error(status, "creating the CUDA context", __FILE__, __LINE__);
  // Measured once per device; every later call (each solve makes its device current) only
  // reads the flag.
  if (device >= 0 && device < kMeasuredDevices &&
      !g_context_measured[device].load(std::memory_order_acquire)) {
    std::lock_guard<std::mutex> lock(g_context_mutex);
    std::size_t free_bytes = 0, total_bytes = 0;
    if (!g_context_measured[device].load(std::memory_order_relaxed) &&
        cudaMemGetInfo(&free_bytes, &total_bytes) == cudaSuccess) {
      g_context_bytes[device] = total_bytes - free_bytes;
      g_context_measured[device].store(true, std::memory_order_release);
    }
  }
}

void open_context(int device) {
  use_device(device);
}

void* allocate_pinned(std::size_t bytes) {
  if (!availability().usable) return nullptr;
  void* memory = nullptr;
  if (cudaHostAlloc(&memory, bytes, cudaHostAllocDefault) != cudaSuccess) {
    cudaGetLastError();
    return nullptr;
  }
  return memory;
}

void free_pinned(void* memory) {
  if (memory != nullptr) cudaFreeHost(memory);
}

void require_device_memory(int device, std::size_t bytes, const std::string& what,
                           const MemoryBudget& budget) {
  budget.require(bytes, what);
  std::size_t free_bytes = 0, total_bytes = 0;
  GPU_ROUTING_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  std::size_t reserve = std::max(kDeviceMemoryReserve, total_bytes / 20);
  std::size_t usable = free_bytes > reserve ? free_bytes - reserve : 0;
  if (bytes > usable)
    throw RoutingError(ErrorKind::kOutOfMemory,
                       what + " needs " + format_bytes(bytes) + " of GPU memory; device " +
                           std::to_string(device) + " has " + format_bytes(free_bytes) +
                           " free of " + format_bytes(total_bytes),
                       "Use fewer sources per call, or set gpu_routing.device = cpu.");
}

std::size_t DeviceCsr::bytes(const CsrGraph& csr, bool with_edge_ids) {
  std::size_t arcs = csr.heads.size();
  return csr.row_offsets.size() * sizeof(ArcIndex) + arcs * (sizeof(VertexIndex) + sizeof(double)) +
         (with_edge_ids ? arcs * sizeof(std::int64_t) : 0);
}

void DeviceCsr::upload(const CsrGraph& csr, bool with_edge_ids, cudaStream_t stream) {
  vertex_count = csr.vertex_count;
  arc_count = csr.arc_count();
  const std::size_t total = bytes(csr, with_edge_ids);
  PinnedBuffer<unsigned char> staging(std::max<std::size_t>(total, 1));
  unsigned char* cursor = staging.data();
  auto stage = [&](auto& device_buffer, const auto& host_vector) {
    using T = typename std::decay_t<decltype(host_vector)>::value_type;
    std::size_t n = host_vector.size();
    device_buffer.allocate(std::max<std::size_t>(n, 1));
    if (n == 0) return;
    std::memcpy(cursor, host_vector.data(), n * sizeof(T));
    device_buffer.upload(reinterpret_cast<const T*>(cursor), n, stream);
    cursor += n * sizeof(T);
  };
  stage(row_offsets, csr.row_offsets);
  stage(heads, csr.heads);
  stage(weights, csr.weights);
  if (with_edge_ids) stage(edge_ids, csr.edge_ids);
  GPU_ROUTING_CUDA_CHECK(cudaStreamSynchronize(stream));
}

}  // namespace gpu_routing::gpu
