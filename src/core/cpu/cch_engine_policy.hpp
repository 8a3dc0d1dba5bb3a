// How the CPU's road index engine (cch, cpu_engines.cpp) divides its work, in one place for the
// engine and for auto's estimate of it (choice/cost_model.cpp), so that the two cannot drift.
#pragma once

#include <cstdint>

namespace gpu_routing::cch_engine {

// Cost matrices go by buckets while the targets are at most a kBucketTargetShare-th of the
// vertices; past it the sources sweep and keep their targets' columns. A bucket row costs its
// walk and about a pass over the targets (the busiest ranks' columns), a sweep a pass over the
// whole hierarchy: on 15 cores of the H200 host New York's 10,000 x 10,000 took 195 ms by
// buckets against 600 by sweeps, 3000 x 3000 27 against 196, while Rome (3,353 vertices) took
// 1.9 against 1.0 at 1000 targets and 12.6 against 4.1 at 3000 (cch_bench).
// Buckets hold about 5 kB a target (New York: some 130 entries of 28 bytes while they are filled
// and placed, and the columns' 8 bytes a target each), which the call's memory estimate does not
// count: past kBucketMostTargets (about 250 MB) the sources sweep whatever the graph's size.
constexpr std::int64_t kBucketTargetShare = 8;
constexpr std::int64_t kBucketMostTargets = 50000;
constexpr bool by_buckets(std::int64_t targets, std::int64_t vertices) {
  return targets * kBucketTargetShare <= vertices && targets <= kBucketMostTargets;
}

// Bucket rows are computed this many sources together (Cch::rows_from_buckets), which read the
// buckets' columns a piece of the targets at a time while the pieces are in the core's cache.
constexpr int kBucketRowGroup = 8;

// Sources per PHAST sweep (Cch::many_to_all): one pass over the hierarchy's arcs serves them
// all. New York on one core of the 2-core VM: 1.2 ms a tree in lanes of 8, 1.5 in lanes of 4,
// 3.2 one by one.
constexpr int kSweepLanes = 8;

// Sweeps go on threads from kSweepThreadsFromUs of estimated work, as bucket rows do; with 8
// threads or more from kManySweepThreadsFromUs, so that one New York tree (264k ranks, 2.6 ms by
// the estimate, 3.2 measured on one core of the 2-core VM, 1.7 on its two by the sweep plan)
// sweeps on all of them. On 2 cores a parallel region next to other work can wait milliseconds
// for a core (Rome's tree: 0.02 ms on one thread, 7.9 on two while another build ran).
constexpr double kSweepThreadsFromUs = 5000.0;
constexpr double kManySweepThreadsFromUs = 2000.0;

// The sweeps' estimated work: 0.01 us a rank and source.
constexpr double sweep_work_us(double sources, double ranks) {
  return sources * 0.01 * ranks;
}

// The threads sweeps of that much work go on, of the engine's `threads`.
constexpr int sweep_threads(double work_us, int threads) {
  return work_us < (threads >= 8 ? kManySweepThreadsFromUs : kSweepThreadsFromUs) ? 1 : threads;
}

}  // namespace gpu_routing::cch_engine
