// Compact rows (one column per target) from an engine that fills only whole rows: the GPU
// service makes them for its engines that cannot, and a call continuing on the CPU after the
// service stopped makes them for the CPU engine.
#pragma once

#include <algorithm>
#include <cstddef>

#include "engine/engine.hpp"

namespace gpu_routing {

// Solves `request` (with targets; its distances are compact rows) on `engine` a few sources at
// a time: whole rows into `scratch` (a vector of doubles, any allocator), at most
// `scratch_bytes` of them at once (one row at the least), then each target's column into
// request.distances.
template <typename Rows>
void solve_compact_from_whole_rows(ShortestPathEngine& engine, const SolveRequest& request,
                                   Rows& scratch, std::size_t scratch_bytes) {
  const std::size_t n = static_cast<std::size_t>(engine.graph().vertex_count());
  const std::size_t sources = static_cast<std::size_t>(std::max(request.source_count, 0));
  const std::size_t targets = static_cast<std::size_t>(std::max(request.target_count, 0));
  const std::size_t per_chunk =
      std::max<std::size_t>(1, scratch_bytes / std::max<std::size_t>(1, n * sizeof(double)));
  for (std::size_t done = 0; done < sources;) {
    const std::size_t count = std::min(per_chunk, sources - done);
    scratch.resize(count * n);
    SolveRequest part;
    part.sources = request.sources + done;
    part.source_count = static_cast<int>(count);
    part.targets = request.targets;
    part.target_count = request.target_count;
    part.distances = scratch.data();
    engine.solve(part);
    for (std::size_t r = 0; r < count; ++r)
      for (std::size_t t = 0; t < targets; ++t)
        request.distances[(done + r) * targets + t] =
            scratch[r * n + static_cast<std::size_t>(request.targets[t])];
    done += count;
  }
}

}  // namespace gpu_routing
