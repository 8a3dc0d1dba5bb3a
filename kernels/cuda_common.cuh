// Shared by every CUDA engine: error checking that throws (never aborts a backend), RAII device
// and pinned host buffers, device selection, memory budgeting, and the graph on the device.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <vector>

#include "base/common.hpp"
#include "engine/engine.hpp"
#include "base/graph.hpp"

namespace gpu_routing::gpu {

// Throws RoutingError naming the failed call; out-of-memory gets kOutOfMemory so the SQL error
// says what was asked for.
[[noreturn]] void throw_cuda_error(cudaError_t status, const char* what, const char* file,
                                   int line);

#define GPU_ROUTING_CUDA_CHECK(call)                                                        \
  do {                                                                                      \
    cudaError_t gpu_routing_status_ = (call);                                               \
    if (gpu_routing_status_ != cudaSuccess)                                                 \
      ::gpu_routing::gpu::throw_cuda_error(gpu_routing_status_, #call, __FILE__, __LINE__); \
  } while (0)

// After a kernel launch: launch-configuration errors surface here.
#define GPU_ROUTING_CUDA_CHECK_LAUNCH() GPU_ROUTING_CUDA_CHECK(cudaGetLastError())

// Makes `device` current in this thread, creating the CUDA context on first use with every signal
// blocked (the runtime's helper threads then never run PostgreSQL's handlers). Records how much
// device memory the context itself took.
void use_device(int device);

// Throws kOutOfMemory (naming `what` and both sizes) unless `bytes` fit in the device's free
// memory with a safety margin, and in the budget.
void require_device_memory(int device, std::size_t bytes, const std::string& what,
                           const MemoryBudget& budget);

// Device memory owned by one object; freed in the destructor (errors there are ignored: a
// destructor must not throw, and a failed free leaves nothing more to do).
template <typename T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t count) { allocate(count); }
  ~DeviceBuffer() { release(); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& other) noexcept : data_(other.data_), count_(other.count_) {
    other.data_ = nullptr;
    other.count_ = 0;
  }
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
    if (this != &other) {
      release();
      data_ = other.data_;
      count_ = other.count_;
      other.data_ = nullptr;
      other.count_ = 0;
    }
    return *this;
  }

  void allocate(std::size_t count) {
    release();
    if (count == 0) return;
    GPU_ROUTING_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&data_), count * sizeof(T)));
    count_ = count;
  }
  // Grows only: buffers are reused across batches of one call.
  void reserve(std::size_t count) {
    if (count > count_) allocate(count);
  }
  void release() noexcept {
    if (data_ != nullptr) cudaFree(data_);
    data_ = nullptr;
    count_ = 0;
  }
  void upload(const T* host, std::size_t count, cudaStream_t stream = nullptr) {
    GPU_ROUTING_CUDA_CHECK(
        cudaMemcpyAsync(data_, host, count * sizeof(T), cudaMemcpyHostToDevice, stream));
  }
  void download(T* host, std::size_t count, cudaStream_t stream = nullptr) const {
    GPU_ROUTING_CUDA_CHECK(
        cudaMemcpyAsync(host, data_, count * sizeof(T), cudaMemcpyDeviceToHost, stream));
  }
  T* data() const { return data_; }
  std::size_t size() const { return count_; }

 private:
  T* data_ = nullptr;
  std::size_t count_ = 0;
};

// Page-locked host memory for fast, asynchronous copies.
template <typename T>
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  explicit PinnedBuffer(std::size_t count) { allocate(count); }
  ~PinnedBuffer() {
    if (data_ != nullptr) cudaFreeHost(data_);
  }
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  void allocate(std::size_t count) {
    if (data_ != nullptr) cudaFreeHost(data_);
    data_ = nullptr;
    count_ = 0;
    if (count == 0) return;
    GPU_ROUTING_CUDA_CHECK(cudaMallocHost(reinterpret_cast<void**>(&data_), count * sizeof(T)));
    count_ = count;
  }
  void reserve(std::size_t count) {
    if (count > count_) allocate(count);
  }
  T* data() const { return data_; }
  std::size_t size() const { return count_; }

 private:
  T* data_ = nullptr;
  std::size_t count_ = 0;
};

class Stream {
 public:
  Stream() { GPU_ROUTING_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking)); }
  ~Stream() {
    if (stream_ != nullptr) cudaStreamDestroy(stream_);
  }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t get() const { return stream_; }
  void synchronize() const { GPU_ROUTING_CUDA_CHECK(cudaStreamSynchronize(stream_)); }

 private:
  cudaStream_t stream_ = nullptr;
};

class Event {
 public:
  Event() { GPU_ROUTING_CUDA_CHECK(cudaEventCreate(&event_)); }
  ~Event() {
    if (event_ != nullptr) cudaEventDestroy(event_);
  }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  cudaEvent_t get() const { return event_; }
  void record(cudaStream_t stream) { GPU_ROUTING_CUDA_CHECK(cudaEventRecord(event_, stream)); }
  void synchronize() const { GPU_ROUTING_CUDA_CHECK(cudaEventSynchronize(event_)); }

 private:
  cudaEvent_t event_ = nullptr;
};

// A CSR graph resident on one device (forward, or reversed for relax_U / predecessor kernels).
struct DeviceCsr {
  VertexIndex vertex_count = 0;
  ArcIndex arc_count = 0;
  DeviceBuffer<ArcIndex> row_offsets;
  DeviceBuffer<VertexIndex> heads;
  DeviceBuffer<double> weights;
  DeviceBuffer<std::int64_t> edge_ids;  // only uploaded when asked (predecessor kernels)

  static std::size_t bytes(const CsrGraph& csr, bool with_edge_ids);
  // Uploads through a pinned staging buffer on `stream` and waits for it.
  void upload(const CsrGraph& csr, bool with_edge_ids, cudaStream_t stream);
};

// Sizes of the devices this process may use (cudaGetDeviceCount after the probe).
int device_count();

// Non-negative doubles order like their bit patterns read as unsigned 64-bit integers, so
// atomicMin on the bits is an exact, race-free minimum of float64 distances (+inf included).
__device__ __forceinline__ unsigned long long distance_bits(double d) {
  return static_cast<unsigned long long>(__double_as_longlong(d));
}
__device__ __forceinline__ double atomic_min_distance(double* address, double value) {
  unsigned long long old =
      atomicMin(reinterpret_cast<unsigned long long*>(address), distance_bits(value));
  return __longlong_as_double(static_cast<long long>(old));
}

constexpr int kDefaultBlockSize = 256;

inline int blocks_for(std::int64_t items, int block_size) {
  std::int64_t blocks = (items + block_size - 1) / block_size;
  if (blocks < 1) blocks = 1;
  return static_cast<int>(blocks);
}

}  // namespace gpu_routing::gpu
