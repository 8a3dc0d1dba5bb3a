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
// The knobs below exist for tests and bench/near_far_bench; the engine table uses the defaults.
#pragma once

#include <memory>

#include "../src/core/engine.hpp"

namespace gpu_routing::gpu {

struct NearFarConfig {
  // Width of a bucket. 0 = choose from the graph (near_far_auto_delta); delta_scale multiplies
  // the automatic choice.
  double delta = 0;
  double delta_scale = 1.0;
  // Threads per block of the single-source grid kernel (0 = options.block_size, else 512) and
  // blocks per multiprocessor (0 = as many as fit).
  int grid_block_size = 0;
  int grid_blocks_per_sm = 0;
  // The grid kernel compiled without a register cap (no spills, fewer threads per
  // multiprocessor; block size at most 512).
  bool grid_wide_registers = false;
  // Frontiers up to this many entries are relaxed by one block alone (block barriers only, no
  // grid barrier); 0 turns this off, -1 = the grid block size.
  int small_frontier = -1;
  // Far piles up to this many entries are split by that block alone (-1 = 8 x small_frontier).
  int small_far_pile = -1;
  // Rounds one block runs alone before the whole grid looks at the frontier again.
  int block_stretch_rounds = 1024;
  // Threads per block of the many-source kernel (0 = options.block_size, else 256).
  int batch_block_size = 0;
  // Read the target's distance before the atomicMin (fewer atomics, one more load in the chain).
  bool precheck = true;
  // A warp relaxes the near vertices it just improved itself, this many hops deep within one
  // round (from a queue in shared memory), instead of leaving each hop to the next round.
  int local_hops = 4;
  // Vertices with more arcs than this are queued as chunks of chunk_arcs arcs, so one hub is
  // spread over many warps.
  int huge_degree = 1024;
  int chunk_arcs = 1024;
  // How solve() runs several sources: kAuto decides after the first source from the measured
  // frontier (wide frontiers: the grid kernel per source; narrow ones, as on road networks: one
  // block per source).
  enum class Batch { kAuto, kBlockPerSource, kGridPerSource };
  Batch batch = Batch::kAuto;
  // kAuto picks block-per-source when the first source's mean frontier is at most this many
  // times the batch block size.
  double block_per_source_frontier = 4.0;
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
