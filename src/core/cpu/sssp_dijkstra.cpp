#include "cpu/sssp_dijkstra.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <mutex>
#include <queue>

namespace gpu_routing {

namespace {
constexpr std::int32_t kArity = 4;
constexpr std::int64_t kCancelCheckInterval = 1 << 16;  // settled vertices between cancel checks
}  // namespace

std::size_t DijkstraWorkspace::ring_for(double max_integer_weight) {
  if (!(max_integer_weight >= 0.0 && max_integer_weight <= kMaxBucketWeight)) return 0;
  // Every tentative distance lies within max_weight of the bucket being settled, so a ring of
  // more than max_weight buckets never holds two distances in one bucket. At least 64: one
  // bitmap word.
  std::size_t ring = 64;
  while (ring <= static_cast<std::size_t>(max_integer_weight)) ring <<= 1;
  return ring;
}

DijkstraWorkspace::DijkstraWorkspace(VertexIndex vertex_count, double max_integer_weight)
    : slot_of_(static_cast<std::size_t>(vertex_count), -1),
      is_target_(static_cast<std::size_t>(vertex_count), 0) {
  const std::size_t ring = ring_for(max_integer_weight);
  if (ring > 0) {
    buckets_.resize(ring);
    nonempty_.assign(ring / 64, 0);
    bucket_mask_ = ring - 1;
    return;
  }
  heap_keys_.reserve(1024);
  heap_vertices_.reserve(1024);
}

void DijkstraWorkspace::clear_buckets() {
  for (std::size_t w = 0; w < nonempty_.size(); ++w) {
    while (nonempty_[w] != 0) {
      const int bit = __builtin_ctzll(nonempty_[w]);
      buckets_[w * 64 + static_cast<std::size_t>(bit)].clear();
      nonempty_[w] &= nonempty_[w] - 1;
    }
  }
}

int DijkstraWorkspace::mark_targets(const VertexIndex* targets, int target_count) {
  int distinct = 0;
  for (int i = 0; targets != nullptr && i < target_count; ++i) {
    char& mark = is_target_[static_cast<std::size_t>(targets[i])];
    if (!mark) {
      mark = 1;
      ++distinct;
    }
  }
  return distinct;
}

void DijkstraWorkspace::clear_targets(const VertexIndex* targets, int target_count) {
  for (int i = 0; i < target_count; ++i) is_target_[static_cast<std::size_t>(targets[i])] = 0;
}

std::int64_t DijkstraWorkspace::run_buckets(const CsrGraph& graph, VertexIndex source,
                                            double* distances, const VertexIndex* targets,
                                            int target_count, const CancelToken& cancel,
                                            double bound, std::vector<VertexIndex>* settled_order,
                                            bool filled) {
  const VertexIndex n = graph.vertex_count;
  if (!filled) std::fill(distances, distances + n, kInfinity);
  clean_ = false;
  int targets_left = mark_targets(targets, target_count);
  const bool stop_early = targets != nullptr;
  auto leave_clean = [&] {
    clear_buckets();
    if (stop_early) clear_targets(targets, target_count);
    clean_ = true;
  };
  const std::size_t words = nonempty_.size();
  auto push = [&](VertexIndex v, std::int64_t distance) {
    const std::size_t slot = static_cast<std::size_t>(distance) & bucket_mask_;
    buckets_[slot].push_back(v);
    nonempty_[slot / 64] |= std::uint64_t{1} << (slot % 64);
  };

  distances[source] = 0.0;
  push(source, 0);
  std::int64_t pending = 1;  // entries in the buckets, stale ones included
  std::int64_t current = 0;  // the distance being settled
  // Whole-number distances: those within the bound are those within its floor.
  std::int64_t stop_distance = bound < 9.0e18 ? static_cast<std::int64_t>(std::floor(bound))
                                              : std::numeric_limits<std::int64_t>::max();
  std::int64_t settled = 0;
  const ArcIndex* offsets = graph.row_offsets.data();
  const VertexIndex* heads = graph.heads.data();
  const double* weights = graph.weights.data();
  while (pending > 0) {
    std::size_t slot = static_cast<std::size_t>(current) & bucket_mask_;
    if (buckets_[slot].empty()) {
      // The next non-empty bucket, going round the ring from `slot`.
      std::size_t word = slot / 64;
      std::uint64_t bits = nonempty_[word] & (~std::uint64_t{0} << (slot % 64));
      while (bits == 0) {
        word = word + 1 == words ? 0 : word + 1;
        bits = nonempty_[word];
      }
      const std::size_t next = word * 64 + static_cast<std::size_t>(__builtin_ctzll(bits));
      current += static_cast<std::int64_t>((next - slot) & bucket_mask_);
      slot = next;
    }
    if (current > stop_distance) break;
    std::vector<VertexIndex>& bucket = buckets_[slot];
    const double at = static_cast<double>(current);
    // Zero-weight arcs append to this bucket while it is read: index, never iterators.
    for (std::size_t i = 0; i < bucket.size(); ++i) {
      const VertexIndex u = bucket[i];
      --pending;
      if (distances[u] != at) continue;  // made stale by a shorter distance found later
      ++settled;
      if (settled_order != nullptr) settled_order->push_back(u);
      if ((settled & (kCancelCheckInterval - 1)) == 0 && cancel.requested()) {
        leave_clean();
        throw Cancelled();
      }
      if (stop_early && is_target_[static_cast<std::size_t>(u)]) {
        is_target_[static_cast<std::size_t>(u)] = 0;
        if (--targets_left == 0) stop_distance = current;
      }
      for (ArcIndex a = offsets[u]; a < offsets[u + 1]; ++a) {
        const VertexIndex v = heads[a];
        const double candidate = at + weights[a];
        if (candidate < distances[v]) {
          distances[v] = candidate;
          push(v, static_cast<std::int64_t>(candidate));
          ++pending;
        }
      }
    }
    bucket.clear();
    nonempty_[slot / 64] &= ~(std::uint64_t{1} << (slot % 64));
    ++current;
  }
  leave_clean();
  return settled;
}

void DijkstraWorkspace::sift_up(std::int32_t slot) {
  const double key = heap_keys_[static_cast<std::size_t>(slot)];
  const VertexIndex vertex = heap_vertices_[static_cast<std::size_t>(slot)];
  while (slot > 0) {
    std::int32_t parent = (slot - 1) / kArity;
    if (heap_keys_[static_cast<std::size_t>(parent)] <= key) break;
    heap_keys_[static_cast<std::size_t>(slot)] = heap_keys_[static_cast<std::size_t>(parent)];
    heap_vertices_[static_cast<std::size_t>(slot)] =
        heap_vertices_[static_cast<std::size_t>(parent)];
    slot_of_[static_cast<std::size_t>(heap_vertices_[static_cast<std::size_t>(slot)])] = slot;
    slot = parent;
  }
  heap_keys_[static_cast<std::size_t>(slot)] = key;
  heap_vertices_[static_cast<std::size_t>(slot)] = vertex;
  slot_of_[static_cast<std::size_t>(vertex)] = slot;
}

void DijkstraWorkspace::sift_down(std::int32_t slot) {
  const std::int32_t size = static_cast<std::int32_t>(heap_keys_.size());
  const double key = heap_keys_[static_cast<std::size_t>(slot)];
  const VertexIndex vertex = heap_vertices_[static_cast<std::size_t>(slot)];
  while (true) {
    std::int32_t first_child = slot * kArity + 1;
    if (first_child >= size) break;
    std::int32_t last_child = std::min(first_child + kArity, size);
    std::int32_t best = first_child;
    double best_key = heap_keys_[static_cast<std::size_t>(first_child)];
    for (std::int32_t c = first_child + 1; c < last_child; ++c) {
      double k = heap_keys_[static_cast<std::size_t>(c)];
      if (k < best_key) {
        best_key = k;
        best = c;
      }
    }
    if (best_key >= key) break;
    heap_keys_[static_cast<std::size_t>(slot)] = best_key;
    heap_vertices_[static_cast<std::size_t>(slot)] = heap_vertices_[static_cast<std::size_t>(best)];
    slot_of_[static_cast<std::size_t>(heap_vertices_[static_cast<std::size_t>(slot)])] = slot;
    slot = best;
  }
  heap_keys_[static_cast<std::size_t>(slot)] = key;
  heap_vertices_[static_cast<std::size_t>(slot)] = vertex;
  slot_of_[static_cast<std::size_t>(vertex)] = slot;
}

void DijkstraWorkspace::push_or_decrease(VertexIndex v, double key) {
  std::int32_t slot = slot_of_[static_cast<std::size_t>(v)];
  if (slot < 0) {
    heap_keys_.push_back(key);
    heap_vertices_.push_back(v);
    slot = static_cast<std::int32_t>(heap_keys_.size()) - 1;
  } else {
    heap_keys_[static_cast<std::size_t>(slot)] = key;
  }
  sift_up(slot);
}

VertexIndex DijkstraWorkspace::pop_min() {
  VertexIndex top = heap_vertices_[0];
  slot_of_[static_cast<std::size_t>(top)] = -1;
  double last_key = heap_keys_.back();
  VertexIndex last_vertex = heap_vertices_.back();
  heap_keys_.pop_back();
  heap_vertices_.pop_back();
  if (!heap_keys_.empty()) {
    heap_keys_[0] = last_key;
    heap_vertices_[0] = last_vertex;
    sift_down(0);
  }
  return top;
}

std::int64_t DijkstraWorkspace::run(const CsrGraph& graph, VertexIndex source, double* distances,
                                    const VertexIndex* targets, int target_count,
                                    const CancelToken& cancel, double bound,
                                    std::vector<VertexIndex>* settled_order, bool filled) {
  cancel.throw_if_requested();
  if (uses_buckets())
    return run_buckets(graph, source, distances, targets, target_count, cancel, bound,
                       settled_order, filled);
  const VertexIndex n = graph.vertex_count;
  if (!filled) std::fill(distances, distances + n, kInfinity);
  heap_keys_.clear();
  heap_vertices_.clear();
  clean_ = false;
  int targets_left = mark_targets(targets, target_count);
  const bool stop_early = targets != nullptr;
  double stop_distance = bound;

  distances[source] = 0.0;
  push_or_decrease(source, 0.0);
  std::int64_t settled = 0;
  const ArcIndex* offsets = graph.row_offsets.data();
  const VertexIndex* heads = graph.heads.data();
  const double* weights = graph.weights.data();
  while (!heap_keys_.empty()) {
    if (heap_keys_[0] > stop_distance) break;
    VertexIndex u = pop_min();
    ++settled;
    if (settled_order != nullptr) settled_order->push_back(u);
    if ((settled & (kCancelCheckInterval - 1)) == 0 && cancel.requested()) {
      for (VertexIndex v : heap_vertices_) slot_of_[static_cast<std::size_t>(v)] = -1;
      if (stop_early) clear_targets(targets, target_count);
      clean_ = true;
      throw Cancelled();
    }
    const double dist_u = distances[u];
    if (stop_early && is_target_[static_cast<std::size_t>(u)]) {
      is_target_[static_cast<std::size_t>(u)] = 0;
      if (--targets_left == 0) stop_distance = dist_u;
    }
    for (ArcIndex a = offsets[u]; a < offsets[u + 1]; ++a) {
      VertexIndex v = heads[a];
      double candidate = dist_u + weights[a];
      if (candidate < distances[v]) {
        distances[v] = candidate;
        push_or_decrease(v, candidate);
      }
    }
  }
  // Leave the workspace clean for the next source.
  for (VertexIndex v : heap_vertices_) slot_of_[static_cast<std::size_t>(v)] = -1;
  heap_keys_.clear();
  heap_vertices_.clear();
  if (stop_early) clear_targets(targets, target_count);
  clean_ = true;
  return settled;
}

namespace {
std::mutex g_pool_mutex;
std::vector<std::unique_ptr<DijkstraWorkspace>> g_pool;  // clean, of small graphs
constexpr std::size_t kPooledWorkspaces = 2;
}  // namespace

std::unique_ptr<DijkstraWorkspace> take_dijkstra_workspace(VertexIndex vertex_count,
                                                           double max_integer_weight) {
  const std::size_t ring = DijkstraWorkspace::ring_for(max_integer_weight);
  {
    std::lock_guard<std::mutex> lock(g_pool_mutex);
    for (auto it = g_pool.begin(); it != g_pool.end(); ++it)
      if ((*it)->vertex_count() == vertex_count && (*it)->ring_size() == ring) {
        std::unique_ptr<DijkstraWorkspace> workspace = std::move(*it);
        g_pool.erase(it);
        return workspace;
      }
  }
  return std::make_unique<DijkstraWorkspace>(vertex_count, max_integer_weight);
}

std::size_t pooled_dijkstra_workspaces() {
  std::lock_guard<std::mutex> lock(g_pool_mutex);
  return g_pool.size();
}

void clear_dijkstra_workspace_pool() {
  std::vector<std::unique_ptr<DijkstraWorkspace>> freed;  // freed outside the lock
  std::lock_guard<std::mutex> lock(g_pool_mutex);
  freed.swap(g_pool);
}

void give_back_dijkstra_workspace(std::unique_ptr<DijkstraWorkspace> workspace) {
  if (workspace == nullptr || !workspace->clean() ||
      workspace->vertex_count() > kPooledWorkspaceVertices)
    return;
  std::unique_ptr<DijkstraWorkspace> evicted;  // freed outside the lock
  std::lock_guard<std::mutex> lock(g_pool_mutex);
  if (g_pool.size() >= kPooledWorkspaces) {
    evicted = std::move(g_pool.front());
    g_pool.erase(g_pool.begin());
  }
  g_pool.push_back(std::move(workspace));
}

std::vector<double> reference_dijkstra(const CsrGraph& graph, VertexIndex source) {
  std::vector<double> distances(static_cast<std::size_t>(graph.vertex_count), kInfinity);
  using Entry = std::pair<double, VertexIndex>;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> queue;
  distances[static_cast<std::size_t>(source)] = 0.0;
  queue.emplace(0.0, source);
  while (!queue.empty()) {
    auto [dist_u, u] = queue.top();
    queue.pop();
    if (dist_u > distances[static_cast<std::size_t>(u)]) continue;
    for (ArcIndex a = graph.begin(u); a < graph.end(u); ++a) {
      VertexIndex v = graph.heads[static_cast<std::size_t>(a)];
      double candidate = dist_u + graph.weights[static_cast<std::size_t>(a)];
      if (candidate < distances[static_cast<std::size_t>(v)]) {
        distances[static_cast<std::size_t>(v)] = candidate;
        queue.emplace(candidate, v);
      }
    }
  }
  return distances;
}

}  // namespace gpu_routing
