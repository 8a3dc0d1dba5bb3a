#include "gpu_engines.hpp"

namespace gpu_routing {

const std::vector<EngineInfo>& gpu_engine_table() {
  static const std::vector<EngineInfo> table = [] {
    std::vector<EngineInfo> all = gpu::sssp_engines();
    const auto& many = gpu::apsp_engines();
    all.insert(all.end(), many.begin(), many.end());
    return all;
  }();
  return table;
}

}  // namespace gpu_routing
