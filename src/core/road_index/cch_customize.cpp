// The hierarchy's customization (Cch::customize): the graph's weights on the upward arcs by
// lower-triangle relaxation, on one thread or on elimination-tree subtrees in parallel, into
// weight arrays on huge pages where asked.
#include "road_index/cch.hpp"

#ifdef __linux__
#include <sys/mman.h>
#endif

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <utility>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "base/parallel.hpp"
#include "road_index/cancel_pacer.hpp"
#include "road_index/tree_split.hpp"

namespace gpu_routing {

using detail::CancelPacer;

namespace {

// The work relax_lower_triangles does for a vertex of `up_arcs` upward arcs: half their pairs,
// and about as much again walking the upper ends' arcs.
inline std::int64_t triangle_work(ArcIndex up_arcs) {
  const auto d = static_cast<std::int64_t>(up_arcs);
  return 1 + d * d;
}

// Where the weights of the arcs leaving some ranks are written: `up`, `down`, `up_via` and
// `down_via` indexed by (CCH arc - shift).
struct ArcTarget {
  double* up;
  double* down;
  std::int32_t* up_via;
  std::int32_t* down_via;
  ArcIndex shift;
};

// The lower triangles whose middle is rank u: for upward arcs u-v and u-w (v < w), v -> u -> w
// offers a weight for arc v-w upward, and w -> u -> v one for it downward. The arcs leaving u are
// read from `up` and `down` (final by now: every arc leaving rank u upward has had all its lower
// triangles, middles below u, applied by the time u is reached); arc v-w is written where
// target_of(v) says. Chordality puts w among v's upward neighbours, and both rows are sorted, so
// a forward scan of v's row finds each w. A candidate replaces on strict improvement, so that one
// sweep over increasing middles keeps the lowest middle among equally cheap ones; with
// kLowestMiddle also on a tie with a higher middle, for ranks relaxed after higher ones.
template <bool kLowestMiddle, typename TargetOf>
inline void relax_lower_triangles(VertexIndex u, const ArcIndex* first, const VertexIndex* head,
                                  const double* up, const double* down, std::int32_t middle,
                                  TargetOf&& target_of) {
  const ArcIndex u_end = first[static_cast<std::size_t>(u) + 1];
  for (ArcIndex uv = first[static_cast<std::size_t>(u)]; uv < u_end; ++uv) {
    const VertexIndex v = head[static_cast<std::size_t>(uv)];
    const double v_to_u = down[static_cast<std::size_t>(uv)];
    const double u_to_v = up[static_cast<std::size_t>(uv)];
    const ArcTarget target = target_of(v);
    ArcIndex vw = first[static_cast<std::size_t>(v)];
    for (ArcIndex uw = uv + 1; uw < u_end; ++uw) {
      const VertexIndex w = head[static_cast<std::size_t>(uw)];
      while (head[static_cast<std::size_t>(vw)] < w) ++vw;
      const auto at = static_cast<std::size_t>(vw - target.shift);
      const double v_to_w = v_to_u + up[static_cast<std::size_t>(uw)];
      if (v_to_w < target.up[at] ||
          (kLowestMiddle && v_to_w == target.up[at] && target.up_via[at] < middle)) {
        target.up[at] = v_to_w;
        target.up_via[at] = middle;
      }
      const double w_to_v = down[static_cast<std::size_t>(uw)] + u_to_v;
      if (w_to_v < target.down[at] ||
          (kLowestMiddle && w_to_v == target.down[at] && target.down_via[at] < middle)) {
        target.down[at] = w_to_v;
        target.down_via[at] = middle;
      }
    }
  }
}

// The cheapest original arc of each direction (the first of equally cheap parallel arcs), for
// the graph's vertices [begin, end). An upward CCH arc's weight comes only from arcs leaving its
// lower end, a downward one's only from arcs leaving its higher end, so disjoint vertex ranges
// write disjoint entries.
void apply_original_arcs(const CsrGraph& forward, VertexIndex begin, VertexIndex end,
                         const VertexIndex* rank_of_vertex, const ArcIndex* input_arc_to_cch_arc,
                         const ArcTarget& out) {
  for (VertexIndex u = begin; u < end; ++u) {
    const VertexIndex rank_u = rank_of_vertex[u];
    for (ArcIndex a = forward.begin(u); a < forward.end(u); ++a) {
      const ArcIndex arc = input_arc_to_cch_arc[a];
      if (arc == kNoArc) continue;
      const double weight = forward.weights[static_cast<std::size_t>(a)];
      const bool upward = rank_u < rank_of_vertex[forward.heads[static_cast<std::size_t>(a)]];
      double& best = upward ? out.up[arc] : out.down[arc];
      if (weight < best) {
        best = weight;
        (upward ? out.up_via : out.down_via)[arc] = a;
      }
    }
  }
}

// The most subtrees per thread that a parallel customization splits into (plan_customization).
constexpr int kMaxSubtreesPerThread = 16;

}  // namespace

// The elimination tree split into a top and subtrees (split_elimination_tree), the subtrees dealt
// to the threads. Work of a rank u: 1 + for each upward arc u-v, 1 + the triangles it starts
// (later upward arcs of u) + v's upward arcs (the scan of v's row).
void Cch::plan_customization(int threads) {
  const auto n = parent_.size();
  CustomizationPlan& plan = plan_;
  plan = CustomizationPlan();
  plan.threads = threads;
  std::vector<double> work(n);
  for (std::size_t r = 0; r < n; ++r) {
    double w = 1.0;
    for (ArcIndex uv = arc_first_[r]; uv < arc_first_[r + 1]; ++uv) {
      const auto v = static_cast<std::size_t>(arc_head_[static_cast<std::size_t>(uv)]);
      w += static_cast<double>(arc_first_[r + 1] - uv) + (arc_first_[v + 1] - arc_first_[v]);
    }
    work[r] = w;
  }
  const detail::TreeSplit tree = detail::split_elimination_tree(parent_.data(), n, std::move(work),
                                                                threads, kMaxSubtreesPerThread);

  // owner: a thread, or -1 for the top; the subtrees' roots dealt, the rest where their parent is.
  std::vector<ArcIndex>& owner = plan.top_shift;
  owner.assign(n, -2);
  for (VertexIndex r : tree.top) owner[static_cast<std::size_t>(r)] = -1;
  std::vector<double> load(static_cast<std::size_t>(threads));
  detail::deal_subtrees(tree.subtrees, load, &owner);
  for (std::size_t r = n; r-- > 0;)  // parents rank higher
    if (owner[r] == -2) owner[r] = owner[static_cast<std::size_t>(parent_[r])];

  plan.ranks.resize(n);
  plan.first.assign(static_cast<std::size_t>(threads) + 2, 0);
  for (std::size_t r = 0; r < n; ++r)
    ++plan.first[static_cast<std::size_t>(owner[r] < 0 ? threads : owner[r]) + 1];
  for (std::size_t k = 0; k <= static_cast<std::size_t>(threads); ++k)
    plan.first[k + 1] += plan.first[k];
  std::vector<std::size_t> next(plan.first.begin(), plan.first.end() - 1);
  for (std::size_t r = 0; r < n; ++r) {
    const bool top = owner[r] < 0;
    plan.ranks[next[top ? threads : static_cast<std::size_t>(owner[r])]++] =
        static_cast<VertexIndex>(r);
    plan.top_shift[r] = top ? arc_first_[r] - plan.top_arcs : -1;  // owner[r] no more
    if (top) plan.top_arcs += arc_first_[r + 1] - arc_first_[r];
  }

  CustomizationSplit& split = plan.split;
  split.threads = threads;
  split.subtrees = static_cast<int>(tree.subtrees.size());
  split.top_ranks = static_cast<VertexIndex>(tree.top.size());
  split.top_arcs = plan.top_arcs;
  split.top_work_share = tree.total_work > 0 ? tree.top_work / tree.total_work : 0.0;
  const double mean = (tree.total_work - tree.top_work) / threads;
  split.busiest_thread = mean > 0 ? *std::max_element(load.begin(), load.end()) / mean : 1.0;
}

namespace {
constexpr std::size_t kHugeFrom = std::size_t{4} << 20;
// Set by customize() for a hierarchy asked to use huge pages, read by WeightMemory::allocate (the
// allocator is stateless).
thread_local bool t_huge_pages = false;
}  // namespace

void Cch::begin_customization(const Graph& graph) {
  if (is_view_)
    throw RoutingError(ErrorKind::kInternal, "a contraction hierarchy image cannot be customized");
  if (!same_topology(graph))
    throw RoutingError(ErrorKind::kInvalidParameter,
                       "the graph to customize with has another topology than the hierarchy",
                       "build the hierarchy again (new order) after the topology changes");
  customized_ = false;
  struct HugePagesScope {
    bool saved;
    explicit HugePagesScope(bool on) : saved(t_huge_pages) { t_huge_pages = on; }
    ~HugePagesScope() { t_huge_pages = saved; }
  } huge_pages_scope(huge_pages_);
  const auto m = static_cast<std::size_t>(arc_count());
  up_weight_.resize(m);
  down_weight_.resize(m);
  up_via_.resize(m);
  down_via_.resize(m);
}

void Cch::finish_customization(double ms, const CustomizationSplit& split) {
  split_ = split;
  customized_ = true;
  bind_owned();
  customization_ms_ = ms;
}

void Cch::customize(const Graph& graph, const CancelToken& cancel, int threads) {
  Stopwatch watch;
  begin_customization(graph);  // the weight arrays sized, so nothing below allocates them
  const VertexIndex n = vertex_count();
  if (threads <= 0) threads = n >= kCchParallelRanks ? resolve_thread_count(0) : 1;
  const auto m = static_cast<std::size_t>(arc_count());
  const ArcIndex* first = arc_first_.data();
  const VertexIndex* head = arc_head_.data();
  const CsrGraph& forward = graph.forward;

  if (threads == 1) {
    up_weight_.assign(m, kInfinity);
    down_weight_.assign(m, kInfinity);
    up_via_.assign(m, kNoArc);
    down_via_.assign(m, kNoArc);
    const ArcTarget shared{up_weight_.data(), down_weight_.data(), up_via_.data(), down_via_.data(),
                           0};
    apply_original_arcs(forward, 0, n, rank_of_vertex_.data(), input_arc_to_cch_arc_.data(),
                        shared);
    CancelPacer pacer(cancel);
    cancel.throw_if_requested();
    for (VertexIndex u = 0; u < n; ++u) {
      pacer.throw_after(triangle_work(first[u + 1] - first[u]));
      relax_lower_triangles<false>(u, first, head, up_weight_.data(), down_weight_.data(),
                                   encode_middle(u), [&](VertexIndex) { return shared; });
    }
    finish_customization(watch.elapsed_ms(), CustomizationSplit());
    return;
  }

  // Several threads. Filling with +infinity (a fresh hierarchy's arrays are mapped then, by every
  // thread) and the original arcs' pass go by ranges too.
  const ArcTarget shared{up_weight_.data(), down_weight_.data(), up_via_.data(), down_via_.data(),
                         0};
  if (plan_.threads != threads) plan_customization(threads);
  const CustomizationPlan& plan = plan_;
  const auto top_arcs = static_cast<std::size_t>(plan.top_arcs);
  const VertexIndex* top_begin = plan.ranks.data() + plan.first[static_cast<std::size_t>(threads)];
  const VertexIndex* top_end = plan.ranks.data() + plan.ranks.size();
  // Each thread's private copy of the top's arcs, starting from the original arcs' weights.
  std::vector<double> local_up(top_arcs * static_cast<std::size_t>(threads));
  std::vector<double> local_down(local_up.size());
  std::vector<std::int32_t> local_up_via(local_up.size()), local_down_via(local_up.size());
  std::atomic<bool> stop{false};
  prepare_worker_threads(threads);
#pragma omp parallel num_threads(threads)
  {
#ifdef _OPENMP
    const int team = omp_get_num_threads(), member = omp_get_thread_num();
#else
    const int team = 1, member = 0;
#endif
    {
      const std::size_t from = m * static_cast<std::size_t>(member) / team;
      const std::size_t to = m * (static_cast<std::size_t>(member) + 1) / team;
      std::fill(up_weight_.begin() + from, up_weight_.begin() + to, kInfinity);
      std::fill(down_weight_.begin() + from, down_weight_.begin() + to, kInfinity);
      std::fill(up_via_.begin() + from, up_via_.begin() + to, kNoArc);
      std::fill(down_via_.begin() + from, down_via_.begin() + to, kNoArc);
    }
#pragma omp barrier
    apply_original_arcs(forward, static_cast<VertexIndex>(std::int64_t{n} * member / team),
                        static_cast<VertexIndex>(std::int64_t{n} * (member + 1) / team),
                        rank_of_vertex_.data(), input_arc_to_cch_arc_.data(), shared);
#pragma omp barrier
    for (int k = member; k < threads; k += team) {
      const std::size_t base = top_arcs * static_cast<std::size_t>(k);
      for (const VertexIndex* t = top_begin; t != top_end; ++t) {
        const auto from = static_cast<std::size_t>(first[*t]);
        const auto to = static_cast<std::size_t>(first[*t + 1]);
        const std::size_t at = base + from - static_cast<std::size_t>(plan.top_shift[*t]);
        std::copy(up_weight_.begin() + from, up_weight_.begin() + to, local_up.begin() + at);
        std::copy(down_weight_.begin() + from, down_weight_.begin() + to, local_down.begin() + at);
        std::copy(up_via_.begin() + from, up_via_.begin() + to, local_up_via.begin() + at);
        std::copy(down_via_.begin() + from, down_via_.begin() + to, local_down_via.begin() + at);
      }
      // The subtrees' ranks in increasing order: arcs leaving them are this thread's alone, arcs
      // leaving the top go to the private copy.
      const ArcTarget local{local_up.data() + base, local_down.data() + base,
                            local_up_via.data() + base, local_down_via.data() + base, 0};
      const VertexIndex* mine = plan.ranks.data() + plan.first[static_cast<std::size_t>(k)];
      const std::size_t count =
          plan.first[static_cast<std::size_t>(k) + 1] - plan.first[static_cast<std::size_t>(k)];
      CancelPacer pacer(cancel);  // this thread's own; throwing here is not allowed
      for (std::size_t i = 0; i < count; ++i) {
        const VertexIndex u = mine[i];
        if (stop.load(std::memory_order_relaxed)) break;
        if (pacer.stop_after(triangle_work(first[u + 1] - first[u]))) {
          stop.store(true, std::memory_order_relaxed);
          break;
        }
        relax_lower_triangles<false>(u, first, head, up_weight_.data(), down_weight_.data(),
                                     encode_middle(u), [&](VertexIndex v) {
                                       const ArcIndex shift =
                                           plan.top_shift[static_cast<std::size_t>(v)];
                                       if (shift < 0) return shared;
                                       ArcTarget target = local;
                                       target.shift = shift;
                                       return target;
                                     });
      }
    }
  }
  if (stop.load()) throw Cancelled();
  cancel.throw_if_requested();

  // The copies merged: the least weight, on a tie the lowest middle (the highest encoded via).
  // A copy's entry differs from the original arcs' pass only where a middle was strictly
  // cheaper, so an original arc is never replaced on a tie.
  const auto merge = [](double candidate, std::int32_t candidate_via, double& weight,
                        std::int32_t& via) {
    if (candidate < weight || (candidate == weight && via < candidate_via)) {
      weight = candidate;
      via = candidate_via;
    }
  };
  for (const VertexIndex* t = top_begin; t != top_end; ++t) {
    const ArcIndex shift = plan.top_shift[static_cast<std::size_t>(*t)];
    for (ArcIndex vw = first[*t]; vw < first[*t + 1]; ++vw) {
      const auto arc = static_cast<std::size_t>(vw);
      for (std::size_t at = static_cast<std::size_t>(vw - shift); at < local_up.size();
           at += top_arcs) {
        merge(local_up[at], local_up_via[at], up_weight_[arc], up_via_[arc]);
        merge(local_down[at], local_down_via[at], down_weight_[arc], down_via_[arc]);
      }
    }
  }
  // Then the top's ranks, increasing, on this thread: below some subtrees' ranks now and then,
  // so ties go to the lower middle explicitly.
  CancelPacer pacer(cancel);
  for (const VertexIndex* t = top_begin; t != top_end; ++t) {
    pacer.throw_after(triangle_work(first[*t + 1] - first[*t]));
    relax_lower_triangles<true>(*t, first, head, up_weight_.data(), down_weight_.data(),
                                encode_middle(*t), [&](VertexIndex) { return shared; });
  }
  finish_customization(watch.elapsed_ms(), plan.split);
}

void* Cch::WeightMemory::allocate(std::size_t bytes) {
  if (bytes >= kHugeFrom) {
    const std::size_t alignment = t_huge_pages ? kHugePageBytes : 64;
    const std::size_t rounded = (bytes + alignment - 1) / alignment * alignment;
    void* memory = std::aligned_alloc(alignment, rounded);
    if (memory == nullptr) throw std::bad_alloc();
#ifdef __linux__
    if (t_huge_pages) madvise(memory, rounded, MADV_HUGEPAGE);  // ignored where they are off
#endif
    return memory;
  }
  return ::operator new(bytes);
}

void Cch::WeightMemory::free(void* memory, std::size_t bytes) noexcept {
  if (bytes >= kHugeFrom) {
    std::free(memory);
    return;
  }
  ::operator delete(memory);
}

}  // namespace gpu_routing
