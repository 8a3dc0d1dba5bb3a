// The near_far engine (kernels/sssp_near_far.cu): delta-stepping with a two-level near/far
// worklist (Davidson, Baxter, Garland, Owens 2014 "Work-efficient parallel GPU methods for
// single-source shortest paths"; cuGraph's SSSP keeps the same two piles).
//
// One source: a persistent cooperative kernel runs every round on the whole GPU with a grid
// barrier between rounds and device-side counters, so no round costs a host round trip; while the
// frontier is small one block runs the rounds alone with block barriers only.
// Many sources: one thread block per source, block barriers only, as many blocks as the GPU holds,
// each taking the next source from an atomic counter.
//
// The knobs below exist for tests and bench/near_far_bench; the engine table uses the defaults,
// chosen from bench/near_far_bench on an H200 (median kernel ms of 7 sources; numbers below).
// On sparse graphs a search is bound by its dependent rounds (about 4 us each, a chain of
// global-memory round trips), so the defaults there buy fewer rounds with some extra work.
#pragma once

#include <memory>

#include "engine/engine.hpp"

namespace gpu_routing::gpu {

struct NearFarConfig {
  // Width of a bucket. 0 = choose from the graph: near_far_auto_delta() times delta_scale, and
  // delta_scale 0 = by the graph and the path, as measured on an H200 (near_far_bench --sweep):
  // one source on a sparse graph (mean out-degree <= 8: roads, grids) x32, since there the
  // dependent rounds cost more than the extra relaxations (with 16 block-pooled local hops:
  // 1000x1000 grid 8.9 ms at x4, 7.3 at x32, 7.8 at x64; NY 5.5 / 3.9 / 3.7; the random graph
  // 1.17 ms at every scale from x4 to x64 with 4 hops); on denser graphs x1 (R-MAT: more work,
  // no fewer rounds); many sources one block each x1 (NY 1000 x 1000: 42.6 ms at x1, 50.4 at x4).
  double delta = 0;
  double delta_scale = 0;
  // Threads per block of the single-source grid kernel (0 = options.block_size, else 512) and
  // blocks per multiprocessor (0 = as many as fit).
  int grid_block_size = 0;
  int grid_blocks_per_sm = 0;
  // At most this many blocks in the grid kernel (0 = blocks_per_sm on every multiprocessor). A
  // road network's frontier keeps few warps busy; fewer blocks make each grid barrier cheaper.
  int grid_block_count = 0;
  // The grid kernel compiled without a register cap (no spills, one block of at most 512
  // threads a multiprocessor); false: 64 registers a thread, some spills, two blocks a
  // multiprocessor. Uncapped / capped: grid 17.1 / 18.9 ms, NY 8.4 / 8.9, R-MAT 15.9 / 17.5.
  bool grid_wide_registers = true;
  // Frontiers up to this many entries are relaxed by one block alone (block barriers only, no
  // grid barrier); 0 turns this off, -1 = the grid block size.
  int small_frontier = -1;
  // Far piles up to this many entries are split by that block alone (-1 = 8 x small_frontier).
  int small_far_pile = -1;
  // Rounds one block runs alone before the whole grid looks at the frontier again.
  int block_stretch_rounds = 1024;
  // Threads per block of the many-source kernel (0 = options.block_size, else 128: eight blocks,
  // so eight sources, a multiprocessor at 64 registers a thread). NY 1000 x 1000: 64 threads
  // 61.8 ms, 128 42.6, 256 47.2 (528 sources at a time), 512 61.2.
  int batch_block_size = 0;
  // Read the target's distance before the atomicMin (fewer atomics, one more load in the
  // chain). With / without: NY 8.7 / 8.4 ms, grid 17.5 / 17.1, R-MAT 14.8 / 15.9.
  bool precheck = false;
  // A warp relaxes the near vertices it just improved itself, this many hops deep within one
  // round (from a queue in shared memory), instead of leaving each hop to the next round.
  // -1 = 4 on sparse graphs and for many sources (NY: 1676 rounds, 10.6 ms without; 417 rounds,
  // 8.4 ms with 4), 0 for one source on denser graphs, whose wide frontiers leave a few warps
  // with long local chains (R-MAT 2^20: 15.9 ms with 4, 4.4 ms without).
  int local_hops = -1;
  // Local hops of rounds whose frontier has at most deep_frontier entries (-1: 32 for one source
  // on a sparse graph, else local_hops; deep_frontier -1: half the grid kernel's threads). Past
  // the first local_hops, a block's hops also stop once its queue outgrows twice its threads.
  // Grid and road frontiers stay narrow and gain from deep hops (delta x32, H200: 1000 x 1000
  // grid 8.3 ms with 4 hops on every round, 7.2 with 16 on narrow ones, 6.8 with 32; NY 4.5 /
  // 3.8 / 3.5); random graphs' frontiers grow threefold a hop, so the cap keeps them at about
  // four (1.13 / 1.12 / 1.11 ms; 2.5 ms with 16 hops and no cap).
  int deep_local_hops = -1;
  int deep_frontier = -1;
  // The warps of a block pool their local queues and relax them together, one block barrier
  // per hop (false: each warp works through its own queue alone). On a 1000 x 1000 grid the
  // per-warp queues left 88% of stall cycles at barriers, waiting for a few warps' queues.
  bool block_local_hops = true;
  // The same for the many-source kernel, one block of 128 threads per source, where the warps'
  // own queues measured faster (NY 1000 x 1000 cost matrix, H200: 43.9 ms per warp, 47.1 pooled).
  bool batch_block_local_hops = false;
  // Vertices with more arcs than this are queued as chunks of chunk_arcs arcs, so one hub is
  // spread over many warps.
  int huge_degree = 1024;
  int chunk_arcs = 1024;
  // How solve() runs several sources: kAuto runs the first sources on the whole grid until 8
  // rounds have measured the graph's mean frontier, then picks one block per source when that
  // frontier is at most block_per_source_frontier x the batch block size (road networks) or the
  // remaining sources' blocks hold at least as many threads as one frontier has entries; else
  // the grid kernel per source (wide frontiers, few sources).
  enum class Batch { kAuto, kBlockPerSource, kGridPerSource };
  Batch batch = Batch::kAuto;
  double block_per_source_frontier = 4.0;
  // Engines that share a many-source solve, one per GPU (0 = every usable GPU). More engines than
  // GPUs share the GPUs round robin, so tests can run the split on a machine with one.
  int devices = 0;
};

// delta = 32 x mean arc weight / mean out-degree (the rule of cuGraph and Gardenia's GPU
// delta-stepping): about a warp's worth of light relaxations per vertex and bucket. 1 when every
// weight is zero.
double near_far_auto_delta(const Graph& graph);

std::unique_ptr<ShortestPathEngine> make_near_far_engine(const Graph& graph,
                                                         const EngineOptions& options,
                                                         const NearFarConfig& config);

// Counters of the last solve() of a near_far engine, for the benchmark; zeros for other engines.
struct NearFarStats {
  double delta = 0;
  long long rounds = 0;           // rounds (relax and split phases), summed over sources
  long long frontier_items = 0;   // frontier entries relaxed (single source)
  int grid_blocks = 0;            // blocks of the grid kernel
  int batch_slots = 0;            // concurrent blocks of the many-source kernel (0: not used)
  bool block_per_source = false;  // the last many-source solve ran one block per source
  double kernel_ms = 0;           // wall time of the search kernels alone
};
NearFarStats near_far_stats(const ShortestPathEngine& engine);

}  // namespace gpu_routing::gpu
