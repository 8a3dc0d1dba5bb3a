// The hierarchy: its construction from a contraction order (nested_dissection.cpp gives one)
// and its queries. Its customization is in cch_customize.cpp, its flat images in cch_image.cpp,
// PHAST for several sources and on several threads in cch_sweep.cpp.
#include "road_index/cch.hpp"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>

#include "base/parallel_for.hpp"
#include "road_index/cancel_pacer.hpp"
#include "road_index/undirected_topology.hpp"

namespace gpu_routing {

using detail::CancelPacer;
using detail::undirected_topology;
using detail::UndirectedTopology;

namespace {

constexpr std::size_t kMaxArcs = static_cast<std::size_t>(std::numeric_limits<ArcIndex>::max());

}  // namespace

void CchWorkspace::resize(VertexIndex vertex_count) {
  const auto n = static_cast<std::size_t>(vertex_count);
  // Fresh arrays, their pages not yet touched (a walk touches only its chain's).
  forward_distance_ = Scratch<double>(n);
  backward_distance_ = Scratch<double>(n);
  forward_arc_ = Scratch<std::int32_t>(n);
  backward_arc_ = Scratch<std::int32_t>(n);
  forward_filled_ = backward_filled_ = false;
  settled_.clear();
  settled_ranks_.clear();
  settle_chain_.clear();
  settled_arcs_ = 0;
}

void Cch::prime_forward(VertexIndex start, CchWorkspace& ws) const {
  if (ws.forward_distance_.size() != static_cast<std::size_t>(vertex_count()))
    ws.resize(vertex_count());
  if (!ws.forward_filled_) reset_walk(start, ws.forward_distance_);
}

void Cch::prime_backward(VertexIndex start, CchWorkspace& ws) const {
  if (ws.backward_distance_.size() != static_cast<std::size_t>(vertex_count()))
    ws.resize(vertex_count());
  if (!ws.backward_filled_) reset_walk(start, ws.backward_distance_);
}

void Cch::unwind_forward(VertexIndex start, CchWorkspace& ws) const {
  if (ws.forward_filled_) reset_walk(start, ws.forward_distance_);
}

void Cch::unwind_backward(VertexIndex start, CchWorkspace& ws) const {
  if (ws.backward_filled_) reset_walk(start, ws.backward_distance_);
}

void Cch::fill_forward(CchWorkspace& ws) const {
  if (ws.forward_distance_.size() != static_cast<std::size_t>(vertex_count()))
    ws.resize(vertex_count());
  if (ws.forward_filled_) return;
  std::fill(ws.forward_distance_.begin(), ws.forward_distance_.end(), kInfinity);
  ws.forward_filled_ = true;
}

Cch::Cch(const Graph& graph, std::vector<VertexIndex> order, const CancelToken& cancel)
    : vertex_at_rank_(std::move(order)) {
  Stopwatch watch;
  const VertexIndex n = graph.vertex_count();
  if (vertex_at_rank_.size() != static_cast<std::size_t>(n))
    throw RoutingError(ErrorKind::kInvalidParameter,
                       "the contraction order has " + std::to_string(vertex_at_rank_.size()) +
                           " entries for " + std::to_string(n) + " vertices");
  rank_of_vertex_.assign(static_cast<std::size_t>(n), kNoVertex);
  for (VertexIndex r = 0; r < n; ++r) {
    const VertexIndex v = vertex_at_rank_[static_cast<std::size_t>(r)];
    if (v < 0 || v >= n || rank_of_vertex_[static_cast<std::size_t>(v)] != kNoVertex)
      throw RoutingError(ErrorKind::kInvalidParameter, "the contraction order is no permutation");
    rank_of_vertex_[static_cast<std::size_t>(v)] = r;
  }

  // Contracting ranks in increasing order: a rank's upward neighbours become pairwise adjacent.
  // Adding them all to the lowest one (its elimination-tree parent) suffices, since that one is
  // contracted next among them and passes the rest on in turn.
  std::vector<std::vector<VertexIndex>> upward(static_cast<std::size_t>(n));
  {
    const UndirectedTopology topology = undirected_topology(graph.forward);
    for (VertexIndex v = 0; v < n; ++v) {
      const VertexIndex rank = rank_of_vertex_[static_cast<std::size_t>(v)];
      for (const VertexIndex* w = topology.begin(v); w != topology.end(v); ++w) {
        const VertexIndex other = rank_of_vertex_[static_cast<std::size_t>(*w)];
        if (other > rank) upward[static_cast<std::size_t>(rank)].push_back(other);
      }
    }
  }
  parent_.assign(static_cast<std::size_t>(n), kNoVertex);
  arc_first_.assign(static_cast<std::size_t>(n) + 1, 0);
  CancelPacer pacer(cancel);
  cancel.throw_if_requested();
  for (VertexIndex r = 0; r < n; ++r) {
    std::vector<VertexIndex>& row = upward[static_cast<std::size_t>(r)];
    pacer.throw_after(1 + 8 * static_cast<std::int64_t>(row.size()));  // sorted, then copied
    std::sort(row.begin(), row.end());
    row.erase(std::unique(row.begin(), row.end()), row.end());
    if (!row.empty()) {
      const VertexIndex parent = row.front();
      parent_[static_cast<std::size_t>(r)] = parent;
      auto& parent_row = upward[static_cast<std::size_t>(parent)];
      parent_row.insert(parent_row.end(), row.begin() + 1, row.end());
    }
    if (arc_head_.size() + row.size() > kMaxArcs)
      throw RoutingError(ErrorKind::kProgramLimit,
                         "the contraction hierarchy needs more than 2^31 - 1 arcs",
                         "a better contraction order (with coordinates) needs fewer");
    arc_head_.insert(arc_head_.end(), row.begin(), row.end());
    arc_first_[static_cast<std::size_t>(r) + 1] = static_cast<ArcIndex>(arc_head_.size());
    std::vector<VertexIndex>().swap(row);  // final: no lower rank adds to it any more
  }
  arc_head_.shrink_to_fit();

  std::vector<int> depth(static_cast<std::size_t>(n), 1);
  for (VertexIndex r = n - 1; r >= 0; --r) {
    const VertexIndex parent = parent_[static_cast<std::size_t>(r)];
    if (parent != kNoVertex)
      depth[static_cast<std::size_t>(r)] = depth[static_cast<std::size_t>(parent)] + 1;
    elimination_tree_height_ =
        std::max(elimination_tree_height_, depth[static_cast<std::size_t>(r)]);
  }

  map_input_arcs(graph);
  workspace_.resize(n);
  bind_owned();
  build_ms_ = watch.elapsed_ms();
}

void Cch::bind_owned() {
  auto span = [](const auto& vector) {
    return CchSpan<typename std::decay_t<decltype(vector)>::value_type>{vector.data(),
                                                                        vector.size()};
  };
  at_rank_ = span(vertex_at_rank_);
  rank_ = span(rank_of_vertex_);
  parent_span_ = span(parent_);
  first_ = span(arc_first_);
  head_ = span(arc_head_);
  up_ = span(up_weight_);
  down_ = span(down_weight_);
  up_via_span_ = span(up_via_);
  down_via_span_ = span(down_via_);
  input_arc_span_ = span(input_arc_to_cch_arc_);
}

bool Cch::same_topology(const Graph& graph) const {
  return graph.vertex_count() == vertex_count() &&
         static_cast<std::size_t>(graph.arc_count()) == input_arc_span_.count &&
         topology_fingerprint(graph) == fingerprint_;
}

std::uint64_t Cch::topology_fingerprint(const Graph& graph) {
  // FNV-1a over the CSR structure: re-customizing with a graph of another topology would index
  // arcs that are not there, so customize() refuses it.
  std::uint64_t hash = 14695981039346656037ULL;
  auto mix = [&hash](std::uint64_t value) {
    hash ^= value;
    hash *= 1099511628211ULL;
  };
  const CsrGraph& forward = graph.forward;
  mix(static_cast<std::uint64_t>(forward.vertex_count));
  for (ArcIndex offset : forward.row_offsets) mix(static_cast<std::uint64_t>(offset));
  for (VertexIndex head : forward.heads) mix(static_cast<std::uint64_t>(head));
  return hash;
}

void Cch::map_input_arcs(const Graph& graph) {
  bind_owned();  // find_arc reads the spans
  const CsrGraph& forward = graph.forward;
  input_arc_to_cch_arc_.assign(static_cast<std::size_t>(forward.arc_count()), kNoArc);
  for (VertexIndex u = 0; u < forward.vertex_count; ++u) {
    const VertexIndex rank_u = rank_of_vertex_[static_cast<std::size_t>(u)];
    for (ArcIndex a = forward.begin(u); a < forward.end(u); ++a) {
      const VertexIndex rank_v =
          rank_of_vertex_[static_cast<std::size_t>(forward.heads[static_cast<std::size_t>(a)])];
      if (rank_v == rank_u) continue;  // a self loop is on no shortest path
      input_arc_to_cch_arc_[static_cast<std::size_t>(a)] =
          find_arc(std::min(rank_u, rank_v), std::max(rank_u, rank_v));
    }
  }
  fingerprint_ = topology_fingerprint(graph);
  bind_owned();
}

ArcIndex Cch::find_arc(VertexIndex lower_rank, VertexIndex higher_rank) const {
  const auto first = head_.begin() + first_[static_cast<std::size_t>(lower_rank)];
  const auto last = head_.begin() + first_[static_cast<std::size_t>(lower_rank) + 1];
  const auto found = std::lower_bound(first, last, higher_rank);
  if (found == last || *found != higher_rank)
    throw RoutingError(ErrorKind::kInternal, "contraction hierarchy arc missing");
  return static_cast<ArcIndex>(found - head_.begin());
}

CchWorkspace& Cch::own_workspace() {
  if (workspace_.forward_distance_.size() != static_cast<std::size_t>(vertex_count()))
    workspace_.resize(vertex_count());
  return workspace_;
}

void Cch::require_customized() const {
  if (!customized_)
    throw RoutingError(ErrorKind::kInternal, "contraction hierarchy queried before customization");
}

VertexIndex Cch::checked_rank(VertexIndex vertex) const {
  if (vertex < 0 || vertex >= vertex_count())
    throw RoutingError(ErrorKind::kInvalidParameter,
                       "vertex index " + std::to_string(vertex) + " is not in the hierarchy");
  return rank_[static_cast<std::size_t>(vertex)];
}

// Every upward neighbour of a rank is one of its elimination-tree ancestors, so walking the
// ancestors in increasing rank relaxes each reached rank after all arcs into it: no queue. Each
// reached rank is shown to `visit(x, distance)` with its final distance before its arcs are
// relaxed.
template <typename Visit>
void Cch::walk_up(VertexIndex start, CchWorkspace::Scratch<double>& distance,
                  const CchSpan<double>& weights, CchWorkspace::Scratch<std::int32_t>* arc_of,
                  Visit&& visit) const {
  distance[static_cast<std::size_t>(start)] = 0.0;
  for (VertexIndex x = start; x != kNoVertex; x = parent_span_[static_cast<std::size_t>(x)]) {
    const double here = distance[static_cast<std::size_t>(x)];
    if (here == kInfinity) continue;
    visit(x, here);
    for (ArcIndex a = first_[static_cast<std::size_t>(x)];
         a < first_[static_cast<std::size_t>(x) + 1]; ++a) {
      const auto y = static_cast<std::size_t>(head_[static_cast<std::size_t>(a)]);
      const double through = here + weights[static_cast<std::size_t>(a)];
      if (through < distance[y]) {
        distance[y] = through;
        if (arc_of != nullptr) (*arc_of)[y] = a;
      }
    }
  }
}

void Cch::reset_walk(VertexIndex start, CchWorkspace::Scratch<double>& distance) const {
  for (VertexIndex x = start; x != kNoVertex; x = parent_span_[static_cast<std::size_t>(x)])
    distance[static_cast<std::size_t>(x)] = kInfinity;
}

// One-to-one: the elimination-tree query with pruning (Bauer, Columbus, Rutter, Wagner, "Search-
// space size in contraction hierarchies", 2016; Buchhold, Sanders, Wagner, "Real-time traffic
// assignment using engineered customizable contraction hierarchies", 2019). The source's chain
// (x: forward distances over upward weights) and the target's (y: backward distances over
// downward weights) are taken together in increasing rank. Every arc into a rank leaves a lower
// rank of the same chain, so a rank's distance is final when the walk reaches it, and a common
// ancestor's total can be compared with the best right away. A rank's arcs in a direction then
// need relaxing only where its distance there is at most the best so far: whatever they set is
// at least that distance, so more than the best, which only falls.
//
// Why the answer is that of two full walks and a scan of the common ancestors, bit for bit (the
// best, the meeting rank, and the arcs recorded along the chosen chains, so the paths too): let
// F and B be the full walks' distances and D their best total, which is at most every best met
// on the way. By induction in rank, every rank r with F[r] <= D has F[r] here and the same
// recorded arc. Each arc that attains F[r] leaves a rank q with F[q] <= F[r] <= D (weights are
// not negative), which by induction has its full value, is not pruned (F[q] <= D <= best), and
// relaxes r in the same order as in the full walk. Every other relaxation of r, skipped or not,
// offers more than F[r] in both walks (a rank's distance here is never below its full one). So
// the first strict improvement to F[r], the arc recorded, is the same one. Likewise for B. The
// meeting rank m, the lowest with F[m] + B[m] = D, has F[m], B[m] <= D, so its total is D here
// too; lower common ancestors total more than D in the full walks and so no less here: m is the
// first to reach D, and the strict comparison keeps it. The chosen chains descend from m through
// ranks with F (B) at most D, whose recorded arcs are the full walks'. (Pruning on >= would be
// exact too: a rank is pruned only once a common ancestor at or below it holds the best, so what
// it relaxes lies above the chosen chains; it would save only exact ties.) Only ranks on the two
// chains are written (arc heads are ancestors), pruned ones included, and prime/unwind reset the
// whole chains.
template <bool kRecordArcs>
VertexIndex Cch::pruned_meeting_walk(VertexIndex source_rank, VertexIndex target_rank,
                                     CchWorkspace& ws, double* best) const {
  double* const forward = ws.forward_distance_.data();
  double* const backward = ws.backward_distance_.data();
  std::int32_t* const forward_arc = ws.forward_arc_.data();
  std::int32_t* const backward_arc = ws.backward_arc_.data();
  // Branch-free: whether an arc improves its head follows no pattern, and the mispredictions
  // cost more than storing every head back (New York: a distance query 18 -> 9 us). The stores
  // keep what the branch would: std::min(before, through) is `before` unless through < before,
  // and the mask keeps the head's arc unless it strictly improves. The loop's end is read once
  // since the int32 stores into arc_of could alias first_ as far as the compiler knows.
  const auto relax = [this](VertexIndex rank, double here, double* distance,
                            const CchSpan<double>& weights, std::int32_t* arc_of) {
    const ArcIndex end = first_[static_cast<std::size_t>(rank) + 1];
    for (ArcIndex a = first_[static_cast<std::size_t>(rank)]; a < end; ++a) {
      const auto head = static_cast<std::size_t>(head_[static_cast<std::size_t>(a)]);
      const double through = here + weights[static_cast<std::size_t>(a)];
      const double before = distance[head];
      distance[head] = std::min(before, through);
      if constexpr (kRecordArcs) {
        const std::int32_t keep = -static_cast<std::int32_t>(!(through < before));
        arc_of[head] = (arc_of[head] & keep) | (a & ~keep);
      }
    }
  };
  forward[static_cast<std::size_t>(source_rank)] = 0.0;
  backward[static_cast<std::size_t>(target_rank)] = 0.0;
  double best_total = kInfinity;
  VertexIndex meeting = kNoVertex;
  VertexIndex x = source_rank;
  VertexIndex y = target_rank;
  // Below the first common ancestor there is no total yet, so nothing to prune by.
  while (x != y) {
    if (y == kNoVertex || (x != kNoVertex && x < y)) {
      const double here = forward[static_cast<std::size_t>(x)];
      if (here != kInfinity) relax(x, here, forward, up_, forward_arc);
      x = parent_span_[static_cast<std::size_t>(x)];
    } else {
      const double here = backward[static_cast<std::size_t>(y)];
      if (here != kInfinity) relax(y, here, backward, down_, backward_arc);
      y = parent_span_[static_cast<std::size_t>(y)];
    }
  }
  // From here on the chains coincide.
  for (; x != kNoVertex; x = parent_span_[static_cast<std::size_t>(x)]) {
    const double up = forward[static_cast<std::size_t>(x)];
    const double down = backward[static_cast<std::size_t>(x)];
    const double total = up + down;
    if (total < best_total) {
      best_total = total;
      meeting = x;
    }
    if (up <= best_total && up != kInfinity) relax(x, up, forward, up_, forward_arc);
    if (down <= best_total && down != kInfinity) relax(x, down, backward, down_, backward_arc);
  }
  *best = best_total;
  return meeting;
}

VertexIndex Cch::search(VertexIndex source_rank, VertexIndex target_rank, CchWorkspace& ws,
                        double* best, bool record_arcs) const {
  prime_forward(source_rank, ws);
  prime_backward(target_rank, ws);
  return record_arcs ? pruned_meeting_walk<true>(source_rank, target_rank, ws, best)
                     : pruned_meeting_walk<false>(source_rank, target_rank, ws, best);
}

void Cch::clear(VertexIndex source_rank, VertexIndex target_rank, CchWorkspace& ws) const {
  unwind_forward(source_rank, ws);
  unwind_backward(target_rank, ws);
}

double Cch::distance(VertexIndex s, VertexIndex t, CchWorkspace& workspace) const {
  require_customized();
  const VertexIndex source_rank = checked_rank(s);
  const VertexIndex target_rank = checked_rank(t);
  if (s == t) return 0.0;
  double best = kInfinity;
  search(source_rank, target_rank, workspace, &best, false);
  clear(source_rank, target_rank, workspace);
  return best;
}

std::vector<ArcIndex> Cch::path(VertexIndex s, VertexIndex t, CchWorkspace& workspace) const {
  require_customized();
  const VertexIndex source_rank = checked_rank(s);
  const VertexIndex target_rank = checked_rank(t);
  std::vector<ArcIndex> arcs;
  if (s == t) return arcs;
  double best = kInfinity;
  const VertexIndex meeting = search(source_rank, target_rank, workspace, &best, true);
  if (meeting == kNoVertex) {
    clear(source_rank, target_rank, workspace);
    return arcs;
  }
  // The arc that set a rank's distance starts at a lower rank that was reached in this search;
  // following them from the meeting rank ends at the source (forward) or the target (backward).
  auto lower_end = [this](ArcIndex arc) {
    const auto after = std::upper_bound(first_.begin(), first_.end(), arc);
    return static_cast<VertexIndex>(after - first_.begin() - 1);
  };
  std::vector<ArcIndex> up_arcs, down_arcs;
  for (VertexIndex x = meeting; x != source_rank;) {
    const ArcIndex arc = workspace.forward_arc_[static_cast<std::size_t>(x)];
    up_arcs.push_back(arc);
    x = lower_end(arc);
  }
  for (VertexIndex x = meeting; x != target_rank;) {
    const ArcIndex arc = workspace.backward_arc_[static_cast<std::size_t>(x)];
    down_arcs.push_back(arc);
    x = lower_end(arc);
  }
  clear(source_rank, target_rank, workspace);
  std::reverse(up_arcs.begin(), up_arcs.end());
  for (ArcIndex arc : up_arcs) unpack(arc, true, arcs);
  for (ArcIndex arc : down_arcs) unpack(arc, false, arcs);
  return arcs;
}

void Cch::unpack(ArcIndex arc, bool upward, std::vector<ArcIndex>& out) const {
  // A shortcut x-y through middle m (m < x < y) stands for two arcs whose lower end is m, so each
  // step of the expansion lowers the ranks involved and it ends. An explicit stack keeps deep
  // hierarchies off the call stack; the second half is pushed first so the first comes out first.
  struct Step {
    ArcIndex arc;
    VertexIndex lower;  // rank of the arc's lower end
    bool upward;
  };
  const auto after = std::upper_bound(first_.begin(), first_.end(), arc);
  std::vector<Step> stack = {{arc, static_cast<VertexIndex>(after - first_.begin() - 1), upward}};
  while (!stack.empty()) {
    const Step step = stack.back();
    stack.pop_back();
    const std::int32_t via =
        (step.upward ? up_via_span_ : down_via_span_)[static_cast<std::size_t>(step.arc)];
    if (via >= 0) {
      out.push_back(via);
      continue;
    }
    if (via == kNoArc)
      throw RoutingError(ErrorKind::kInternal,
                         "contraction hierarchy arc with no origin on a path");
    const VertexIndex middle = decode_middle(via);
    const VertexIndex higher = head_[static_cast<std::size_t>(step.arc)];
    const ArcIndex middle_lower = find_arc(middle, step.lower);
    const ArcIndex middle_higher = find_arc(middle, higher);
    if (step.upward) {  // lower -> middle -> higher
      stack.push_back({middle_higher, middle, true});
      stack.push_back({middle_lower, middle, false});
    } else {  // higher -> middle -> lower
      stack.push_back({middle_lower, middle, true});
      stack.push_back({middle_higher, middle, false});
    }
  }
}

void Cch::one_to_all(VertexIndex s, double* distances, CchWorkspace& workspace) const {
  require_customized();
  const VertexIndex source_rank = checked_rank(s);
  fill_forward(workspace);  // the sweep reads every rank
  CchWorkspace::Scratch<double>& distance_by_rank = workspace.forward_distance_;
  walk_up(source_rank, distance_by_rank, up_, nullptr, [](VertexIndex, double) {});
  // PHAST's sweep: in decreasing rank every higher neighbour is final, and a shortest path's last
  // part goes down, so pulling over downward arcs completes each rank.
  for (VertexIndex r = vertex_count() - 1; r >= 0; --r) {
    double best = distance_by_rank[static_cast<std::size_t>(r)];
    for (ArcIndex a = first_[static_cast<std::size_t>(r)];
         a < first_[static_cast<std::size_t>(r) + 1]; ++a)
      best = std::min(
          best, distance_by_rank[static_cast<std::size_t>(head_[static_cast<std::size_t>(a)])] +
                    down_[static_cast<std::size_t>(a)]);
    distance_by_rank[static_cast<std::size_t>(r)] = best;
    distances[at_rank_[static_cast<std::size_t>(r)]] = best;
  }
  std::fill(distance_by_rank.begin(), distance_by_rank.end(), kInfinity);
}

void Cch::start_settling(VertexIndex s, CchWorkspace& workspace) const {
  require_customized();
  const VertexIndex source_rank = checked_rank(s);
  fill_forward(workspace);  // settling reads any rank's upward distance
  if (workspace.settled_.size() != static_cast<std::size_t>(vertex_count()))
    workspace.settled_.assign(static_cast<std::size_t>(vertex_count()), CchWorkspace::kUnsettled);
  walk_up(source_rank, workspace.forward_distance_, up_, nullptr, [](VertexIndex, double) {});
}

double Cch::settled_distance(VertexIndex v, CchWorkspace& workspace) const {
  const VertexIndex rank = checked_rank(v);
  double* const settled = workspace.settled_.data();
  if (settled[static_cast<std::size_t>(rank)] >= 0) return settled[static_cast<std::size_t>(rank)];
  // A rank's distance depends on its upward neighbours', all of them its elimination-tree
  // ancestors: the ranks up its parent chain, settled from the top down. Whole chains are settled
  // up to the root, so a settled rank's ancestors are settled too and the walk stops at the first.
  // The ranks are scattered over arrays of megabytes, so settling waits on memory: the walk up
  // asks for each rank's arc range and upward distance ahead, and the walk down for the arcs of
  // the rank kAhead turns on while it relaxes this one's. With the flag and the distance in one
  // array and two minima a rank, a New York path's tracing took about 7% less time on the 2-core
  // machine (3,000 random pairs, in 3 runs of each build, timed against the hierarchy's own path in
  // the same runs: that machine's runs differ by more than that).
  std::vector<VertexIndex>& chain = workspace.settle_chain_;
  chain.clear();
  const double* const upward = workspace.forward_distance_.data();
  for (VertexIndex x = rank; x != kNoVertex && settled[static_cast<std::size_t>(x)] < 0;
       x = parent_span_[static_cast<std::size_t>(x)]) {
    chain.push_back(x);
    __builtin_prefetch(&first_[static_cast<std::size_t>(x)]);
    __builtin_prefetch(&upward[static_cast<std::size_t>(x)]);
  }
  auto prefetch_arcs = [this](VertexIndex x) {
    const auto x_index = static_cast<std::size_t>(x);
    const auto begin = static_cast<std::size_t>(first_[x_index]);
    const auto end = static_cast<std::size_t>(first_[x_index + 1]);
    for (std::size_t a = begin; a < end; a += 16) __builtin_prefetch(&head_[a]);
    for (std::size_t a = begin; a < end; a += 8) __builtin_prefetch(&down_[a]);
  };
  constexpr std::size_t kAhead = 4;  // ranks whose arcs are asked for ahead of their turn
  const std::size_t length = chain.size();
  for (std::size_t i = length; i-- > 0 && i + kAhead >= length;) prefetch_arcs(chain[i]);
  for (std::size_t i = length; i-- > 0;) {
    if (i >= kAhead) prefetch_arcs(chain[i - kAhead]);
    const auto x = static_cast<std::size_t>(chain[i]);
    // Two minima taken in turn: one was a chain of dependent minimums, an arc's latency each.
    double best = upward[x], other = kInfinity;
    const ArcIndex end = first_[x + 1];
    ArcIndex a = first_[x];
    for (; a + 1 < end; a += 2) {
      const auto i = static_cast<std::size_t>(a);
      best = std::min(best, settled[static_cast<std::size_t>(head_[i])] + down_[i]);
      other = std::min(other, settled[static_cast<std::size_t>(head_[i + 1])] + down_[i + 1]);
    }
    if (a < end)
      best = std::min(best, settled[static_cast<std::size_t>(head_[static_cast<std::size_t>(a)])] +
                                down_[static_cast<std::size_t>(a)]);
    settled[x] = std::min(best, other);
    workspace.settled_arcs_ += first_[x + 1] - first_[x];
  }
  workspace.settled_ranks_.insert(workspace.settled_ranks_.end(), chain.begin(), chain.end());
  return settled[static_cast<std::size_t>(rank)];
}

void Cch::finish_settling(VertexIndex s, CchWorkspace& workspace) const {
  reset_walk(checked_rank(s), workspace.forward_distance_);
  for (VertexIndex r : workspace.settled_ranks_)
    workspace.settled_[static_cast<std::size_t>(r)] = CchWorkspace::kUnsettled;
  workspace.settled_ranks_.clear();
  workspace.settled_arcs_ = 0;
}

Cch::Closure Cch::ancestor_closure(const VertexIndex* vertices, int count,
                                   std::vector<char>* in_closure) const {
  Closure closure;
  std::vector<char> own;
  std::vector<char>& in = in_closure != nullptr ? *in_closure : own;
  in.assign(at_rank_.count, 0);
  for (int i = 0; i < count; ++i) {
    const VertexIndex v = vertices[i];
    if (v < 0 || static_cast<std::size_t>(v) >= rank_.count) continue;
    // Up the tree until a rank already in: its ancestors are in too.
    for (VertexIndex r = rank_[static_cast<std::size_t>(v)];
         r != kNoVertex && !in[static_cast<std::size_t>(r)];
         r = parent_span_[static_cast<std::size_t>(r)]) {
      in[static_cast<std::size_t>(r)] = 1;
      ++closure.ranks;
      closure.arcs += first_[static_cast<std::size_t>(r) + 1] - first_[static_cast<std::size_t>(r)];
    }
  }
  return closure;
}

void Cch::upward_search(VertexIndex s, std::vector<std::pair<VertexIndex, double>>& reached,
                        CchWorkspace& workspace) const {
  require_customized();
  const VertexIndex source_rank = checked_rank(s);
  prime_forward(source_rank, workspace);
  reached.clear();
  walk_up(source_rank, workspace.forward_distance_, up_, nullptr,
          [&](VertexIndex x, double here) { reached.emplace_back(x, here); });
  unwind_forward(source_rank, workspace);
}

void Cch::fill_buckets(const VertexIndex* targets, int target_count, CchBuckets& buckets,
                       CchWorkspace& ws) const {
  CchWorkspace* one = &ws;
  fill_buckets(targets, target_count, buckets, &one, 1);
}

void Cch::fill_buckets(const VertexIndex* targets, int target_count, CchBuckets& buckets,
                       CchWorkspace* const* workspaces, int threads, int column_share) const {
  require_customized();
  const VertexIndex n = vertex_count();
  for (int j = 0; j < target_count; ++j) checked_rank(targets[j]);
  // Each target's ancestors with their distance down to it, gathered by each thread for its
  // targets (a walk each: New York's 1000 targets took 20 ms on one core), then placed by rank.
  struct Entry {
    VertexIndex rank;
    std::int32_t target;
    double distance;
  };
  threads = std::max(1, std::min(threads, target_count));
  // Each thread's list on cache lines of its own: their ends, moved by every push, had shared
  // lines (false sharing: New York's 1000 targets filled in 4.2-4.5 ms on 15 threads of the
  // H200 host before, 3.5-3.8 after).
  struct alignas(64) Gathered {
    std::vector<Entry> entries;
  };
  std::vector<Gathered> gathered(static_cast<std::size_t>(threads));
  // Room for every walk a thread may take (a walk reaches at most the tree's height plus one
  // ranks), made before the walks: growing the lists on 15 threads at once reallocated each
  // about a dozen times, through the C library's per-thread heaps.
  const auto most_per_thread =
      static_cast<std::size_t>((target_count + threads - 1) / threads + 1) *
      static_cast<std::size_t>(elimination_tree_height_ + 1);
  for (Gathered& list : gathered) list.entries.reserve(most_per_thread);
  parallel_for_each(target_count, threads, [&](int j, int thread) {
    CchWorkspace& own = *workspaces[thread];
    std::vector<Entry>& entries = gathered[static_cast<std::size_t>(thread)].entries;
    const VertexIndex target_rank = rank_[static_cast<std::size_t>(targets[j])];
    prime_backward(target_rank, own);
    const std::size_t first_entry = entries.size();
    walk_up(target_rank, own.backward_distance_, down_, nullptr, [&](VertexIndex x, double here) {
      entries.push_back({x, j, here});
    });
    // Stalled ranks dropped: where going up an arc x -> y and then down from y is shorter than
    // x's own distance, that distance is not x's true one, and no shortest path meets there
    // (the highest rank of a shortest path has exact distances from both ends), so a source's
    // total through x is strictly more than through that rank.
    const double* to_target = own.backward_distance_.data();
    std::size_t kept = first_entry;
    for (std::size_t e = first_entry; e < entries.size(); ++e) {
      const auto x = static_cast<std::size_t>(entries[e].rank);
      bool stalled = false;
      for (ArcIndex a = first_[x]; a < first_[x + 1]; ++a)
        stalled |= up_[static_cast<std::size_t>(a)] +
                       to_target[static_cast<std::size_t>(head_[static_cast<std::size_t>(a)])] <
                   entries[e].distance;
      if (!stalled) entries[kept++] = entries[e];
    }
    entries.resize(kept);
    unwind_backward(target_rank, own);
  });
  std::size_t total = 0;
  for (const Gathered& list : gathered) total += list.entries.size();
  buckets.target_count_ = target_count;
  buckets.columns_.clear();
  buckets.column_stride_ = 0;
  // Sparse where the entries are a 32nd of the ranks or fewer: sorting them costs less than an
  // index over every rank, and each source's merge stays short (New York, one core: 10 x 10 in
  // 0.23 ms sparse against 0.46 dense, 30 x 30 0.84 against 0.97; 100 x 100 3.35 against 2.93).
  buckets.sparse_ = total * 32 <= static_cast<std::size_t>(n);
  if (buckets.sparse_) {
    std::vector<Entry>& entries = gathered[0].entries;
    for (std::size_t t = 1; t < gathered.size(); ++t)
      entries.insert(entries.end(), gathered[t].entries.begin(), gathered[t].entries.end());
    std::sort(entries.begin(), entries.end(),
              [](const Entry& a, const Entry& b) { return a.rank < b.rank; });
    buckets.first_.clear();
    buckets.rank_.resize(entries.size());
    buckets.target_.resize(entries.size());
    buckets.distance_.resize(entries.size());
    for (std::size_t e = 0; e < entries.size(); ++e) {
      buckets.rank_[e] = entries[e].rank;
      buckets.target_[e] = entries[e].target;
      buckets.distance_[e] = entries[e].distance;
    }
    return;
  }
  buckets.rank_.clear();
  // Placed by rank ranges, one a thread: each thread reads every entry and takes those of its
  // ranks, so that no two threads write one rank's count, cursor or column (placed on one
  // thread, over arrays of every rank, New York's 1000 targets filled in 3.5-3.8 ms on 15
  // threads of the H200 host, 10,000 in 33-38; so, with the lists' room made ahead, 2.1-2.7 and
  // 20-26).
  // Ranks reaching a column_share-th of the targets or more take a column; their entries leave
  // the scattered lists.
  const int parts = threads;
  const auto range_begin = [n, parts](int p) {
    return static_cast<VertexIndex>(static_cast<std::int64_t>(n) * p / parts);
  };
  const std::int64_t column_entries = column_share > 0 && target_count >= kBucketColumnTargets
                                          ? (target_count + column_share - 1) / column_share
                                          : std::numeric_limits<std::int64_t>::max();
  buckets.first_.resize(static_cast<std::size_t>(n) + 1);
  buckets.first_[0] = 0;
  buckets.column_of_.resize(static_cast<std::size_t>(n));
  buckets.next_.resize(static_cast<std::size_t>(n));
  struct alignas(64) Part {
    std::int64_t entries = 0;
    std::int32_t columns = 0;
  };
  std::vector<Part> part(static_cast<std::size_t>(parts));
  // Each range's counts, its columns picked, and its entries numbered from 0 (first_[r + 1]
  // holds the range's entries up to rank r).
  parallel_for_each(parts, parts, [&](int p, int) {
    const VertexIndex lo = range_begin(p);
    const VertexIndex hi = range_begin(p + 1);
    std::int64_t* count = buckets.first_.data() + 1;
    std::fill(count + lo, count + hi, 0);
    for (const Gathered& list : gathered)
      for (const Entry& e : list.entries)
        if (e.rank >= lo && e.rank < hi) ++count[e.rank];
    Part& own = part[static_cast<std::size_t>(p)];
    for (VertexIndex r = lo; r < hi; ++r) {
      std::int32_t& column = buckets.column_of_[static_cast<std::size_t>(r)];
      column = -1;
      if (count[r] >= column_entries) {
        column = own.columns++;
        count[r] = 0;
      }
      own.entries += count[r];
      count[r] = own.entries;
    }
  });
  std::vector<std::int64_t> entry_offset(static_cast<std::size_t>(parts) + 1, 0);
  std::vector<std::int32_t> column_offset(static_cast<std::size_t>(parts) + 1, 0);
  for (int p = 0; p < parts; ++p) {
    entry_offset[static_cast<std::size_t>(p) + 1] =
        entry_offset[static_cast<std::size_t>(p)] + part[static_cast<std::size_t>(p)].entries;
    column_offset[static_cast<std::size_t>(p) + 1] =
        column_offset[static_cast<std::size_t>(p)] + part[static_cast<std::size_t>(p)].columns;
  }
  total = static_cast<std::size_t>(entry_offset.back());
  // Columns start 64 bytes apart, for the vectorized pass.
  buckets.column_stride_ = (static_cast<std::size_t>(target_count) + 7) / 8 * 8;
  const std::size_t stride = buckets.column_stride_;
  buckets.columns_.resize(static_cast<std::size_t>(column_offset.back()) * stride);
  buckets.target_.resize(total);
  buckets.distance_.resize(total);
  // Each range's numbering moved past the ranges below it, then its entries placed.
  parallel_for_each(parts, parts, [&](int p, int) {
    const VertexIndex lo = range_begin(p);
    const VertexIndex hi = range_begin(p + 1);
    const std::int64_t offset = entry_offset[static_cast<std::size_t>(p)];
    const std::int32_t first_column = column_offset[static_cast<std::size_t>(p)];
    for (VertexIndex r = lo; r < hi; ++r) {
      const auto at = static_cast<std::size_t>(r);
      buckets.first_[at + 1] += offset;
      // first_[lo] is the range below's to move: this range starts at its own offset.
      buckets.next_[at] = r == lo ? offset : buckets.first_[at];
      if (buckets.column_of_[at] >= 0) buckets.column_of_[at] += first_column;
    }
    std::fill(
        buckets.columns_.begin() + static_cast<std::ptrdiff_t>(first_column * stride),
        buckets.columns_.begin() +
            static_cast<std::ptrdiff_t>(column_offset[static_cast<std::size_t>(p) + 1] * stride),
        kInfinity);
    for (const Gathered& list : gathered)
      for (const Entry& e : list.entries) {
        if (e.rank < lo || e.rank >= hi) continue;
        const std::int32_t column = buckets.column_of_[static_cast<std::size_t>(e.rank)];
        if (column >= 0) {
          buckets.columns_[static_cast<std::size_t>(column) * stride +
                           static_cast<std::size_t>(e.target)] = e.distance;
          continue;
        }
        const auto at = static_cast<std::size_t>(buckets.next_[static_cast<std::size_t>(e.rank)]++);
        buckets.target_[at] = e.target;
        buckets.distance_[at] = e.distance;
      }
  });
}

namespace {

// row[j] = min(row[j], here + column[j]) for j < count: the same minimum as the scattered
// entries' (a sum, then the smaller), in lanes of as many doubles as the core's widest vectors
// hold (one clone per instruction set, picked when the library loads).
__attribute__((target_clones("avx512f", "avx2", "default"))) void add_column_to_row(
    double* __restrict row, const double* __restrict column, double here, std::size_t count) {
  for (std::size_t j = 0; j < count; ++j) {
    const double through = here + column[j];
    row[j] = through < row[j] ? through : row[j];
  }
}

}  // namespace

void Cch::row_from_buckets(VertexIndex s, const CchBuckets& buckets, double* row,
                           CchWorkspace& ws) const {
  rows_from_buckets(&s, 1, &row, buckets, ws);
}

void Cch::rows_from_buckets(const VertexIndex* sources, int count, double* const* rows,
                            const CchBuckets& buckets, CchWorkspace& ws) const {
  require_customized();
  for (int i = 0; i < count; ++i) checked_rank(sources[i]);
  const auto targets = static_cast<std::size_t>(buckets.target_count_);
  std::vector<std::pair<std::int32_t, double>>& hits = ws.column_hits_;
  std::vector<std::size_t>& first_hit = ws.first_column_hit_;
  hits.clear();
  first_hit.clear();
  for (int i = 0; i < count; ++i) {
    const VertexIndex source_rank = rank_[static_cast<std::size_t>(sources[i])];
    double* row = rows[i];
    prime_forward(source_rank, ws);
    std::fill(row, row + targets, kInfinity);
    first_hit.push_back(hits.size());
    if (buckets.sparse_) {
      // The walk visits ranks in ascending order (each parent ranks above its child), as the
      // entries are sorted: one merge, which skips ahead by binary search (a hundred targets'
      // thousands of entries stepped through one by one for each source made New York's 100 x
      // 100 matrix 35% slower than the dense index).
      std::size_t e = 0;
      const std::size_t end = buckets.rank_.size();
      const VertexIndex* ranks = buckets.rank_.data();
      walk_up(source_rank, ws.forward_distance_, up_, nullptr, [&](VertexIndex x, double here) {
        e = static_cast<std::size_t>(std::lower_bound(ranks + e, ranks + end, x) - ranks);
        for (; e < end && buckets.rank_[e] == x; ++e) {
          double& cell = row[buckets.target_[e]];
          cell = std::min(cell, here + buckets.distance_[e]);
        }
      });
    } else {
      walk_up(source_rank, ws.forward_distance_, up_, nullptr, [&](VertexIndex x, double here) {
        const std::int32_t column = buckets.column_of_[static_cast<std::size_t>(x)];
        if (column >= 0) {
          hits.emplace_back(column, here);
          return;
        }
        for (std::int64_t e = buckets.first_[static_cast<std::size_t>(x)];
             e < buckets.first_[static_cast<std::size_t>(x) + 1]; ++e) {
          double& cell = row[buckets.target_[static_cast<std::size_t>(e)]];
          cell = std::min(cell, here + buckets.distance_[static_cast<std::size_t>(e)]);
        }
      });
    }
    unwind_forward(source_rank, ws);
  }
  first_hit.push_back(hits.size());
  if (hits.empty()) return;
  // The columns a piece of the targets at a time, every source of the group over each piece:
  // the pieces of all the columns stay in this core's cache for the group (one source at a time
  // read every column whole from the shared cache: 350 kB a source at 1000 targets).
  for (std::size_t piece = 0; piece < targets; piece += kBucketColumnPiece) {
    const std::size_t width = std::min<std::size_t>(kBucketColumnPiece, targets - piece);
    for (int i = 0; i < count; ++i)
      for (std::size_t h = first_hit[static_cast<std::size_t>(i)];
           h < first_hit[static_cast<std::size_t>(i) + 1]; ++h)
        add_column_to_row(rows[i] + piece,
                          buckets.columns_.data() +
                              static_cast<std::size_t>(hits[h].first) * buckets.column_stride_ +
                              piece,
                          hits[h].second, width);
  }
}

std::size_t Cch::memory_bytes() const {
  auto bytes = [](const auto& span) { return span.count * sizeof(span[0]); };
  return bytes(at_rank_) + bytes(rank_) + bytes(parent_span_) + bytes(first_) + bytes(head_) +
         bytes(up_) + bytes(down_) + bytes(up_via_span_) + bytes(down_via_span_) +
         bytes(input_arc_span_);
}

Cch make_road_index(const Graph& graph, const CancelToken& cancel, int threads, std::string* note) {
  Stopwatch watch;
  std::vector<VertexIndex> order = cch_order(graph, nullptr, nullptr, cancel, threads);
  const double order_ms = watch.elapsed_ms();
  Cch cch(graph, std::move(order), cancel);
  cch.customize(graph, cancel, threads);
  char text[200];
  std::snprintf(text, sizeof text,
                "road index built by this call: order %.0f ms, hierarchy %.0f ms, customization "
                "%.0f ms, %.1f MB",
                order_ms, cch.build_ms(), cch.customization_ms(),
                static_cast<double>(cch.memory_bytes()) / 1e6);
  if (note != nullptr) *note = text;
  return cch;
}

double index_path(const Cch& cch, const Graph& graph, VertexIndex s, VertexIndex t,
                  CchWorkspace& workspace, std::vector<ArcIndex>& arcs) {
  arcs = cch.path(s, t, workspace);
  if (arcs.empty()) return s == t ? 0.0 : kInfinity;
  double cost = 0.0;
  for (ArcIndex a : arcs) cost += graph.forward.weights[static_cast<std::size_t>(a)];
  return cost;
}

}  // namespace gpu_routing
