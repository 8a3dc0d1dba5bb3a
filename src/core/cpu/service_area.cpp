#include "cpu/service_area.hpp"

#include <algorithm>
#include <exception>
#include <mutex>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "base/parallel.hpp"
#include "base/parallel_for.hpp"
#include "base/predecessors.hpp"
#include "cpu/sssp_dijkstra.hpp"
#include "engine/engine.hpp"

namespace gpu_routing {

struct ServiceAreaSearch::Worker {
  VertexIndex vertex_count = 0;
  double max_integer_weight = -1;  // the Dijkstra workspace's (its queue depends on it)
  std::unique_ptr<DijkstraWorkspace> dijkstra;  // made on the first search (an engine's areas
                                                // need none)
  // One start's row (exact within the distance), +infinity everywhere between starts when
  // `filled`: each area puts back what it wrote, so a start costs its area, not the graph.
  std::vector<double> distances;
  bool filled = false;
  std::vector<VertexIndex> settled;    // the area, in the order Dijkstra settled it
  std::vector<ArcIndex> predecessors;  // zero-cost ties only: the rule's layered second stage
  std::vector<ServiceAreaRow> rows;    // a thread's areas before they are appended in order
};

namespace {

// Workers kept by the process between calls: a city's first service area spent 4 of its 5 ms
// making a Dijkstra workspace and a row of the graph's size (New York, 2-core machine). Of graphs
// up to kKeptWorkerVertices vertices (about 4 MB each for New York), two at least and as many
// as the kept bytes allow: a call on 15 threads that found two made 13 (a row of the graph's
// size each, faulted in on every thread at once).
constexpr VertexIndex kKeptWorkerVertices = VertexIndex{1} << 20;
std::mutex g_kept_workers_mutex;
std::vector<std::unique_ptr<ServiceAreaSearch::Worker>> g_kept_workers;
std::size_t g_kept_worker_bytes = 0;  // the allowance, under the mutex

// A worker's arrays: its row (8 bytes a vertex) and its Dijkstra workspace's slot, mark and heap
// (about 17 a vertex at most).
std::size_t worker_bytes(VertexIndex vertex_count) {
  return static_cast<std::size_t>(vertex_count) * 25;
}

// Drops the oldest kept workers past the allowance (under the mutex); returns them, to be freed
// outside it.
std::vector<std::unique_ptr<ServiceAreaSearch::Worker>> evict_past_allowance();

}  // namespace

std::unique_ptr<ServiceAreaSearch::Worker> ServiceAreaSearch::take_worker() const {
  const double max_weight = graph_.integer_weights ? graph_.max_weight : -1.0;
  {
    std::lock_guard<std::mutex> lock(g_kept_workers_mutex);
    for (auto it = g_kept_workers.begin(); it != g_kept_workers.end(); ++it) {
      if ((*it)->vertex_count != graph_.vertex_count() ||
          DijkstraWorkspace::ring_for((*it)->max_integer_weight) !=
              DijkstraWorkspace::ring_for(max_weight))
        continue;
      std::unique_ptr<Worker> worker = std::move(*it);
      g_kept_workers.erase(it);
      return worker;
    }
  }
  auto worker = std::make_unique<Worker>();
  worker->vertex_count = graph_.vertex_count();
  worker->max_integer_weight = max_weight;
  worker->distances.assign(static_cast<std::size_t>(graph_.vertex_count()), kInfinity);
  worker->filled = true;
  return worker;
}

namespace {

std::vector<std::unique_ptr<ServiceAreaSearch::Worker>> evict_past_allowance() {
  std::vector<std::unique_ptr<ServiceAreaSearch::Worker>> evicted;
  std::size_t bytes = 0;
  for (const auto& kept : g_kept_workers) bytes += worker_bytes(kept->vertex_count);
  while (g_kept_workers.size() > ServiceAreaSearch::kMinKeptWorkers &&
         bytes > g_kept_worker_bytes) {
    bytes -= worker_bytes(g_kept_workers.front()->vertex_count);
    evicted.push_back(std::move(g_kept_workers.front()));
    g_kept_workers.erase(g_kept_workers.begin());
  }
  return evicted;
}

}  // namespace

void ServiceAreaSearch::give_back_worker(std::unique_ptr<Worker> worker) {
  if (worker == nullptr || !worker->filled ||
      (worker->dijkstra != nullptr && !worker->dijkstra->clean()) ||
      worker->vertex_count > kKeptWorkerVertices)
    return;
  std::vector<std::unique_ptr<Worker>> evicted;  // freed outside the lock
  std::lock_guard<std::mutex> lock(g_kept_workers_mutex);
  g_kept_workers.push_back(std::move(worker));
  evicted = evict_past_allowance();
}

void ServiceAreaSearch::set_kept_worker_bytes(std::size_t bytes) {
  std::vector<std::unique_ptr<Worker>> evicted;
  std::lock_guard<std::mutex> lock(g_kept_workers_mutex);
  g_kept_worker_bytes = bytes;
  evicted = evict_past_allowance();
}

std::size_t ServiceAreaSearch::kept_worker_count() {
  std::lock_guard<std::mutex> lock(g_kept_workers_mutex);
  return g_kept_workers.size();
}

ServiceAreaSearch::ServiceAreaSearch(const Graph& graph, double distance, int threads,
                                     ShortestPathEngine* engine)
    : graph_(graph), distance_(distance), threads_(std::max(1, threads)), engine_(engine) {
  if (!has_reverse(graph))
    throw RoutingError(ErrorKind::kInternal, "service areas need the graph's reversed arcs");
}

ServiceAreaSearch::~ServiceAreaSearch() {
  for (auto& worker : workers_) give_back_worker(std::move(worker));
}

ServiceAreaSearch::Worker& ServiceAreaSearch::worker(int thread) {
  return *workers_[static_cast<std::size_t>(thread)];
}

int ServiceAreaSearch::engine_batch(VertexIndex vertex_count) {
  constexpr std::size_t kAreaExchangeBytes = std::size_t{256} << 20;
  const std::size_t per_start = std::max<std::size_t>(
      static_cast<std::size_t>(vertex_count) * (sizeof(VertexIndex) + sizeof(double)), 1);
  return static_cast<int>(std::clamp<std::size_t>(kAreaExchangeBytes / per_start, 1, 1 << 20));
}

void ServiceAreaSearch::one_area(VertexIndex start, int position, Worker& worker,
                                 std::vector<ServiceAreaRow>& out, const CancelToken& cancel) {
  if (!(distance_ >= 0)) return;  // pgr_drivingDistance: a negative distance has no area
  ServiceAreaRow root;
  root.start = position;
  root.vertex = start;
  out.push_back(root);
  if (start == kNoVertex) return;  // pgRouting answers a start outside the graph with its root
  if (!worker.filled) std::fill(worker.distances.begin(), worker.distances.end(), kInfinity);
  worker.filled = false;  // until this area is put back (a failure leaves it to be filled again)
  worker.settled.clear();
  // What the search wrote: the area (settled) and the vertices it reached from there.
  const CsrGraph& forward = graph_.forward;
  auto put_back = [&worker, &forward] {
    double* row = worker.distances.data();
    for (VertexIndex u : worker.settled) {
      row[u] = kInfinity;
      for (ArcIndex a = forward.begin(u); a < forward.end(u); ++a)
        row[forward.heads[static_cast<std::size_t>(a)]] = kInfinity;
    }
  };
  try {
    if (worker.dijkstra == nullptr)
      worker.dijkstra = take_dijkstra_workspace(graph_.vertex_count(), worker.max_integer_weight);
    worker.dijkstra->run(forward, start, worker.distances.data(), nullptr, 0, cancel, distance_,
                         &worker.settled, true);
  } catch (const Cancelled&) {
    put_back();
    worker.filled = true;
    throw;
  }
  area_rows(start, position, worker, out);
  put_back();
  worker.filled = true;
}

void ServiceAreaSearch::one_area_from_engine(VertexIndex start, int position, Worker& worker,
                                             const VertexIndex* vertices, const double* distances,
                                             std::size_t count, std::vector<ServiceAreaRow>& out) {
  if (!(distance_ >= 0)) return;
  ServiceAreaRow root;
  root.start = position;
  root.vertex = start;
  out.push_back(root);
  if (start == kNoVertex) return;
  if (!worker.filled) std::fill(worker.distances.begin(), worker.distances.end(), kInfinity);
  worker.filled = false;
  // The area's distances in the row; every tight arc into an area vertex comes from the area (its
  // tail is no further than the vertex), so the rule reads nothing else.
  double* row = worker.distances.data();
  worker.settled.assign(vertices, vertices + count);
  for (std::size_t k = 0; k < count; ++k) row[vertices[k]] = distances[k];
  area_rows(start, position, worker, out);
  for (std::size_t k = 0; k < count; ++k) row[vertices[k]] = kInfinity;
  worker.filled = true;
}

void ServiceAreaSearch::area_rows(VertexIndex start, int position, Worker& worker,
                                  std::vector<ServiceAreaRow>& out) {
  const std::size_t n = static_cast<std::size_t>(graph_.vertex_count());
  const double* dist = worker.distances.data();
  const CsrGraph& reverse = graph_.reverse;
  const std::size_t first = out.size();
  bool ties = false;
  for (VertexIndex v : worker.settled) {
    if (v == start) continue;
    bool strict = false;
    ServiceAreaRow row;
    row.start = position;
    row.vertex = v;
    row.arc = best_incoming_arc(reverse, dist, start, v, &strict);
    row.agg_cost = dist[v];
    ties = ties || !strict;
    out.push_back(row);
  }
  if (ties) {
    // A zero-cost tie: the rule settles such vertices in layers from the whole row (rare: only
    // graphs with zero-cost arcs pay for a row of the graph's size here).
    std::vector<ArcIndex>& pred = worker.predecessors;
    pred.assign(n, kNoArc);
    for (std::size_t i = first; i < out.size(); ++i) {
      bool strict = false;
      const ArcIndex arc = best_incoming_arc(reverse, dist, start, out[i].vertex, &strict);
      pred[static_cast<std::size_t>(out[i].vertex)] = strict ? arc : kPendingArc;
    }
    resolve_pending_predecessors(reverse, dist, start, pred.data());
    for (std::size_t i = first; i < out.size(); ++i)
      out[i].arc = pred[static_cast<std::size_t>(out[i].vertex)];
  }
  // pgRouting's order: by cost, then node; vertex indices ascend with ids.
  std::sort(out.begin() + static_cast<std::ptrdiff_t>(first), out.end(),
            [](const ServiceAreaRow& a, const ServiceAreaRow& b) {
              return a.agg_cost != b.agg_cost ? a.agg_cost < b.agg_cost : a.vertex < b.vertex;
            });
}

void ServiceAreaSearch::areas(const VertexIndex* starts, int count, int first_position,
                              std::vector<ServiceAreaRow>& rows, const CancelToken& cancel) {
  const int threads = std::max(1, std::min(threads_, count));
  // A thread makes its own worker on its first area: a new one fills a row of the graph's size
  // (New York: about 1.5 ms), which made serially cost 15 threads 20 ms (H200 host, 100 starts).
  if (static_cast<int>(workers_.size()) < threads)
    workers_.resize(static_cast<std::size_t>(threads));
  // Each start's rows are made on some thread, then appended in the order of the starts.
  std::vector<std::vector<ServiceAreaRow>> per_start(static_cast<std::size_t>(count));
  std::vector<std::int64_t> settled(static_cast<std::size_t>(threads), 0);
  // From an engine: every start in the graph's area at once, then each start's rows from its own.
  std::vector<std::int64_t> area_of(engine_ != nullptr ? static_cast<std::size_t>(count) : 0, -1);
  AreaLists lists;
  if (engine_ != nullptr && distance_ >= 0) {
    std::vector<VertexIndex> in_graph;
    for (int i = 0; i < count; ++i) {
      if (starts[i] == kNoVertex) continue;
      area_of[static_cast<std::size_t>(i)] = static_cast<std::int64_t>(in_graph.size());
      in_graph.push_back(starts[i]);
    }
    Stopwatch engine_watch;
    const int most = engine_batch(graph_.vertex_count());
    for (std::size_t first = 0; first < in_graph.size(); first += static_cast<std::size_t>(most))
      engine_->solve_areas(in_graph.data() + first,
                           static_cast<int>(std::min<std::size_t>(static_cast<std::size_t>(most),
                                                                  in_graph.size() - first)),
                           distance_, lists);
    if (lists.ends.size() != in_graph.size())
      throw RoutingError(ErrorKind::kInternal, "the engine returned another number of areas");
    engine_ms_ += engine_watch.elapsed_ms();
  }
  Stopwatch rule_watch;
  auto body = [&](int i, int thread) {
    if (workers_[static_cast<std::size_t>(thread)] == nullptr)
      workers_[static_cast<std::size_t>(thread)] = take_worker();
    Worker& w = worker(thread);
    std::vector<ServiceAreaRow>& out = per_start[static_cast<std::size_t>(i)];
    if (engine_ == nullptr) {
      one_area(starts[i], first_position + i, w, out, cancel);
    } else {
      const std::int64_t area = area_of.empty() ? -1 : area_of[static_cast<std::size_t>(i)];
      const std::int64_t begin = area > 0 ? lists.ends[static_cast<std::size_t>(area) - 1] : 0;
      const std::int64_t end = area >= 0 ? lists.ends[static_cast<std::size_t>(area)] : 0;
      cancel.throw_if_requested();
      one_area_from_engine(starts[i], first_position + i, w, lists.vertices.data() + begin,
                           lists.distances.data() + begin, static_cast<std::size_t>(end - begin),
                           out);
    }
    settled[static_cast<std::size_t>(thread)] += static_cast<std::int64_t>(w.settled.size());
  };
  parallel_for_each(count, threads, body);
  if (engine_ != nullptr) rule_ms_ += rule_watch.elapsed_ms();
  for (std::int64_t s : settled) settled_ += s;
  // Appended in the order of the starts, each start's part copied on some thread (New York, 100
  // areas of 10 km: 900,000 rows, 21 MB).
  std::vector<std::size_t> offsets(static_cast<std::size_t>(count) + 1, rows.size());
  for (int i = 0; i < count; ++i)
    offsets[static_cast<std::size_t>(i) + 1] =
        offsets[static_cast<std::size_t>(i)] + per_start[static_cast<std::size_t>(i)].size();
  rows.resize(offsets.back());
  parallel_for_each(count, threads, [&](int i, int) {
    const auto& part = per_start[static_cast<std::size_t>(i)];
    std::copy(part.begin(), part.end(),
              rows.begin() + static_cast<std::ptrdiff_t>(offsets[static_cast<std::size_t>(i)]));
  });
}

void ServiceAreaSearch::nearest_areas(const VertexIndex* starts, int count,
                                      std::vector<ServiceAreaRow>& rows, const CancelToken& cancel,
                                      const MemoryBudget& budget) {
  // Every area first (bounded by the distance, so their sum is what the rows would be without
  // equicost), then each vertex to its nearest start.
  std::vector<ServiceAreaRow> all;
  areas(starts, count, 0, all, cancel);
  budget.require(all.size() * sizeof(ServiceAreaRow) * 2,
                 "equicost service areas of " + std::to_string(count) + " starts");
  // The nearest start of each vertex: the smallest (agg_cost, position); a start's own root row
  // (cost 0) makes it its own nearest start.
  std::vector<std::size_t> order(all.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&all](std::size_t a, std::size_t b) {
    const ServiceAreaRow& x = all[a];
    const ServiceAreaRow& y = all[b];
    if (x.vertex != y.vertex) return x.vertex < y.vertex;
    if (x.agg_cost != y.agg_cost) return x.agg_cost < y.agg_cost;
    return x.start < y.start;
  });
  std::vector<char> keep(all.size(), 0);
  for (std::size_t k = 0; k < order.size(); ++k) {
    const ServiceAreaRow& row = all[order[k]];
    // Root rows always stay (a duplicate start, or a start in another start's area, keeps its
    // root row as pgRouting does); among the rest, the first of each vertex wins.
    if (row.arc == kNoArc) {
      keep[order[k]] = 1;
      continue;
    }
    const bool first_of_vertex = k == 0 || all[order[k - 1]].vertex != row.vertex;
    if (first_of_vertex) keep[order[k]] = 1;
  }
  // A start's own vertex reached from another start (through zero-cost arcs, at cost 0 from an
  // earlier start): it stays that start's root, never another's area.
  std::vector<char> is_root(static_cast<std::size_t>(graph_.vertex_count()), 0);
  for (int i = 0; i < count; ++i)
    if (starts[i] != kNoVertex) is_root[static_cast<std::size_t>(starts[i])] = 1;
  rows.reserve(rows.size() + all.size());
  for (std::size_t i = 0; i < all.size(); ++i) {
    const ServiceAreaRow& row = all[i];
    if (!keep[i]) continue;
    if (row.arc != kNoArc && row.vertex != kNoVertex &&
        is_root[static_cast<std::size_t>(row.vertex)])
      continue;
    rows.push_back(row);
  }
}

}  // namespace gpu_routing
