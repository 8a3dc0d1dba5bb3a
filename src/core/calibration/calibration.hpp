// gpu_routing_calibrate(): measures this machine's speeds (cost_model.hpp) by running the engines
// on graphs made for the purpose: a 512 x 512 grid (numbered along its rows: a road network's
// locality), a random graph of the same size (no locality), a small random graph (per-source
// costs, hop-bound rounds), a dense graph (Floyd-Warshall) and a 384 x 384 grid's road index.
// Each figure is the median of three runs after one warm-up. What cannot be measured here (no GPU,
// or a GPU engine through the service that needs a kept graph) keeps its built-in value, and the
// notes say so.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "choice/cost_model.hpp"
#include "engine/engine.hpp"
#include "engine/gpu.hpp"

namespace gpu_routing {

struct CalibrationOptions {
  int threads = 0;  // the CPU engines' threads (0: every core), as gpu_routing.threads
  CancelToken cancel;
  // Whether GPU engines can be measured, and how they are made: in this process (info.create)
  // or through the GPU service. Null: the GPU is not measured.
  const gpu::Availability* gpus = nullptr;
  std::function<std::unique_ptr<ShortestPathEngine>(const EngineInfo&, const Graph&,
                                                    const EngineOptions&)>
      make_gpu_engine;
  bool through_service = false;
};

struct Calibration {
  MachineSpeeds speeds;
  std::vector<std::string> measured;  // names of the speeds measured (the rest are built-in)
  std::vector<std::string> notes;
};

// Throws Cancelled, RoutingError.
Calibration calibrate(const CalibrationOptions& options);

// "Intel Xeon ... x 16 threads; NVIDIA H100 80GB HBM3" (what a stored calibration is for):
// `processors` is the machine's count (resolve_thread_count(0)), not a session's setting; each
// GPU once (the GPU service's lanes on one GPU name it once).
std::string hardware_description(const gpu::Availability& gpus, int processors);

}  // namespace gpu_routing
