#include "engine/engine.hpp"

#include "base/parallel.hpp"
#include "base/predecessors.hpp"

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
