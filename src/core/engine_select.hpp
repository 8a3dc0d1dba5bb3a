// Which engine runs a call: gpu_routing.device and gpu_routing.{sssp,apsp}_algorithm against what
// the build and the machine offer, with `auto` deciding from the size and shape of the problem.
#pragma once

#include <string>

#include "engine.hpp"
#include "gpu.hpp"

namespace gpu_routing {

enum class DeviceSetting { kAuto, kGpu, kCpu };

struct ProblemShape {
  VertexIndex vertices = 0;
  ArcIndex arcs = 0;
  int source_count = 1;      // distinct sources of the call
  bool all_pairs = false;    // every vertex is a source (gpu_apsp without sources)
  bool many_source = false;  // the call runs many sources (apsp_algorithm applies)
  bool road_index = false;   // the kept graph's road index is current (auto may pick cch)
};

struct EngineSelection {
  const EngineInfo* engine = nullptr;
  std::string reason;  // why this engine, for gpu_routing_last_run() ("auto: ...")
};

// Throws RoutingError (kInvalidParameter for an unknown name or an engine the device setting
// excludes, kNoDevice for device = gpu without a usable GPU).
EngineSelection select_engine(DeviceSetting device, const std::string& algorithm,
                              const ProblemShape& shape, const gpu::Availability& gpus);

// Below these sizes auto keeps single-source work on the CPU: the GPU's fixed costs (upload,
// launches, one round per frontier) exceed Dijkstra's whole run. Set from bench/ measurements.
constexpr VertexIndex kAutoGpuMinVertices = 100000;
// With a road index, auto answers from it on the CPU unless a GPU is usable and the call has at
// least this many sources: a one-to-all sweep costs ~2.5 ms a source on a CPU core on New York,
// while the GPU runs a 1000 x 1000 matrix in 85 ms (H100).
constexpr int kAutoIndexMaxSourcesBeforeGpu = 256;
// Dense all-pairs (Floyd-Warshall) is chosen by auto when arcs >= density * V^2 and V is at most
// the limit (V^2 doubles must fit comfortably).
constexpr double kAutoDenseDensity = 0.05;
constexpr VertexIndex kAutoDenseMaxVerticesCpu = 4096;
constexpr VertexIndex kAutoDenseMaxVerticesGpu = 32768;

}  // namespace gpu_routing
