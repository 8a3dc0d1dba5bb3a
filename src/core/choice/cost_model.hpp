// What a call will cost end to end on this machine, engine by engine: the model `auto` decides
// from (engine_select.cpp). Speeds are measured by gpu_routing_calibrate() (calibration.hpp) and
// stored per server; built-in defaults, measured on the H100 host and the 2-core CI machine, stand
// in where none has run.
//
// The model counts what differs between the choices of one call: the engine's compute (with early
// exit, parallelism, batching), the device's fixed costs (a CUDA context, the graph's upload, the
// service's round trip) and the copies of results back. Loading and building the graph cost the
// same whichever engine runs, so they are left out; writing rows is the same too, but the engines
// overlap it differently (batches are computed one ahead while the rows of the last one are
// written), so it enters through that overlap.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "base/common.hpp"
#include "engine/engine.hpp"
#include "base/graph.hpp"

namespace gpu_routing {

class Cch;
class CchWorkspace;

// Measured speeds of one machine. Times per unit of work; "far" speeds are for graphs whose arcs
// join vertices far apart in memory (random graphs), "local" for graphs numbered along their
// geometry (grids, road networks as published).
struct MachineSpeeds {
  // CPU Dijkstra, one source on one thread: per vertex settled (the heap) and per arc scanned,
  // on a graph numbered along its geometry; times `far_factor` on one whose arcs jump across
  // memory (random graphs: every arc a cache miss).
  double cpu_dijkstra_vertex_ns = 60;
  double cpu_dijkstra_arc_ns = 8;
  double cpu_dijkstra_far_factor = 3;
  // Many sources on every thread: the speed-up over one thread per thread used (0.8 on the 16
  // cores of the H100 host: 12.8x; 0.61-0.64 there in later calibrations).
  double cpu_parallel_efficiency = 0.8;
  // The same on a graph that stays in the caches (calibration's random graph of 4096 vertices and
  // 16384 arcs, kCpuSmallGraphBytes), which scales differently (0.66-0.95 on the H100 host).
  // Between the two graphs' sizes the model follows log(bytes).
  double cpu_parallel_efficiency_small = 0.6;
  // One source on one thread on that small graph, measured against what the vertex and arc
  // speeds above (from the grid and a dense graph) predict for it. The model scales its CPU
  // Dijkstra's many-source calls by this on a graph of that size (following log(bytes) to 1 at
  // the grid's), so that they are priced from one timing on a small graph: on the H100 host the
  // vertex speed and the small graph's efficiency each moved 17-28% between calibrations, and
  // their quotient decided a near-tie (sparse all pairs as arrays: CPU estimated 200 ms, ran 143).
  double cpu_dijkstra_small_factor = 1;
  // Many sources on every thread on calibration's dense graphs (a fifth of all arcs) of 1024
  // and 2048 vertices, measured against what the speeds above predict for them: on a dense
  // graph out of the caches an arc costs more than on the 512-vertex one the arc speed comes
  // from (the 2-core machine's dense 1000- and 2000-vertex all pairs ran 1.5-1.9x its estimate,
  // and went to Dijkstra where blocked_fw was faster). The model scales CPU Dijkstra on a dense
  // graph by these, between the two sizes in log2(V), flat beyond (instead of the small factor).
  double cpu_dijkstra_dense_factor = 1;
  double cpu_dijkstra_dense_large_factor = 1;
  // Blocked Floyd-Warshall, one thread's time per V^3 (divided by the speed-up), on a matrix of
  // 1024 vertices (8 MB) and of 2048 (32 MB): past the caches it grows (1.35x from 1024 to 2000
  // vertices on the development machine); between the two it follows log2(V).
  double cpu_fw_ns = 0.3;
  double cpu_fw_large_ns = 0.4;
  // Road index on the CPU, one thread: one PHAST sweep per hierarchy arc, and one upward search
  // (a bucket or point query) per source or target.
  double cpu_cch_sweep_ns = 4;
  double cpu_cch_query_us = 60;
  // The vertices of the graph cpu_cch_query_us was measured on: an upward search grows with the
  // separators, as the square root of the vertices on road networks and grids.
  double cpu_cch_query_vertices = 147456;
  // Few paths by the predecessor rule from distances the index settles one by one (gpu_path's
  // few targets, RoutingCall::emit_settled_path_rows), one thread, per unit of settling work
  // (settled_paths_work: ranks settled, upward arcs read, kTraceHopWork a traced hop), timed on
  // the 384 x 384 grid's 64 paths from sources that differ: the price where a kept graph's index
  // has no sample of its own yet (remembered_settled_path_work times one, auto uses it). The
  // development machine: 4.3 ns. Its 6f21a7f-9867e11 unit, the index's height times sqrt(V),
  // measured 3.5 ns on the grid and 1.3-2.1 on New York, and priced the H100 host's New York
  // paths 3x over (auto sent a source's 10 paths to the GPU service, 1.24x slower).
  double cpu_cch_settle_ns = 5;
  // Making a road index for a graph that has none (edges_sql, or a kept graph without one):
  // order, hierarchy and customization, per arc times log2(arcs).
  double cpu_cch_build_ns = 150;
  // GPU: the context a process opens on its first GPU call, the graph's copy to the device
  // (per byte, allocations included), the fixed cost of a call's engine (allocations, launches)
  // and of a request through the GPU service.
  double gpu_context_ms = 140;
  double gpu_upload_ns_per_byte = 0.35;
  double gpu_download_ns_per_byte = 0.1;
  double gpu_call_ms = 3;
  double gpu_service_call_ms = 1.5;
  // near_far, one source: per arc (rounds included: measured on graphs of the same kind).
  double gpu_single_local_ns = 30;
  double gpu_single_far_ns = 40;
  // near_far, many sources in one launch: per arc per source, and per source.
  double gpu_many_local_ns = 0.08;
  double gpu_many_far_ns = 0.5;
  double gpu_many_source_us = 40;
  // multi_source (Bellman-Ford rounds over all sources at once): per arc per source per round.
  double gpu_multi_source_ns = 0.15;
  // Blocked Floyd-Warshall on the GPU, per V^3.
  double gpu_fw_ns = 0.0125;
  // Road index on the GPU: per hierarchy arc per source (PHAST sweeps of many sources). The H200
  // host's phast_bench, New York (1.55M arcs), up to 256 sources a sweep: 0.037 ms a tree, 0.024
  // ns an arc; built in at twice that, since a sweep of few sources costs more a tree (one alone:
  // 1 ms) and calibration cannot time the GPU service's sweeps.
  double gpu_cch_sweep_ns = 0.05;
  // The predecessor pass of the CPU engines, per arc (the GPU's engines run it on the device,
  // inside their times).
  double cpu_predecessor_ns = 8;
  // Writing a result row (tuplestore), for the overlap of computing and writing.
  double emit_row_ns = 50;
  // A call's own work per distance a CPU engine hands back, beyond the engine: the batch
  // thread's copy of it into the batch's rows or arrays, done between the engine's parallel
  // runs (calibration: a call's all pairs of the small graph against the engine alone).
  double cpu_row_cell_ns = 1;

  // Where these came from: "built-in", or "calibrated <time> on <hardware>".
  std::string origin = "built-in";

  // key = value lines (the stored form), and back. parse() keeps the defaults for missing or
  // malformed keys and returns false when the text has none of them.
  std::string serialize() const;
  bool parse(const std::string& text);
  // Each speed by its stored name, for gpu_routing_calibrate()'s rows.
  std::vector<std::pair<std::string, double>> values() const;
};

// The call, as the model sees it (filled by RoutingCall from its graph, sources and targets).
struct CallCostShape {
  VertexIndex vertices = 0;
  ArcIndex arcs = 0;
  std::int64_t sources = 1;
  // Targets each source needs (early exit); 0: every vertex (full rows).
  std::int64_t targets_per_source = 0;
  bool all_pairs = false;
  bool compact_targets = false;  // a cost matrix to a target list (the index answers by buckets)
  double result_rows = 0;        // rows the call will write
  double result_cells = 0;       // distances that come back from the engine (device copies)
  // Share of arcs whose ends lie far apart in memory (sampled), 0..1.
  double far_fraction = 0;
  // Hops from a source to the farthest vertex (BFS), 0 where not measured (large graphs).
  int hop_depth = 0;
  // Every row needs its predecessors (gpu_sssp): the CPU engines find them in a pass of their own.
  bool predecessors = false;
  // Paths by the index's own point queries (gpu_routing.index_paths = hierarchy); otherwise the
  // index answers a path call with whole trees, as every engine does.
  bool index_point_queries = false;
  bool kept_graph = false;  // a kept graph: auto makes it no index (gpu_graph_index does)
  bool paths = false;       // gpu_path: rows traced by the predecessor rule to the targets
  bool dense = false;       // arcs >= density * V^2: the Floyd-Warshall engines apply
  // The kept graph's road index (0: none current: cch would make one first).
  std::int64_t index_arcs = 0;
  // A cost matrix's targets' closure on that index (Cch::ancestor_closure), where measured (0:
  // not): the GPU's sweeps cover only it while it holds at most half the ranks (RPHAST; from
  // Cch::kRestrictedSweepFromSources sources).
  std::int64_t target_closure_ranks = 0;
  std::int64_t target_closure_arcs = 0;
  // Its settling work for a source's first path and for each further one (settled_paths_work,
  // sampled on the index by remembered_settled_path_work), 0 where not sampled; negative where
  // the sample gave up settling (zero-cost ties, or too much settled): whole trees then.
  double settled_first_path_work = 0;
  double settled_further_path_work = 0;
  // The nanoseconds a unit of that work took in the sample, 0: cpu_cch_settle_ns.
  double settled_path_unit_ns = 0;
};

// The device state a GPU engine would start from.
struct DeviceState {
  bool gpu_usable = false;
  bool context_open = false;  // this process holds a CUDA context
  bool service = false;       // GPU engines run in the GPU service
  // The engine kept with this graph ("gpu near_far"), "*" where the GPU service holds the graph
  // for every engine, or empty.
  std::string kept_engine;
  int cpu_threads = 1;       // threads the CPU engines would use
  int hardware_threads = 1;  // the machine's: where the engines take them all, rows are written
                             // on a core the search also wants
};

// The sizes (arcs x 12 + vertices x 8 bytes) of calibration's graphs for the CPU's two parallel
// efficiencies: the 4096-vertex random graph with 4 arcs a vertex, and the 512 x 512 grid.
constexpr double kCpuSmallGraphBytes = 16384 * 12.0 + 4096 * 8.0;
constexpr double kCpuLargeGraphBytes = 4.0 * 512 * 511 * 12.0 + 512.0 * 512 * 8.0;

// Estimated milliseconds of what differs between engines for this call, or a negative value
// where the model has no estimate for this engine (auto does not pick it).
double estimate_call_ms(const EngineInfo& engine, const CallCostShape& shape,
                        const DeviceState& state, const MachineSpeeds& speeds);

// The share of arcs (one arc of each of at most 1024 vertices) whose ends are more than 8192
// vertices apart: beyond
// what a cache holds of a distance array around the tail.
double far_arc_share(const CsrGraph& graph);
// far_arc_share of a kept graph, remembered for the last 8 this process saw, by where its arrays
// are mapped and its sizes: its 2048 scattered reads of a mapped image took 25-30 us of a 0.31 ms
// New York path on the road index (2 cores), every call, auto's calls 9% over the engine forced.
// A graph made again at the same address with the same sizes keeps the old share: a worse guess
// for the model, never a wrong answer.
double remembered_far_arc_share(const CsrGraph& graph);
// Hops from `source` to the farthest vertex it reaches (BFS), at least 1.
int hop_depth(const CsrGraph& graph, VertexIndex source);
// hop_depth, remembered for the last 8 topologies this process saw (by a fingerprint of offsets
// and heads): auto's estimate needs the graph's depth, not one source's exactly (in a connected
// graph any two sources' depths are within a factor of two), and the BFS took 9 ms of a 200 ms
// New York call read from edges_sql, every call, where the fingerprint takes under one.
int remembered_hop_depth(const CsrGraph& graph, VertexIndex source);

// Units of settling work one source's paths to `targets` cost, traced one after the other by the
// predecessor rule from distances `index` settles one by one (as RoutingCall does for a few
// targets): for each target, the ranks settled, the upward arcs they read and kTraceHopWork for
// each hop traced. Empty where the settling gives up on a zero-cost tie, as a call does. (A call
// also gives up past a quarter of the ranks settled, a small graph's many targets, Rome's 16;
// the model prices those as settled: a sweep of such a graph costs about as much.)
// `reverse`: the graph's reversed CSR.
std::vector<double> settled_paths_work(const Cch& index, const CsrGraph& reverse,
                                       VertexIndex source, const std::vector<VertexIndex>& targets,
                                       CchWorkspace& workspace);
// A hop traced reads its vertex's in-neighbours' distances, each through the rank map (scattered
// reads): on the development machine 50-150 ns a hop against 2-6 ns an arc settled.
constexpr double kTraceHopWork = 20;
// settled_paths_work sampled on the index (2 sources spread over the graph, 4 targets each) for
// the model: the mean work of a source's first path and of each further one (negative where a
// sample gave up), and the nanoseconds a unit took for the second source, this process reading
// this index as its calls do. The unit's time follows what the caches hold: New York's index,
// 2 cores, 2-3 ns for one pair repeated, 8-10 for a source's 10 targets in one process and about
// 13 in a backend reading the index's shared image; the grid's calibration (cpu_cch_settle_ns)
// 4.3, which priced the 10 targets at 2.7 ms for 4.7. Remembered for the last 8 indexes this
// process saw, by where their arrays lie: New York's sample takes about 10 ms (its workspace,
// then 8 paths), once per process and index.
struct SettledPathWork {
  double first = 0;
  double further = 0;
  double ns_per_unit = 0;
};
SettledPathWork remembered_settled_path_work(const Cch& index, const CsrGraph& reverse);

// The engines the model knows (auto's candidates): "cpu dijkstra", "gpu near_far", ...
bool modelled_engine(const EngineInfo& engine);

}  // namespace gpu_routing
