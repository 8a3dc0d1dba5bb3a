// RoutingCall's service areas (CallKind::kServiceArea, gpu_driving_distance): bounded Dijkstra
// on the CPU, batches of starts computed one ahead on the batch thread like any call's, so the
// backend writes one batch's rows while the next is searched and a cancel lands within a batch.
#include <algorithm>
#include <string>

#include "base/parallel.hpp"
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
  // Every vertex within the distance and no further: a search bounded by it. The road index
  // answers one pair or every vertex, not a radius (its upward walks know no bound), and the GPU's
  // searches are whole trees: both would compute the graph to answer the area.
  summary_.algorithm = "dijkstra";
  summary_.reason =
      "service areas: Dijkstra bounded by the distance on the CPU (it settles the area only)";
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

void RoutingCall::emit_service_area_rows(std::size_t first, int count, ResultBatch& batch) {
  std::vector<ServiceAreaRow> rows;
  const VertexIndex* starts = source_indices_.data() + first;
  if (options_.equicost)
    service_areas_->nearest_areas(starts, count, rows, options_.engine.cancel,
                                  options_.engine.budget);
  else
    service_areas_->areas(starts, count, 0, rows, options_.engine.cancel);
  summary_.rounds += count;
  summary_.notes = std::to_string(service_areas_->settled()) + " vertices settled (the areas)";
  const CsrGraph& reverse = graph_->reverse;
  batch.start_vid.reserve(rows.size());
  batch.node.reserve(rows.size());
  batch.edge.reserve(rows.size());
  batch.cost.reserve(rows.size());
  batch.agg_cost.reserve(rows.size());
  for (const ServiceAreaRow& row : rows) {
    const std::int64_t start_id = start_ids_[first + static_cast<std::size_t>(row.start)];
    batch.start_vid.push_back(start_id);
    // A start outside the graph is answered with its own id (pgr_drivingDistance's root row).
    batch.node.push_back(row.vertex == kNoVertex ? start_id : graph_->vertices.id(row.vertex));
    const bool root = row.arc == kNoArc;
    batch.edge.push_back(root ? -1 : reverse.edge_ids[static_cast<std::size_t>(row.arc)]);
    batch.cost.push_back(root ? 0.0 : reverse.weights[static_cast<std::size_t>(row.arc)]);
    batch.agg_cost.push_back(row.agg_cost);
  }
}

}  // namespace gpu_routing
