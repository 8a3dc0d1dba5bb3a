#include "gpu_engines.hpp"

namespace gpu_routing {

const std::vector<EngineInfo>& gpu_engine_table() {
  static const std::vector<EngineInfo> table = [] {
    std::vector<EngineInfo> all;
    for (const auto* family : {&gpu::near_far_engines(), &gpu::dijkstra_family_engines(),
                               &gpu::apsp_engines(), &gpu::cch_engines()})
      all.insert(all.end(), family->begin(), family->end());
    return all;
  }();
  return table;
}

}  // namespace gpu_routing
