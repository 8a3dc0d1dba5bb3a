// How the CPU's road index engine (cch, cpu_engines.cpp) divides its work, in one place for the
// engine and for auto's estimate of it (choice/cost_model.cpp), so that the two cannot drift.
#pragma once

namespace gpu_routing::cch_engine {

// Cost matrices up to this many targets go by buckets; past it the buckets (a few hundred entries
// per target) would outgrow a sweep's row, so the sources sweep and keep their targets' columns.
constexpr int kBucketTargets = 8192;

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
