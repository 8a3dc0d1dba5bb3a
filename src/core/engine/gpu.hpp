// What the core knows of the GPU side: whether this build has CUDA, which devices a backend can
// use, and why not when it cannot. Implemented in kernels/device.cu, or by gpu_stub.cpp in a build
// without CUDA. Nothing here touches CUDA before the first call, and the first call happens in a
// backend, never in the postmaster (a CUDA context does not survive fork()).
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "base/common.hpp"

namespace gpu_routing {
class Cch;
struct Graph;
}  // namespace gpu_routing

namespace gpu_routing::gpu {

struct DeviceInfo {
  int index = 0;
  // The CUDA device behind it, where that differs from `index`: the GPU service lists each of its
  // lanes as a device, several to a GPU. -1: `index` itself.
  int physical = -1;
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
// The same for one device, measured when this process first made it current (0 before that).
std::size_t context_memory_bytes(int device);

// Creates the context on `device` now (signals blocked) instead of at the first engine; throws
// RoutingError. The GPU service calls it at start so its first request does not pay for it.
void open_context(int device);

// Page-locked host memory (device copies into it run at full speed), or null when CUDA cannot
// give it (no driver, a build without CUDA): callers then use ordinary memory.
void* allocate_pinned(std::size_t bytes);
void free_pinned(void* memory);

// The road index's customization (Cch::customize) on the GPU, implemented in
// kernels/cch_customize.cu: the same weights and vias bit for bit, for any graph. Each hierarchy
// arc pulls its lower triangles (the ranks below its lower end with arcs to both ends, in
// increasing rank, from the original arcs' value on: the lowest middle wins a tie, as in the
// CPU's sweep), level by level of the elimination tree (leaves first), one launch a level.
// New York on an H100 (landmark order, 1.55 M hierarchy arcs): 3.1 ms on the device, 7.2 ms with
// the copies (the weights and vias back: 2.3 ms), against 94 ms on one core and 14.5 on 16.
struct CchCustomizationTimes {
  double topology_ms = 0;  // laying out and copying the hierarchy's topology (the first time)
  double upload_ms = 0;    // the graph's arc weights to the device
  double compute_ms = 0;   // original arcs and lower triangles on the device
  double download_ms = 0;  // weights and vias back into the Cch's arrays
};

// Keeps one hierarchy's topology on a device between customizations, for a hierarchy customized
// again and again as the weights change (New York: made in 42 ms, about 60 bytes a hierarchy
// arc with the weights, 100 MB). Throws
// RoutingError: kNoDevice where no GPU is usable or the build has no CUDA, kOutOfMemory where the
// device lacks the room.
class CchCustomizer {
 public:
  // `graph`: the graph `cch` was built from (its topology; the weights come with customize()).
  CchCustomizer(const Cch& cch, const Graph& graph, int device = 0);
  ~CchCustomizer();
  CchCustomizer(CchCustomizer&&) noexcept;
  CchCustomizer& operator=(CchCustomizer&&) noexcept;
  CchCustomizer(const CchCustomizer&) = delete;
  CchCustomizer& operator=(const CchCustomizer&) = delete;

  // Customizes `cch` with `graph`'s weights as Cch::customize does (same checks; customized();
  // customization_ms() the whole time here, copies included). `cch` must have the topology this
  // customizer was made from: the same hierarchy, or one copied from its topology image (its
  // sizes and graph topology are checked: kInvalidParameter). `cancel` is polled between levels;
  // a cancelled customization leaves `cch` not customized. The first call's times include the
  // topology's layout and copy.
  CchCustomizationTimes customize(Cch& cch, const Graph& graph, const CancelToken& cancel = {});
  // For the same hierarchy (topology and order: the caller's to know) over a graph whose arcs came
  // in another CSR order (an UPDATE moves a row, and with it its arc's place): lists again the
  // graph arcs each hierarchy arc draws from, keeping the rest of the layout (New York: a few
  // milliseconds on the host against 42 for a new customizer). kInvalidParameter where the sizes or
  // the graph's topology differ.
  void follow_arc_order(const Cch& cch, const Graph& graph);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// One customization with a customizer made for it (the topology copied every time).
CchCustomizationTimes customize_cch_on_device(Cch& cch, const Graph& graph,
                                              const CancelToken& cancel = {}, int device = 0);

}  // namespace gpu_routing::gpu
