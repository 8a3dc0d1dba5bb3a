// The GPU side of a build without CUDA: no devices, no GPU engines, and a reason that says so.
#ifndef GPU_ROUTING_WITH_CUDA

#include "engine.hpp"
#include "gpu.hpp"

namespace gpu_routing {

const std::vector<EngineInfo>& gpu_engine_table() {
  static const std::vector<EngineInfo> none;
  return none;
}

namespace gpu {

const Availability& availability() {
  static const Availability answer = [] {
    Availability a;
    a.reason = "gpu_routing was built without CUDA";
    return a;
  }();
  return answer;
}

std::string build_description() {
  return "built without CUDA";
}
std::size_t context_memory_bytes() {
  return 0;
}
void* allocate_pinned(std::size_t) {
  return nullptr;
}
void free_pinned(void*) {}
void open_context(int) {
  throw RoutingError(ErrorKind::kNoDevice, "gpu_routing was built without CUDA");
}

}  // namespace gpu
}  // namespace gpu_routing

#endif  // GPU_ROUTING_WITH_CUDA
