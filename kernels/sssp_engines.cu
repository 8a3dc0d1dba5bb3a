// Placeholder until the single-source CUDA engines land (issue 3).
#include "gpu_engines.hpp"

namespace gpu_routing::gpu {
const std::vector<EngineInfo>& sssp_engines() {
  static const std::vector<EngineInfo> none;
  return none;
}
}  // namespace gpu_routing::gpu
