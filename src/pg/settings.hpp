// The gpu_routing.* settings, read once per call into plain values for the C++ side.
#pragma once

#include <string>

#include "choice/engine_select.hpp"

namespace gpu_routing::pg {

// gpu_routing.index_customization: where a kept graph's road index is customized.
enum class IndexCustomization { kAuto, kCpu, kGpu };

struct Settings {
  DeviceSetting device = DeviceSetting::kAuto;
  std::string sssp_algorithm = "auto";
  std::string apsp_algorithm = "auto";
  int threads = 0;
  std::size_t max_memory_bytes = 0;
  int block_size = 0;
  int streams = 0;
  // gpu_routing.index_paths = hierarchy: the road index's own paths where shortest paths tie.
  bool index_paths_hierarchy = false;
  IndexCustomization index_customization = IndexCustomization::kAuto;
};

void define_settings();       // from _PG_init
Settings current_settings();  // plain copy; no PostgreSQL state escapes
const char* device_setting_name(DeviceSetting device);

}  // namespace gpu_routing::pg
