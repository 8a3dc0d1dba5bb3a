// The GPU side of a build without CUDA: no devices, no GPU engines, and a reason that says so.
#ifndef GPU_ROUTING_WITH_CUDA

#include "road_index/cch.hpp"
#include "engine/engine.hpp"
#include "engine/gpu.hpp"

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
std::size_t context_memory_bytes(int) {
  return 0;
}
void* allocate_pinned(std::size_t) {
  return nullptr;
}
void free_pinned(void*) {}
void open_context(int) {
  throw RoutingError(ErrorKind::kNoDevice, "gpu_routing was built without CUDA");
}

struct CchCustomizer::State {};
CchCustomizer::CchCustomizer(const Cch&, const Graph&, int) {
  throw RoutingError(ErrorKind::kNoDevice, "gpu_routing was built without CUDA",
                     "customize the road index on the CPU (Cch::customize)");
}
CchCustomizer::~CchCustomizer() = default;
CchCustomizer::CchCustomizer(CchCustomizer&&) noexcept = default;
CchCustomizer& CchCustomizer::operator=(CchCustomizer&&) noexcept = default;
CchCustomizationTimes CchCustomizer::customize(Cch&, const Graph&, const CancelToken&) {
  throw RoutingError(ErrorKind::kNoDevice, "gpu_routing was built without CUDA");
}
void CchCustomizer::follow_arc_order(const Cch&, const Graph&) {
  throw RoutingError(ErrorKind::kNoDevice, "gpu_routing was built without CUDA");
}
CchCustomizationTimes customize_cch_on_device(Cch& cch, const Graph& graph,
                                              const CancelToken& cancel, int device) {
  return CchCustomizer(cch, graph, device).customize(cch, graph, cancel);
}

}  // namespace gpu
}  // namespace gpu_routing

#endif  // GPU_ROUTING_WITH_CUDA
