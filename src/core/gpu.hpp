// What the core knows of the GPU side: whether this build has CUDA, which devices a backend can
// use, and why not when it cannot. Implemented in kernels/device.cu, or by gpu_stub.cpp in a build
// without CUDA. Nothing here touches CUDA before the first call, and the first call happens in a
// backend, never in the postmaster (a CUDA context does not survive fork()).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace gpu_routing::gpu {

struct DeviceInfo {
  int index = 0;
  std::string name;
  int compute_major = 0;
  int compute_minor = 0;
  std::size_t total_memory_bytes = 0;
  std::size_t free_memory_bytes = 0;  // at probe time
  int multiprocessors = 0;
};

struct Availability {
  bool built_with_cuda = false;
  bool usable = false;  // at least one device can run our kernels
  std::string reason;   // why not, when !usable ("no NVIDIA driver (CUDA error 35 ...)")
  std::vector<DeviceInfo> devices;
};

// Probes on first use and caches the answer for the life of the process.
const Availability& availability();

// "CUDA 13.0, sm_80 sm_90, PTX compute_90" or "built without CUDA".
std::string build_description();

// Device memory this process's CUDA context holds (total - free, measured right after the
// context was created); 0 before the first GPU call or without CUDA.
std::size_t context_memory_bytes();

// Creates the context on `device` now (signals blocked) instead of at the first engine; throws
// RoutingError. The GPU service calls it at start so its first request does not pay for it.
void open_context(int device);

// Page-locked host memory (device copies into it run at full speed), or null when CUDA cannot
// give it (no driver, a build without CUDA): callers then use ordinary memory.
void* allocate_pinned(std::size_t bytes);
void free_pinned(void* memory);

}  // namespace gpu_routing::gpu
