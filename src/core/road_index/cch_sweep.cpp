// PHAST's downward sweep for several sources at once and on several threads (Cch::many_to_all):
// sources in lanes of one interleaved array, so that one pass over the arcs serves them all, and
// the elimination tree split into a top and subtrees that threads sweep side by side.
#include "road_index/cch.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>

#include "base/parallel_for.hpp"
#include "road_index/cancel_pacer.hpp"
#include "road_index/tree_split.hpp"

namespace gpu_routing {

using detail::CancelPacer;

namespace {

// The most subtrees per thread a sweep plan splits into: handed out heaviest first to whichever
// thread is free, many small ones even out what the estimate misses.
constexpr int kMaxSweepSubtreesPerThread = 16;
// Ranks between two cancel pacer counts.
constexpr VertexIndex kPacedRanks = 4096;
// Vertices per piece of the rows' parallel gathering.
constexpr VertexIndex kGatherPiece = 16384;

// Two lanes as one value: a GCC vector of two doubles, what SSE2 takes in one instruction (wider
// vectors were lowered lane by lane without AVX: 4 lanes 6.9 ms a tree on New York, 1.7 with
// pairs). A rank's lanes are kLanes / 2 pairs (one lane is a double, LaneSweep::rank).
typedef double LanePair __attribute__((vector_size(2 * sizeof(double))));
template <int kLanes>
struct LaneValues {
  LanePair pairs[kLanes / 2];
  static LaneValues infinite() {
    LaneValues v;
    for (LanePair& p : v.pairs) p = LanePair{} + kInfinity;
    return v;
  }
  void take_less(const double* above, double weight) {
    for (int k = 0; k < kLanes / 2; ++k) {
      LanePair through;
      std::memcpy(&through, above + 2 * k, sizeof through);
      through += weight;
      pairs[k] = through < pairs[k] ? through : pairs[k];
    }
  }
};

// PHAST's step at each rank, for kLanes sources: `distance` by rank and lane, [rank * kLanes +
// lane]; `chain` the sources' upward distances by decreasing rank. A rank starts from its upward
// distance in each lane (+infinity where the source's walk did not reach it) and takes the
// minimum with each upward neighbour's final distance plus the arc's downward weight, in arc
// order: Cch::one_to_all's candidates in its order under std::min's rule (the new one only when
// strictly less), so the same bits, lane by lane. (GCC did not vectorize the lanes' loop written
// with std::min: four scalar minima a candidate for four lanes.)
template <int kLanes>
struct LaneSweep {
  const ArcIndex* first;
  const VertexIndex* head;
  const double* down;
  double* distance;
  const detail::SweepChainEntry* chain;
  std::size_t chain_size;

  // The first chain entry at or below `rank`.
  std::size_t chain_from(VertexIndex rank) const {
    return static_cast<std::size_t>(
        std::partition_point(chain, chain + chain_size,
                             [rank](const detail::SweepChainEntry& e) { return e.rank > rank; }) -
        chain);
  }

  // `e`: the next chain entry at or below r; entries of ranks this sequence skips are passed.
  void rank(VertexIndex r, std::size_t& e) const {
    const ArcIndex end = first[static_cast<std::size_t>(r) + 1];
    if constexpr (kLanes == 1) {
      // A plain double: in LaneValues' struct, moved in and out by memcpy, GCC kept it in an
      // integer register and took the minimum by compare and cmov (New York: 5.1 ms a tree
      // against one_to_all's 3.2).
      double best = kInfinity;
      for (; e < chain_size && chain[e].rank >= r; ++e)
        if (chain[e].rank == r) best = chain[e].distance;
      for (ArcIndex a = first[static_cast<std::size_t>(r)]; a < end; ++a)
        best = std::min(best, distance[head[a]] + down[a]);
      distance[r] = best;
    } else {
      LaneValues<kLanes> best;
      if (e < chain_size && chain[e].rank >= r) {  // on some source's upward walk (rarely)
        double start[kLanes];
        for (int l = 0; l < kLanes; ++l) start[l] = kInfinity;
        for (; e < chain_size && chain[e].rank >= r; ++e)
          if (chain[e].rank == r) start[chain[e].lane] = chain[e].distance;
        std::memcpy(&best, start, sizeof best);
      } else {
        best = LaneValues<kLanes>::infinite();
      }
      for (ArcIndex a = first[static_cast<std::size_t>(r)]; a < end; ++a)
        best.take_less(distance + static_cast<std::size_t>(head[a]) * kLanes, down[a]);
      std::memcpy(distance + static_cast<std::size_t>(r) * kLanes, &best, sizeof best);
    }
  }

  // Ranks high, high - 1, .. low.
  void range(VertexIndex high, VertexIndex low, CancelPacer& pacer) const {
    std::size_t e = chain_from(high);
    for (VertexIndex block = high; block >= low; block -= kPacedRanks) {
      const VertexIndex stop = std::max(low, block - kPacedRanks + 1);
      pacer.throw_after(static_cast<std::int64_t>(first[block + 1] - first[stop]) + block - stop +
                        1);
      for (VertexIndex r = block; r >= stop; --r) rank(r, e);
    }
  }

  // ranks[0 .. count - 1], decreasing.
  void list(const VertexIndex* ranks, std::size_t count, CancelPacer& pacer) const {
    if (count == 0) return;
    std::size_t e = chain_from(ranks[0]);
    for (std::size_t i = 0; i < count; ++i) {
      const VertexIndex r = ranks[i];
      pacer.throw_after(1 + first[r + 1] - first[r]);
      rank(r, e);
    }
  }
};

}  // namespace

double* CchWorkspace::lane_distances(std::size_t values) {
  constexpr std::size_t kAlignment = 64;
  constexpr std::size_t kSlack = kAlignment / sizeof(double);
  if (lane_memory_.size() < values + kSlack)
    lane_memory_ = decltype(lane_memory_)(values + kSlack);  // fresh pages, faulted in once
  const auto address = reinterpret_cast<std::uintptr_t>(lane_memory_.data());
  return reinterpret_cast<double*>((address + kAlignment - 1) & ~std::uintptr_t{kAlignment - 1});
}

// The split of split_elimination_tree with each rank's work its upward arcs + 1 (one candidate
// each). The subtrees are handed out heaviest first to whichever thread is free (so close to the
// estimate's dealing). A subtree whose ranks are one range (its lowest rank is root - size + 1,
// as nested dissection numbers them) is swept as that range; another's ranks are listed (New
// York: 0 to 4 of 32 to 129 subtrees, the forest's small trees). New York on the 2-core VM: 3 ms
// for 2 to 16 threads, 9 for 64, once per hierarchy and thread count.
std::unique_ptr<Cch::SweepPlan> Cch::make_sweep_plan(int threads) const {
  Stopwatch watch;
  const auto n = static_cast<std::size_t>(vertex_count());
  auto plan = std::make_unique<SweepPlan>();
  plan->threads = threads;
  std::vector<double> work(n);
  for (std::size_t r = 0; r < n; ++r) work[r] = 1.0 + (first_[r + 1] - first_[r]);
  detail::TreeSplit tree = detail::split_elimination_tree(parent_span_.data, n, std::move(work),
                                                          threads, kMaxSweepSubtreesPerThread);
  plan->top = tree.top;
  std::sort(plan->top.begin(), plan->top.end(), std::greater<VertexIndex>());
  std::sort(tree.subtrees.begin(), tree.subtrees.end(), detail::heavier_subtree);

  // Each rank's subtree size and lowest rank (children rank below their parent).
  std::vector<VertexIndex> size(n, 1), lowest(n);
  for (std::size_t r = 0; r < n; ++r) lowest[r] = static_cast<VertexIndex>(r);
  for (std::size_t r = 0; r < n; ++r) {
    const VertexIndex p = parent_span_[r];
    if (p == kNoVertex) continue;
    size[static_cast<std::size_t>(p)] += size[r];
    lowest[static_cast<std::size_t>(p)] = std::min(lowest[static_cast<std::size_t>(p)], lowest[r]);
  }
  // owner: by rank, the listed subtree it belongs to (-1: the top or a range).
  std::vector<std::int32_t> owner;
  std::int64_t listed = 0;
  for (const auto& [subtree_work, root] : tree.subtrees) {
    const auto r = static_cast<std::size_t>(root);
    SweepPlan::Subtree subtree{root, size[r], -1};
    if (lowest[r] != root - size[r] + 1) {
      if (owner.empty()) owner.assign(n, -2);
      owner[r] = static_cast<std::int32_t>(plan->subtrees.size());
      subtree.list = listed;
      listed += size[r];
      ++plan->split.listed_subtrees;
    }
    plan->subtrees.push_back(subtree);
  }
  if (!owner.empty()) {
    for (VertexIndex r : plan->top) owner[static_cast<std::size_t>(r)] = -1;
    for (const SweepPlan::Subtree& subtree : plan->subtrees)
      if (subtree.list < 0) owner[static_cast<std::size_t>(subtree.root)] = -1;
    plan->listed.resize(static_cast<std::size_t>(listed));
    std::vector<std::int64_t> next(plan->subtrees.size());
    for (std::size_t k = 0; k < plan->subtrees.size(); ++k) next[k] = plan->subtrees[k].list;
    for (std::size_t r = n; r-- > 0;) {  // parents first, so decreasing in each list
      if (owner[r] == -2) owner[r] = owner[static_cast<std::size_t>(parent_span_[r])];
      if (owner[r] >= 0)
        plan->listed[static_cast<std::size_t>(next[static_cast<std::size_t>(owner[r])]++)] =
            static_cast<VertexIndex>(r);
    }
  }

  SweepSplit& split = plan->split;
  split.threads = threads;
  split.subtrees = static_cast<int>(plan->subtrees.size());
  split.top_ranks = static_cast<VertexIndex>(plan->top.size());
  split.top_work_share = tree.total_work > 0 ? tree.top_work / tree.total_work : 0.0;
  std::vector<double> load(static_cast<std::size_t>(threads));
  const double busiest = detail::deal_subtrees(tree.subtrees, load, nullptr);
  const double mean = (tree.total_work - tree.top_work) / threads;
  split.busiest_thread = mean > 0 ? busiest / mean : 1.0;
  split.plan_ms = watch.elapsed_ms();
  return plan;
}

const Cch::SweepPlan& Cch::sweep_plan(int threads) const {
  std::lock_guard<std::mutex> lock(sweep_plans_->mutex);
  for (const auto& plan : sweep_plans_->plans)
    if (plan->threads == threads) return *plan;
  // Made under the lock: a second caller waits for it instead of making it again.
  sweep_plans_->plans.push_back(make_sweep_plan(threads));
  return *sweep_plans_->plans.back();
}

Cch::SweepSplit Cch::sweep_split(int threads) const {
  return sweep_plan(std::max(1, threads)).split;
}

void Cch::many_to_all(const VertexIndex* sources, int count, double* const* rows,
                      CchWorkspace& workspace, const SweepOptions& options) const {
  if (count < 1 || count > kMaxSweepLanes)
    throw RoutingError(ErrorKind::kInternal, "a sweep takes 1 to " +
                                                 std::to_string(kMaxSweepLanes) + " sources, not " +
                                                 std::to_string(count));
  // The narrowest lanes that hold them: a lane left over costs as much as a source.
  if (count == 1) return sweep_lanes<1>(sources, count, rows, workspace, options);
  if (count == 2) return sweep_lanes<2>(sources, count, rows, workspace, options);
  if (count <= 4) return sweep_lanes<4>(sources, count, rows, workspace, options);
  sweep_lanes<8>(sources, count, rows, workspace, options);
}

template <int kLanes>
void Cch::sweep_lanes(const VertexIndex* sources, int count, double* const* rows, CchWorkspace& ws,
                      const SweepOptions& options) const {
  require_customized();
  options.cancel.throw_if_requested();  // the pacers poll only after a sweep's worth of work
  const VertexIndex n = vertex_count();
  const int threads = std::max(1, options.threads);
  // The upward walks, each source's reached ranks gathered with its lane, by decreasing rank.
  std::vector<detail::SweepChainEntry>& chain = ws.sweep_chain_;
  chain.clear();
  for (int lane = 0; lane < count; ++lane) {
    upward_search(sources[lane], ws.reached_, ws);
    for (const auto& [rank, distance] : ws.reached_) chain.push_back({rank, lane, distance});
  }
  std::sort(chain.begin(), chain.end(),
            [](const detail::SweepChainEntry& a, const detail::SweepChainEntry& b) {
              return a.rank > b.rank;
            });
  double* const distance = ws.lane_distances(static_cast<std::size_t>(n) * kLanes);
  const LaneSweep<kLanes> sweep{first_.data, head_.data,   down_.data,
                                distance,    chain.data(), chain.size()};
  if (threads == 1 || n == 0) {
    CancelPacer pacer(options.cancel);
    sweep.range(n - 1, 0, pacer);
  } else {
    const SweepPlan& plan = sweep_plan(threads);
    {
      CancelPacer pacer(options.cancel);
      sweep.list(plan.top.data(), plan.top.size(), pacer);
    }
    parallel_for_each(static_cast<int>(plan.subtrees.size()), threads, [&](int k, int) {
      CancelPacer pacer(options.cancel);  // this thread's own
      const SweepPlan::Subtree& subtree = plan.subtrees[static_cast<std::size_t>(k)];
      if (subtree.list < 0)
        sweep.range(subtree.root, subtree.root - subtree.size + 1, pacer);
      else
        sweep.list(plan.listed.data() + subtree.list, static_cast<std::size_t>(subtree.size),
                   pacer);
    });
  }

  // The lanes out into the rows after the sweep: each vertex's rank read once, its lanes in one
  // cache line, each row written in order, and pieces of vertices on several threads. (Storing
  // into the rows during the sweep, one_to_all's way, took 1.13-1.16 ms a tree against 1.15-1.28
  // for 8 lanes, 3.2 against 3.2-3.5 for one, but 2.6-3.0 against 2.1-2.2 for two, New York on
  // the 2-core VM; and threads would share the rows' cache lines.)
  const auto gather = [&](VertexIndex from, VertexIndex to) {
    if (options.targets == nullptr) {
      for (VertexIndex v = from; v < to; ++v) {
        const double* lanes = distance + static_cast<std::size_t>(rank_[v]) * kLanes;
        for (int lane = 0; lane < count; ++lane) rows[lane][v] = lanes[lane];
      }
      return;
    }
    for (VertexIndex j = from; j < to; ++j) {
      const double* lanes =
          distance + static_cast<std::size_t>(checked_rank(options.targets[j])) * kLanes;
      for (int lane = 0; lane < count; ++lane) rows[lane][j] = lanes[lane];
    }
  };
  const VertexIndex columns = options.targets == nullptr ? n : options.target_count;
  const int pieces = static_cast<int>((columns + kGatherPiece - 1) / kGatherPiece);
  if (threads == 1 || pieces <= 1) {
    gather(0, columns);
    return;
  }
  parallel_for_each(pieces, threads, [&](int k, int) {
    gather(k * kGatherPiece, std::min(columns, (k + 1) * kGatherPiece));
  });
}

}  // namespace gpu_routing
