#include "road_index/cch.hpp"

#ifdef __linux__
#include <sys/mman.h>
#endif

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <atomic>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "base/parallel.hpp"

namespace gpu_routing {

namespace {

constexpr std::size_t kMaxArcs = static_cast<std::size_t>(std::numeric_limits<ArcIndex>::max());

// Cancel polls paced by work done, not by vertices: a vertex's triangles grow with its upward
// degree squared, and where the graph is no road network (a random sparse graph of 4096 vertices:
// 3.1 million arcs, a top separator of thousands of vertices) 1024 vertices took 5 s between two
// polls; a cancelled call, or the GPU service's lane that made the index, ran on that long.
// About 2^21 arc visits a poll: a few milliseconds.
constexpr std::int64_t kWorkPerCancelPoll = std::int64_t{1} << 21;

class CancelPacer {
 public:
  explicit CancelPacer(const CancelToken& cancel) : cancel_(cancel) {}
  // Counts `work` and, once a poll's worth is done, polls: true when the call is to stop.
  // Callable on any thread with a pacer of its own (it never throws).
  bool stop_after(std::int64_t work) {
    done_ += work;
    if (done_ < kWorkPerCancelPoll) return false;
    done_ = 0;
    return cancel_.requested();
  }
  void throw_after(std::int64_t work) {
    if (stop_after(work)) throw Cancelled();
  }

 private:
  const CancelToken& cancel_;
  std::int64_t done_ = 0;
};

// The work relax_lower_triangles does for a vertex of `up_arcs` upward arcs: half their pairs,
// and about as much again walking the upper ends' arcs.
inline std::int64_t triangle_work(ArcIndex up_arcs) {
  const auto d = static_cast<std::int64_t>(up_arcs);
  return 1 + d * d;
}

// The graph as an undirected simple graph: every arc u->v (u != v) makes u and v neighbours once,
// whatever its direction, weight or parallel copies. Both the order and the chordal supergraph
// are defined on this.
struct UndirectedTopology {
  std::vector<std::size_t> first;      // vertex_count + 1 entries
  std::vector<VertexIndex> neighbors;  // sorted and distinct within each row

  VertexIndex vertex_count() const { return static_cast<VertexIndex>(first.size() - 1); }
  const VertexIndex* begin(VertexIndex v) const { return neighbors.data() + first[v]; }
  const VertexIndex* end(VertexIndex v) const { return neighbors.data() + first[v + 1]; }
  std::size_t degree(VertexIndex v) const { return first[v + 1] - first[v]; }
};

UndirectedTopology undirected_topology(const CsrGraph& forward) {
  const auto n = static_cast<std::size_t>(forward.vertex_count);
  std::vector<std::size_t> count(n + 1, 0);
  for (VertexIndex u = 0; u < forward.vertex_count; ++u)
    for (ArcIndex a = forward.begin(u); a < forward.end(u); ++a) {
      const VertexIndex v = forward.heads[static_cast<std::size_t>(a)];
      if (v == u) continue;
      ++count[static_cast<std::size_t>(u) + 1];
      ++count[static_cast<std::size_t>(v) + 1];
    }
  for (std::size_t v = 0; v < n; ++v) count[v + 1] += count[v];
  std::vector<VertexIndex> slots(count[n]);
  std::vector<std::size_t> fill(count.begin(), count.end() - 1);
  for (VertexIndex u = 0; u < forward.vertex_count; ++u)
    for (ArcIndex a = forward.begin(u); a < forward.end(u); ++a) {
      const VertexIndex v = forward.heads[static_cast<std::size_t>(a)];
      if (v == u) continue;
      slots[fill[static_cast<std::size_t>(u)]++] = v;
      slots[fill[static_cast<std::size_t>(v)]++] = u;
    }
  // Sort and deduplicate each row, compacting in place (a row never moves right).
  UndirectedTopology topology;
  topology.first.assign(n + 1, 0);
  std::size_t kept = 0;
  for (std::size_t v = 0; v < n; ++v) {
    auto row_begin = slots.begin() + static_cast<std::ptrdiff_t>(count[v]);
    auto row_end = slots.begin() + static_cast<std::ptrdiff_t>(count[v + 1]);
    std::sort(row_begin, row_end);
    row_end = std::unique(row_begin, row_end);
    const auto out = slots.begin() + static_cast<std::ptrdiff_t>(kept);
    kept += static_cast<std::size_t>(row_end - row_begin);
    std::move(row_begin, row_end, out);
    topology.first[v + 1] = kept;
  }
  slots.resize(kept);
  slots.shrink_to_fit();
  topology.neighbors = std::move(slots);
  return topology;
}

// Recursive bisection. Every vertex carries the label of the part it is in; a part's induced
// subgraph is then "neighbours with the same label", with no copies of the graph. Separator
// vertices leave every part (kOrdered) as soon as they are chosen.
class NestedDissection {
 public:
  NestedDissection(const UndirectedTopology& topology, const double* x, const double* y,
                   const CancelToken& cancel)
      : topology_(topology),
        x_(x),
        y_(y),
        cancel_(cancel),
        label_(static_cast<std::size_t>(topology.vertex_count()), 0),
        visited_(static_cast<std::size_t>(topology.vertex_count()), 0),
        local_(x != nullptr ? static_cast<std::size_t>(topology.vertex_count()) : 0, 0) {}

  std::vector<VertexIndex> run() {
    std::vector<VertexIndex> all(static_cast<std::size_t>(topology_.vertex_count()));
    for (std::size_t v = 0; v < all.size(); ++v) all[v] = static_cast<VertexIndex>(v);
    order_.reserve(all.size());
    order_part(std::move(all), 0);
    return std::move(order_);
  }

 private:
  static constexpr std::int32_t kOrdered = -1;

  bool in_part(VertexIndex v, std::int32_t label) const {
    return label_[static_cast<std::size_t>(v)] == label;
  }

  // Appends the part's vertices to the order: its sub-parts first, its separator after them.
  void order_part(std::vector<VertexIndex> part, std::int32_t label) {
    if (part.empty()) return;
    cancel_.throw_if_requested();
    if (part.size() <= static_cast<std::size_t>(kCchLeafSize)) {
      order_leaf(part, label);
      return;
    }
    std::vector<std::vector<VertexIndex>> components = connected_components(part, label);
    if (components.size() > 1) {
      // Disconnected parts share no arc: each is ordered on its own, with no separator.
      for (auto& component : components) {
        const std::int32_t component_label = next_label_++;
        for (VertexIndex v : component) label_[static_cast<std::size_t>(v)] = component_label;
        order_part(std::move(component), component_label);
      }
      return;
    }
    components.clear();

    const std::int32_t label_a = next_label_++;
    const std::int32_t label_b = next_label_++;
    std::vector<VertexIndex> separator;
    if (x_ == nullptr || !flow_bisection(part, label, label_a, label_b, separator))
      median_bisection(part, label, label_a, label_b, separator);
    for (VertexIndex v : separator) label_[static_cast<std::size_t>(v)] = kOrdered;

    std::vector<VertexIndex> side_a, side_b;
    for (std::size_t i = 0; i < part.size(); ++i) {
      const VertexIndex v = part[i];
      if (in_part(v, label_a)) side_a.push_back(v);
      if (in_part(v, label_b)) side_b.push_back(v);
    }
    part.clear();
    part.shrink_to_fit();
    order_part(std::move(side_a), label_a);
    order_part(std::move(side_b), label_b);
    order_.insert(order_.end(), separator.begin(), separator.end());
  }

  // Cut directions for coordinates: both axes and both diagonals, as inertial flow uses. A single
  // direction is often far from the narrowest place of the part.
  static constexpr double kDirections[4][2] = {{1, 0}, {0, 1}, {1, 1}, {1, -1}};

  // Order by projection onto `direction`, ties broken by index so that the order is deterministic.
  auto projection_less(const double (&direction)[2]) const {
    const double along_x = direction[0], along_y = direction[1];
    return [this, along_x, along_y](VertexIndex a, VertexIndex b) {
      const double key_a = along_x * x_[a] + along_y * y_[a];
      const double key_b = along_x * x_[b] + along_y * y_[b];
      return key_a < key_b || (key_a == key_b && a < b);
    };
  }

  // Inertial flow (Schild, Sommer 2015) with vertex cuts: for each direction, the first quarter of
  // the part by projection is the source set, the last quarter the sink set, and a minimum vertex
  // cut between them (in the part's induced subgraph) is the separator candidate. A flow cut is
  // the narrowest place within the middle half, where a median split only sees the middle line;
  // road networks' narrow places (rivers, bridges, parks) are rarely exactly there. The smallest
  // cut wins, ties going to the better balance and then to the earlier direction. Labels the
  // sides and fills `separator`; false (nothing labelled) when no direction gives a vertex cut
  // (a source vertex adjacent to a sink vertex in every direction), for the median fallback.
  bool flow_bisection(const std::vector<VertexIndex>& part, std::int32_t label,
                      std::int32_t label_a, std::int32_t label_b,
                      std::vector<VertexIndex>& separator) {
    const auto m = static_cast<std::int32_t>(part.size());
    build_flow_graph(part, label);
    const std::int32_t terminals = std::max<std::int32_t>(1, m / 4);
    std::vector<VertexIndex> sorted = part;
    std::vector<std::int8_t> terminal(static_cast<std::size_t>(m));
    std::vector<std::int8_t> side, best_side;
    std::int32_t best_cut = std::numeric_limits<std::int32_t>::max();
    std::int32_t best_balance = -1;
    for (const auto& direction : kDirections) {
      const auto less = projection_less(direction);
      std::nth_element(sorted.begin(), sorted.begin() + terminals, sorted.end(), less);
      std::nth_element(sorted.begin() + terminals, sorted.end() - terminals, sorted.end(), less);
      std::fill(terminal.begin(), terminal.end(), kInner);
      for (std::int32_t i = 0; i < terminals; ++i) {
        terminal[static_cast<std::size_t>(local_[static_cast<std::size_t>(sorted[i])])] = kSource;
        terminal[static_cast<std::size_t>(local_[static_cast<std::size_t>(sorted[m - 1 - i])])] =
            kSink;
      }
      // Stopping once the flow passes the best cut so far: this direction can no longer win, and
      // most of the flow work is in its last augmentations.
      const std::int32_t cut = min_vertex_cut(terminal, best_cut, side);
      if (cut < 0 || cut > best_cut) continue;
      const std::int32_t count_a =
          static_cast<std::int32_t>(std::count(side.begin(), side.end(), kSideA));
      const std::int32_t balance = std::min(count_a, m - cut - count_a);
      if (cut < best_cut || balance > best_balance) {
        best_cut = cut;
        best_balance = balance;
        best_side.swap(side);
      }
    }
    if (best_side.empty() || best_balance <= 0) return false;
    separator.clear();
    for (std::int32_t i = 0; i < m; ++i) {
      const std::int8_t s = best_side[static_cast<std::size_t>(i)];
      label_[static_cast<std::size_t>(part[static_cast<std::size_t>(i)])] =
          s == kSideA ? label_a : label_b;
      if (s == kSeparator) separator.push_back(part[static_cast<std::size_t>(i)]);
    }
    return true;
  }

  // The part's induced subgraph with every vertex i split into in(i) = 2i -> out(i) = 2i + 1
  // (capacity 1: the vertex), and each edge {i, j} as out(i) -> in(j) and out(j) -> in(i) with
  // unbounded capacity, so that only vertices are cut. Every arc is stored with its reverse (the
  // residual). There is no super source or sink: min_vertex_cut treats each terminal set as one
  // node, which keeps its searches out of the terminal quarters.
  void build_flow_graph(const std::vector<VertexIndex>& part, std::int32_t label) {
    const auto m = static_cast<std::int32_t>(part.size());
    for (std::int32_t i = 0; i < m; ++i)
      local_[static_cast<std::size_t>(part[static_cast<std::size_t>(i)])] = i;
    const std::int32_t nodes = 2 * m;
    flow_first_.assign(static_cast<std::size_t>(nodes) + 1, 0);
    for (std::int32_t i = 0; i < m; ++i) {
      const VertexIndex v = part[static_cast<std::size_t>(i)];
      const auto degree = static_cast<std::int32_t>(std::count_if(
          topology_.begin(v), topology_.end(v), [&](VertexIndex w) { return in_part(w, label); }));
      // in(i): to out(i) and from each neighbour's out; out(i): the same mirrored.
      flow_first_[static_cast<std::size_t>(2 * i) + 1] = 1 + degree;
      flow_first_[static_cast<std::size_t>(2 * i) + 2] = 1 + degree;
    }
    for (std::int32_t u = 0; u < nodes; ++u)
      flow_first_[static_cast<std::size_t>(u) + 1] += flow_first_[static_cast<std::size_t>(u)];
    const auto arcs = static_cast<std::size_t>(flow_first_[static_cast<std::size_t>(nodes)]);
    flow_head_.resize(arcs);
    flow_reverse_.resize(arcs);
    flow_base_capacity_.resize(arcs);
    std::vector<std::int32_t> fill(flow_first_.begin(), flow_first_.end() - 1);
    auto add = [&](std::int32_t from, std::int32_t to, std::int32_t capacity) {
      const std::int32_t a = fill[static_cast<std::size_t>(from)]++;
      const std::int32_t b = fill[static_cast<std::size_t>(to)]++;
      flow_head_[static_cast<std::size_t>(a)] = to;
      flow_head_[static_cast<std::size_t>(b)] = from;
      flow_reverse_[static_cast<std::size_t>(a)] = b;
      flow_reverse_[static_cast<std::size_t>(b)] = a;
      flow_base_capacity_[static_cast<std::size_t>(a)] = capacity;
      flow_base_capacity_[static_cast<std::size_t>(b)] = 0;
    };
    for (std::int32_t i = 0; i < m; ++i) {
      add(2 * i, 2 * i + 1, 1);
      const VertexIndex v = part[static_cast<std::size_t>(i)];
      for (const VertexIndex* w = topology_.begin(v); w != topology_.end(v); ++w)
        if (in_part(*w, label))
          add(2 * i + 1, 2 * local_[static_cast<std::size_t>(*w)], kUnbounded);
    }
  }

  // The minimum vertex cut between the kSource and the kSink vertices of the flow graph, by
  // phases of Dinic's kind with unit augmentations (every augmenting path crosses a vertex of
  // capacity 1, so each carries exactly one unit). Unlike Dinic, a phase labels everything the
  // sources reach and accepts a sink at any level: on road networks the augmenting paths all have
  // different lengths, so shortest-only phases found one path each (phases = flow + 1); this way
  // a phase finds several, every path still a valid augmenting path. The source set acts as one
  // node: the searches start at the out nodes of its vertices with a neighbour outside it and never
  // enter it; reaching the in node of any sink vertex is reaching the sink. Returns the cut's size
  // with each vertex's side in `side`; -1 when a source vertex is adjacent to a sink vertex (no
  // vertex cut) or once the flow exceeds `bound` (side then undefined). Of the two extreme minimum
  // cuts, the one nearest the sources (what they reach in the residual graph) and the one nearest
  // the sinks (what reaches them), the more balanced is returned: both have the minimum size, and a
  // balanced split keeps the recursion shallow.
  std::int32_t min_vertex_cut(const std::vector<std::int8_t>& terminal, std::int32_t bound,
                              std::vector<std::int8_t>& side) {
    const auto m = static_cast<std::int32_t>(terminal.size());
    const std::int32_t nodes = 2 * m;
    auto kind = [&](std::int32_t node) { return terminal[static_cast<std::size_t>(node / 2)]; };
    std::vector<std::int32_t> seeds, sink_seeds;  // out(s) / in(t) on the terminal sets' borders
    for (std::int32_t i = 0; i < m; ++i) {
      const std::int8_t t = terminal[static_cast<std::size_t>(i)];
      if (t == kInner) continue;
      bool border = false;
      for (std::int32_t a = flow_first_[static_cast<std::size_t>(2 * i) + 1];
           a < flow_first_[static_cast<std::size_t>(2 * i) + 2]; ++a) {
        if (flow_base_capacity_[static_cast<std::size_t>(a)] == 0) continue;  // to in(i)
        const std::int8_t other = kind(flow_head_[static_cast<std::size_t>(a)]);
        if (other == -t) return -1;
        if (other == kInner) border = true;
      }
      if (border) (t == kSource ? seeds : sink_seeds).push_back(t == kSource ? 2 * i + 1 : 2 * i);
    }
    flow_capacity_ = flow_base_capacity_;
    auto capacity = [&](std::int32_t a) -> std::int32_t& {
      return flow_capacity_[static_cast<std::size_t>(a)];
    };
    auto head = [&](std::int32_t a) { return flow_head_[static_cast<std::size_t>(a)]; };
    auto level = [&](std::int32_t node) -> std::int32_t& {
      return flow_level_[static_cast<std::size_t>(node)];
    };
    flow_level_.resize(static_cast<std::size_t>(nodes));
    flow_next_arc_.resize(static_cast<std::size_t>(nodes));
    std::vector<std::int32_t> queue;
    queue.reserve(static_cast<std::size_t>(nodes));
    std::vector<std::int32_t> path;
    std::int32_t flow = 0;
    while (true) {
      cancel_.throw_if_requested();
      // Levels by breadth-first search in the residual graph (sink vertices reached, not entered).
      std::fill(flow_level_.begin(), flow_level_.end(), -1);
      queue = seeds;
      for (std::int32_t u : seeds) level(u) = 0;
      bool sink_found = false;
      for (std::size_t q = 0; q < queue.size(); ++q) {
        const std::int32_t u = queue[q];
        for (std::int32_t a = flow_first_[static_cast<std::size_t>(u)];
             a < flow_first_[static_cast<std::size_t>(u) + 1]; ++a) {
          const std::int32_t w = head(a);
          if (capacity(a) <= 0 || level(w) >= 0 || kind(w) == kSource) continue;
          level(w) = level(u) + 1;
          if (kind(w) == kSink)
            sink_found = true;  // an in node of the sink set: not searched beyond
          else
            queue.push_back(w);
        }
      }
      if (!sink_found) break;  // maximum flow reached
      // Blocking flow: depth-first along rising levels, one unit per path, an explicit stack
      // (paths can be as long as the part). A node found to lead nowhere is dropped (level -1).
      std::copy(flow_first_.begin(), flow_first_.end() - 1, flow_next_arc_.begin());
      for (std::int32_t seed : seeds) {
        if (level(seed) != 0) continue;
        path.clear();
        std::int32_t u = seed;
        while (true) {
          if (kind(u) == kSink) {
            for (std::int32_t a : path) {
              --capacity(a);
              ++capacity(flow_reverse_[static_cast<std::size_t>(a)]);
            }
            if (++flow > bound) return -1;
            path.clear();
            u = seed;
            continue;
          }
          std::int32_t& a = flow_next_arc_[static_cast<std::size_t>(u)];
          const std::int32_t end = flow_first_[static_cast<std::size_t>(u) + 1];
          const std::int32_t next_level = level(u) + 1;
          while (a < end && (capacity(a) <= 0 || level(head(a)) != next_level)) ++a;
          if (a < end) {
            path.push_back(a);
            u = head(a);
            continue;
          }
          level(u) = -1;
          if (path.empty()) break;
          const std::int32_t back = path.back();
          path.pop_back();
          u = head(flow_reverse_[static_cast<std::size_t>(back)]);
          ++flow_next_arc_[static_cast<std::size_t>(u)];
        }
      }
    }

    // The last level search is everything the sources reach in the residual graph.
    side.assign(static_cast<std::size_t>(m), kSideB);
    std::int32_t count_a = 0;
    for (std::int32_t i = 0; i < m; ++i) {
      const std::int8_t t = terminal[static_cast<std::size_t>(i)];
      if (t == kSource || (t == kInner && level(2 * i + 1) >= 0)) {
        side[static_cast<std::size_t>(i)] = kSideA;
        ++count_a;
      } else if (t == kInner && level(2 * i) >= 0) {
        side[static_cast<std::size_t>(i)] = kSeparator;
      }
    }
    // What reaches the sinks in the residual graph: over arcs u -> w with residual capacity,
    // found as the reverses of w's own arcs.
    std::fill(flow_level_.begin(), flow_level_.end(), -1);
    queue = sink_seeds;
    for (std::int32_t w : sink_seeds) level(w) = 0;
    for (std::size_t q = 0; q < queue.size(); ++q) {
      const std::int32_t w = queue[q];
      for (std::int32_t a = flow_first_[static_cast<std::size_t>(w)];
           a < flow_first_[static_cast<std::size_t>(w) + 1]; ++a) {
        const std::int32_t u = head(a);
        if (capacity(flow_reverse_[static_cast<std::size_t>(a)]) <= 0 || level(u) >= 0 ||
            kind(u) != kInner)
          continue;
        level(u) = 0;
        queue.push_back(u);
      }
    }
    std::int32_t count_b = 0;
    for (std::int32_t i = 0; i < m; ++i) {
      const std::int8_t t = terminal[static_cast<std::size_t>(i)];
      if (t == kSink || (t == kInner && level(2 * i) >= 0)) ++count_b;
    }
    const std::int32_t count_b_near_source = m - flow - count_a;
    const std::int32_t count_a_near_sink = m - flow - count_b;
    if (std::min(count_a_near_sink, count_b) > std::min(count_a, count_b_near_source)) {
      for (std::int32_t i = 0; i < m; ++i) {
        const std::int8_t t = terminal[static_cast<std::size_t>(i)];
        std::int8_t& s = side[static_cast<std::size_t>(i)];
        if (t == kSink || (t == kInner && level(2 * i) >= 0))
          s = kSideB;
        else if (t == kInner && level(2 * i + 1) >= 0)
          s = kSeparator;
        else
          s = kSideA;
      }
    }
    return flow;
  }

  // Bisects in the middle of the best of a few candidate orderings of the part: the middle of a
  // breadth-first order from a pseudo-peripheral vertex (the last one reached from an arbitrary
  // start), and with coordinates the median along four directions (both axes and both
  // diagonals). Labels the sides label_a / label_b and returns the separator in `separator` (its
  // labels are left for the caller). The method without coordinates, and the fallback when no
  // flow cut exists.
  void median_bisection(std::vector<VertexIndex>& part, std::int32_t label, std::int32_t label_a,
                        std::int32_t label_b, std::vector<VertexIndex>& separator) {
    const std::size_t half = part.size() / 2;
    std::vector<std::vector<VertexIndex>> candidates;
    candidates.push_back(breadth_first(breadth_first(part.front(), label).back(), label));
    if (x_ != nullptr) {
      for (const auto& direction : kDirections) {
        candidates.push_back(part);
        std::vector<VertexIndex>& candidate = candidates.back();
        std::nth_element(candidate.begin(), candidate.begin() + static_cast<std::ptrdiff_t>(half),
                         candidate.end(), projection_less(direction));
      }
    }
    std::size_t best_size = std::numeric_limits<std::size_t>::max();
    for (auto& candidate : candidates) {
      const std::size_t size = separator_size(candidate, half, label_a, label_b);
      if (size < best_size) {
        best_size = size;
        part.swap(candidate);
      }
    }
    candidates.clear();
    for (std::size_t i = 0; i < part.size(); ++i)
      label_[static_cast<std::size_t>(part[i])] = i < half ? label_a : label_b;

    // Either side's boundary covers every cut edge; the smaller one is the separator.
    std::vector<VertexIndex> boundary_a, boundary_b;
    for (std::size_t i = 0; i < part.size(); ++i) {
      const VertexIndex v = part[i];
      const std::int32_t other = i < half ? label_b : label_a;
      const bool on_boundary = std::any_of(topology_.begin(v), topology_.end(v),
                                           [&](VertexIndex w) { return in_part(w, other); });
      if (on_boundary) (i < half ? boundary_a : boundary_b).push_back(v);
    }
    separator.swap(boundary_a.size() <= boundary_b.size() ? boundary_a : boundary_b);
  }

  // Labels the first `half` vertices of `candidate` side A, the rest side B, and returns the
  // smaller side's count of vertices with a neighbour across.
  std::size_t separator_size(const std::vector<VertexIndex>& candidate, std::size_t half,
                             std::int32_t label_a, std::int32_t label_b) {
    for (std::size_t i = 0; i < candidate.size(); ++i)
      label_[static_cast<std::size_t>(candidate[i])] = i < half ? label_a : label_b;
    std::size_t boundary_a = 0, boundary_b = 0;
    for (std::size_t i = 0; i < candidate.size(); ++i) {
      const VertexIndex v = candidate[i];
      const std::int32_t other = i < half ? label_b : label_a;
      if (std::any_of(topology_.begin(v), topology_.end(v),
                      [&](VertexIndex w) { return in_part(w, other); }))
        ++(i < half ? boundary_a : boundary_b);
    }
    return std::min(boundary_a, boundary_b);
  }

  // A small part: fewest neighbours inside the part first (a cheap stand-in for minimum degree).
  void order_leaf(std::vector<VertexIndex>& part, std::int32_t label) {
    std::vector<std::pair<std::size_t, VertexIndex>> by_degree;
    by_degree.reserve(part.size());
    for (VertexIndex v : part) {
      const auto degree = static_cast<std::size_t>(std::count_if(
          topology_.begin(v), topology_.end(v), [&](VertexIndex w) { return in_part(w, label); }));
      by_degree.emplace_back(degree, v);
    }
    std::sort(by_degree.begin(), by_degree.end());
    for (const auto& entry : by_degree) {
      order_.push_back(entry.second);
      label_[static_cast<std::size_t>(entry.second)] = kOrdered;
    }
  }

  // The vertices of the part reachable from `start`, in breadth-first order.
  std::vector<VertexIndex> breadth_first(VertexIndex start, std::int32_t label) {
    ++visit_stamp_;
    std::vector<VertexIndex> queue = {start};
    visited_[static_cast<std::size_t>(start)] = visit_stamp_;
    for (std::size_t head = 0; head < queue.size(); ++head) {
      const VertexIndex v = queue[head];
      for (const VertexIndex* w = topology_.begin(v); w != topology_.end(v); ++w) {
        auto& seen = visited_[static_cast<std::size_t>(*w)];
        if (seen == visit_stamp_ || !in_part(*w, label)) continue;
        seen = visit_stamp_;
        queue.push_back(*w);
      }
    }
    return queue;
  }

  std::vector<std::vector<VertexIndex>> connected_components(const std::vector<VertexIndex>& part,
                                                             std::int32_t label) {
    std::vector<std::vector<VertexIndex>> components;
    components.push_back(breadth_first(part.front(), label));
    if (components.front().size() == part.size()) return components;
    // Disconnected: one stamp for every search, so that no vertex starts a second component.
    const std::int32_t stamp = visit_stamp_;
    for (VertexIndex v : part) {
      if (visited_[static_cast<std::size_t>(v)] == stamp) continue;
      std::vector<VertexIndex> queue = {v};
      visited_[static_cast<std::size_t>(v)] = stamp;
      for (std::size_t head = 0; head < queue.size(); ++head) {
        const VertexIndex u = queue[head];
        for (const VertexIndex* w = topology_.begin(u); w != topology_.end(u); ++w) {
          auto& seen = visited_[static_cast<std::size_t>(*w)];
          if (seen == stamp || !in_part(*w, label)) continue;
          seen = stamp;
          queue.push_back(*w);
        }
      }
      components.push_back(std::move(queue));
    }
    return components;
  }

  const UndirectedTopology& topology_;
  const double* x_;
  const double* y_;
  const CancelToken& cancel_;
  std::vector<std::int32_t> label_;
  std::vector<std::int32_t> visited_;
  std::int32_t visit_stamp_ = 0;
  std::int32_t next_label_ = 1;
  std::vector<VertexIndex> order_;

  // Flow bisection (see build_flow_graph): the part's local index of each vertex, and the split
  // graph in CSR form, reused from part to part.
  static constexpr std::int8_t kInner = 0, kSource = 1, kSink = -1;
  static constexpr std::int8_t kSideA = 0, kSideB = 1, kSeparator = 2;
  static constexpr std::int32_t kUnbounded = std::numeric_limits<std::int32_t>::max() / 2;
  std::vector<std::int32_t> local_;
  std::vector<std::int32_t> flow_first_;
  std::vector<std::int32_t> flow_head_;
  std::vector<std::int32_t> flow_reverse_;
  std::vector<std::int32_t> flow_base_capacity_;
  std::vector<std::int32_t> flow_capacity_;
  std::vector<std::int32_t> flow_level_;
  std::vector<std::int32_t> flow_next_arc_;
};

// Coordinates for a graph that has none: hop distances to far-apart landmarks (per connected
// component: a pseudo-peripheral vertex a, the vertex b farthest from it, then c and d each the
// farthest from the landmarks before), x = dist(a) - dist(b), y = dist(c) - dist(d). On a road
// network these follow the geography closely enough for inertial flow to find its narrow places
// (New York without its coordinates: a BFS-bisection order gave 23 CCH arcs per vertex and a
// tree 1813 deep); they only steer the cuts, so any values give a valid order.
void landmark_coordinates(const UndirectedTopology& topology, std::vector<double>& x,
                          std::vector<double>& y, const CancelToken& cancel) {
  const auto n = static_cast<std::size_t>(topology.vertex_count());
  constexpr std::int32_t kUnreached = -1;
  x.assign(n, 0.0);
  y.assign(n, 0.0);
  std::vector<std::int32_t> component(n, kUnreached);
  std::vector<std::int32_t> hops[4];
  for (auto& h : hops) h.assign(n, kUnreached);
  std::vector<std::int32_t> nearest(n);  // hops to the nearest landmark chosen so far
  std::vector<VertexIndex> queue;
  queue.reserve(n);
  // Breadth-first from `start` over its component, filling `distance`; returns the component's
  // vertices in the order reached.
  auto search = [&](VertexIndex start, std::vector<std::int32_t>& distance) {
    queue.clear();
    queue.push_back(start);
    distance[static_cast<std::size_t>(start)] = 0;
    for (std::size_t head = 0; head < queue.size(); ++head) {
      const VertexIndex v = queue[head];
      const std::int32_t next = distance[static_cast<std::size_t>(v)] + 1;
      for (const VertexIndex* w = topology.begin(v); w != topology.end(v); ++w) {
        std::int32_t& d = distance[static_cast<std::size_t>(*w)];
        if (d != kUnreached) continue;
        d = next;
        queue.push_back(*w);
      }
    }
  };
  std::vector<VertexIndex> members;
  std::int32_t components = 0;
  for (std::size_t s = 0; s < n; ++s) {
    if (component[s] != kUnreached) continue;
    cancel.throw_if_requested();
    // The component, and a vertex as far as possible from an arbitrary start of it.
    std::vector<std::int32_t>& scratch = hops[3];
    search(static_cast<VertexIndex>(s), scratch);
    members = queue;
    for (VertexIndex v : members) {
      component[static_cast<std::size_t>(v)] = components;
      scratch[static_cast<std::size_t>(v)] = kUnreached;
    }
    ++components;
    if (members.size() < 3) continue;
    VertexIndex landmark = members.back();
    for (int k = 0; k < 4; ++k) {
      search(landmark, hops[k]);
      std::int32_t farthest = -1;
      for (VertexIndex v : members) {
        std::int32_t& near = nearest[static_cast<std::size_t>(v)];
        near = k == 0 ? hops[k][static_cast<std::size_t>(v)]
                      : std::min(near, hops[k][static_cast<std::size_t>(v)]);
        if (near > farthest) {
          farthest = near;
          landmark = v;
        }
      }
    }
    for (VertexIndex v : members) {
      const auto i = static_cast<std::size_t>(v);
      x[i] = static_cast<double>(hops[0][i] - hops[1][i]);
      y[i] = static_cast<double>(hops[2][i] - hops[3][i]);
      for (auto& h : hops) h[i] = kUnreached;
    }
  }
}

}  // namespace

std::vector<VertexIndex> cch_order(const Graph& graph, const double* x, const double* y,
                                   const CancelToken& cancel) {
  if ((x == nullptr) != (y == nullptr))
    throw RoutingError(ErrorKind::kInvalidParameter,
                       "a contraction order takes both coordinates or neither");
  const UndirectedTopology topology = undirected_topology(graph.forward);
  if (x != nullptr) return NestedDissection(topology, x, y, cancel).run();
  std::vector<double> landmark_x, landmark_y;
  landmark_coordinates(topology, landmark_x, landmark_y, cancel);
  return NestedDissection(topology, landmark_x.data(), landmark_y.data(), cancel).run();
}

void CchWorkspace::resize(VertexIndex vertex_count) {
  const auto n = static_cast<std::size_t>(vertex_count);
  forward_distance_.assign(n, kInfinity);
  backward_distance_.assign(n, kInfinity);
  forward_arc_.assign(n, kNoArc);
  backward_arc_.assign(n, kNoArc);
  settled_.assign(n, kInfinity);
  is_settled_.assign(n, 0);
  settled_ranks_.clear();
  settle_chain_.clear();
  settled_arcs_ = 0;
}

Cch::Cch(const Graph& graph, std::vector<VertexIndex> order, const CancelToken& cancel)
    : vertex_at_rank_(std::move(order)) {
  Stopwatch watch;
  const VertexIndex n = graph.vertex_count();
  if (vertex_at_rank_.size() != static_cast<std::size_t>(n))
    throw RoutingError(ErrorKind::kInvalidParameter,
                       "the contraction order has " + std::to_string(vertex_at_rank_.size()) +
                           " entries for " + std::to_string(n) + " vertices");
  rank_of_vertex_.assign(static_cast<std::size_t>(n), kNoVertex);
  for (VertexIndex r = 0; r < n; ++r) {
    const VertexIndex v = vertex_at_rank_[static_cast<std::size_t>(r)];
    if (v < 0 || v >= n || rank_of_vertex_[static_cast<std::size_t>(v)] != kNoVertex)
      throw RoutingError(ErrorKind::kInvalidParameter, "the contraction order is no permutation");
    rank_of_vertex_[static_cast<std::size_t>(v)] = r;
  }

  // Contracting ranks in increasing order: a rank's upward neighbours become pairwise adjacent.
  // Adding them all to the lowest one (its elimination-tree parent) suffices, since that one is
  // contracted next among them and passes the rest on in turn.
  std::vector<std::vector<VertexIndex>> upward(static_cast<std::size_t>(n));
  {
    const UndirectedTopology topology = undirected_topology(graph.forward);
    for (VertexIndex v = 0; v < n; ++v) {
      const VertexIndex rank = rank_of_vertex_[static_cast<std::size_t>(v)];
      for (const VertexIndex* w = topology.begin(v); w != topology.end(v); ++w) {
        const VertexIndex other = rank_of_vertex_[static_cast<std::size_t>(*w)];
        if (other > rank) upward[static_cast<std::size_t>(rank)].push_back(other);
      }
    }
  }
  parent_.assign(static_cast<std::size_t>(n), kNoVertex);
  arc_first_.assign(static_cast<std::size_t>(n) + 1, 0);
  CancelPacer pacer(cancel);
  cancel.throw_if_requested();
  for (VertexIndex r = 0; r < n; ++r) {
    std::vector<VertexIndex>& row = upward[static_cast<std::size_t>(r)];
    pacer.throw_after(1 + 8 * static_cast<std::int64_t>(row.size()));  // sorted, then copied
    std::sort(row.begin(), row.end());
    row.erase(std::unique(row.begin(), row.end()), row.end());
    if (!row.empty()) {
      const VertexIndex parent = row.front();
      parent_[static_cast<std::size_t>(r)] = parent;
      auto& parent_row = upward[static_cast<std::size_t>(parent)];
      parent_row.insert(parent_row.end(), row.begin() + 1, row.end());
    }
    if (arc_head_.size() + row.size() > kMaxArcs)
      throw RoutingError(ErrorKind::kProgramLimit,
                         "the contraction hierarchy needs more than 2^31 - 1 arcs",
                         "a better contraction order (with coordinates) needs fewer");
    arc_head_.insert(arc_head_.end(), row.begin(), row.end());
    arc_first_[static_cast<std::size_t>(r) + 1] = static_cast<ArcIndex>(arc_head_.size());
    std::vector<VertexIndex>().swap(row);  // final: no lower rank adds to it any more
  }
  arc_head_.shrink_to_fit();

  std::vector<int> depth(static_cast<std::size_t>(n), 1);
  for (VertexIndex r = n - 1; r >= 0; --r) {
    const VertexIndex parent = parent_[static_cast<std::size_t>(r)];
    if (parent != kNoVertex)
      depth[static_cast<std::size_t>(r)] = depth[static_cast<std::size_t>(parent)] + 1;
    elimination_tree_height_ =
        std::max(elimination_tree_height_, depth[static_cast<std::size_t>(r)]);
  }

  map_input_arcs(graph);
  workspace_.resize(n);
  bind_owned();
  build_ms_ = watch.elapsed_ms();
}

void Cch::bind_owned() {
  auto span = [](const auto& vector) {
    return CchSpan<typename std::decay_t<decltype(vector)>::value_type>{vector.data(),
                                                                        vector.size()};
  };
  at_rank_ = span(vertex_at_rank_);
  rank_ = span(rank_of_vertex_);
  parent_span_ = span(parent_);
  first_ = span(arc_first_);
  head_ = span(arc_head_);
  up_ = span(up_weight_);
  down_ = span(down_weight_);
  up_via_span_ = span(up_via_);
  down_via_span_ = span(down_via_);
  input_arc_span_ = span(input_arc_to_cch_arc_);
}

bool Cch::same_topology(const Graph& graph) const {
  return graph.vertex_count() == vertex_count() &&
         static_cast<std::size_t>(graph.arc_count()) == input_arc_span_.count &&
         topology_fingerprint(graph) == fingerprint_;
}

std::uint64_t Cch::topology_fingerprint(const Graph& graph) {
  // FNV-1a over the CSR structure: re-customizing with a graph of another topology would index
  // arcs that are not there, so customize() refuses it.
  std::uint64_t hash = 14695981039346656037ULL;
  auto mix = [&hash](std::uint64_t value) {
    hash ^= value;
    hash *= 1099511628211ULL;
  };
  const CsrGraph& forward = graph.forward;
  mix(static_cast<std::uint64_t>(forward.vertex_count));
  for (ArcIndex offset : forward.row_offsets) mix(static_cast<std::uint64_t>(offset));
  for (VertexIndex head : forward.heads) mix(static_cast<std::uint64_t>(head));
  return hash;
}

void Cch::map_input_arcs(const Graph& graph) {
  bind_owned();  // find_arc reads the spans
  const CsrGraph& forward = graph.forward;
  input_arc_to_cch_arc_.assign(static_cast<std::size_t>(forward.arc_count()), kNoArc);
  for (VertexIndex u = 0; u < forward.vertex_count; ++u) {
    const VertexIndex rank_u = rank_of_vertex_[static_cast<std::size_t>(u)];
    for (ArcIndex a = forward.begin(u); a < forward.end(u); ++a) {
      const VertexIndex rank_v =
          rank_of_vertex_[static_cast<std::size_t>(forward.heads[static_cast<std::size_t>(a)])];
      if (rank_v == rank_u) continue;  // a self loop is on no shortest path
      input_arc_to_cch_arc_[static_cast<std::size_t>(a)] =
          find_arc(std::min(rank_u, rank_v), std::max(rank_u, rank_v));
    }
  }
  fingerprint_ = topology_fingerprint(graph);
  bind_owned();
}

ArcIndex Cch::find_arc(VertexIndex lower_rank, VertexIndex higher_rank) const {
  const auto first = head_.begin() + first_[static_cast<std::size_t>(lower_rank)];
  const auto last = head_.begin() + first_[static_cast<std::size_t>(lower_rank) + 1];
  const auto found = std::lower_bound(first, last, higher_rank);
  if (found == last || *found != higher_rank)
    throw RoutingError(ErrorKind::kInternal, "contraction hierarchy arc missing");
  return static_cast<ArcIndex>(found - head_.begin());
}

namespace {

// Where the weights of the arcs leaving some ranks are written: `up`, `down`, `up_via` and
// `down_via` indexed by (CCH arc - shift).
struct ArcTarget {
  double* up;
  double* down;
  std::int32_t* up_via;
  std::int32_t* down_via;
  ArcIndex shift;
};

// The lower triangles whose middle is rank u: for upward arcs u-v and u-w (v < w), v -> u -> w
// offers a weight for arc v-w upward, and w -> u -> v one for it downward. The arcs leaving u are
// read from `up` and `down` (final by now: every arc leaving rank u upward has had all its lower
// triangles, middles below u, applied by the time u is reached); arc v-w is written where
// target_of(v) says. Chordality puts w among v's upward neighbours, and both rows are sorted, so
// a forward scan of v's row finds each w. A candidate replaces on strict improvement, so that one
// sweep over increasing middles keeps the lowest middle among equally cheap ones; with
// kLowestMiddle also on a tie with a higher middle, for ranks relaxed after higher ones.
template <bool kLowestMiddle, typename TargetOf>
inline void relax_lower_triangles(VertexIndex u, const ArcIndex* first, const VertexIndex* head,
                                  const double* up, const double* down, std::int32_t middle,
                                  TargetOf&& target_of) {
  const ArcIndex u_end = first[static_cast<std::size_t>(u) + 1];
  for (ArcIndex uv = first[static_cast<std::size_t>(u)]; uv < u_end; ++uv) {
    const VertexIndex v = head[static_cast<std::size_t>(uv)];
    const double v_to_u = down[static_cast<std::size_t>(uv)];
    const double u_to_v = up[static_cast<std::size_t>(uv)];
    const ArcTarget target = target_of(v);
    ArcIndex vw = first[static_cast<std::size_t>(v)];
    for (ArcIndex uw = uv + 1; uw < u_end; ++uw) {
      const VertexIndex w = head[static_cast<std::size_t>(uw)];
      while (head[static_cast<std::size_t>(vw)] < w) ++vw;
      const auto at = static_cast<std::size_t>(vw - target.shift);
      const double v_to_w = v_to_u + up[static_cast<std::size_t>(uw)];
      if (v_to_w < target.up[at] ||
          (kLowestMiddle && v_to_w == target.up[at] && target.up_via[at] < middle)) {
        target.up[at] = v_to_w;
        target.up_via[at] = middle;
      }
      const double w_to_v = down[static_cast<std::size_t>(uw)] + u_to_v;
      if (w_to_v < target.down[at] ||
          (kLowestMiddle && w_to_v == target.down[at] && target.down_via[at] < middle)) {
        target.down[at] = w_to_v;
        target.down_via[at] = middle;
      }
    }
  }
}

// The cheapest original arc of each direction (the first of equally cheap parallel arcs), for
// the graph's vertices [begin, end). An upward CCH arc's weight comes only from arcs leaving its
// lower end, a downward one's only from arcs leaving its higher end, so disjoint vertex ranges
// write disjoint entries.
void apply_original_arcs(const CsrGraph& forward, VertexIndex begin, VertexIndex end,
                         const VertexIndex* rank_of_vertex, const ArcIndex* input_arc_to_cch_arc,
                         const ArcTarget& out) {
  for (VertexIndex u = begin; u < end; ++u) {
    const VertexIndex rank_u = rank_of_vertex[u];
    for (ArcIndex a = forward.begin(u); a < forward.end(u); ++a) {
      const ArcIndex arc = input_arc_to_cch_arc[a];
      if (arc == kNoArc) continue;
      const double weight = forward.weights[static_cast<std::size_t>(a)];
      const bool upward = rank_u < rank_of_vertex[forward.heads[static_cast<std::size_t>(a)]];
      double& best = upward ? out.up[arc] : out.down[arc];
      if (weight < best) {
        best = weight;
        (upward ? out.up_via : out.down_via)[arc] = a;
      }
    }
  }
}

// The most subtrees per thread that a parallel customization splits into (plan_customization).
constexpr int kMaxSubtreesPerThread = 16;

}  // namespace

// Splits the elimination tree (a forest where the graph is disconnected) from its roots down:
// opening a subtree moves its root to the top and makes its children subtrees. Always opening the
// heaviest, it goes on while some subtree has more than 1 / kMaxSubtreesPerThread of a thread's
// share and there are fewer than kMaxSubtreesPerThread per thread; of the splits passed on the
// way it keeps the one with the least estimated time, the top's work plus the busiest thread's
// when the subtrees go to the least loaded thread, heaviest first. (On road networks the top
// stays a few percent of the work; where separators grow with the graph, as in grids, the top
// levels hold much of it, and fewer subtrees win.) Work of a rank u: 1 + for each upward arc u-v,
// 1 + the triangles it starts (later upward arcs of u) + v's upward arcs (the scan of v's row).
void Cch::plan_customization(int threads) {
  const auto n = parent_.size();
  CustomizationPlan& plan = plan_;
  plan = CustomizationPlan();
  plan.threads = threads;
  std::vector<double> subtree_work(n, 0.0);
  for (std::size_t r = 0; r < n; ++r) {
    double work = 1.0;
    for (ArcIndex uv = arc_first_[r]; uv < arc_first_[r + 1]; ++uv) {
      const auto v = static_cast<std::size_t>(arc_head_[static_cast<std::size_t>(uv)]);
      work += static_cast<double>(arc_first_[r + 1] - uv) + (arc_first_[v + 1] - arc_first_[v]);
    }
    subtree_work[r] += work;
    if (parent_[r] != kNoVertex)
      subtree_work[static_cast<std::size_t>(parent_[r])] += subtree_work[r];
  }
  double total_work = 0.0;
  for (std::size_t r = 0; r < n; ++r)
    if (parent_[r] == kNoVertex) total_work += subtree_work[r];
  // Children by parent: children[child_first[p]] .. children[child_first[p + 1] - 1]. (Scratch
  // arrays live in the plan's own while it does not need them: fewer pages to map.)
  std::vector<VertexIndex> child_first(n + 2, 0);
  for (std::size_t r = 0; r < n; ++r)
    if (parent_[r] != kNoVertex) ++child_first[static_cast<std::size_t>(parent_[r]) + 2];
  for (std::size_t r = 0; r < n; ++r) child_first[r + 2] += child_first[r + 1];
  std::vector<VertexIndex>& children = plan.ranks;
  children.resize(n);
  for (std::size_t r = 0; r < n; ++r)
    if (parent_[r] != kNoVertex)
      children[static_cast<std::size_t>(child_first[static_cast<std::size_t>(parent_[r]) + 1]++)] =
          static_cast<VertexIndex>(r);

  using Subtree = std::pair<double, VertexIndex>;  // (work, root)
  const auto heavier = [](const Subtree& a, const Subtree& b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  };
  // The subtrees dealt to the threads, heaviest first to the least loaded; returns the loads.
  std::vector<Subtree> sorted;
  std::vector<double> load(static_cast<std::size_t>(threads));
  const auto deal = [&](const std::vector<Subtree>& subtrees, std::vector<ArcIndex>* owner) {
    sorted = subtrees;
    std::sort(sorted.begin(), sorted.end(), heavier);
    std::fill(load.begin(), load.end(), 0.0);
    for (const auto& [work, root] : sorted) {
      const auto lightest = std::min_element(load.begin(), load.end()) - load.begin();
      load[static_cast<std::size_t>(lightest)] += work;
      if (owner != nullptr)
        (*owner)[static_cast<std::size_t>(root)] = static_cast<ArcIndex>(lightest);
    }
    return *std::max_element(load.begin(), load.end());
  };

  std::vector<Subtree> open;  // a heap, the heaviest first
  for (std::size_t r = 0; r < n; ++r)
    if (parent_[r] == kNoVertex) open.emplace_back(subtree_work[r], static_cast<VertexIndex>(r));
  std::make_heap(open.begin(), open.end());
  const std::size_t most = static_cast<std::size_t>(kMaxSubtreesPerThread) * threads;
  const double small_enough = total_work / static_cast<double>(most);
  std::vector<VertexIndex> opened;  // in order
  double top_work = 0.0;
  double best_time = deal(open, nullptr);
  std::size_t best_opened = 0;
  double best_top_work = 0.0;
  while (!open.empty() && open.size() < most && open.front().first > small_enough) {
    const auto [work, root] = open.front();
    const auto r = static_cast<std::size_t>(root);
    if (child_first[r] == child_first[r + 1]) break;  // a single rank: nothing to open
    std::pop_heap(open.begin(), open.end());
    open.pop_back();
    opened.push_back(root);
    top_work += work;
    for (VertexIndex c = child_first[r]; c < child_first[r + 1]; ++c) {
      const VertexIndex child = children[static_cast<std::size_t>(c)];
      top_work -= subtree_work[static_cast<std::size_t>(child)];
      open.emplace_back(subtree_work[static_cast<std::size_t>(child)], child);
      std::push_heap(open.begin(), open.end());
    }
    const double time = top_work + deal(open, nullptr);
    if (time < best_time) {
      best_time = time;
      best_opened = opened.size();
      best_top_work = top_work;
    }
  }

  // The best split again: the ranks opened up to it are the top; the subtrees hang below them.
  // owner: a thread, or -1 for the top.
  std::vector<ArcIndex>& owner = plan.top_shift;
  owner.assign(n, -2);
  for (std::size_t i = 0; i < best_opened; ++i) owner[static_cast<std::size_t>(opened[i])] = -1;
  open.clear();
  for (std::size_t r = 0; r < n; ++r) {
    const VertexIndex p = parent_[r];
    if (owner[r] != -1 && (p == kNoVertex || owner[static_cast<std::size_t>(p)] == -1))
      open.emplace_back(subtree_work[r], static_cast<VertexIndex>(r));
  }
  deal(open, &owner);
  for (std::size_t r = n; r-- > 0;)  // the rest where their parent is (parents rank higher)
    if (owner[r] == -2) owner[r] = owner[static_cast<std::size_t>(parent_[r])];

  plan.first.assign(static_cast<std::size_t>(threads) + 2, 0);
  for (std::size_t r = 0; r < n; ++r)
    ++plan.first[static_cast<std::size_t>(owner[r] < 0 ? threads : owner[r]) + 1];
  for (std::size_t k = 0; k <= static_cast<std::size_t>(threads); ++k)
    plan.first[k + 1] += plan.first[k];
  std::vector<std::size_t> next(plan.first.begin(), plan.first.end() - 1);
  for (std::size_t r = 0; r < n; ++r) {
    const bool top = owner[r] < 0;
    plan.ranks[next[top ? threads : static_cast<std::size_t>(owner[r])]++] =
        static_cast<VertexIndex>(r);
    plan.top_shift[r] = top ? arc_first_[r] - plan.top_arcs : -1;  // owner[r] no more
    if (top) plan.top_arcs += arc_first_[r + 1] - arc_first_[r];
  }

  CustomizationSplit& split = plan.split;
  split.threads = threads;
  split.subtrees = static_cast<int>(open.size());
  split.top_ranks = static_cast<VertexIndex>(best_opened);
  split.top_arcs = plan.top_arcs;
  split.top_work_share = total_work > 0 ? best_top_work / total_work : 0.0;
  const double mean = (total_work - best_top_work) / threads;
  split.busiest_thread = mean > 0 ? *std::max_element(load.begin(), load.end()) / mean : 1.0;
}

namespace {
constexpr std::size_t kHugeFrom = std::size_t{4} << 20;
// Set by customize() for a hierarchy asked to use huge pages, read by WeightMemory::allocate (the
// allocator is stateless).
thread_local bool t_huge_pages = false;
}  // namespace

void Cch::begin_customization(const Graph& graph) {
  if (is_view_)
    throw RoutingError(ErrorKind::kInternal, "a contraction hierarchy image cannot be customized");
  if (!same_topology(graph))
    throw RoutingError(ErrorKind::kInvalidParameter,
                       "the graph to customize with has another topology than the hierarchy",
                       "build the hierarchy again (new order) after the topology changes");
  customized_ = false;
  struct HugePagesScope {
    bool saved;
    explicit HugePagesScope(bool on) : saved(t_huge_pages) { t_huge_pages = on; }
    ~HugePagesScope() { t_huge_pages = saved; }
  } huge_pages_scope(huge_pages_);
  const auto m = static_cast<std::size_t>(arc_count());
  up_weight_.resize(m);
  down_weight_.resize(m);
  up_via_.resize(m);
  down_via_.resize(m);
}

void Cch::finish_customization(double ms, const CustomizationSplit& split) {
  split_ = split;
  customized_ = true;
  bind_owned();
  customization_ms_ = ms;
}

void Cch::customize(const Graph& graph, const CancelToken& cancel, int threads) {
  Stopwatch watch;
  begin_customization(graph);  // the weight arrays sized, so nothing below allocates them
  const VertexIndex n = vertex_count();
  if (threads <= 0) threads = n >= kCchParallelRanks ? resolve_thread_count(0) : 1;
  const auto m = static_cast<std::size_t>(arc_count());
  const ArcIndex* first = arc_first_.data();
  const VertexIndex* head = arc_head_.data();
  const CsrGraph& forward = graph.forward;

  if (threads == 1) {
    up_weight_.assign(m, kInfinity);
    down_weight_.assign(m, kInfinity);
    up_via_.assign(m, kNoArc);
    down_via_.assign(m, kNoArc);
    const ArcTarget shared{up_weight_.data(), down_weight_.data(), up_via_.data(), down_via_.data(),
                           0};
    apply_original_arcs(forward, 0, n, rank_of_vertex_.data(), input_arc_to_cch_arc_.data(),
                        shared);
    CancelPacer pacer(cancel);
    cancel.throw_if_requested();
    for (VertexIndex u = 0; u < n; ++u) {
      pacer.throw_after(triangle_work(first[u + 1] - first[u]));
      relax_lower_triangles<false>(u, first, head, up_weight_.data(), down_weight_.data(),
                                   encode_middle(u), [&](VertexIndex) { return shared; });
    }
    finish_customization(watch.elapsed_ms(), CustomizationSplit());
    return;
  }

  // Several threads. Filling with +infinity (a fresh hierarchy's arrays are mapped then, by every
  // thread) and the original arcs' pass go by ranges too.
  const ArcTarget shared{up_weight_.data(), down_weight_.data(), up_via_.data(), down_via_.data(),
                         0};
  if (plan_.threads != threads) plan_customization(threads);
  const CustomizationPlan& plan = plan_;
  const auto top_arcs = static_cast<std::size_t>(plan.top_arcs);
  const VertexIndex* top_begin = plan.ranks.data() + plan.first[static_cast<std::size_t>(threads)];
  const VertexIndex* top_end = plan.ranks.data() + plan.ranks.size();
  // Each thread's private copy of the top's arcs, starting from the original arcs' weights.
  std::vector<double> local_up(top_arcs * static_cast<std::size_t>(threads));
  std::vector<double> local_down(local_up.size());
  std::vector<std::int32_t> local_up_via(local_up.size()), local_down_via(local_up.size());
  std::atomic<bool> stop{false};
  prepare_worker_threads(threads);
#pragma omp parallel num_threads(threads)
  {
#ifdef _OPENMP
    const int team = omp_get_num_threads(), member = omp_get_thread_num();
#else
    const int team = 1, member = 0;
#endif
    {
      const std::size_t from = m * static_cast<std::size_t>(member) / team;
      const std::size_t to = m * (static_cast<std::size_t>(member) + 1) / team;
      std::fill(up_weight_.begin() + from, up_weight_.begin() + to, kInfinity);
      std::fill(down_weight_.begin() + from, down_weight_.begin() + to, kInfinity);
      std::fill(up_via_.begin() + from, up_via_.begin() + to, kNoArc);
      std::fill(down_via_.begin() + from, down_via_.begin() + to, kNoArc);
    }
#pragma omp barrier
    apply_original_arcs(forward, static_cast<VertexIndex>(std::int64_t{n} * member / team),
                        static_cast<VertexIndex>(std::int64_t{n} * (member + 1) / team),
                        rank_of_vertex_.data(), input_arc_to_cch_arc_.data(), shared);
#pragma omp barrier
    for (int k = member; k < threads; k += team) {
      const std::size_t base = top_arcs * static_cast<std::size_t>(k);
      for (const VertexIndex* t = top_begin; t != top_end; ++t) {
        const auto from = static_cast<std::size_t>(first[*t]);
        const auto to = static_cast<std::size_t>(first[*t + 1]);
        const std::size_t at = base + from - static_cast<std::size_t>(plan.top_shift[*t]);
        std::copy(up_weight_.begin() + from, up_weight_.begin() + to, local_up.begin() + at);
        std::copy(down_weight_.begin() + from, down_weight_.begin() + to, local_down.begin() + at);
        std::copy(up_via_.begin() + from, up_via_.begin() + to, local_up_via.begin() + at);
        std::copy(down_via_.begin() + from, down_via_.begin() + to, local_down_via.begin() + at);
      }
      // The subtrees' ranks in increasing order: arcs leaving them are this thread's alone, arcs
      // leaving the top go to the private copy.
      const ArcTarget local{local_up.data() + base, local_down.data() + base,
                            local_up_via.data() + base, local_down_via.data() + base, 0};
      const VertexIndex* mine = plan.ranks.data() + plan.first[static_cast<std::size_t>(k)];
      const std::size_t count =
          plan.first[static_cast<std::size_t>(k) + 1] - plan.first[static_cast<std::size_t>(k)];
      CancelPacer pacer(cancel);  // this thread's own; throwing here is not allowed
      for (std::size_t i = 0; i < count; ++i) {
        const VertexIndex u = mine[i];
        if (stop.load(std::memory_order_relaxed)) break;
        if (pacer.stop_after(triangle_work(first[u + 1] - first[u]))) {
          stop.store(true, std::memory_order_relaxed);
          break;
        }
        relax_lower_triangles<false>(u, first, head, up_weight_.data(), down_weight_.data(),
                                     encode_middle(u), [&](VertexIndex v) {
                                       const ArcIndex shift =
                                           plan.top_shift[static_cast<std::size_t>(v)];
                                       if (shift < 0) return shared;
                                       ArcTarget target = local;
                                       target.shift = shift;
                                       return target;
                                     });
      }
    }
  }
  if (stop.load()) throw Cancelled();
  cancel.throw_if_requested();

  // The copies merged: the least weight, on a tie the lowest middle (the highest encoded via).
  // A copy's entry differs from the original arcs' pass only where a middle was strictly
  // cheaper, so an original arc is never replaced on a tie.
  const auto merge = [](double candidate, std::int32_t candidate_via, double& weight,
                        std::int32_t& via) {
    if (candidate < weight || (candidate == weight && via < candidate_via)) {
      weight = candidate;
      via = candidate_via;
    }
  };
  for (const VertexIndex* t = top_begin; t != top_end; ++t) {
    const ArcIndex shift = plan.top_shift[static_cast<std::size_t>(*t)];
    for (ArcIndex vw = first[*t]; vw < first[*t + 1]; ++vw) {
      const auto arc = static_cast<std::size_t>(vw);
      for (std::size_t at = static_cast<std::size_t>(vw - shift); at < local_up.size();
           at += top_arcs) {
        merge(local_up[at], local_up_via[at], up_weight_[arc], up_via_[arc]);
        merge(local_down[at], local_down_via[at], down_weight_[arc], down_via_[arc]);
      }
    }
  }
  // Then the top's ranks, increasing, on this thread: below some subtrees' ranks now and then,
  // so ties go to the lower middle explicitly.
  CancelPacer pacer(cancel);
  for (const VertexIndex* t = top_begin; t != top_end; ++t) {
    pacer.throw_after(triangle_work(first[*t + 1] - first[*t]));
    relax_lower_triangles<true>(*t, first, head, up_weight_.data(), down_weight_.data(),
                                encode_middle(*t), [&](VertexIndex) { return shared; });
  }
  finish_customization(watch.elapsed_ms(), plan.split);
}

void* Cch::WeightMemory::allocate(std::size_t bytes) {
  if (bytes >= kHugeFrom) {
    const std::size_t alignment = t_huge_pages ? kHugePageBytes : 64;
    const std::size_t rounded = (bytes + alignment - 1) / alignment * alignment;
    void* memory = std::aligned_alloc(alignment, rounded);
    if (memory == nullptr) throw std::bad_alloc();
#ifdef __linux__
    if (t_huge_pages) madvise(memory, rounded, MADV_HUGEPAGE);  // ignored where they are off
#endif
    return memory;
  }
  return ::operator new(bytes);
}

void Cch::WeightMemory::free(void* memory, std::size_t bytes) noexcept {
  if (bytes >= kHugeFrom) {
    std::free(memory);
    return;
  }
  ::operator delete(memory);
}

CchWorkspace& Cch::own_workspace() {
  if (workspace_.forward_distance_.size() != static_cast<std::size_t>(vertex_count()))
    workspace_.resize(vertex_count());
  return workspace_;
}

void Cch::require_customized() const {
  if (!customized_)
    throw RoutingError(ErrorKind::kInternal, "contraction hierarchy queried before customization");
}

VertexIndex Cch::checked_rank(VertexIndex vertex) const {
  if (vertex < 0 || vertex >= vertex_count())
    throw RoutingError(ErrorKind::kInvalidParameter,
                       "vertex index " + std::to_string(vertex) + " is not in the hierarchy");
  return rank_[static_cast<std::size_t>(vertex)];
}

// Every upward neighbour of a rank is one of its elimination-tree ancestors, so walking the
// ancestors in increasing rank relaxes each reached rank after all arcs into it: no queue. Each
// reached rank is shown to `visit(x, distance)` with its final distance before its arcs are
// relaxed.
template <typename Visit>
void Cch::walk_up(VertexIndex start, std::vector<double>& distance, const CchSpan<double>& weights,
                  std::vector<std::int32_t>* arc_of, Visit&& visit) const {
  distance[static_cast<std::size_t>(start)] = 0.0;
  for (VertexIndex x = start; x != kNoVertex; x = parent_span_[static_cast<std::size_t>(x)]) {
    const double here = distance[static_cast<std::size_t>(x)];
    if (here == kInfinity) continue;
    visit(x, here);
    for (ArcIndex a = first_[static_cast<std::size_t>(x)];
         a < first_[static_cast<std::size_t>(x) + 1]; ++a) {
      const auto y = static_cast<std::size_t>(head_[static_cast<std::size_t>(a)]);
      const double through = here + weights[static_cast<std::size_t>(a)];
      if (through < distance[y]) {
        distance[y] = through;
        if (arc_of != nullptr) (*arc_of)[y] = a;
      }
    }
  }
}

void Cch::reset_walk(VertexIndex start, std::vector<double>& distance) const {
  for (VertexIndex x = start; x != kNoVertex; x = parent_span_[static_cast<std::size_t>(x)])
    distance[static_cast<std::size_t>(x)] = kInfinity;
}

VertexIndex Cch::search(VertexIndex source_rank, VertexIndex target_rank, CchWorkspace& ws,
                        double* best) const {
  if (ws.forward_distance_.size() != static_cast<std::size_t>(vertex_count()))
    ws.resize(vertex_count());
  const auto nothing = [](VertexIndex, double) {};
  walk_up(source_rank, ws.forward_distance_, up_, &ws.forward_arc_, nothing);
  walk_up(target_rank, ws.backward_distance_, down_, &ws.backward_arc_, nothing);
  // Shortest paths in a CCH go up then down, meeting at a common ancestor (ranks off the target's
  // chain still hold +infinity backward).
  *best = kInfinity;
  VertexIndex meeting = kNoVertex;
  for (VertexIndex x = source_rank; x != kNoVertex; x = parent_span_[static_cast<std::size_t>(x)]) {
    const double total = ws.forward_distance_[static_cast<std::size_t>(x)] +
                         ws.backward_distance_[static_cast<std::size_t>(x)];
    if (total < *best) {
      *best = total;
      meeting = x;
    }
  }
  return meeting;
}

void Cch::clear(VertexIndex source_rank, VertexIndex target_rank, CchWorkspace& ws) const {
  reset_walk(source_rank, ws.forward_distance_);
  reset_walk(target_rank, ws.backward_distance_);
}

double Cch::distance(VertexIndex s, VertexIndex t, CchWorkspace& workspace) const {
  require_customized();
  const VertexIndex source_rank = checked_rank(s);
  const VertexIndex target_rank = checked_rank(t);
  if (s == t) return 0.0;
  double best = kInfinity;
  search(source_rank, target_rank, workspace, &best);
  clear(source_rank, target_rank, workspace);
  return best;
}

std::vector<ArcIndex> Cch::path(VertexIndex s, VertexIndex t, CchWorkspace& workspace) const {
  require_customized();
  const VertexIndex source_rank = checked_rank(s);
  const VertexIndex target_rank = checked_rank(t);
  std::vector<ArcIndex> arcs;
  if (s == t) return arcs;
  double best = kInfinity;
  const VertexIndex meeting = search(source_rank, target_rank, workspace, &best);
  if (meeting == kNoVertex) {
    clear(source_rank, target_rank, workspace);
    return arcs;
  }
  // The arc that set a rank's distance starts at a lower rank that was reached in this search;
  // following them from the meeting rank ends at the source (forward) or the target (backward).
  auto lower_end = [this](ArcIndex arc) {
    const auto after = std::upper_bound(first_.begin(), first_.end(), arc);
    return static_cast<VertexIndex>(after - first_.begin() - 1);
  };
  std::vector<ArcIndex> up_arcs, down_arcs;
  for (VertexIndex x = meeting; x != source_rank;) {
    const ArcIndex arc = workspace.forward_arc_[static_cast<std::size_t>(x)];
    up_arcs.push_back(arc);
    x = lower_end(arc);
  }
  for (VertexIndex x = meeting; x != target_rank;) {
    const ArcIndex arc = workspace.backward_arc_[static_cast<std::size_t>(x)];
    down_arcs.push_back(arc);
    x = lower_end(arc);
  }
  clear(source_rank, target_rank, workspace);
  std::reverse(up_arcs.begin(), up_arcs.end());
  for (ArcIndex arc : up_arcs) unpack(arc, true, arcs);
  for (ArcIndex arc : down_arcs) unpack(arc, false, arcs);
  return arcs;
}

void Cch::unpack(ArcIndex arc, bool upward, std::vector<ArcIndex>& out) const {
  // A shortcut x-y through middle m (m < x < y) stands for two arcs whose lower end is m, so each
  // step of the expansion lowers the ranks involved and it ends. An explicit stack keeps deep
  // hierarchies off the call stack; the second half is pushed first so the first comes out first.
  struct Step {
    ArcIndex arc;
    VertexIndex lower;  // rank of the arc's lower end
    bool upward;
  };
  const auto after = std::upper_bound(first_.begin(), first_.end(), arc);
  std::vector<Step> stack = {{arc, static_cast<VertexIndex>(after - first_.begin() - 1), upward}};
  while (!stack.empty()) {
    const Step step = stack.back();
    stack.pop_back();
    const std::int32_t via =
        (step.upward ? up_via_span_ : down_via_span_)[static_cast<std::size_t>(step.arc)];
    if (via >= 0) {
      out.push_back(via);
      continue;
    }
    if (via == kNoArc)
      throw RoutingError(ErrorKind::kInternal,
                         "contraction hierarchy arc with no origin on a path");
    const VertexIndex middle = decode_middle(via);
    const VertexIndex higher = head_[static_cast<std::size_t>(step.arc)];
    const ArcIndex middle_lower = find_arc(middle, step.lower);
    const ArcIndex middle_higher = find_arc(middle, higher);
    if (step.upward) {  // lower -> middle -> higher
      stack.push_back({middle_higher, middle, true});
      stack.push_back({middle_lower, middle, false});
    } else {  // higher -> middle -> lower
      stack.push_back({middle_lower, middle, true});
      stack.push_back({middle_higher, middle, false});
    }
  }
}

void Cch::one_to_all(VertexIndex s, double* distances, CchWorkspace& workspace) const {
  require_customized();
  const VertexIndex source_rank = checked_rank(s);
  if (workspace.forward_distance_.size() != static_cast<std::size_t>(vertex_count()))
    workspace.resize(vertex_count());
  std::vector<double>& distance_by_rank = workspace.forward_distance_;
  walk_up(source_rank, distance_by_rank, up_, nullptr, [](VertexIndex, double) {});
  // PHAST's sweep: in decreasing rank every higher neighbour is final, and a shortest path's last
  // part goes down, so pulling over downward arcs completes each rank.
  for (VertexIndex r = vertex_count() - 1; r >= 0; --r) {
    double best = distance_by_rank[static_cast<std::size_t>(r)];
    for (ArcIndex a = first_[static_cast<std::size_t>(r)];
         a < first_[static_cast<std::size_t>(r) + 1]; ++a)
      best = std::min(
          best, distance_by_rank[static_cast<std::size_t>(head_[static_cast<std::size_t>(a)])] +
                    down_[static_cast<std::size_t>(a)]);
    distance_by_rank[static_cast<std::size_t>(r)] = best;
    distances[at_rank_[static_cast<std::size_t>(r)]] = best;
  }
  std::fill(distance_by_rank.begin(), distance_by_rank.end(), kInfinity);
}

void Cch::start_settling(VertexIndex s, CchWorkspace& workspace) const {
  require_customized();
  const VertexIndex source_rank = checked_rank(s);
  if (workspace.is_settled_.size() != static_cast<std::size_t>(vertex_count()))
    workspace.resize(vertex_count());
  walk_up(source_rank, workspace.forward_distance_, up_, nullptr, [](VertexIndex, double) {});
}

double Cch::settled_distance(VertexIndex v, CchWorkspace& workspace) const {
  const VertexIndex rank = checked_rank(v);
  std::vector<char>& is_settled = workspace.is_settled_;
  std::vector<double>& settled = workspace.settled_;
  if (is_settled[static_cast<std::size_t>(rank)]) return settled[static_cast<std::size_t>(rank)];
  // A rank's distance depends on its upward neighbours', all of them its elimination-tree
  // ancestors: the ranks up its parent chain, settled from the top down. Whole chains are settled
  // up to the root, so a settled rank's ancestors are settled too and the walk stops at the first.
  std::vector<VertexIndex>& chain = workspace.settle_chain_;
  chain.clear();
  for (VertexIndex x = rank; x != kNoVertex && !is_settled[static_cast<std::size_t>(x)];
       x = parent_span_[static_cast<std::size_t>(x)])
    chain.push_back(x);
  for (auto at = chain.rbegin(); at != chain.rend(); ++at) {
    const auto x = static_cast<std::size_t>(*at);
    double best = workspace.forward_distance_[x];
    for (ArcIndex a = first_[x]; a < first_[x + 1]; ++a)
      best = std::min(best, settled[static_cast<std::size_t>(head_[static_cast<std::size_t>(a)])] +
                                down_[static_cast<std::size_t>(a)]);
    settled[x] = best;
    is_settled[x] = 1;
    workspace.settled_ranks_.push_back(*at);
    workspace.settled_arcs_ += first_[x + 1] - first_[x];
  }
  return settled[static_cast<std::size_t>(rank)];
}

void Cch::finish_settling(VertexIndex s, CchWorkspace& workspace) const {
  reset_walk(checked_rank(s), workspace.forward_distance_);
  for (VertexIndex r : workspace.settled_ranks_) {
    workspace.is_settled_[static_cast<std::size_t>(r)] = 0;
    workspace.settled_[static_cast<std::size_t>(r)] = kInfinity;
  }
  workspace.settled_ranks_.clear();
  workspace.settled_arcs_ = 0;
}

void Cch::upward_search(VertexIndex s, std::vector<std::pair<VertexIndex, double>>& reached,
                        CchWorkspace& workspace) const {
  require_customized();
  const VertexIndex source_rank = checked_rank(s);
  if (workspace.forward_distance_.size() != static_cast<std::size_t>(vertex_count()))
    workspace.resize(vertex_count());
  reached.clear();
  walk_up(source_rank, workspace.forward_distance_, up_, nullptr,
          [&](VertexIndex x, double here) { reached.emplace_back(x, here); });
  reset_walk(source_rank, workspace.forward_distance_);
}

void Cch::fill_buckets(const VertexIndex* targets, int target_count, CchBuckets& buckets,
                       CchWorkspace& ws) const {
  require_customized();
  const VertexIndex n = vertex_count();
  if (ws.backward_distance_.size() != static_cast<std::size_t>(n)) ws.resize(n);
  // Each target's ancestors with their distance down to it, gathered, then sorted by rank.
  struct Entry {
    VertexIndex rank;
    std::int32_t target;
    double distance;
  };
  std::vector<Entry> entries;
  for (int j = 0; j < target_count; ++j) {
    const VertexIndex target_rank = checked_rank(targets[j]);
    walk_up(target_rank, ws.backward_distance_, down_, nullptr, [&](VertexIndex x, double here) {
      entries.push_back({x, j, here});
    });
    reset_walk(target_rank, ws.backward_distance_);
  }
  buckets.first_.assign(static_cast<std::size_t>(n) + 1, 0);
  for (const Entry& e : entries) ++buckets.first_[static_cast<std::size_t>(e.rank) + 1];
  for (VertexIndex r = 0; r < n; ++r)
    buckets.first_[static_cast<std::size_t>(r) + 1] += buckets.first_[static_cast<std::size_t>(r)];
  buckets.target_.resize(entries.size());
  buckets.distance_.resize(entries.size());
  std::vector<std::int64_t> fill(buckets.first_.begin(), buckets.first_.end() - 1);
  for (const Entry& e : entries) {
    const auto at = static_cast<std::size_t>(fill[static_cast<std::size_t>(e.rank)]++);
    buckets.target_[at] = e.target;
    buckets.distance_[at] = e.distance;
  }
  buckets.target_count_ = target_count;
}

void Cch::row_from_buckets(VertexIndex s, const CchBuckets& buckets, double* row,
                           CchWorkspace& ws) const {
  require_customized();
  const VertexIndex source_rank = checked_rank(s);
  if (ws.forward_distance_.size() != static_cast<std::size_t>(vertex_count()))
    ws.resize(vertex_count());
  std::fill(row, row + buckets.target_count_, kInfinity);
  walk_up(source_rank, ws.forward_distance_, up_, nullptr, [&](VertexIndex x, double here) {
    for (std::int64_t e = buckets.first_[static_cast<std::size_t>(x)];
         e < buckets.first_[static_cast<std::size_t>(x) + 1]; ++e) {
      double& cell = row[buckets.target_[static_cast<std::size_t>(e)]];
      cell = std::min(cell, here + buckets.distance_[static_cast<std::size_t>(e)]);
    }
  });
  reset_walk(source_rank, ws.forward_distance_);
}

std::size_t Cch::memory_bytes() const {
  auto bytes = [](const auto& span) { return span.count * sizeof(span[0]); };
  return bytes(at_rank_) + bytes(rank_) + bytes(parent_span_) + bytes(first_) + bytes(head_) +
         bytes(up_) + bytes(down_) + bytes(up_via_span_) + bytes(down_via_span_) +
         bytes(input_arc_span_);
}

namespace {

// The image: this header, then the arrays in the order below, each starting 8-byte aligned.
struct CchImageHeader {
  std::uint64_t magic;
  std::uint32_t version;
  std::int32_t height;
  std::uint64_t vertices, arcs, input_arcs, fingerprint;
  double build_ms, customization_ms;
};
constexpr std::uint64_t kCchImageMagic = 0x31686363726f7267ULL;  // "grorcch1"
constexpr std::uint32_t kCchImageVersion = 1;

std::size_t aligned(std::size_t bytes) {
  return (bytes + 7) & ~std::size_t{7};
}

// The arrays' sizes in elements and bytes per element, in image order.
std::vector<std::pair<std::size_t, std::size_t>> image_layout(std::size_t n, std::size_t m,
                                                              std::size_t input_arcs) {
  return {{n, sizeof(VertexIndex)},      {n, sizeof(VertexIndex)},  {n, sizeof(VertexIndex)},
          {n + 1, sizeof(ArcIndex)},     {m, sizeof(VertexIndex)},  {m, sizeof(double)},
          {m, sizeof(double)},           {m, sizeof(std::int32_t)}, {m, sizeof(std::int32_t)},
          {input_arcs, sizeof(ArcIndex)}};
}

// The topology image: the same header, then vertex_at_rank, rank_of_vertex, parent, arc_first
// and arc_head. The input arcs' places are left out: they depend on the order of each vertex's
// arcs in the CSR, which an UPDATE changes (it moves the row) without changing the topology.
constexpr std::uint64_t kCchTopologyMagic = 0x31706f74726f7267ULL;  // "grortop1"

std::vector<std::pair<std::size_t, std::size_t>> topology_layout(std::size_t n, std::size_t m) {
  return {{n, sizeof(VertexIndex)},
          {n, sizeof(VertexIndex)},
          {n, sizeof(VertexIndex)},
          {n + 1, sizeof(ArcIndex)},
          {m, sizeof(VertexIndex)}};
}

using Layout = std::vector<std::pair<std::size_t, std::size_t>>;

// The bytes of an image with arrays of `layout` (elements, bytes each).
std::size_t flat_bytes(const Layout& layout) {
  std::size_t total = aligned(sizeof(CchImageHeader));
  for (const auto& [count, size] : layout) total += aligned(count * size);
  return total;
}

// Reads an image's header into `header` after checking its magic (`wrong_kind` says what it is
// not), version and size against `layout_of(header)` (`invalid(what)` makes each error); returns
// where its arrays start, in layout order.
template <typename LayoutOf, typename Invalid>
std::vector<const char*> read_flat(const void* image, std::size_t bytes, std::uint64_t magic,
                                   const char* wrong_kind, LayoutOf layout_of, Invalid invalid,
                                   CchImageHeader* header, Layout* layout) {
  if (bytes < sizeof(CchImageHeader)) throw invalid("too small");
  std::memcpy(header, image, sizeof *header);
  if (header->magic != magic || header->version != kCchImageVersion) throw invalid(wrong_kind);
  *layout = layout_of(*header);
  if (flat_bytes(*layout) != bytes) throw invalid("its size does not match its header");
  std::vector<const char*> arrays;
  const char* at = static_cast<const char*>(image) + aligned(sizeof(CchImageHeader));
  for (const auto& [count, size] : *layout) {
    arrays.push_back(at);
    at += aligned(count * size);
  }
  return arrays;
}

}  // namespace

std::size_t Cch::topology_image_bytes() const {
  return flat_bytes(topology_layout(static_cast<std::size_t>(vertex_count()),
                                    static_cast<std::size_t>(arc_count())));
}

void Cch::write_topology_image(void* out) const {
  const void* arrays[] = {at_rank_.data, rank_.data, parent_span_.data, first_.data, head_.data};
  write_flat(out, kCchTopologyMagic,
             topology_layout(static_cast<std::size_t>(vertex_count()),
                             static_cast<std::size_t>(arc_count())),
             arrays);
}

Cch Cch::from_topology_image(const void* image, std::size_t bytes, const Graph& graph) {
  Stopwatch watch;
  auto invalid = [](const char* what) {
    return RoutingError(ErrorKind::kInvalidParameter,
                        std::string("contraction hierarchy topology image: ") + what);
  };
  CchImageHeader header;
  Layout layout;
  const std::vector<const char*> arrays = read_flat(
      image, bytes, kCchTopologyMagic, "not a topology image of this version",
      [](const CchImageHeader& h) { return topology_layout(h.vertices, h.arcs); }, invalid, &header,
      &layout);
  if (header.vertices != static_cast<std::uint64_t>(graph.vertex_count()))
    throw invalid("made for another number of vertices than the graph's");
  auto next = [&](auto& vector, std::size_t k) {
    using T = typename std::decay_t<decltype(vector)>::value_type;
    const T* data = reinterpret_cast<const T*>(arrays[k]);
    vector.assign(data, data + layout[k].first);
  };
  Cch cch;
  next(cch.vertex_at_rank_, 0);
  next(cch.rank_of_vertex_, 1);
  next(cch.parent_, 2);
  next(cch.arc_first_, 3);
  next(cch.arc_head_, 4);
  cch.elimination_tree_height_ = header.height;
  // Every arc of the graph must lie on a hierarchy arc (find_arc throws kInternal otherwise).
  try {
    cch.map_input_arcs(graph);
  } catch (const RoutingError&) {
    throw invalid("the graph has an arc the hierarchy lacks (another topology)");
  }
  cch.workspace_.resize(graph.vertex_count());
  cch.build_ms_ = watch.elapsed_ms();
  return cch;
}

std::size_t Cch::image_bytes() const {
  return flat_bytes(image_layout(static_cast<std::size_t>(vertex_count()),
                                 static_cast<std::size_t>(arc_count()), input_arc_span_.count));
}

void Cch::write_image(void* out) const {
  require_customized();
  const void* arrays[] = {
      at_rank_.data, rank_.data, parent_span_.data, first_.data,         head_.data,
      up_.data,      down_.data, up_via_span_.data, down_via_span_.data, input_arc_span_.data};
  write_flat(out, kCchImageMagic,
             image_layout(static_cast<std::size_t>(vertex_count()),
                          static_cast<std::size_t>(arc_count()), input_arc_span_.count),
             arrays);
}

void Cch::write_flat(void* out, std::uint64_t magic,
                     const std::vector<std::pair<std::size_t, std::size_t>>& layout,
                     const void* const* arrays) const {
  auto* base = static_cast<char*>(out);
  CchImageHeader header{};
  header.magic = magic;
  header.version = kCchImageVersion;
  header.height = elimination_tree_height_;
  header.vertices = static_cast<std::uint64_t>(vertex_count());
  header.arcs = static_cast<std::uint64_t>(arc_count());
  header.input_arcs = input_arc_span_.count;
  header.fingerprint = fingerprint_;
  header.build_ms = build_ms_;
  header.customization_ms = customization_ms_;
  std::memcpy(base, &header, sizeof header);
  std::size_t at = aligned(sizeof header);
  for (std::size_t k = 0; k < layout.size(); ++k) {
    const std::size_t bytes = layout[k].first * layout[k].second;
    if (bytes > 0) std::memcpy(base + at, arrays[k], bytes);
    at += aligned(bytes);
  }
}

Cch Cch::view_image(const void* image, std::size_t bytes, const Graph& graph) {
  auto invalid = [](const char* what) {
    return RoutingError(ErrorKind::kInternal, std::string("contraction hierarchy image: ") + what);
  };
  if (bytes < sizeof(CchImageHeader) || reinterpret_cast<std::uintptr_t>(image) % 8 != 0)
    throw invalid("too small or misaligned");
  CchImageHeader header;
  Layout layout;
  const std::vector<const char*> arrays = read_flat(
      image, bytes, kCchImageMagic, "not an image of this version",
      [](const CchImageHeader& h) { return image_layout(h.vertices, h.arcs, h.input_arcs); },
      invalid, &header, &layout);
  Cch cch;
  auto next = [&](auto& span, std::size_t k) {
    span.data = reinterpret_cast<decltype(span.data)>(arrays[k]);
    span.count = layout[k].first;
  };
  next(cch.at_rank_, 0);
  next(cch.rank_, 1);
  next(cch.parent_span_, 2);
  next(cch.first_, 3);
  next(cch.head_, 4);
  next(cch.up_, 5);
  next(cch.down_, 6);
  next(cch.up_via_span_, 7);
  next(cch.down_via_span_, 8);
  next(cch.input_arc_span_, 9);
  cch.elimination_tree_height_ = header.height;
  cch.fingerprint_ = header.fingerprint;
  cch.build_ms_ = header.build_ms;
  cch.customization_ms_ = header.customization_ms;
  cch.customized_ = true;
  cch.is_view_ = true;
  if (!cch.same_topology(graph))
    throw invalid("built for another graph than the one it is used with");
  return cch;
}

Cch make_road_index(const Graph& graph, const CancelToken& cancel, int threads, std::string* note) {
  Stopwatch watch;
  std::vector<VertexIndex> order = cch_order(graph, nullptr, nullptr, cancel);
  const double order_ms = watch.elapsed_ms();
  Cch cch(graph, std::move(order), cancel);
  cch.customize(graph, cancel, threads);
  char text[200];
  std::snprintf(text, sizeof text,
                "road index built by this call: order %.0f ms, hierarchy %.0f ms, customization "
                "%.0f ms, %.1f MB",
                order_ms, cch.build_ms(), cch.customization_ms(),
                static_cast<double>(cch.memory_bytes()) / 1e6);
  if (note != nullptr) *note = text;
  return cch;
}

double index_path(const Cch& cch, const Graph& graph, VertexIndex s, VertexIndex t,
                  CchWorkspace& workspace, std::vector<ArcIndex>& arcs) {
  arcs = cch.path(s, t, workspace);
  if (arcs.empty()) return s == t ? 0.0 : kInfinity;
  double cost = 0.0;
  for (ArcIndex a : arcs) cost += graph.forward.weights[static_cast<std::size_t>(a)];
  return cost;
}

}  // namespace gpu_routing
