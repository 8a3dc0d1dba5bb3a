// What is made from an engine's whole rows where the engine cannot make it itself: compact rows
// (one column per target; the GPU service makes them for its engines that cannot, and a call
// continuing on the CPU after the service stopped makes them for the CPU engine), and service
// areas (ShortestPathEngine::solve_areas' default).
#pragma once

#include <algorithm>
#include <cstddef>

#include "engine/engine.hpp"

namespace gpu_routing {

// Whole rows of `count` sources solved on `engine` `per_part` sources at a time (one at the
// least) into `scratch` (a vector of doubles, any allocator), with `targets` as the solves' hint
// (null: none); after each part, `use(i, row)` for each of its sources (i: the source's place
// among the `count`). For what an engine cannot make itself from its rows: compact rows, areas.
template <typename Rows, typename Use>
void solve_whole_rows_in_parts(ShortestPathEngine& engine, const VertexIndex* sources,
                               std::size_t count, const VertexIndex* targets, int target_count,
                               std::size_t per_part, Rows& scratch, Use&& use) {
  const std::size_t n = static_cast<std::size_t>(engine.graph().vertex_count());
  per_part = std::max<std::size_t>(per_part, 1);
  for (std::size_t done = 0; done < count;) {
    const std::size_t now = std::min(per_part, count - done);
    scratch.resize(now * n);
    SolveRequest part;
    part.sources = sources + done;
    part.source_count = static_cast<int>(now);
    part.targets = targets;
    part.target_count = target_count;
    part.distances = scratch.data();
    engine.solve(part);
    for (std::size_t r = 0; r < now; ++r) use(done + r, scratch.data() + r * n);
    done += now;
  }
}

// Solves `request` (with targets; its distances are compact rows) on `engine` a few sources at
// a time: whole rows into `scratch`, at most `scratch_bytes` of them at once (one row at the
// least), then each target's column into request.distances.
template <typename Rows>
void solve_compact_from_whole_rows(ShortestPathEngine& engine, const SolveRequest& request,
                                   Rows& scratch, std::size_t scratch_bytes) {
  const std::size_t n = static_cast<std::size_t>(engine.graph().vertex_count());
  const std::size_t sources = static_cast<std::size_t>(std::max(request.source_count, 0));
  const std::size_t targets = static_cast<std::size_t>(std::max(request.target_count, 0));
  solve_whole_rows_in_parts(engine, request.sources, sources, request.targets, request.target_count,
                            scratch_bytes / std::max<std::size_t>(1, n * sizeof(double)), scratch,
                            [&](std::size_t i, const double* row) {
                              for (std::size_t t = 0; t < targets; ++t)
                                request.distances[i * targets + t] =
                                    row[static_cast<std::size_t>(request.targets[t])];
                            });
}

}  // namespace gpu_routing
