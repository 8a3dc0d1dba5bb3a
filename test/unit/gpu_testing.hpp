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

}  // namespace gpu_routing::testing
