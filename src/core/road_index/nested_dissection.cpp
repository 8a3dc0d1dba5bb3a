#include "road_index/nested_dissection.hpp"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <exception>
#include <limits>
#include <mutex>
#include <utility>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "base/parallel.hpp"
#include "road_index/undirected_topology.hpp"

namespace gpu_routing {

using detail::undirected_topology;
using detail::UndirectedTopology;

namespace {

// Recursive bisection. Every vertex carries the label of the part it is in; a part's induced
// subgraph is then "neighbours with the same label", with no copies of the graph. Separator
// vertices leave every part (kOrdered) as soon as they are chosen.
//
// On several threads the two sides of a bisection (and the components of a disconnected part)
// are ordered as OpenMP tasks, each into an order of its own that the parent joins in the
// sequential order (side A's, side B's, then the separator), so the result is the same on any
// number of threads. The tasks share label_, visited_ and local_ without locks: a part's vertices
// have neighbours only inside the part or among separators ordered before it was made (a
// separator cuts every edge between its sides, and components share none), so a task writes only
// its own vertices' entries and reads no entry another task writes. Labels and visit stamps are
// compared for equality only; they come from atomic counters. The flow graph of a bisection is
// per thread (no task starts while one is being cut).
class NestedDissection {
 public:
  NestedDissection(const UndirectedTopology& topology, const double* x, const double* y,
                   const CancelToken& cancel, int threads)
      : topology_(topology),
        x_(x),
        y_(y),
        cancel_(cancel),
        threads_(resolve_thread_count(threads)),
        label_(static_cast<std::size_t>(topology.vertex_count()), 0),
        visited_(static_cast<std::size_t>(topology.vertex_count()), 0),
        local_(x != nullptr ? static_cast<std::size_t>(topology.vertex_count()) : 0, 0),
        flow_(static_cast<std::size_t>(threads_)) {}

  std::vector<VertexIndex> run() {
    std::vector<VertexIndex> all(static_cast<std::size_t>(topology_.vertex_count()));
    for (std::size_t v = 0; v < all.size(); ++v) all[v] = static_cast<VertexIndex>(v);
    std::vector<VertexIndex> order;
    if (threads_ == 1 || all.size() < kTaskPartSize) {
      threads_ = 1;
      guarded([&] { order_part(std::move(all), 0, order); });
    } else {
      prepare_worker_threads(threads_);
#pragma omp parallel num_threads(threads_)
#pragma omp single
      guarded([&] { order_part(std::move(all), 0, order); });
    }
    if (failure_) std::rethrow_exception(failure_);
    return order;
  }

 private:
  static constexpr std::int32_t kOrdered = -1;
  // Parts at least this large are ordered as tasks of their own when there are several threads.
  static constexpr std::size_t kTaskPartSize = 2048;
  // Parts larger than this give their flow graph's memory back after their bisection (New York's
  // whole graph: about 38 MB of flow graph; this many vertices about 10 MB).
  static constexpr std::size_t kKeptFlowGraphVertices = 65536;

  bool in_part(VertexIndex v, std::int32_t label) const {
    return label_[static_cast<std::size_t>(v)] == label;
  }

  // Runs fn(), keeping the first exception (a cancel) for run() to rethrow: none may leave a task.
  template <typename Fn>
  void guarded(Fn&& fn) {
    if (failed_.load(std::memory_order_relaxed)) return;
    try {
      fn();
    } catch (...) {
      std::lock_guard<std::mutex> lock(failure_mutex_);
      if (!failure_) failure_ = std::current_exception();
      failed_.store(true, std::memory_order_relaxed);
    }
  }

  // Orders each (part, label) into its own order, as tasks where there are several threads and
  // they are large enough (the last on this thread), then joins the orders in the given sequence
  // onto `order`.
  void order_parts(std::vector<std::vector<VertexIndex>>& parts,
                   const std::vector<std::int32_t>& labels, std::vector<VertexIndex>& order) {
    std::vector<std::vector<VertexIndex>> orders(parts.size());
    for (std::size_t i = 0; i < parts.size(); ++i) {
      if (threads_ > 1 && parts[i].size() >= kTaskPartSize && i + 1 < parts.size()) {
        std::vector<VertexIndex>* part = &parts[i];
        std::vector<VertexIndex>* part_order = &orders[i];
        const std::int32_t label = labels[i];
#pragma omp task firstprivate(part, part_order, label)
        guarded([&] { order_part(std::move(*part), label, *part_order); });
      } else {
        guarded([&] { order_part(std::move(parts[i]), labels[i], orders[i]); });
      }
    }
#pragma omp taskwait
    for (std::vector<VertexIndex>& part_order : orders)
      order.insert(order.end(), part_order.begin(), part_order.end());
  }

  // Appends the part's vertices to `order`: its sub-parts first, its separator after them.
  void order_part(std::vector<VertexIndex> part, std::int32_t label,
                  std::vector<VertexIndex>& order) {
    if (part.empty()) return;
    cancel_.throw_if_requested();
    if (part.size() <= static_cast<std::size_t>(kCchLeafSize)) {
      order_leaf(part, label, order);
      return;
    }
    std::vector<std::vector<VertexIndex>> components = connected_components(part, label);
    if (components.size() > 1) {
      // Disconnected parts share no arc: each is ordered on its own, with no separator.
      std::vector<std::int32_t> labels;
      for (auto& component : components) {
        const std::int32_t component_label = new_label();
        for (VertexIndex v : component) label_[static_cast<std::size_t>(v)] = component_label;
        labels.push_back(component_label);
      }
      part.clear();
      part.shrink_to_fit();
      order_parts(components, labels, order);
      return;
    }
    components.clear();

    const std::int32_t label_a = new_label();
    const std::int32_t label_b = new_label();
    std::vector<VertexIndex> separator;
    if (x_ == nullptr || !flow_bisection(part, label, label_a, label_b, separator))
      median_bisection(part, label, label_a, label_b, separator);
    for (VertexIndex v : separator) label_[static_cast<std::size_t>(v)] = kOrdered;
    // A large part's flow graph is given back: kept, every thread would hold the largest it had
    // cut until the order is done (the first thread the whole graph's, others the halves' and
    // quarters'); the next part, at most half as large, allocates its own.
    if (part.size() > kKeptFlowGraphVertices) flow_graph() = FlowGraph();

    std::vector<std::vector<VertexIndex>> sides(2);
    for (std::size_t i = 0; i < part.size(); ++i) {
      const VertexIndex v = part[i];
      if (in_part(v, label_a)) sides[0].push_back(v);
      if (in_part(v, label_b)) sides[1].push_back(v);
    }
    part.clear();
    part.shrink_to_fit();
    order_parts(sides, {label_a, label_b}, order);
    order.insert(order.end(), separator.begin(), separator.end());
  }

  std::int32_t new_label() {
    return next_label_.fetch_add(1, std::memory_order_relaxed);
  }
  std::int32_t new_stamp() {
    return next_stamp_.fetch_add(1, std::memory_order_relaxed);
  }

  // The flow graph's arrays of the thread running this bisection.
  struct FlowGraph;
  FlowGraph& flow_graph() {
#ifdef _OPENMP
    if (threads_ > 1) return flow_[static_cast<std::size_t>(omp_get_thread_num())];
#endif
    return flow_[0];
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
    FlowGraph& f = flow_graph();
    build_flow_graph(part, label, f);
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
      const std::int32_t cut = min_vertex_cut(terminal, best_cut, side, f);
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
  void build_flow_graph(const std::vector<VertexIndex>& part, std::int32_t label, FlowGraph& f) {
    const auto m = static_cast<std::int32_t>(part.size());
    for (std::int32_t i = 0; i < m; ++i)
      local_[static_cast<std::size_t>(part[static_cast<std::size_t>(i)])] = i;
    const std::int32_t nodes = 2 * m;
    f.first.assign(static_cast<std::size_t>(nodes) + 1, 0);
    for (std::int32_t i = 0; i < m; ++i) {
      const VertexIndex v = part[static_cast<std::size_t>(i)];
      const auto degree = static_cast<std::int32_t>(std::count_if(
          topology_.begin(v), topology_.end(v), [&](VertexIndex w) { return in_part(w, label); }));
      // in(i): to out(i) and from each neighbour's out; out(i): the same mirrored.
      f.first[static_cast<std::size_t>(2 * i) + 1] = 1 + degree;
      f.first[static_cast<std::size_t>(2 * i) + 2] = 1 + degree;
    }
    for (std::int32_t u = 0; u < nodes; ++u)
      f.first[static_cast<std::size_t>(u) + 1] += f.first[static_cast<std::size_t>(u)];
    const auto arcs = static_cast<std::size_t>(f.first[static_cast<std::size_t>(nodes)]);
    f.head.resize(arcs);
    f.reverse.resize(arcs);
    f.base_capacity.resize(arcs);
    std::vector<std::int32_t> fill(f.first.begin(), f.first.end() - 1);
    auto add = [&](std::int32_t from, std::int32_t to, std::int32_t capacity) {
      const std::int32_t a = fill[static_cast<std::size_t>(from)]++;
      const std::int32_t b = fill[static_cast<std::size_t>(to)]++;
      f.head[static_cast<std::size_t>(a)] = to;
      f.head[static_cast<std::size_t>(b)] = from;
      f.reverse[static_cast<std::size_t>(a)] = b;
      f.reverse[static_cast<std::size_t>(b)] = a;
      f.base_capacity[static_cast<std::size_t>(a)] = capacity;
      f.base_capacity[static_cast<std::size_t>(b)] = 0;
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
                              std::vector<std::int8_t>& side, FlowGraph& f) {
    const auto m = static_cast<std::int32_t>(terminal.size());
    const std::int32_t nodes = 2 * m;
    auto kind = [&](std::int32_t node) { return terminal[static_cast<std::size_t>(node / 2)]; };
    std::vector<std::int32_t> seeds, sink_seeds;  // out(s) / in(t) on the terminal sets' borders
    for (std::int32_t i = 0; i < m; ++i) {
      const std::int8_t t = terminal[static_cast<std::size_t>(i)];
      if (t == kInner) continue;
      bool border = false;
      for (std::int32_t a = f.first[static_cast<std::size_t>(2 * i) + 1];
           a < f.first[static_cast<std::size_t>(2 * i) + 2]; ++a) {
        if (f.base_capacity[static_cast<std::size_t>(a)] == 0) continue;  // to in(i)
        const std::int8_t other = kind(f.head[static_cast<std::size_t>(a)]);
        if (other == -t) return -1;
        if (other == kInner) border = true;
      }
      if (border) (t == kSource ? seeds : sink_seeds).push_back(t == kSource ? 2 * i + 1 : 2 * i);
    }
    f.capacity = f.base_capacity;
    auto capacity = [&](std::int32_t a) -> std::int32_t& {
      return f.capacity[static_cast<std::size_t>(a)];
    };
    auto head = [&](std::int32_t a) { return f.head[static_cast<std::size_t>(a)]; };
    auto level = [&](std::int32_t node) -> std::int32_t& {
      return f.level[static_cast<std::size_t>(node)];
    };
    f.level.resize(static_cast<std::size_t>(nodes));
    f.next_arc.resize(static_cast<std::size_t>(nodes));
    std::vector<std::int32_t> queue;
    queue.reserve(static_cast<std::size_t>(nodes));
    std::vector<std::int32_t> path;
    std::int32_t flow = 0;
    while (true) {
      cancel_.throw_if_requested();
      // Levels by breadth-first search in the residual graph (sink vertices reached, not entered).
      std::fill(f.level.begin(), f.level.end(), -1);
      queue = seeds;
      for (std::int32_t u : seeds) level(u) = 0;
      bool sink_found = false;
      for (std::size_t q = 0; q < queue.size(); ++q) {
        const std::int32_t u = queue[q];
        for (std::int32_t a = f.first[static_cast<std::size_t>(u)];
             a < f.first[static_cast<std::size_t>(u) + 1]; ++a) {
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
      std::copy(f.first.begin(), f.first.end() - 1, f.next_arc.begin());
      for (std::int32_t seed : seeds) {
        if (level(seed) != 0) continue;
        path.clear();
        std::int32_t u = seed;
        while (true) {
          if (kind(u) == kSink) {
            for (std::int32_t a : path) {
              --capacity(a);
              ++capacity(f.reverse[static_cast<std::size_t>(a)]);
            }
            if (++flow > bound) return -1;
            path.clear();
            u = seed;
            continue;
          }
          std::int32_t& a = f.next_arc[static_cast<std::size_t>(u)];
          const std::int32_t end = f.first[static_cast<std::size_t>(u) + 1];
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
          u = head(f.reverse[static_cast<std::size_t>(back)]);
          ++f.next_arc[static_cast<std::size_t>(u)];
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
    std::fill(f.level.begin(), f.level.end(), -1);
    queue = sink_seeds;
    for (std::int32_t w : sink_seeds) level(w) = 0;
    for (std::size_t q = 0; q < queue.size(); ++q) {
      const std::int32_t w = queue[q];
      for (std::int32_t a = f.first[static_cast<std::size_t>(w)];
           a < f.first[static_cast<std::size_t>(w) + 1]; ++a) {
        const std::int32_t u = head(a);
        if (capacity(f.reverse[static_cast<std::size_t>(a)]) <= 0 || level(u) >= 0 ||
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
  void order_leaf(std::vector<VertexIndex>& part, std::int32_t label,
                  std::vector<VertexIndex>& order) {
    std::vector<std::pair<std::size_t, VertexIndex>> by_degree;
    by_degree.reserve(part.size());
    for (VertexIndex v : part) {
      const auto degree = static_cast<std::size_t>(std::count_if(
          topology_.begin(v), topology_.end(v), [&](VertexIndex w) { return in_part(w, label); }));
      by_degree.emplace_back(degree, v);
    }
    std::sort(by_degree.begin(), by_degree.end());
    for (const auto& entry : by_degree) {
      order.push_back(entry.second);
      label_[static_cast<std::size_t>(entry.second)] = kOrdered;
    }
  }

  // The vertices of the part reachable from `start`, in breadth-first order, marked in visited_
  // with `stamp` (a new one where none is given).
  std::vector<VertexIndex> breadth_first(VertexIndex start, std::int32_t label,
                                         std::int32_t stamp = 0) {
    const std::int32_t visit_stamp = stamp != 0 ? stamp : new_stamp();
    std::vector<VertexIndex> queue = {start};
    visited_[static_cast<std::size_t>(start)] = visit_stamp;
    for (std::size_t head = 0; head < queue.size(); ++head) {
      const VertexIndex v = queue[head];
      for (const VertexIndex* w = topology_.begin(v); w != topology_.end(v); ++w) {
        auto& seen = visited_[static_cast<std::size_t>(*w)];
        if (seen == visit_stamp || !in_part(*w, label)) continue;
        seen = visit_stamp;
        queue.push_back(*w);
      }
    }
    return queue;
  }

  std::vector<std::vector<VertexIndex>> connected_components(const std::vector<VertexIndex>& part,
                                                             std::int32_t label) {
    std::vector<std::vector<VertexIndex>> components;
    // Disconnected: one stamp for every search, so that no vertex starts a second component.
    const std::int32_t stamp = new_stamp();
    components.push_back(breadth_first(part.front(), label, stamp));
    if (components.front().size() == part.size()) return components;
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
  int threads_;
  std::vector<std::int32_t> label_;
  std::vector<std::int32_t> visited_;
  std::atomic<std::int32_t> next_stamp_{1};
  std::atomic<std::int32_t> next_label_{1};
  std::atomic<bool> failed_{false};
  std::mutex failure_mutex_;
  std::exception_ptr failure_;

  // Flow bisection (see build_flow_graph): the part's local index of each vertex, and the split
  // graph in CSR form, reused from part to part (one a thread).
  static constexpr std::int8_t kInner = 0, kSource = 1, kSink = -1;
  static constexpr std::int8_t kSideA = 0, kSideB = 1, kSeparator = 2;
  static constexpr std::int32_t kUnbounded = std::numeric_limits<std::int32_t>::max() / 2;
  std::vector<std::int32_t> local_;
  struct FlowGraph {
    std::vector<std::int32_t> first;
    std::vector<std::int32_t> head;
    std::vector<std::int32_t> reverse;
    std::vector<std::int32_t> base_capacity;
    std::vector<std::int32_t> capacity;
    std::vector<std::int32_t> level;
    std::vector<std::int32_t> next_arc;
  };
  std::vector<FlowGraph> flow_;
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
                                   const CancelToken& cancel, int threads) {
  if ((x == nullptr) != (y == nullptr))
    throw RoutingError(ErrorKind::kInvalidParameter,
                       "a contraction order takes both coordinates or neither");
  const UndirectedTopology topology = undirected_topology(graph.forward);
  if (x != nullptr) return NestedDissection(topology, x, y, cancel, threads).run();
  std::vector<double> landmark_x, landmark_y;
  landmark_coordinates(topology, landmark_x, landmark_y, cancel);
  return NestedDissection(topology, landmark_x.data(), landmark_y.data(), cancel, threads).run();
}

}  // namespace gpu_routing
