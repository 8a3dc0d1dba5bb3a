#include "engine/engine.hpp"

#include <algorithm>

#include "base/parallel.hpp"
#include "base/predecessors.hpp"
#include "engine/compact_rows.hpp"

#ifdef _OPENMP
#include <omp.h>
#endif

namespace gpu_routing {

const char* device_label(Device device) {
  return device == Device::kCpu ? "cpu" : "gpu";
}

void ShortestPathEngine::fill_predecessors_on_host(const SolveRequest& request) {
  if (!has_reverse(graph_))
    throw RoutingError(ErrorKind::kInternal, "predecessors asked for without the reversed graph");
  const VertexIndex n = graph_.vertex_count();
  const int threads = resolve_thread_count(options_.threads);
  for (int i = 0; i < request.source_count; ++i) {
    options_.cancel.throw_if_requested();
    const double* row = request.distances + static_cast<std::size_t>(i) * n;
    ArcIndex* pred = request.predecessor_arcs + static_cast<std::size_t>(i) * n;
    const VertexIndex source = request.sources[i];
    // First stage in parallel over vertices; the rare layered stage after it.
    bool any_pending = false;
    prepare_worker_threads(threads);
#pragma omp parallel for num_threads(threads) schedule(static, 4096) reduction(|| : any_pending)
    for (VertexIndex v = 0; v < n; ++v) {
      bool strict = false;
      ArcIndex arc = best_incoming_arc(graph_.reverse, row, source, v, &strict);
      if (arc != kNoArc && !strict) {
        arc = kPendingArc;
        any_pending = true;
      }
      pred[v] = arc;
    }
    if (any_pending) resolve_pending_predecessors(graph_.reverse, row, source, pred);
  }
}

void ShortestPathEngine::solve_areas(const VertexIndex* sources, int count, double bound,
                                     AreaLists& areas) {
  if (count <= 0) return;
  // Whole rows, up to 64 MB of them at a time (at least one), cut to the bound.
  const std::size_t n = static_cast<std::size_t>(graph_.vertex_count());
  const std::size_t per_part = std::clamp<std::size_t>(
      (std::size_t{64} << 20) / std::max<std::size_t>(n * sizeof(double), 1), 1,
      static_cast<std::size_t>(std::max(1, preferred_batch_size())));
  std::vector<double> rows;
  solve_whole_rows_in_parts(
      *this, sources, static_cast<std::size_t>(count), nullptr, 0, per_part, rows,
      [&](std::size_t, const double* row) {
        options_.cancel.throw_if_requested();
        for (std::size_t v = 0; v < n; ++v) {
          if (!(row[v] <= bound) || row[v] == kInfinity) continue;  // unreachable: in no area
          areas.vertices.push_back(static_cast<VertexIndex>(v));
          areas.distances.push_back(row[v]);
        }
        areas.ends.push_back(static_cast<std::int64_t>(areas.vertices.size()));
      });
}

const std::vector<EngineInfo>& engine_table() {
  static const std::vector<EngineInfo> table = [] {
    std::vector<EngineInfo> all = cpu_engine_table();
    const auto& gpu = gpu_engine_table();
    all.insert(all.end(), gpu.begin(), gpu.end());
    return all;
  }();
  return table;
}

const EngineInfo* find_engine(const std::string& name, Device device) {
  for (const auto& info : engine_table())
    if (name == info.name && info.device == device) return &info;
  return nullptr;
}

std::vector<std::string> engine_names(bool single_source, bool many_source) {
  std::vector<std::string> names;
  for (const auto& info : engine_table()) {
    if ((single_source && info.single_source) || (many_source && info.many_source)) {
      bool seen = false;
      for (const auto& n : names) seen = seen || n == info.name;
      if (!seen) names.emplace_back(info.name);
    }
  }
  return names;
}

}  // namespace gpu_routing
