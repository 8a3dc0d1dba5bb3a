#include "road_index/sweep_layout.hpp"

#include <algorithm>
#include <utility>

#include "road_index/cch.hpp"

namespace gpu_routing {
namespace {

// Lanes per (rank, source): a rank's upward arcs are read in parallel and their minimum taken by
// shuffles, instead of one thread walking them one dependent load after another. phast_bench on an
// H100, New York: a lone tree 6.2 ms with 1 lane, 2.8 with 4, 1.9 with 8, 1.5 with 16; 32 trees
// a sweep 0.254, 0.161, 0.138 and 0.131 ms a tree.
// A level's lanes: the power of two covering its ranks' largest upward degree in the top (few
// ranks, so latency counts), their mean degree in the bottom (many ranks, so idle lanes count),
// within [kMinLanes, kMaxLanes]; `forced_lanes` (set_phast_lanes) puts one value everywhere.
constexpr int kMinLanes = 2;
constexpr int kMaxLanes = 16;
int lanes_covering(double degree, int forced_lanes) {
  if (forced_lanes > 0) return forced_lanes;
  int lanes = kMinLanes;
  while (lanes < kMaxLanes && lanes < degree) lanes *= 2;
  return lanes;
}

}  // namespace

SweepLayout make_sweep_layout(const Cch& cch, int subtree_limit, int forced_lanes) {
  const VertexIndex n = cch.vertex_count();
  const auto arc_first = cch.arc_first();
  const auto arc_head = cch.arc_head();
  const auto down = cch.downward_weights();
  const auto at_rank = cch.vertex_at_rank();
  auto degree = [&](VertexIndex r) {
    return arc_first[static_cast<std::size_t>(r) + 1] - arc_first[static_cast<std::size_t>(r)];
  };
  SweepLayout layout;
  // Levels from the top: a rank's higher neighbours have higher ranks, so decreasing rank order
  // sees them first.
  std::vector<VertexIndex> level(static_cast<std::size_t>(n), 0);
  for (VertexIndex r = n - 1; r >= 0; --r) {
    VertexIndex deepest = -1;
    for (ArcIndex a = arc_first[static_cast<std::size_t>(r)];
         a < arc_first[static_cast<std::size_t>(r) + 1]; ++a)
      deepest =
          std::max(deepest, level[static_cast<std::size_t>(arc_head[static_cast<std::size_t>(a)])]);
    level[static_cast<std::size_t>(r)] = deepest + 1;
  }
  // Subtree sizes in the elimination tree (a parent ranks above its children), then the bottom:
  // ranks whose subtree is small, grouped by the subtree of the highest such rank above them.
  std::vector<VertexIndex> parent(static_cast<std::size_t>(n), -1);
  std::vector<std::int64_t> size(static_cast<std::size_t>(n), 1);
  for (VertexIndex r = 0; r < n; ++r) {
    VertexIndex lowest = -1;
    for (ArcIndex a = arc_first[static_cast<std::size_t>(r)];
         a < arc_first[static_cast<std::size_t>(r) + 1]; ++a) {
      const VertexIndex h = arc_head[static_cast<std::size_t>(a)];
      if (lowest < 0 || h < lowest) lowest = h;
    }
    parent[static_cast<std::size_t>(r)] = lowest;
    if (lowest >= 0) size[static_cast<std::size_t>(lowest)] += size[static_cast<std::size_t>(r)];
  }
  // group[r]: -1 in the top. Subtrees are packed into groups of at most subtree_limit ranks in
  // decreasing rank order of their roots.
  std::vector<VertexIndex> group(static_cast<std::size_t>(n), -1);
  VertexIndex groups = 0;
  std::int64_t filled = 0;
  for (VertexIndex r = n - 1; r >= 0; --r) {
    const auto ru = static_cast<std::size_t>(r);
    if (subtree_limit <= 0 || size[ru] > subtree_limit) continue;
    const VertexIndex p = parent[ru];
    if (p >= 0 && group[static_cast<std::size_t>(p)] >= 0) {
      group[ru] = group[static_cast<std::size_t>(p)];
      continue;
    }
    if (groups == 0 || filled + size[ru] > subtree_limit) {
      ++groups;
      filled = 0;
    }
    filled += size[ru];
    group[ru] = groups - 1;
  }
  // Positions in (group, level, decreasing rank) order, the top (group -1) first.
  std::vector<VertexIndex> rank_at(static_cast<std::size_t>(n));
  for (VertexIndex r = 0; r < n; ++r) rank_at[static_cast<std::size_t>(r)] = n - 1 - r;
  std::stable_sort(rank_at.begin(), rank_at.end(), [&](VertexIndex a, VertexIndex b) {
    const auto au = static_cast<std::size_t>(a), bu = static_cast<std::size_t>(b);
    if (group[au] != group[bu]) return group[au] < group[bu];
    return level[au] < level[bu];
  });
  layout.position_of_rank.assign(static_cast<std::size_t>(n), 0);
  for (VertexIndex p = 0; p < n; ++p)
    layout.position_of_rank[static_cast<std::size_t>(rank_at[static_cast<std::size_t>(p)])] = p;
  // Steps: a new one wherever the group or the level changes.
  std::int64_t step_arcs = 0, step_max = 0;
  auto close_step = [&](VertexIndex end) {
    const VertexIndex begin = layout.step_first.back();
    const bool top = layout.group_step.empty();
    const double mean = static_cast<double>(step_arcs) / std::max<VertexIndex>(end - begin, 1);
    layout.step_lanes.push_back(
        lanes_covering(top ? static_cast<double>(step_max) : mean, forced_lanes));
    layout.step_first.push_back(end);
    step_arcs = step_max = 0;
  };
  for (VertexIndex p = 0; p < n; ++p) {
    const auto r = static_cast<std::size_t>(rank_at[static_cast<std::size_t>(p)]);
    if (p == 0) {
      layout.step_first.push_back(0);
      if (group[r] >= 0) layout.group_step.push_back(0);
    } else {
      const auto q = static_cast<std::size_t>(rank_at[static_cast<std::size_t>(p) - 1]);
      if (group[q] != group[r] || level[q] != level[r]) {
        close_step(p);
        if (group[q] != group[r])
          layout.group_step.push_back(static_cast<VertexIndex>(layout.step_first.size()) - 1);
      }
    }
    step_arcs += degree(static_cast<VertexIndex>(r));
    step_max = std::max<std::int64_t>(step_max, degree(static_cast<VertexIndex>(r)));
  }
  if (n > 0) close_step(n);
  const VertexIndex steps = static_cast<VertexIndex>(layout.step_lanes.size());
  if (layout.group_step.empty()) {
    layout.top_levels = steps;
  } else {
    layout.top_levels = layout.group_step.front();
    layout.group_step.push_back(steps);
  }
  layout.position_of_vertex.assign(static_cast<std::size_t>(n), 0);
  for (VertexIndex r = 0; r < n; ++r)
    layout.position_of_vertex[static_cast<std::size_t>(at_rank[static_cast<std::size_t>(r)])] =
        layout.position_of_rank[static_cast<std::size_t>(r)];
  layout.first.assign(static_cast<std::size_t>(n) + 1, 0);
  layout.head.reserve(arc_head.size());
  layout.down.reserve(arc_head.size());
  for (VertexIndex p = 0; p < n; ++p) {
    const VertexIndex r = rank_at[static_cast<std::size_t>(p)];
    for (ArcIndex a = arc_first[static_cast<std::size_t>(r)];
         a < arc_first[static_cast<std::size_t>(r) + 1]; ++a) {
      layout.head.push_back(
          layout.position_of_rank[static_cast<std::size_t>(arc_head[static_cast<std::size_t>(a)])]);
      layout.down.push_back(down[static_cast<std::size_t>(a)]);
    }
    layout.first[static_cast<std::size_t>(p) + 1] = static_cast<ArcIndex>(layout.head.size());
  }
  return layout;
}

// RPHAST (Delling, Goldberg, Werneck: "Faster batched shortest paths in road networks", 2011):
// a cost matrix needs the sweep only at its targets, and a target's distance depends only on its
// elimination-tree ancestors (every higher neighbour of a rank is one), so the sweep can skip
// every rank outside the targets' ancestors (their "closure", which holds each of its ranks'
// higher neighbours). `keep` marks the full layout's positions to sweep; the result keeps their
// order, steps and lanes, drops the steps and groups left empty, and numbers positions afresh.
// Each kept rank pulls over the same arcs in the same order, so its distances equal the full
// sweep's bit for bit. position_of_vertex stays empty: a restricted sweep has no rows by vertex.
SweepLayout restrict_sweep_layout(const SweepLayout& full, const std::vector<char>& kept_ranks) {
  const std::size_t n = full.position_of_rank.size();
  if (kept_ranks.size() != n)
    throw RoutingError(ErrorKind::kInternal, "a restricted PHAST sweep's marks are not its ranks'");
  std::vector<char> keep(n, 0);  // by full position
  for (std::size_t rank = 0; rank < n; ++rank)
    keep[static_cast<std::size_t>(full.position_of_rank[rank])] = kept_ranks[rank];
  // kept_before[p]: kept positions before p, so step s's kept positions are
  // [kept_before[step_first[s]], kept_before[step_first[s + 1]]) in the new numbering.
  std::vector<VertexIndex> kept_before(n + 1, 0);
  for (std::size_t p = 0; p < n; ++p) kept_before[p + 1] = kept_before[p] + (keep[p] ? 1 : 0);
  SweepLayout r;
  r.step_first.push_back(0);
  auto add_step = [&](std::size_t s) {
    const VertexIndex begin = kept_before[static_cast<std::size_t>(full.step_first[s])];
    const VertexIndex end = kept_before[static_cast<std::size_t>(full.step_first[s + 1])];
    if (end == begin) return false;
    r.step_first.push_back(end);
    r.step_lanes.push_back(full.step_lanes[s]);
    return true;
  };
  for (int s = 0; s < full.top_levels; ++s) r.top_levels += add_step(static_cast<std::size_t>(s));
  const int groups = full.group_step.empty() ? 0 : static_cast<int>(full.group_step.size()) - 1;
  for (int g = 0; g < groups; ++g) {
    const auto begin = static_cast<VertexIndex>(r.step_lanes.size());
    for (VertexIndex s = full.group_step[static_cast<std::size_t>(g)];
         s < full.group_step[static_cast<std::size_t>(g) + 1]; ++s)
      add_step(static_cast<std::size_t>(s));
    if (static_cast<VertexIndex>(r.step_lanes.size()) > begin) r.group_step.push_back(begin);
  }
  if (!r.group_step.empty()) r.group_step.push_back(static_cast<VertexIndex>(r.step_lanes.size()));
  r.position_of_rank.assign(n, -1);
  for (std::size_t rank = 0; rank < n; ++rank) {
    const auto p = static_cast<std::size_t>(full.position_of_rank[rank]);
    if (keep[p]) r.position_of_rank[rank] = kept_before[p];
  }
  r.first.assign(static_cast<std::size_t>(kept_before[n]) + 1, 0);
  for (std::size_t p = 0; p < n; ++p) {
    if (!keep[p]) continue;
    for (ArcIndex a = full.first[p]; a < full.first[p + 1]; ++a) {
      const auto h = static_cast<std::size_t>(full.head[static_cast<std::size_t>(a)]);
      if (!keep[h])
        throw RoutingError(ErrorKind::kInternal,
                           "a restricted PHAST sweep lost a kept rank's higher neighbour");
      r.head.push_back(kept_before[h]);
      r.down.push_back(full.down[static_cast<std::size_t>(a)]);
    }
    r.first[static_cast<std::size_t>(kept_before[p]) + 1] = static_cast<ArcIndex>(r.head.size());
  }
  return r;
}

std::vector<double> sweep_on_host(const SweepLayout& layout,
                                  const std::vector<std::pair<VertexIndex, double>>& seeds) {
  const std::size_t n = layout.first.size() - 1;
  std::vector<double> table(n, kInfinity);
  for (const auto& [position, distance] : seeds)
    table[static_cast<std::size_t>(position)] = distance;
  // Steps in their order: the top's levels, then each group's (a group depends only on the top
  // and on itself).
  for (std::size_t s = 0; s + 1 < layout.step_first.size(); ++s) {
    for (VertexIndex p = layout.step_first[s]; p < layout.step_first[s + 1]; ++p) {
      double best = table[static_cast<std::size_t>(p)];
      for (ArcIndex a = layout.first[static_cast<std::size_t>(p)];
           a < layout.first[static_cast<std::size_t>(p) + 1]; ++a) {
        const double candidate =
            table[static_cast<std::size_t>(layout.head[static_cast<std::size_t>(a)])] +
            layout.down[static_cast<std::size_t>(a)];
        if (candidate < best) best = candidate;
      }
      table[static_cast<std::size_t>(p)] = best;
    }
  }
  return table;
}

}  // namespace gpu_routing
