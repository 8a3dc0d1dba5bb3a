#include "choice/cost_model.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <sstream>
#include <tuple>

#include "cpu/cch_engine_policy.hpp"
#include "road_index/cch.hpp"
#include "base/predecessors.hpp"

namespace gpu_routing {

namespace {
// The CPU's many-to-many by buckets (cpu/cch_engine_policy.hpp): each target's and each
// source's upward walk, kBucketWalkQueries of a one-to-one query (cpu_cch_query_us: two walks
// and their meeting, calibrated on a grid, whose walks are longer than a road network's), and
// per cell of the matrix kBucketCellSweeps arcs of a PHAST sweep (cpu_cch_sweep_ns): the
// busiest ranks' columns, read in vectorized passes, and the entries scattered below them. The
// cost grows with the targets without a cliff now that the busiest ranks are columns (scattered
// entries alone missed the cache past a few thousand targets: 364 ns a cell at 10,000 on the
// H200 host). Fitted on New York with calibrated speeds on the 2-core machine (1000, 3000 and
// 10,000 targets in SQL: compute 17, 188 and 1402 ms; this gives 33, 130 and 1332).
constexpr double kBucketWalkQueries = 0.1;
constexpr double kBucketCellSweeps = 12;

// Every speed with its stored name, so that serialize(), parse() and values() cannot disagree.
template <typename Speeds, typename Fn>
void for_each_speed(Speeds& s, Fn&& fn) {
  fn("cpu_dijkstra_vertex_ns", s.cpu_dijkstra_vertex_ns);
  fn("cpu_dijkstra_arc_ns", s.cpu_dijkstra_arc_ns);
  fn("cpu_dijkstra_far_factor", s.cpu_dijkstra_far_factor);
  fn("cpu_parallel_efficiency", s.cpu_parallel_efficiency);
  fn("cpu_parallel_efficiency_small", s.cpu_parallel_efficiency_small);
  fn("cpu_dijkstra_small_factor", s.cpu_dijkstra_small_factor);
  fn("cpu_dijkstra_dense_factor", s.cpu_dijkstra_dense_factor);
  fn("cpu_dijkstra_dense_large_factor", s.cpu_dijkstra_dense_large_factor);
  fn("cpu_fw_ns", s.cpu_fw_ns);
  fn("cpu_fw_large_ns", s.cpu_fw_large_ns);
  fn("cpu_cch_sweep_ns", s.cpu_cch_sweep_ns);
  fn("cpu_cch_settle_ns", s.cpu_cch_settle_ns);
  fn("cpu_cch_query_us", s.cpu_cch_query_us);
  fn("cpu_cch_query_vertices", s.cpu_cch_query_vertices);
  fn("cpu_cch_build_ns", s.cpu_cch_build_ns);
  fn("cpu_predecessor_ns", s.cpu_predecessor_ns);
  fn("gpu_context_ms", s.gpu_context_ms);
  fn("gpu_upload_ns_per_byte", s.gpu_upload_ns_per_byte);
  fn("gpu_download_ns_per_byte", s.gpu_download_ns_per_byte);
  fn("gpu_call_ms", s.gpu_call_ms);
  fn("gpu_service_call_ms", s.gpu_service_call_ms);
  fn("gpu_single_local_ns", s.gpu_single_local_ns);
  fn("gpu_single_far_ns", s.gpu_single_far_ns);
  fn("gpu_many_local_ns", s.gpu_many_local_ns);
  fn("gpu_many_far_ns", s.gpu_many_far_ns);
  fn("gpu_many_source_us", s.gpu_many_source_us);
  fn("gpu_multi_source_ns", s.gpu_multi_source_ns);
  fn("gpu_fw_ns", s.gpu_fw_ns);
  fn("gpu_cch_sweep_ns", s.gpu_cch_sweep_ns);
  fn("emit_row_ns", s.emit_row_ns);
  fn("cpu_row_cell_ns", s.cpu_row_cell_ns);
}

double blend(double local, double far, double far_fraction) {
  return local + (far - local) * std::clamp(far_fraction, 0.0, 1.0);
}

// Share of a row a search scans before its targets are final: k targets spread over the graph,
// the last of them is settled after about k / (k + 1) of it (one-to-one: half the graph).
double early_exit_share(const CallCostShape& shape) {
  if (shape.targets_per_source <= 0) return 1.0;
  const double k = static_cast<double>(shape.targets_per_source);
  return k / (k + 1.0);
}

// Where a graph of `graph_bytes` lies between calibration's small graph (0) and its grid (1),
// in log(bytes).
double small_to_large(double graph_bytes) {
  return std::clamp(std::log(graph_bytes / kCpuSmallGraphBytes) /
                        std::log(kCpuLargeGraphBytes / kCpuSmallGraphBytes),
                    0.0, 1.0);
}

// The CPU's speed-up from every worker a call can use, on a graph of `graph_bytes` (0: the large
// graph's efficiency, as Floyd-Warshall's calibration assumed).
double cpu_speedup(const MachineSpeeds& speeds, const DeviceState& state, std::int64_t sources,
                   double graph_bytes = 0) {
  const double workers = static_cast<double>(
      std::max<std::int64_t>(1, std::min<std::int64_t>(state.cpu_threads, sources)));
  double efficiency = speeds.cpu_parallel_efficiency;
  if (graph_bytes > 0)
    efficiency = blend(speeds.cpu_parallel_efficiency_small, speeds.cpu_parallel_efficiency,
                       small_to_large(graph_bytes));
  return std::max(1.0, workers * (workers > 1 ? efficiency : 1.0));
}

// Writing rows overlaps the computing of the next batch: all but the first batch's compute (or
// all but the last batch's rows) hide behind the other, in full where the writer has the machine
// mostly to itself. `shared_cores`: the search runs on every core, or on every core but the
// writer's; the writer then competes with it for cores, caches and memory. The overlap of
// all-pairs calls measured 27-60% of the smaller of the two with every core busy (the development
// machine's 2, the H100 host's 16), 80% on a 4096-vertex graph with a core left to the writer,
// and the dense 2000-vertex graph's rows were written at 80 ns each against 53 beside a GPU
// engine (gpu_routing_last_run's compute, emit and total): half is counted.
double with_rows(double compute_ms, double emit_ms, double batches, bool shared_cores = false) {
  if (batches <= 1) return compute_ms + emit_ms;
  const double overlap =
      std::min(compute_ms, emit_ms) * (batches - 1) / batches * (shared_cores ? 0.5 : 1.0);
  return compute_ms + emit_ms - overlap;
}

// A speed calibration measured on the dense graphs of 1024 and 2048 vertices, for V vertices:
// the line between the two in log2(V), flat beyond (Floyd-Warshall's time per V^3, Dijkstra's
// dense factor).
double between_dense_sizes(double at_1024, double at_2048, double vertices) {
  const double position = std::clamp(std::log2(std::max(1.0, vertices)) - 10.0, 0.0, 1.0);
  return at_1024 + (at_2048 - at_1024) * position;
}

double batches_of(std::int64_t sources, double batch) {
  return std::ceil(static_cast<double>(std::max<std::int64_t>(1, sources)) / std::max(1.0, batch));
}

}  // namespace

std::string MachineSpeeds::serialize() const {
  std::ostringstream out;
  out.precision(6);
  out << "# gpu_routing speeds, written by gpu_routing_calibrate(); read by auto\n";
  out << "origin = " << origin << "\n";
  for_each_speed(*this,
                 [&](const char* name, double value) { out << name << " = " << value << "\n"; });
  return out.str();
}

bool MachineSpeeds::parse(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  int found = 0;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    const std::size_t eq = line.find(" = ");
    if (eq == std::string::npos) continue;
    const std::string key = line.substr(0, eq), value = line.substr(eq + 3);
    if (key == "origin") {
      origin = value;
      continue;
    }
    for_each_speed(*this, [&](const char* name, double& field) {
      if (key != name) return;
      char* end = nullptr;
      const double parsed = std::strtod(value.c_str(), &end);
      if (end != value.c_str() && *end == '\0' && std::isfinite(parsed) && parsed >= 0) {
        field = parsed;
        ++found;
      }
    });
  }
  return found > 0;
}

std::vector<std::pair<std::string, double>> MachineSpeeds::values() const {
  std::vector<std::pair<std::string, double>> list;
  for_each_speed(*this, [&](const char* name, double value) { list.emplace_back(name, value); });
  return list;
}

double far_arc_share(const CsrGraph& graph) {
  const std::int64_t n = graph.vertex_count;
  if (graph.arc_count() <= 0 || n <= 0) return 0;
  // An arc of each of 1024 vertices spread over the graph: two reads each, tens of microseconds
  // against calls of a millisecond that auto decides too.
  const std::int64_t samples = std::min<std::int64_t>(n, 1024);
  int far = 0, seen = 0;
  for (std::int64_t i = 0; i < samples; ++i) {
    const VertexIndex tail = static_cast<VertexIndex>(i * n / samples);
    const ArcIndex begin = graph.begin(tail), end = graph.end(tail);
    if (begin >= end) continue;
    const ArcIndex arc = begin + (end - begin) / 2;  // not always the first (a ring's own arc)
    ++seen;
    const VertexIndex head = graph.heads[static_cast<std::size_t>(arc)];
    if (std::abs(static_cast<std::int64_t>(head) - tail) > 8192) ++far;
  }
  return seen == 0 ? 0 : static_cast<double>(far) / static_cast<double>(seen);
}

int hop_depth(const CsrGraph& graph, VertexIndex source) {
  const std::size_t n = static_cast<std::size_t>(graph.vertex_count);
  std::unique_ptr<int[]> depth(new int[n]);
  std::unique_ptr<VertexIndex[]> queue(new VertexIndex[n]);
  std::fill(depth.get(), depth.get() + n, -1);
  std::size_t head = 0, tail = 0;
  depth[static_cast<std::size_t>(source)] = 0;
  queue[tail++] = source;
  int deepest = 0;
  while (head < tail) {
    const VertexIndex u = queue[head++];
    const int d = depth[static_cast<std::size_t>(u)];
    deepest = std::max(deepest, d);
    for (ArcIndex a = graph.begin(u); a < graph.end(u); ++a) {
      const std::size_t w = static_cast<std::size_t>(graph.heads[static_cast<std::size_t>(a)]);
      if (depth[w] < 0) {
        depth[w] = d + 1;
        queue[tail++] = static_cast<VertexIndex>(w);
      }
    }
  }
  return std::max(1, deepest);
}

namespace {

// The graph's topology (offsets and heads, not weights) in 64 bits: four independent lanes of a
// multiply-xorshift, a sequential read (New York: 1 million words, under a millisecond).
std::uint64_t topology_fingerprint(const CsrGraph& graph) {
  constexpr std::uint64_t kMultiplier = 0x9E3779B97F4A7C15ULL;
  std::uint64_t lane[4] = {1, 2, 3, 4};
  auto mix = [&](const auto* words, std::size_t count) {
    std::size_t i = 0;
    for (; i + 4 <= count; i += 4)
      for (int k = 0; k < 4; ++k) {
        lane[k] = (lane[k] ^ static_cast<std::uint64_t>(words[i + static_cast<std::size_t>(k)])) *
                  kMultiplier;
        lane[k] ^= lane[k] >> 29;
      }
    for (; i < count; ++i) lane[0] = (lane[0] ^ static_cast<std::uint64_t>(words[i])) * kMultiplier;
  };
  mix(graph.row_offsets.data(), graph.row_offsets.size());
  mix(graph.heads.data(), graph.heads.size());
  return (lane[0] ^ (lane[1] << 1) ^ (lane[2] << 2) ^ (lane[3] << 3)) * kMultiplier;
}

// The last 8 values a process measured, by a key naming what was measured (a graph): each of
// auto's per-graph features that is costly to measure every call keeps one of these.
template <typename Key, typename Value>
class RememberedValues {
 public:
  template <typename Measure>
  Value get(const Key& key, Measure&& measure) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      for (const Entry& e : entries_)
        if (e.used && e.key == key) return e.value;
    }
    const Value value = measure();  // outside the lock: another thread may measure the same
    std::lock_guard<std::mutex> lock(mutex_);
    entries_[next_] = {true, key, value};
    next_ = (next_ + 1) % kEntries;
    return value;
  }

 private:
  static constexpr std::size_t kEntries = 8;
  struct Entry {
    bool used = false;
    Key key{};
    Value value{};
  };
  std::mutex mutex_;
  Entry entries_[kEntries];
  std::size_t next_ = 0;
};

}  // namespace

double remembered_far_arc_share(const CsrGraph& graph) {
  // Where the arrays lie, and the sizes.
  using Key = std::tuple<const VertexIndex*, const ArcIndex*, VertexIndex, ArcIndex>;
  static RememberedValues<Key, double> shares;
  return shares.get(
      Key{graph.heads.data(), graph.row_offsets.data(), graph.vertex_count, graph.arc_count()},
      [&graph] { return far_arc_share(graph); });
}

int remembered_hop_depth(const CsrGraph& graph, VertexIndex source) {
  // The topology, and the sizes.
  using Key = std::tuple<std::uint64_t, VertexIndex, ArcIndex>;
  static RememberedValues<Key, int> depths;
  return depths.get(Key{topology_fingerprint(graph), graph.vertex_count, graph.arc_count()},
                    [&graph, source] { return hop_depth(graph, source); });
}

std::vector<double> settled_paths_work(const Cch& index, const CsrGraph& reverse,
                                       VertexIndex source, const std::vector<VertexIndex>& targets,
                                       CchWorkspace& workspace) {
  std::vector<double> work;
  const auto distance_of = [&](VertexIndex v) { return index.settled_distance(v, workspace); };
  std::vector<ArcIndex> path;
  index.start_settling(source, workspace);
  double before = 0;
  for (VertexIndex target : targets) {
    if (!trace_strict_path(reverse, distance_of, source, target, path)) {
      work.clear();
      break;
    }
    const double settled = static_cast<double>(workspace.settled_count()) +
                           static_cast<double>(workspace.settled_arc_count());
    work.push_back(settled - before + kTraceHopWork * static_cast<double>(path.size()));
    before = settled;
  }
  index.finish_settling(source, workspace);
  return work;
}

SettledPathWork remembered_settled_path_work(const Cch& index, const CsrGraph& reverse) {
  using Key = std::tuple<const VertexIndex*, VertexIndex, ArcIndex>;
  static RememberedValues<Key, SettledPathWork> works;
  return works.get(Key{index.arc_head().data, index.vertex_count(), index.arc_count()}, [&] {
    const VertexIndex n = index.vertex_count();
    SettledPathWork mean;
    if (n < 2) return mean;
    CchWorkspace workspace(n);
    // Targets spread over the numbering.
    const auto spread = [n](int count, int shift) {
      std::vector<VertexIndex> targets;
      for (int j = 0; j < count; ++j)
        targets.push_back(
            static_cast<VertexIndex>(static_cast<std::int64_t>(n) * (2 * j + shift) / (2 * count)));
      return targets;
    };
    // A source at a quarter of the numbering with 2 targets touches the workspace; then one at
    // three quarters with kSettledPathTargets, timed: it settles other ranks, so little of what
    // it reads is cached, as in a call, and its further targets share what a call's share (the
    // top of the tree; 4 targets shared less: New York's further paths then cost 0.94 of a
    // first, 10 targets from one source 0.6).
    const std::vector<double> warm_up =
        settled_paths_work(index, reverse, n / 4, spread(2, 1), workspace);
    Stopwatch watch;
    const std::vector<double> work =
        settled_paths_work(index, reverse, n / 4 * 3, spread(kSettledPathTargets, 0), workspace);
    const double ms = watch.elapsed_ms();
    if (warm_up.empty() || work.empty()) return SettledPathWork{-1, -1, 0};
    double sum = 0;
    for (double w : work) sum += w;
    mean.first = (warm_up.front() + work.front()) / 2;
    mean.further = (sum - work.front()) / static_cast<double>(work.size() - 1);
    if (sum > 0) mean.ns_per_unit = ms * 1e6 / sum;
    return mean;
  });
}

bool modelled_engine(const EngineInfo& engine) {
  const char* name = engine.name;
  if (engine.device == Device::kCpu)
    return !std::strcmp(name, "dijkstra") || !std::strcmp(name, "blocked_fw") ||
           !std::strcmp(name, "cch");
  return !std::strcmp(name, "near_far") || !std::strcmp(name, "multi_source") ||
         !std::strcmp(name, "blocked_fw") || !std::strcmp(name, "cch");
}

double estimate_call_ms(const EngineInfo& engine, const CallCostShape& shape,
                        const DeviceState& state, const MachineSpeeds& s) {
  if (!modelled_engine(engine)) return -1;
  const std::string name = engine.name;
  const double V = static_cast<double>(shape.vertices);
  const double E = static_cast<double>(shape.arcs);
  const double S = static_cast<double>(std::max<std::int64_t>(1, shape.sources));
  // The CSR's bytes: a head and a weight an arc, an offset a vertex.
  const double graph_bytes = E * 12.0 + V * 8.0;
  const double share = early_exit_share(shape);
  const double emit_ms = shape.result_rows * s.emit_row_ns * 1e-6;
  const bool index = shape.index_arcs > 0;
  const double index_arcs = static_cast<double>(shape.index_arcs);
  // The dense engines hold V x V: auto keeps them to dense all-pairs (a sparse graph's sweeps are
  // far cheaper than V^3).
  const bool fw_applies = shape.all_pairs && shape.dense;

  // A graph with no index (edges_sql): the CPU's cch makes one first, in every call.
  const double index_build_ms =
      index ? 0 : E * std::log2(std::max(2.0, E)) * s.cpu_cch_build_ns * 1e-6;
  const double index_arcs_or_guess = index ? index_arcs : 2.2 * E;  // New York: 1.55M for 734k
  const double predecessor_ms = shape.predecessors ? S * E * s.cpu_predecessor_ns * 1e-6 : 0;

  // One upward search on this graph: the measured one scaled by the square root of the sizes.
  const double query_us =
      s.cpu_cch_query_us * std::sqrt(std::max(1.0, V) / std::max(1.0, s.cpu_cch_query_vertices));

  if (engine.device == Device::kCpu) {
    const double speedup = cpu_speedup(s, state, shape.sources, graph_bytes);
    // The search on every core (or every core but the writer's): writing rows competes with it.
    const bool shared_cores =
        std::min<std::int64_t>(state.cpu_threads, std::max<std::int64_t>(1, shape.sources)) >=
        std::max(1, state.hardware_threads - 1);
    const double batch = std::max(1, state.cpu_threads) * 16.0;
    double compute = 0;
    if (name == "dijkstra") {
      // A search on a graph of the small one's size costs what its timing says, one source or
      // many (a single-source call's fresh arrays are a few kB there: on Rome's 3353 vertices a
      // path cost 52 us of compute where the vertex and arc speeds said 72, and auto sent it to
      // the road index, 100 us); a dense graph costs what the dense ones' timings say.
      const double size_factor =
          shape.dense ? between_dense_sizes(s.cpu_dijkstra_dense_factor,
                                            s.cpu_dijkstra_dense_large_factor, V)
                      : blend(s.cpu_dijkstra_small_factor, 1.0, small_to_large(graph_bytes));
      const double per_source = (V * s.cpu_dijkstra_vertex_ns + E * s.cpu_dijkstra_arc_ns) * share *
                                blend(1.0, s.cpu_dijkstra_far_factor, shape.far_fraction) *
                                size_factor;
      compute = (S * per_source * 1e-6 + predecessor_ms) / speedup;
    } else if (name == "blocked_fw") {
      if (!fw_applies) return -1;
      compute = V * V * V * between_dense_sizes(s.cpu_fw_ns, s.cpu_fw_large_ns, V) * 1e-6 /
                cpu_speedup(s, state, state.cpu_threads);
      // The whole matrix first, then its rows.
      return compute + shape.result_cells * s.cpu_row_cell_ns * 1e-6 + emit_ms;
    } else {  // cch
      // auto makes no index for a kept graph (gpu_graph_index or naming cch does, shared), nor
      // for a graph without small separators: a hierarchy of a random graph is nearly complete
      // (hop depths far below sqrt(V), as in expanders, tell those apart from road networks).
      if (!index && (shape.kept_graph || shape.hop_depth <= 0 ||
                     shape.hop_depth < 0.5 * std::sqrt(std::max(1.0, V))))
        return -1;
      // More targets than the engine's buckets take (an eighth of the vertices): their columns
      // are read from whole sweeps, priced as trees below.
      if (shape.compact_targets &&
          cch_engine::by_buckets(shape.targets_per_source, static_cast<std::int64_t>(V))) {
        // Buckets: an upward walk from each target, then from each source, which reads the
        // buckets of the ranks it reaches: about one entry per target at the top of the
        // hierarchy, so S x T cells.
        const double targets =
            static_cast<double>(std::max<std::int64_t>(1, shape.targets_per_source));
        compute = ((S + targets) * kBucketWalkQueries * query_us * 1e-3 +
                   S * targets * kBucketCellSweeps * s.cpu_cch_sweep_ns * 1e-6) /
                  speedup;
      } else if (shape.index_point_queries && shape.targets_per_source > 0) {
        // Point queries, one per pair.
        compute = S * static_cast<double>(shape.targets_per_source) * 2 * query_us * 1e-3 / speedup;
      } else if (shape.paths && shape.sources <= 1 && shape.targets_per_source > 0 &&
                 shape.targets_per_source <= kSettledPathTargets &&
                 shape.settled_first_path_work >= 0) {
        // One source's few paths from distances settled one by one, on one thread, by the work
        // and the speed sampled on the index; where no index is made yet, New York's work (a
        // first path about 130 sqrt(V) units, each further one the same) at cpu_cch_settle_ns.
        // No row is copied, and the one batch's rows follow it.
        const bool sampled = shape.settled_first_path_work > 0;
        const double first =
            sampled ? shape.settled_first_path_work : 130 * std::sqrt(std::max(1.0, V));
        const double further = sampled ? shape.settled_further_path_work : first;
        const double work =
            first + static_cast<double>(shape.targets_per_source - 1) * std::max(0.0, further);
        const double unit_ns =
            shape.settled_path_unit_ns > 0 ? shape.settled_path_unit_ns : s.cpu_cch_settle_ns;
        return index_build_ms + work * unit_ns * 1e-6 + emit_ms;
      } else {
        // Whole trees by PHAST, kSweepLanes sources a sweep (the CPU engine's lanes): a sweep of
        // L lanes costs about 0.75 + 0.28 L one-source sweeps (New York on one core of the 2-core
        // VM: 8 lanes 9.6 ms, one 3.2), cpu_cch_sweep_ns being the one-source sweep calibrated.
        // The groups go one a thread, and groups left over sweep on every thread by the
        // hierarchy's sweep plan, so even one tree takes every core once the work is a few
        // milliseconds, as the engine decides (cch_engine::sweep_threads).
        constexpr double kSweepLanes = cch_engine::kSweepLanes;
        const double full_groups = std::floor(S / kSweepLanes);
        const double last_lanes = S - full_groups * kSweepLanes;
        const double sweeps = full_groups * (0.75 + 0.28 * kSweepLanes) +
                              (last_lanes > 0 ? 0.75 + 0.28 * last_lanes : 0.0);
        const double sweep_speedup =
            cch_engine::sweep_threads(cch_engine::sweep_work_us(S, V), state.cpu_threads) == 1
                ? 1.0
                : cpu_speedup(s, state, state.cpu_threads, graph_bytes);
        compute = (sweeps * index_arcs_or_guess * s.cpu_cch_sweep_ns * 1e-6 + S * query_us * 1e-3) /
                      sweep_speedup +
                  predecessor_ms / speedup;
      }
      compute += index_build_ms;
    }
    // Rows copied out of the engine's on the batch thread alone; arrays (a row a source) are
    // the engine's rows themselves, handed over and written in place, as the GPU service's are.
    if (shape.result_rows >= shape.result_cells)
      compute += shape.result_cells * s.cpu_row_cell_ns * 1e-6;
    return with_rows(compute, emit_ms, batches_of(shape.sources, batch), shared_cores);
  }

  if (!state.gpu_usable) return -1;
  const double call_ms = state.service
                             ? s.gpu_service_call_ms
                             : s.gpu_call_ms + (state.context_open ? 0 : s.gpu_context_ms);
  double fixed = call_ms;
  const bool resident = state.kept_engine == "*" || state.kept_engine == "gpu " + name;
  if (!resident) fixed += graph_bytes * s.gpu_upload_ns_per_byte * 1e-6;
  // Through the GPU service a row's distances also cross from the service's memory into the
  // session's, whose pages are fresh: about 0.35 ns a byte on the H200 host (New York arrays,
  // gpu_routing_last_run's transfers: 64 trees' 135 MB in 41-47 ms, 10,000 x 10,000's 800 MB in
  // 281-285 ms; not calibrated). While the backend copied every array on one core, that cost hid
  // in the rows' estimate of both devices; written in place, the CPU's rows cost nothing like it.
  constexpr double kServiceCrossingNsPerByte = 0.35;
  const double per_byte_back =
      s.gpu_download_ns_per_byte + (state.service ? kServiceCrossingNsPerByte : 0.0);
  const double download = shape.result_cells * 8.0 * per_byte_back * 1e-6;
  double compute = 0, batch = 1024;
  if (name == "near_far") {
    if (S <= 1)
      compute =
          E * share * blend(s.gpu_single_local_ns, s.gpu_single_far_ns, shape.far_fraction) * 1e-6;
    else
      compute = S * (E * share * blend(s.gpu_many_local_ns, s.gpu_many_far_ns, shape.far_fraction) *
                         1e-6 +
                     s.gpu_many_source_us * 1e-3);
  } else if (name == "multi_source") {
    if (shape.hop_depth <= 0 || S <= 1) return -1;
    compute = S * E * shape.hop_depth * s.gpu_multi_source_ns * 1e-6;
    batch = S;
  } else if (name == "blocked_fw") {
    if (!fw_applies) return -1;
    // Calibration timed a fresh engine closing the whole matrix and copying it back: the graph's
    // copy to the device and the matrix's copy back are in gpu_fw_ns already (counted again, they
    // added 15 ms to the dense 1000-vertex graph's 10 and sent it to the CPU, 1.11x slower).
    compute = V * V * V * s.gpu_fw_ns * 1e-6;
    return call_ms + compute + emit_ms;
  } else {  // cch: whole rows by PHAST sweeps (a target list's columns are taken from them)
    if (!index) return -1;  // the GPU's cch sweeps a kept graph's index
    // A cost matrix's sweeps skip what lies outside its targets' closure while that holds at most
    // half the ranks, from 512 sources (Cch::kRestrictedSweepShare and ...FromSources). Their time
    // falls less than their arcs (New York, 10,000 targets: 58% of the arcs, 40-46% of the time,
    // engine alone on the H200): the arcs' share keeps the estimate on the safe side.
    const bool restricted = shape.compact_targets && shape.target_closure_ranks > 0 &&
                            shape.target_closure_ranks <= Cch::kRestrictedSweepShare * V &&
                            S >= Cch::kRestrictedSweepFromSources;
    const double swept_arcs =
        restricted ? static_cast<double>(shape.target_closure_arcs) : index_arcs;
    compute = S * swept_arcs * s.gpu_cch_sweep_ns * 1e-6;
    // Sweeps fill whole rows; a cost matrix's columns are gathered on the device, so only they
    // come back, other calls' rows in full.
    const double cells_back = shape.compact_targets ? shape.result_cells : S * V;
    return fixed + with_rows(compute + cells_back * 8.0 * per_byte_back * 1e-6, emit_ms,
                             batches_of(shape.sources, batch));
  }
  return fixed + with_rows(compute + download, emit_ms, batches_of(shape.sources, batch));
}

}  // namespace gpu_routing
