// Measurement hooks of the Dijkstra-family engines (kernels/sssp_engines.cu) for
// bench/sssp_bench: seed 003 tunes the block size on the relax kernel's time alone.
#pragma once

#include <memory>
#include <string>

#include "engine/engine.hpp"

namespace gpu_routing::gpu {

// When on, engines of this family created afterwards time their relax kernels on the device
// (%globaltimer from the relax kernel's start to the start of the round's next kernel: the
// kernel plus one launch gap, the same gap whatever the block size) and add the milliseconds up.
// The rounds still run in the batch graphs. Off by default; never on in the extension.
void set_relax_kernel_timing(bool on);

// When on, engines created afterwards launch their rounds as plain kernels in batches instead of
// a CUDA graph with a conditional loop: the path taken where the driver has no conditional
// nodes. For tests.
void set_plain_round_launches(bool on);

// Rounds captured into one iteration of the batch graph's conditional loop, for engines created
// afterwards (0 = the default). For bench/sssp_bench's measurement and the tests.
void set_rounds_per_graph_iteration(int rounds);

// Milliseconds the engine's relax kernels took over the sources it finished (relax timing on),
// 0 without timing, and -1 when `engine` is not of this family.
double relax_kernel_ms(const ShortestPathEngine& engine);

// The relax kernels' block size the engine uses (options.block_size or its tuned default); -1
// when `engine` is not of this family.
int relax_block_size(const ShortestPathEngine& engine);

// The Dijkstra-family engine `name` with `engines` engines sharing each many-source solve (one per
// GPU, round robin over the visible ones: more engines than GPUs run the split on one GPU). The
// engine table uses every visible GPU for harish and concurrent and one for the others. For tests.
std::unique_ptr<ShortestPathEngine> make_dijkstra_family_engine(const Graph& graph,
                                                                const EngineOptions& options,
                                                                const std::string& name,
                                                                int engines);

}  // namespace gpu_routing::gpu
