// The GPU engine tables of each family; kernels/registry.cu joins them into gpu_engine_table().
#pragma once

#include <vector>

#include "../src/core/engine.hpp"

namespace gpu_routing::gpu {

// Single-source engines (issue 3): frontier, frontier_pred, their adjacency-matrix forms, crauser,
// bellman_ford, near_far. Defined in kernels/sssp_engines.cu.
const std::vector<EngineInfo>& sssp_engines();
// Many-source and all-pairs engines (issue 4): multi_source, harish, concurrent, blocked_fw,
// floyd_warshall, rkleene. Defined in kernels/apsp_engines.cu.
const std::vector<EngineInfo>& apsp_engines();

}  // namespace gpu_routing::gpu
