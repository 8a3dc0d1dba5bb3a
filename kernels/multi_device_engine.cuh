// Many sources over several GPUs: one engine per device, each with its own copy of the graph; a
// many-source solve (cost matrices, all pairs, gpu_sssp with an array) gives each device's engine
// a contiguous, equal share of the sources, run side by side from host threads. One source runs
// on device 0 alone, since a single search cannot be split this way. Used by near_far, harish and
// concurrent (multi_source and blocked_fw spread themselves, see apsp_multi_source.cu and
// apsp_dense.cu).
#pragma once

#include <functional>
#include <memory>

#include "engine/engine.hpp"

namespace gpu_routing::gpu {

// Creates the engine of one device. Called with that device current; the engine must make it
// current itself in solve() (called from another thread) and in its destructor.
using DeviceEngineFactory =
    std::function<std::unique_ptr<ShortestPathEngine>(int device, const EngineOptions& options)>;

// `engines` engines over the usable devices, round robin (more engines than devices share them,
// which lets tests run the split on one GPU); engines <= 1 returns make(0, options) itself. Each
// engine gets an equal share of gpu_routing.max_memory. Engines past the first are created at the
// first many-source solve, so one-source calls never touch the other GPUs.
std::unique_ptr<ShortestPathEngine> make_multi_device_engine(const Graph& graph,
                                                             const EngineOptions& options,
                                                             int engines, DeviceEngineFactory make);

// Device 0's engine of a multi-device engine, or `engine` itself (for statistics).
const ShortestPathEngine& first_device_engine(const ShortestPathEngine& engine);

}  // namespace gpu_routing::gpu
