// The GPU engine tables; kernels/registry.cu joins them, in this order, into gpu_engine_table().
#pragma once

#include <vector>

#include "engine/engine.hpp"

namespace gpu_routing::gpu {

// Dijkstra-family engines of seeds 000, 001 and 003: frontier, frontier_pred, frontier_matrix,
// frontier_pred_matrix, crauser, bellman_ford (single source) and harish, concurrent (many
// sources). Defined in kernels/sssp_engines.cu.
const std::vector<EngineInfo>& dijkstra_family_engines();
// The near-far worklist engine, the fast single-source default. kernels/sssp_near_far.cu.
const std::vector<EngineInfo>& near_far_engines();
// Many-source and dense all-pairs engines of seeds 000, 002, 004: multi_source, blocked_fw,
// floyd_warshall, rkleene. kernels/apsp_engines.cu.
const std::vector<EngineInfo>& apsp_engines();
// The road index's PHAST sweeps on the GPU (engine cch). kernels/cch_phast.cu.
const std::vector<EngineInfo>& cch_engines();
// For phast_bench: how many passes of one block a level may take inside the one-block loop before
// it gets a launch over the whole GPU (default 2).
void set_phast_one_block_passes(int passes);
// For phast_bench: lanes per (rank, source), a power of two up to 32; 0: the default (by each
// level's degrees).
void set_phast_lanes(int lanes);
// For phast_bench: whether a cost matrix's sweeps skip the ranks outside its targets' closure
// (RPHAST; default on).
void set_phast_restrict(bool on);
// For tests: the fewest sources a solve restricts its sweeps for (0: the default, 512).
void set_phast_restrict_from_sources(int sources);
// Sources a PHAST sweep holds at most (0: the built-in maximum).
void set_phast_sources_per_sweep(int sources);
// For phast_bench: the largest subtree of the sweep's bottom (0: no bottom, every level its own
// step; negative: the default), and the threads of a bottom group's block (0: the default, 512).
// Taken up by the next solve (the hierarchy is laid out again).
void set_phast_subtree_vertices(int vertices);
void set_phast_group_block(int threads);
// For phast_bench: sources a bottom block sweeps (0: the default, 4).
void set_phast_group_sources(int sources);
// For phast_bench: whether a sweep replays its level launches as a captured CUDA graph (the
// default) or enqueues them one by one.
void set_phast_graphs(bool on);
// For phast_bench, the road index's customization on the GPU (kernels/cch_customize.cu): middles
// each thread of an arc's group scans (0: the default, 1), and the most arc x middle pairs a level
// may have to run inside the one-block loop (negative: the default, 8192). Taken up by the next
// customization.
void set_cch_customize_middles_per_thread(int middles);
void set_cch_customize_one_block_pairs(int pairs);
// Whether customizers made from now on list each hierarchy arc's lower triangles on the device
// (where the room is there) or search rows for them (the default).
void set_cch_customize_triangle_lists(bool on);

}  // namespace gpu_routing::gpu
