// What the GPU unit tests share: skipping where no GPU is usable, and the check that a memory
// budget too small for an engine's buffers refuses a solve with kOutOfMemory.
#pragma once

#include <gtest/gtest.h>

#include <vector>

#include "engine/engine.hpp"
#include "engine/gpu.hpp"

// Inside a TEST: skips it (saying why) where no GPU is usable.
#define SKIP_WITHOUT_GPU()                                                          \
  do {                                                                              \
    if (!gpu_routing::gpu::availability().usable)                                   \
      GTEST_SKIP() << "no usable GPU: " << gpu_routing::gpu::availability().reason; \
  } while (0)

namespace gpu_routing::testing {

// A solve of `source` (one whole row) fails with kOutOfMemory.
inline ::testing::AssertionResult solve_is_out_of_memory(ShortestPathEngine& engine,
                                                         VertexIndex source) {
  std::vector<VertexIndex> sources = {source};
  std::vector<double> row(static_cast<std::size_t>(engine.graph().vertex_count()));
  SolveRequest request;
  request.sources = sources.data();
  request.source_count = 1;
  request.distances = row.data();
  try {
    engine.solve(request);
  } catch (const RoutingError& e) {
    if (e.kind() == ErrorKind::kOutOfMemory) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "another error: " << e.what();
  }
  return ::testing::AssertionFailure() << "the solve was accepted";
}

// The targets' columns of every source's row: one solve with compact targets, every cell
// poisoned (-1) first.
inline std::vector<double> solve_compact(ShortestPathEngine& engine,
                                         const std::vector<VertexIndex>& sources,
                                         const std::vector<VertexIndex>& targets) {
  std::vector<double> compact(sources.size() * targets.size(), -1.0);
  SolveRequest request;
  request.sources = sources.data();
  request.source_count = static_cast<int>(sources.size());
  request.targets = targets.data();
  request.target_count = static_cast<int>(targets.size());
  request.compact_targets = true;
  request.distances = compact.data();
  engine.solve(request);
  return compact;
}

}  // namespace gpu_routing::testing
