#include "road_index/tree_split.hpp"

#include <algorithm>

namespace gpu_routing::detail {

double deal_subtrees(const std::vector<Subtree>& subtrees, std::vector<double>& load,
                     std::vector<ArcIndex>* owner) {
  std::vector<Subtree> sorted = subtrees;
  std::sort(sorted.begin(), sorted.end(), heavier_subtree);
  std::fill(load.begin(), load.end(), 0.0);
  for (const auto& [work, root] : sorted) {
    const auto lightest = std::min_element(load.begin(), load.end()) - load.begin();
    load[static_cast<std::size_t>(lightest)] += work;
    if (owner != nullptr)
      (*owner)[static_cast<std::size_t>(root)] = static_cast<ArcIndex>(lightest);
  }
  return *std::max_element(load.begin(), load.end());
}

// (On road networks the top stays a few percent of the work; where separators grow with the
// graph, as in grids, the top levels hold much of it, and fewer subtrees win.)
TreeSplit split_elimination_tree(const VertexIndex* parent, std::size_t n, std::vector<double> work,
                                 int threads, int max_subtrees_per_thread) {
  TreeSplit split;
  std::vector<double>& subtree_work = split.subtree_work;
  subtree_work = std::move(work);
  for (std::size_t r = 0; r < n; ++r)  // children rank below their parent
    if (parent[r] != kNoVertex)
      subtree_work[static_cast<std::size_t>(parent[r])] += subtree_work[r];
  for (std::size_t r = 0; r < n; ++r)
    if (parent[r] == kNoVertex) split.total_work += subtree_work[r];
  // Children by parent: children[child_first[p]] .. children[child_first[p + 1] - 1].
  std::vector<VertexIndex> child_first(n + 2, 0);
  for (std::size_t r = 0; r < n; ++r)
    if (parent[r] != kNoVertex) ++child_first[static_cast<std::size_t>(parent[r]) + 2];
  for (std::size_t r = 0; r < n; ++r) child_first[r + 2] += child_first[r + 1];
  std::vector<VertexIndex> children(n);
  for (std::size_t r = 0; r < n; ++r)
    if (parent[r] != kNoVertex)
      children[static_cast<std::size_t>(child_first[static_cast<std::size_t>(parent[r]) + 1]++)] =
          static_cast<VertexIndex>(r);

  std::vector<double> load(static_cast<std::size_t>(threads));
  std::vector<Subtree> open;  // a heap, the heaviest first
  for (std::size_t r = 0; r < n; ++r)
    if (parent[r] == kNoVertex) open.emplace_back(subtree_work[r], static_cast<VertexIndex>(r));
  std::make_heap(open.begin(), open.end());
  const std::size_t most = static_cast<std::size_t>(max_subtrees_per_thread) * threads;
  const double small_enough = split.total_work / static_cast<double>(most);
  std::vector<VertexIndex>& opened = split.top;  // in order
  double top_work = 0.0;
  double best_time = deal_subtrees(open, load, nullptr);
  std::size_t best_opened = 0;
  while (!open.empty() && open.size() < most && open.front().first > small_enough) {
    const auto [work_here, root] = open.front();
    const auto r = static_cast<std::size_t>(root);
    if (child_first[r] == child_first[r + 1]) break;  // a single rank: nothing to open
    // Every later split takes at least its top's work plus the mean of the rest (the busiest
    // thread has at least the mean), which grows with the top: none can beat the best any more.
    // (New York on 16 threads: 1954 ranks opened, the best after 661; on 64, 5519 and 1075, with
    // 200 ms of dealing.)
    if (top_work + (split.total_work - top_work) / threads >= best_time) break;
    std::pop_heap(open.begin(), open.end());
    open.pop_back();
    opened.push_back(root);
    top_work += work_here;
    for (VertexIndex c = child_first[r]; c < child_first[r + 1]; ++c) {
      const VertexIndex child = children[static_cast<std::size_t>(c)];
      top_work -= subtree_work[static_cast<std::size_t>(child)];
      open.emplace_back(subtree_work[static_cast<std::size_t>(child)], child);
      std::push_heap(open.begin(), open.end());
    }
    const double time = top_work + deal_subtrees(open, load, nullptr);
    if (time < best_time) {
      best_time = time;
      best_opened = opened.size();
      split.top_work = top_work;
    }
  }
  opened.resize(best_opened);

  // The best split again: the subtrees hang below the ranks opened up to it.
  std::vector<char> in_top(n, 0);
  for (VertexIndex r : opened) in_top[static_cast<std::size_t>(r)] = 1;
  for (std::size_t r = 0; r < n; ++r) {
    const VertexIndex p = parent[r];
    if (!in_top[r] && (p == kNoVertex || in_top[static_cast<std::size_t>(p)]))
      split.subtrees.emplace_back(subtree_work[r], static_cast<VertexIndex>(r));
  }
  return split;
}

}  // namespace gpu_routing::detail
