#include "base/graph.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
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
  std::vector<std::uint64_t> keys_tmp = huge_page_vector<std::uint64_t>(n);
  std::vector<std::uint32_t> payload_tmp = huge_page_vector<std::uint32_t>(n);
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
  std::vector<std::uint64_t> keys = huge_page_vector<std::uint64_t>(n);
  std::vector<std::uint32_t> positions = huge_page_vector<std::uint32_t>(n);
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
  // Ids are most often numbered densely from the smallest (DIMACS files, a serial column): an
  // id's distance from the first is then its index, one probe where the binary search took 18
  // on New York's 264,346 ids, most of them cache misses (1.8% of a one-pair call's samples on
  // the 2-core machine, for two ids).
  if (!ids_.empty() && id >= ids_[0]) {
    const std::uint64_t guess =
        static_cast<std::uint64_t>(id) - static_cast<std::uint64_t>(ids_[0]);
    if (guess < ids_.size() && ids_[static_cast<std::size_t>(guess)] == id)
      return static_cast<VertexIndex>(guess);
  }
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
  advise_huge_pages(rows.data(), edges.count * sizeof(std::size_t));
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

  std::vector<std::int64_t> endpoints = huge_page_vector<std::int64_t>(2 * rows.size());
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
  std::vector<ArcIndex> row_offsets(static_cast<std::size_t>(vertex_count) + 1, 0);

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
      ++row_offsets[static_cast<std::size_t>(tail) + 1];
    });
  for (std::size_t v = 0; v < static_cast<std::size_t>(vertex_count); ++v)
    row_offsets[v + 1] += row_offsets[v];
  std::vector<VertexIndex> heads = huge_page_vector<VertexIndex>(arc_total);
  std::vector<double> weights = huge_page_vector<double>(arc_total);
  std::vector<std::int64_t> edge_ids = huge_page_vector<std::int64_t>(arc_total);
  std::vector<ArcIndex> next_slot(row_offsets.begin(), row_offsets.end() - 1);
  bool integer_weights = true;
  double max_weight = 0.0;
  double min_weight = arc_total > 0 ? kInfinity : 0.0;
  for (std::size_t r = 0; r < rows.size(); ++r) {
    for_each_arc(r, [&](VertexIndex tail, VertexIndex head, double weight, std::int64_t id) {
      ArcIndex slot = next_slot[static_cast<std::size_t>(tail)]++;
      heads[static_cast<std::size_t>(slot)] = head;
      weights[static_cast<std::size_t>(slot)] = weight;
      edge_ids[static_cast<std::size_t>(slot)] = id;
      if (weight != std::floor(weight)) integer_weights = false;
      max_weight = std::max(max_weight, weight);
      min_weight = std::min(min_weight, weight);
    });
  }
  csr.row_offsets = std::move(row_offsets);
  csr.heads = std::move(heads);
  csr.weights = std::move(weights);
  csr.edge_ids = std::move(edge_ids);
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
  std::vector<ArcIndex> row_offsets(static_cast<std::size_t>(vertex_count) + 1, 0);
  const std::size_t arcs = forward.heads.size();
  for (std::size_t a = 0; a < arcs; ++a)
    ++row_offsets[static_cast<std::size_t>(forward.heads[a]) + 1];
  for (std::size_t v = 0; v < static_cast<std::size_t>(vertex_count); ++v)
    row_offsets[v + 1] += row_offsets[v];
  std::vector<VertexIndex> heads = huge_page_vector<VertexIndex>(arcs);
  std::vector<double> weights = huge_page_vector<double>(arcs);
  std::vector<std::int64_t> edge_ids = huge_page_vector<std::int64_t>(arcs);
  std::vector<ArcIndex> next_slot(row_offsets.begin(), row_offsets.end() - 1);
  for (VertexIndex tail = 0; tail < vertex_count; ++tail) {
    for (ArcIndex a = forward.begin(tail); a < forward.end(tail); ++a) {
      std::size_t arc = static_cast<std::size_t>(a);
      ArcIndex slot = next_slot[static_cast<std::size_t>(forward.heads[arc])]++;
      heads[static_cast<std::size_t>(slot)] = tail;
      weights[static_cast<std::size_t>(slot)] = forward.weights[arc];
      edge_ids[static_cast<std::size_t>(slot)] = forward.edge_ids[arc];
    }
  }
  reversed.row_offsets = std::move(row_offsets);
  reversed.heads = std::move(heads);
  reversed.weights = std::move(weights);
  reversed.edge_ids = std::move(edge_ids);
  return reversed;
}

// ---------------------------------------------------------------------------------------------
// Flat images.

namespace {

constexpr std::uint64_t kImageMagic = 0x3170617267707267ULL;  // "grpgrap1"

struct ImageHeader {
  std::uint64_t magic;
  std::uint64_t total_bytes;
  std::int64_t vertex_count;
  std::int64_t arc_count;
  std::int64_t reverse_arc_count;  // arc_count, or 0 when the image holds no reversed CSR
  std::uint32_t directed;
  std::uint32_t integer_weights;
  double max_weight;
  double min_weight;
};

constexpr std::size_t align8(std::size_t bytes) {
  return (bytes + 7) & ~std::size_t{7};
}

std::size_t csr_image_bytes(std::size_t vertices, std::size_t arcs) {
  return align8((vertices + 1) * sizeof(ArcIndex)) + align8(arcs * sizeof(VertexIndex)) +
         arcs * sizeof(double) + arcs * sizeof(std::int64_t);
}

template <typename T>
char* put_array(char* at, const GraphArray<T>& array) {
  if (!array.empty()) std::memcpy(at, array.data(), array.size() * sizeof(T));
  return at + align8(array.size() * sizeof(T));
}

template <typename T>
const char* take_array(const char* at, std::size_t count, GraphArray<T>& array) {
  array = GraphArray<T>::view(reinterpret_cast<const T*>(at), count);
  return at + align8(count * sizeof(T));
}

char* put_csr(char* at, const CsrGraph& csr) {
  at = put_array(at, csr.row_offsets);
  at = put_array(at, csr.heads);
  at = put_array(at, csr.weights);
  return put_array(at, csr.edge_ids);
}

const char* take_csr(const char* at, std::size_t vertices, std::size_t arcs, CsrGraph& csr) {
  csr.vertex_count = static_cast<VertexIndex>(vertices);
  at = take_array(at, vertices + 1, csr.row_offsets);
  at = take_array(at, arcs, csr.heads);
  at = take_array(at, arcs, csr.weights);
  return take_array(at, arcs, csr.edge_ids);
}

}  // namespace

std::size_t graph_image_bytes(const Graph& graph) {
  const std::size_t vertices = static_cast<std::size_t>(graph.vertex_count());
  const std::size_t arcs = static_cast<std::size_t>(graph.arc_count());
  const std::size_t reverse_arcs = has_reverse(graph) ? arcs : 0;
  return align8(sizeof(ImageHeader)) + vertices * sizeof(std::int64_t) +
         csr_image_bytes(vertices, arcs) +
         (has_reverse(graph) ? csr_image_bytes(vertices, reverse_arcs) : 0);
}

void write_graph_image(const Graph& graph, void* image) {
  ImageHeader header{};
  header.magic = kImageMagic;
  header.total_bytes = graph_image_bytes(graph);
  header.vertex_count = graph.vertex_count();
  header.arc_count = graph.arc_count();
  header.reverse_arc_count = has_reverse(graph) ? graph.arc_count() : 0;
  header.directed = graph.directed ? 1 : 0;
  header.integer_weights = graph.integer_weights ? 1 : 0;
  header.max_weight = graph.max_weight;
  header.min_weight = graph.min_weight;
  char* at = static_cast<char*>(image);
  std::memcpy(at, &header, sizeof header);
  at += align8(sizeof header);
  at = put_array(at, graph.vertices.ids());
  at = put_csr(at, graph.forward);
  if (has_reverse(graph)) put_csr(at, graph.reverse);
}

Graph view_graph_image(const void* image, std::size_t bytes) {
  ImageHeader header;
  if (bytes < sizeof header) throw RoutingError(ErrorKind::kInternal, "kept graph image too small");
  std::memcpy(&header, image, sizeof header);
  if (header.magic != kImageMagic || header.total_bytes > bytes)
    throw RoutingError(ErrorKind::kInternal, "kept graph image is damaged");
  Graph graph;
  graph.directed = header.directed != 0;
  graph.integer_weights = header.integer_weights != 0;
  graph.max_weight = header.max_weight;
  graph.min_weight = header.min_weight;
  const std::size_t vertices = static_cast<std::size_t>(header.vertex_count);
  const std::size_t arcs = static_cast<std::size_t>(header.arc_count);
  const char* at = static_cast<const char*>(image) + align8(sizeof header);
  GraphArray<std::int64_t> ids;
  at = take_array(at, vertices, ids);
  graph.vertices = IdMap(std::move(ids));
  at = take_csr(at, vertices, arcs, graph.forward);
  if (header.reverse_arc_count > 0)
    take_csr(at, vertices, static_cast<std::size_t>(header.reverse_arc_count), graph.reverse);
  return graph;
}

}  // namespace gpu_routing
