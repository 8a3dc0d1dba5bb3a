#include "graph.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace gpu_routing {

namespace {

constexpr std::size_t kMaxIndex =
    static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max());

// Signed int64 -> unsigned key with the same order.
inline std::uint64_t order_key(std::int64_t id) {
  return static_cast<std::uint64_t>(id) ^ (std::uint64_t{1} << 63);
}

bool usable(double cost) {
  return cost >= 0.0 && std::isfinite(cost);
}

// LSD radix sort of (key, payload) pairs by key, 16 bits per pass; passes whose digit is the
// same for every key are skipped (road network ids fit in 32 bits: two passes instead of four).
void radix_sort_pairs(std::vector<std::uint64_t>& keys, std::vector<std::uint32_t>& payload) {
  const std::size_t n = keys.size();
  std::vector<std::uint64_t> keys_tmp(n);
  std::vector<std::uint32_t> payload_tmp(n);
  std::vector<std::size_t> count(1 << 16);
  for (int shift = 0; shift < 64; shift += 16) {
    std::fill(count.begin(), count.end(), 0);
    for (std::size_t i = 0; i < n; ++i) ++count[(keys[i] >> shift) & 0xFFFF];
    if (n == 0 || count[(keys[0] >> shift) & 0xFFFF] == n) continue;
    std::size_t sum = 0;
    for (auto& c : count) {
      std::size_t here = c;
      c = sum;
      sum += here;
    }
    for (std::size_t i = 0; i < n; ++i) {
      std::size_t slot = count[(keys[i] >> shift) & 0xFFFF]++;
      keys_tmp[slot] = keys[i];
      payload_tmp[slot] = payload[i];
    }
    keys.swap(keys_tmp);
    payload.swap(payload_tmp);
  }
}

// Maps every endpoint in `endpoints` to its dense index; returns the sorted unique ids.
std::vector<std::int64_t> map_endpoints(const std::vector<std::int64_t>& endpoints,
                                        std::vector<VertexIndex>& index_of_endpoint) {
  const std::size_t n = endpoints.size();
  index_of_endpoint.assign(n, kNoVertex);
  std::vector<std::int64_t> ids;
  if (n == 0) return ids;
  auto [min_it, max_it] = std::minmax_element(endpoints.begin(), endpoints.end());
  const std::int64_t min_id = *min_it;
  // Range as unsigned so that extreme ids (-2^63 .. 2^63-1) cannot overflow.
  const std::uint64_t range =
      static_cast<std::uint64_t>(*max_it) - static_cast<std::uint64_t>(min_id);
  if (range < 2 * n + 1024 && range < kMaxIndex) {
    // Ids are dense enough for a direct table: no sort at all (the common case of road networks
    // numbered 1..V).
    std::vector<VertexIndex> table(static_cast<std::size_t>(range) + 1, 0);
    for (std::int64_t id : endpoints)
      table[static_cast<std::uint64_t>(id) - static_cast<std::uint64_t>(min_id)] = 1;
    VertexIndex next = 0;
    for (std::size_t offset = 0; offset < table.size(); ++offset) {
      if (table[offset]) {
        ids.push_back(static_cast<std::int64_t>(static_cast<std::uint64_t>(min_id) + offset));
        table[offset] = next++;
      }
    }
    for (std::size_t i = 0; i < n; ++i)
      index_of_endpoint[i] =
          table[static_cast<std::uint64_t>(endpoints[i]) - static_cast<std::uint64_t>(min_id)];
    return ids;
  }
  if (n > std::numeric_limits<std::uint32_t>::max())
    throw RoutingError(ErrorKind::kProgramLimit, "too many edges for one graph");
  std::vector<std::uint64_t> keys(n);
  std::vector<std::uint32_t> positions(n);
  for (std::size_t i = 0; i < n; ++i) {
    keys[i] = order_key(endpoints[i]);
    positions[i] = static_cast<std::uint32_t>(i);
  }
  radix_sort_pairs(keys, positions);
  VertexIndex next = -1;
  for (std::size_t i = 0; i < n; ++i) {
    if (i == 0 || keys[i] != keys[i - 1]) {
      ++next;
      ids.push_back(endpoints[positions[i]]);
    }
    index_of_endpoint[positions[i]] = next;
  }
  return ids;
}

}  // namespace

VertexIndex IdMap::find(std::int64_t id) const {
  auto it = std::lower_bound(ids_.begin(), ids_.end(), id);
  if (it == ids_.end() || *it != id) return kNoVertex;
  return static_cast<VertexIndex>(it - ids_.begin());
}

std::size_t CsrGraph::memory_bytes() const {
  return row_offsets.size() * sizeof(ArcIndex) + heads.size() * sizeof(VertexIndex) +
         weights.size() * sizeof(double) + edge_ids.size() * sizeof(std::int64_t);
}

std::vector<std::int64_t> sorted_unique_ids(const std::int64_t* a, const std::int64_t* b,
                                            std::size_t count_each) {
  std::vector<std::int64_t> endpoints;
  endpoints.reserve(2 * count_each);
  endpoints.insert(endpoints.end(), a, a + count_each);
  endpoints.insert(endpoints.end(), b, b + count_each);
  std::vector<VertexIndex> unused;
  return map_endpoints(endpoints, unused);
}

std::size_t estimate_graph_bytes(std::size_t edge_count, bool directed, bool has_reverse_cost) {
  std::size_t arcs_per_edge = (directed ? 1 : 2) * (has_reverse_cost ? 2 : 1);
  std::size_t arcs = saturating_multiply(edge_count, arcs_per_edge);
  // Endpoint ids and their indices while mapping, then the CSR itself.
  std::size_t mapping = saturating_multiply(edge_count, 2 * (sizeof(std::int64_t) * 2 + 8));
  std::size_t csr =
      saturating_multiply(arcs, sizeof(VertexIndex) + sizeof(double) + sizeof(std::int64_t));
  return saturating_add(mapping, saturating_add(csr, saturating_multiply(edge_count, 8)));
}

Graph build_graph(const EdgeArrays& edges, bool directed, const CancelToken& cancel) {
  Graph graph;
  graph.directed = directed;

  // Rows with at least one usable direction define the vertex set.
  std::vector<std::size_t> rows;
  rows.reserve(edges.count);
  std::size_t arc_total = 0;
  for (std::size_t i = 0; i < edges.count; ++i) {
    bool forward = usable(edges.costs[i]);
    bool backward = edges.reverse_costs != nullptr && usable(edges.reverse_costs[i]);
    if (!forward && !backward) continue;
    rows.push_back(i);
    std::size_t directions = static_cast<std::size_t>(forward) + static_cast<std::size_t>(backward);
    arc_total += directed ? directions : 2 * directions;
  }
  cancel.throw_if_requested();
  if (arc_total > kMaxIndex)
    throw RoutingError(ErrorKind::kProgramLimit,
                       "the graph has " + std::to_string(arc_total) +
                           " arcs; gpu_routing handles at most 2147483647");

  std::vector<std::int64_t> endpoints(2 * rows.size());
  for (std::size_t r = 0; r < rows.size(); ++r) {
    endpoints[2 * r] = edges.sources[rows[r]];
    endpoints[2 * r + 1] = edges.targets[rows[r]];
  }
  std::vector<VertexIndex> endpoint_index;
  std::vector<std::int64_t> ids = map_endpoints(endpoints, endpoint_index);
  endpoints = {};
  if (ids.size() > kMaxIndex)
    throw RoutingError(ErrorKind::kProgramLimit, "the graph has more than 2147483647 vertices");
  graph.vertices = IdMap(std::move(ids));
  cancel.throw_if_requested();

  CsrGraph& csr = graph.forward;
  const VertexIndex vertex_count = graph.vertices.size();
  csr.vertex_count = vertex_count;
  csr.row_offsets.assign(static_cast<std::size_t>(vertex_count) + 1, 0);

  // Calls emit(tail, head, weight, edge_id) for every arc of row r, in a fixed order.
  auto for_each_arc = [&](std::size_t r, auto&& emit) {
    std::size_t i = rows[r];
    VertexIndex s = endpoint_index[2 * r];
    VertexIndex t = endpoint_index[2 * r + 1];
    std::int64_t id = edges.ids != nullptr ? edges.ids[i] : static_cast<std::int64_t>(i + 1);
    double cost = edges.costs[i];
    if (usable(cost)) {
      emit(s, t, cost, id);
      if (!directed) emit(t, s, cost, id);
    }
    if (edges.reverse_costs != nullptr && usable(edges.reverse_costs[i])) {
      double reverse_cost = edges.reverse_costs[i];
      emit(t, s, reverse_cost, id);
      if (!directed) emit(s, t, reverse_cost, id);
    }
  };

  // Counting sort by tail: count, prefix sum, place.
  for (std::size_t r = 0; r < rows.size(); ++r)
    for_each_arc(r, [&](VertexIndex tail, VertexIndex, double, std::int64_t) {
      ++csr.row_offsets[static_cast<std::size_t>(tail) + 1];
    });
  for (std::size_t v = 0; v < static_cast<std::size_t>(vertex_count); ++v)
    csr.row_offsets[v + 1] += csr.row_offsets[v];
  csr.heads.resize(arc_total);
  csr.weights.resize(arc_total);
  csr.edge_ids.resize(arc_total);
  std::vector<ArcIndex> next_slot(csr.row_offsets.begin(), csr.row_offsets.end() - 1);
  bool integer_weights = true;
  double max_weight = 0.0;
  double min_weight = arc_total > 0 ? kInfinity : 0.0;
  for (std::size_t r = 0; r < rows.size(); ++r) {
    for_each_arc(r, [&](VertexIndex tail, VertexIndex head, double weight, std::int64_t id) {
      ArcIndex slot = next_slot[static_cast<std::size_t>(tail)]++;
      csr.heads[static_cast<std::size_t>(slot)] = head;
      csr.weights[static_cast<std::size_t>(slot)] = weight;
      csr.edge_ids[static_cast<std::size_t>(slot)] = id;
      if (weight != std::floor(weight)) integer_weights = false;
      max_weight = std::max(max_weight, weight);
      min_weight = std::min(min_weight, weight);
    });
  }
  graph.integer_weights = integer_weights;
  graph.max_weight = max_weight;
  graph.min_weight = min_weight;
  return graph;
}

bool has_reverse(const Graph& graph) {
  return graph.reverse.row_offsets.size() == static_cast<std::size_t>(graph.vertex_count()) + 1;
}

void ensure_reverse(Graph& graph) {
  if (!has_reverse(graph)) graph.reverse = reverse_graph(graph.forward);
}

CsrGraph reverse_graph(const CsrGraph& forward) {
  CsrGraph reversed;
  const VertexIndex vertex_count = forward.vertex_count;
  reversed.vertex_count = vertex_count;
  reversed.row_offsets.assign(static_cast<std::size_t>(vertex_count) + 1, 0);
  const std::size_t arcs = forward.heads.size();
  for (std::size_t a = 0; a < arcs; ++a)
    ++reversed.row_offsets[static_cast<std::size_t>(forward.heads[a]) + 1];
  for (std::size_t v = 0; v < static_cast<std::size_t>(vertex_count); ++v)
    reversed.row_offsets[v + 1] += reversed.row_offsets[v];
  reversed.heads.resize(arcs);
  reversed.weights.resize(arcs);
  reversed.edge_ids.resize(arcs);
  std::vector<ArcIndex> next_slot(reversed.row_offsets.begin(), reversed.row_offsets.end() - 1);
  for (VertexIndex tail = 0; tail < vertex_count; ++tail) {
    for (ArcIndex a = forward.begin(tail); a < forward.end(tail); ++a) {
      std::size_t arc = static_cast<std::size_t>(a);
      ArcIndex slot = next_slot[static_cast<std::size_t>(forward.heads[arc])]++;
      reversed.heads[static_cast<std::size_t>(slot)] = tail;
      reversed.weights[static_cast<std::size_t>(slot)] = forward.weights[arc];
      reversed.edge_ids[static_cast<std::size_t>(slot)] = forward.edge_ids[arc];
    }
  }
  return reversed;
}

}  // namespace gpu_routing
