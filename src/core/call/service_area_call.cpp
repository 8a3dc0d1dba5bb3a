// RoutingCall's service areas (CallKind::kServiceArea, gpu_driving_distance): bounded Dijkstra
// on the CPU, or with gpu_routing.device = gpu a GPU engine's whole trees cut to the distance on
// the device (ShortestPathEngine::solve_areas); batches of starts computed one ahead on the batch
// thread like any call's, so the backend writes one batch's rows while the next is searched and a
// cancel lands within a batch.
#include <algorithm>
#include <cstdio>
#include <string>

#include "base/parallel.hpp"
#include "base/parallel_for.hpp"
#include "call/routing_call.hpp"

namespace gpu_routing {

namespace {

// Starts per batch on every thread. Where the searches leave a core to the backend, the next
// batch is searched while the backend writes this one's rows, and batches of a few areas a
// thread hide the searches behind the writing (the H200 host, New York, 100 areas of 5 km on 15
// threads: one batch of all of them searched in 15 ms, then wrote its 235,000 rows in 11-17 ms).
// Where they take every core there is nothing to overlap, and fewer batches cost less. The rows
// of a batch are the areas' (bounded by the distance), not the graph's.
constexpr int kStartsPerThreadOverlapped = 2;
constexpr int kStartsPerThread = 8;
constexpr int kMinStartsPerBatch = 16;

}  // namespace

void RoutingCall::prepare_service_areas() {
  if (!has_reverse(*graph_)) ensure_reverse(owned_graph_);  // the predecessor rule's in-arcs
  const int cores = resolve_thread_count(options_.engine.threads);
  const int threads = std::max(
      1, std::min<int>(options_.engine.threads > 0 ? cores : threads_leaving_a_writer_core(cores),
                       static_cast<int>(source_indices_.size())));
  // The graph (and its reversed arcs), one row and one Dijkstra workspace per thread.
  const std::size_t n = static_cast<std::size_t>(graph_->vertex_count());
  std::size_t needed = graph_->forward.memory_bytes() * 2;
  needed = saturating_add(
      needed, saturating_multiply(static_cast<std::size_t>(threads), n * (2 * sizeof(double) + 8)));
  // Every vertex within the distance and no further. On the CPU a search bounded by it, which
  // costs the area; on the GPU (asked for by gpu_routing.device = gpu) whole trees, swept for many
  // starts at once and cut to the distance where they lie, so that only the areas come back.
  if (options_.device == DeviceSetting::kGpu) {
    prepare_gpu_service_areas(threads, needed);
    return;
  }
  summary_.algorithm = "dijkstra";
  summary_.reason =
      "service areas: Dijkstra bounded by the distance on the CPU (it settles the area only)";
  options_.engine.budget.require(needed, "gpu_driving_distance over " + std::to_string(n) +
                                             " vertices on " + std::to_string(threads) +
                                             " threads");
  prepared_bytes_ = needed;
  service_areas_ = std::make_unique<ServiceAreaSearch>(*graph_, options_.service_distance, threads);
  summary_.device =
      std::string("CPU, ") + std::to_string(threads) + (threads == 1 ? " thread" : " threads");
  // equicost assigns each vertex among every start's area: one batch of all of them.
  batch_size_ =
      options_.equicost
          ? static_cast<int>(source_indices_.size())
          : std::max(kMinStartsPerBatch,
                     threads * (threads < cores ? kStartsPerThreadOverlapped : kStartsPerThread));
}

void RoutingCall::prepare_gpu_service_areas(int threads, std::size_t host_bytes) {
  ProblemShape shape;
  shape.vertices = graph_->vertex_count();
  shape.arcs = graph_->arc_count();
  shape.source_count = static_cast<int>(std::min<std::size_t>(source_indices_.size(), 1 << 30));
  shape.many_source = options_.many_source;  // the SQL form's setting names the engine
  shape.road_index = options_.engine.road_index != nullptr;
  shape.road_index_pending = graph_ != &owned_graph_ && options_.engine.road_index == nullptr;
  shape_ = shape;
  const std::string& algorithm =
      options_.many_source ? options_.apsp_algorithm : options_.sssp_algorithm;
  const EngineSelection selection =
      select_engine(DeviceSetting::kGpu, algorithm, shape, gpus_, nullptr);
  const std::size_t n = static_cast<std::size_t>(graph_->vertex_count());
  // Starts a batch: as many as one request of the engine's areas takes, in batches of even size,
  // so that the next batch is swept while the backend writes this one's rows.
  const std::size_t per_start = n * (sizeof(VertexIndex) + sizeof(double));
  const auto most =
      static_cast<std::size_t>(ServiceAreaSearch::engine_batch(graph_->vertex_count()));
  const std::size_t starts = source_indices_.size();
  const std::size_t batches = (starts + most - 1) / most;
  const std::size_t batch = options_.equicost ? starts : (starts + batches - 1) / batches;
  std::size_t needed = saturating_add(
      host_bytes,
      selection.engine->estimate_bytes(*graph_, static_cast<int>(std::min(batch, most))));
  needed = saturating_add(needed, saturating_multiply(std::min(batch, most), per_start));
  options_.engine.budget.require(
      needed, "gpu_driving_distance over " + std::to_string(n) + " vertices on the GPU");
  prepared_bytes_ = needed;
  summary_.algorithm = selection.engine->name;
  summary_.reason = "service areas on the GPU: " + selection.reason +
                    "; whole trees, cut to the distance on the GPU (only the areas come back), "
                    "the predecessor rule on " +
                    std::to_string(threads) + (threads == 1 ? " thread" : " threads");
  Stopwatch watch;
  create_engine(*selection.engine);
  summary_.compute_ms += watch.elapsed_ms();
  summary_.device = engine_->report().device_name;
  service_areas_ = std::make_unique<ServiceAreaSearch>(*graph_, options_.service_distance, threads,
                                                       engine_.get());
  batch_size_ = static_cast<int>(std::max<std::size_t>(1, batch));
}

void RoutingCall::emit_service_area_rows(std::size_t first, int count, ResultBatch& batch) {
  std::vector<ServiceAreaRow> rows;
  const VertexIndex* starts = source_indices_.data() + first;
  if (options_.equicost)
    service_areas_->nearest_areas(starts, count, rows, options_.engine.cancel,
                                  options_.engine.budget);
  else
    service_areas_->areas(starts, count, 0, rows, options_.engine.cancel);
  summary_.rounds += count;
  Stopwatch rows_watch;
  // The batch's columns, filled in blocks on the search's threads (one thread took 25 ms for the
  // 900,000 rows of 100 New York areas of 10 km, as long as the areas' rule and order).
  const CsrGraph& reverse = graph_->reverse;
  const std::size_t total = rows.size();
  batch.start_vid.resize(total);
  batch.node.resize(total);
  batch.edge.resize(total);
  batch.cost.resize(total);
  batch.agg_cost.resize(total);
  constexpr std::size_t kRowsPerBlock = std::size_t{1} << 14;
  const int blocks = static_cast<int>((total + kRowsPerBlock - 1) / kRowsPerBlock);
  parallel_for_each(blocks, service_areas_->threads(), [&](int block, int) {
    const std::size_t begin = static_cast<std::size_t>(block) * kRowsPerBlock;
    const std::size_t end = std::min(total, begin + kRowsPerBlock);
    for (std::size_t i = begin; i < end; ++i) {
      const ServiceAreaRow& row = rows[i];
      const std::int64_t start_id = start_ids_[first + static_cast<std::size_t>(row.start)];
      batch.start_vid[i] = start_id;
      // A start outside the graph is answered with its own id (pgr_drivingDistance's root row).
      batch.node[i] = row.vertex == kNoVertex ? start_id : graph_->vertices.id(row.vertex);
      const bool root = row.arc == kNoArc;
      batch.edge[i] = root ? -1 : reverse.edge_ids[static_cast<std::size_t>(row.arc)];
      batch.cost[i] = root ? 0.0 : reverse.weights[static_cast<std::size_t>(row.arc)];
      batch.agg_cost[i] = row.agg_cost;
    }
  });
  area_rows_ms_ += rows_watch.elapsed_ms();
  if (engine_ != nullptr) {
    const EngineReport& report = engine_->report();
    summary_.transfer_ms = report.transfer_ms - report_at_start_.transfer_ms;
    summary_.device = report.device_name;
    char split[160];
    std::snprintf(split, sizeof split,
                  " vertices within the distance (the areas): the engine's in %.1f ms, the rule "
                  "and the order in %.1f ms, the rows in %.1f ms; ",
                  service_areas_->engine_ms(), service_areas_->rule_ms(), area_rows_ms_);
    summary_.notes = std::to_string(service_areas_->settled()) + split + report.notes;
  } else {
    summary_.notes = std::to_string(service_areas_->settled()) + " vertices settled (the areas)";
  }
}

}  // namespace gpu_routing
