// Which engine runs a call: gpu_routing.device and gpu_routing.{sssp,apsp}_algorithm against what
// the build and the machine offer, with `auto` deciding from the size and shape of the problem.
#pragma once

#include <string>

#include "choice/cost_model.hpp"
#include "engine/engine.hpp"
#include "engine/gpu.hpp"

namespace gpu_routing {

enum class DeviceSetting { kAuto, kGpu, kCpu };

struct ProblemShape {
  VertexIndex vertices = 0;
  ArcIndex arcs = 0;
  int source_count = 1;      // distinct sources of the call
  bool all_pairs = false;    // every vertex is a source (gpu_apsp without sources)
  bool many_source = false;  // the call runs many sources (apsp_algorithm applies)
  bool road_index = false;   // the kept graph's road index is current (auto may pick cch)
  // A kept graph whose road index is not ready (another session is making it, or it did not
  // fit): cch named answers with the engine auto picks, rather than the call making an index of
  // its own.
  bool road_index_pending = false;
  // Rows of chosen targets only (a cost matrix to a target list): the CPU's cch answers those by
  // buckets, far faster than whole sweeps.
  bool compact_targets = false;
};

struct EngineSelection {
  const EngineInfo* engine = nullptr;
  std::string reason;  // why this engine, for gpu_routing_last_run() ("auto: ...")
};

// What auto estimates from (cost_model.hpp): the call, the device state, the machine's speeds.
struct AutoCosts {
  CallCostShape shape;
  DeviceState state;
  MachineSpeeds speeds;
};

// Throws RoutingError (kInvalidParameter for an unknown name or an engine the device setting
// excludes, kNoDevice for device = gpu without a usable GPU). With `costs`, auto (the device,
// the algorithm or both) takes the engine of the smallest estimated cost among those the settings
// allow; without, the size rules below decide.
EngineSelection select_engine(DeviceSetting device, const std::string& algorithm,
                              const ProblemShape& shape, const gpu::Availability& gpus,
                              const AutoCosts* costs = nullptr);

// Below these sizes auto keeps single-source work on the CPU: the GPU's fixed costs (upload,
// launches, one round per frontier) exceed Dijkstra's whole run. Set from bench/ measurements.
constexpr VertexIndex kAutoGpuMinVertices = 100000;
// With a road index, auto answers from it on the CPU, by buckets for cost matrices (New York
// 1000 x 1000: 7.9 ms on the H100 host's 16 cores, against 85 ms for the GPU's near_far), and
// whole rows (one PHAST sweep per source) on the GPU's cch from this many sources on (in this
// backend, or in the GPU service, which maps the same index).
constexpr int kAutoIndexMaxSourcesBeforeGpu = 256;
// Dense all-pairs (Floyd-Warshall) is chosen by auto when arcs >= density * V^2 and V is at most
// the limit (V^2 doubles must fit comfortably).
constexpr double kAutoDenseDensity = 0.05;
constexpr VertexIndex kAutoDenseMaxVerticesCpu = 4096;
constexpr VertexIndex kAutoDenseMaxVerticesGpu = 32768;

}  // namespace gpu_routing
