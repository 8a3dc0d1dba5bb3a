// The CCH core (src/core/road_index/cch.hpp) on real road networks, engine only, one core where
// --threads is not said: ordering (on one thread, and again on --threads: the same order),
// building, customizing, then one-to-one distances and paths and one-to-all (PHAST) against the
// CPU Dijkstra on the same graph. Prints a table of medians. Not yet reachable from SQL
// (issue 12 integrates it as a kept graph's index). Before each row (on stderr): customization on 1
// and 2 threads, fresh and again, how the 2 threads split the work, and whether the bytes match.
// After the table, PHAST sweeps for one and for 64 sources: one_to_all against many_to_all's lanes
// and parallel sweep plan on --threads threads.
//   cch_bench [--data DIR] [--queries N] [--reps N] [--threads N]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <zlib.h>

#include "road_index/cch.hpp"
#include "graph_generators.hpp"
#include "cpu/sssp_dijkstra.hpp"
#include "base/parallel_for.hpp"

using namespace gpu_routing;

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

template <typename F>
double time_ms(F&& f) {
  const auto start = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

// DIMACS coordinates ("v <id> <x> <y>"), by the graph's vertex index.
bool read_coordinates(const std::string& path, const Graph& graph, std::vector<double>* x,
                      std::vector<double>* y) {
  gzFile file = gzopen(path.c_str(), "rb");
  if (file == nullptr) return false;
  x->assign(static_cast<std::size_t>(graph.vertex_count()), 0.0);
  y->assign(x->size(), 0.0);
  char line[256];
  while (gzgets(file, line, sizeof line) != nullptr) {
    if (line[0] != 'v') continue;
    long long id = 0, cx = 0, cy = 0;
    if (std::sscanf(line + 1, "%lld %lld %lld", &id, &cx, &cy) != 3) continue;
    const VertexIndex v = graph.vertices.find(id);
    if (v == kNoVertex) continue;
    (*x)[static_cast<std::size_t>(v)] = static_cast<double>(cx);
    (*y)[static_cast<std::size_t>(v)] = static_cast<double>(cy);
  }
  gzclose(file);
  return true;
}

// The customized arrays of a hierarchy's image (its header, which holds timings, left out).
std::vector<unsigned char> customized_arrays(const Cch& cch, std::size_t input_arcs) {
  std::vector<std::uint64_t> image((cch.image_bytes() + 7) / 8);
  cch.write_image(image.data());
  const auto* bytes = reinterpret_cast<const unsigned char*>(image.data());
  // The arrays fill the image's end, each 8-byte aligned: 3 x n and n + 1 indices, then per arc
  // a head, two weights and two vias, then one index per input arc.
  const auto aligned = [](std::size_t b) { return (b + 7) / 8 * 8; };
  const auto n = static_cast<std::size_t>(cch.vertex_count());
  const auto m = static_cast<std::size_t>(cch.arc_count());
  const std::size_t arrays = 3 * aligned(4 * n) + aligned(4 * (n + 1)) + 3 * aligned(4 * m) +
                             2 * 8 * m + aligned(4 * input_arcs);
  return std::vector<unsigned char>(bytes + cch.image_bytes() - arrays, bytes + cch.image_bytes());
}

// Customization on 1 and 2 threads: on a fresh hierarchy (its arrays not yet allocated) and again
// on the same one; the result must be the same bytes whatever the thread count.
void compare_customization_threads(const std::string& name, const Graph& graph,
                                   const std::vector<VertexIndex>& order, int reps) {
  const int runs = std::max(reps, 5);
  std::vector<unsigned char> one_thread;
  for (const int threads : {1, 2}) {
    std::vector<double> fresh_ms, again_ms;
    std::unique_ptr<Cch> cch;
    for (int r = 0; r < runs; ++r) {
      cch = std::make_unique<Cch>(graph, order);
      fresh_ms.push_back(time_ms([&] { cch->customize(graph, CancelToken(), threads); }));
    }
    for (int r = 0; r < runs; ++r)
      again_ms.push_back(time_ms([&] { cch->customize(graph, CancelToken(), threads); }));
    const std::vector<unsigned char> arrays =
        customized_arrays(*cch, static_cast<std::size_t>(graph.arc_count()));
    if (threads == 1) one_thread = arrays;
    const Cch::CustomizationSplit& split = cch->customization_split();
    std::fprintf(stderr,
                 "%s: customization with %d thread%s: fresh hierarchy %.1f ms, again %.1f ms "
                 "(medians of %d)",
                 name.c_str(), threads, threads == 1 ? "" : "s", median(fresh_ms), median(again_ms),
                 runs);
    if (split.threads > 1)
      std::fprintf(stderr,
                   "; %d subtrees, top %d ranks and %d arcs (%.2f%% of the arcs, %.1f%% of the "
                   "work), busiest thread %.2f x the mean",
                   split.subtrees, split.top_ranks, split.top_arcs,
                   100.0 * split.top_arcs / std::max<double>(1.0, cch->arc_count()),
                   100.0 * split.top_work_share, split.busiest_thread);
    if (threads > 1)
      std::fprintf(stderr, "; %s the 1-thread result",
                   arrays == one_thread ? "bit-identical to" : "DIFFERENT FROM");
    std::fprintf(stderr, "\n");
  }
}

// PHAST rows (Cch::one_to_all, Cch::many_to_all), printed after the main table: one tree
// sequential against the parallel sweep, and 64 trees one per thread against lanes of 4 and 8
// sources per sweep, on `threads` threads and on one. Every row is checked bit for bit against
// one_to_all's. Medians of `runs`; each tree's buffers (rows, workspaces) are made before timing.
std::vector<std::string> sweep_rows;

void run_sweeps(const std::string& name, const Cch& cch, int threads, int runs) {
  const VertexIndex n = cch.vertex_count();
  const auto width = static_cast<std::size_t>(n);
  constexpr int kTrees = 64;
  std::mt19937_64 rng(11);
  std::uniform_int_distribution<VertexIndex> pick(0, n - 1);
  std::vector<VertexIndex> sources;
  for (int i = 0; i < kTrees; ++i) sources.push_back(pick(rng));
  std::vector<double> reference(kTrees * width), rows(kTrees * width);
  std::vector<std::unique_ptr<CchWorkspace>> workspaces;
  for (int t = 0; t < std::max(threads, 1); ++t)
    workspaces.push_back(std::make_unique<CchWorkspace>(n));
  for (int i = 0; i < kTrees; ++i)
    cch.one_to_all(sources[static_cast<std::size_t>(i)], reference.data() + i * width,
                   *workspaces[0]);
  int mismatches = 0;
  const auto check = [&](int trees) {
    if (std::memcmp(rows.data(), reference.data(), static_cast<std::size_t>(trees) * width * 8))
      ++mismatches;
    std::fill(rows.begin(), rows.end(), -1.0);
  };
  // `trees` trees in groups of `lanes` sources, the groups over `group_threads` threads (one
  // group a thread), each swept on `sweep_threads`.
  const auto lanes_ms = [&](int trees, int lanes, int group_threads, int sweep_threads) {
    std::vector<double> ms;
    for (int r = 0; r < runs + 1; ++r) {  // the first warms the workspaces' lanes
      const double t = time_ms([&] {
        const int groups = (trees + lanes - 1) / lanes;
        parallel_for_each(groups, group_threads, [&](int g, int thread) {
          const int first = g * lanes;
          const int count = std::min(lanes, trees - first);
          double* row_of[Cch::kMaxSweepLanes];
          for (int l = 0; l < count; ++l) row_of[l] = rows.data() + (first + l) * width;
          Cch::SweepOptions options;
          options.threads = sweep_threads;
          cch.many_to_all(sources.data() + first, count, row_of,
                          *workspaces[static_cast<std::size_t>(thread)], options);
        });
      });
      if (r > 0) ms.push_back(t);
      check(trees);
    }
    return median(ms);
  };
  const auto one_to_all_ms = [&](int trees, int group_threads) {
    std::vector<double> ms;
    for (int r = 0; r < runs; ++r) {
      ms.push_back(time_ms([&] {
        parallel_for_each(trees, group_threads, [&](int i, int thread) {
          cch.one_to_all(sources[static_cast<std::size_t>(i)], rows.data() + i * width,
                         *workspaces[static_cast<std::size_t>(thread)]);
        });
      }));
      check(trees);
    }
    return median(ms);
  };
  const Cch::SweepSplit split = cch.sweep_split(threads);
  const double one = one_to_all_ms(1, 1);
  const double one_lane = lanes_ms(1, 1, 1, 1);
  const double one_parallel = lanes_ms(1, 1, 1, threads);
  const double all_one = one_to_all_ms(kTrees, 1);
  const double all_threads = one_to_all_ms(kTrees, threads);
  double lanes_one[2], lanes_threads[2], lanes_parallel[2];
  for (int k = 0; k < 2; ++k) {
    const int lanes = k == 0 ? 4 : 8;
    lanes_one[k] = lanes_ms(kTrees, lanes, 1, 1);
    lanes_threads[k] = lanes_ms(kTrees, lanes, threads, 1);
    lanes_parallel[k] = lanes_ms(kTrees, lanes, 1, threads);
  }
  char line[600];
  std::snprintf(line, sizeof line,
                "| %s | %d | %.2f | %.2f | %.2f | %d subtrees (%d listed), top %d ranks, %.1f%% "
                "of the work, busiest %.2f x, plan %.1f ms | %.1f | %.1f | %.1f | %.1f | %.1f | "
                "%.1f | %.1f | %.1f | %d |",
                name.c_str(), threads, one, one_lane, one_parallel, split.subtrees,
                split.listed_subtrees, split.top_ranks, 100.0 * split.top_work_share,
                split.busiest_thread, split.plan_ms, all_one, lanes_one[0], lanes_one[1],
                all_threads, lanes_threads[0], lanes_threads[1], lanes_parallel[0],
                lanes_parallel[1], mismatches);
  sweep_rows.push_back(line);
}

// Cost matrices on `threads` threads, printed after the sweeps: k x k between random vertices
// by buckets with columns (the CPU engine's way up to its bucket limit), by buckets scattered
// (no columns), and by sweeps kept to the targets (its way past the limit), each source group
// on a thread as the engine deals them. The buckets' filling is timed apart. Every matrix is
// checked bit for bit against the first, and its first rows against the CPU Dijkstra.
std::vector<std::string> matrix_rows;

void run_matrices(const std::string& name, const Graph& graph, const Cch& cch, int threads,
                  int runs) {
  const VertexIndex n = cch.vertex_count();
  std::vector<std::unique_ptr<CchWorkspace>> workspaces;
  std::vector<CchWorkspace*> workspace_of;
  for (int t = 0; t < std::max(threads, 1); ++t) {
    workspaces.push_back(std::make_unique<CchWorkspace>(n));
    workspace_of.push_back(workspaces.back().get());
  }
  DijkstraWorkspace dijkstra(n, graph.integer_weights ? graph.max_weight : -1.0);
  std::vector<double> reference(static_cast<std::size_t>(n));
  for (const int k : {1000, 3000, 10000}) {
    if (k > n) break;
    std::mt19937_64 rng(static_cast<std::uint64_t>(k));
    std::uniform_int_distribution<VertexIndex> pick(0, n - 1);
    std::vector<VertexIndex> sources, targets;
    for (int i = 0; i < k; ++i) {
      sources.push_back(pick(rng));
      targets.push_back(pick(rng));
    }
    const auto cells = static_cast<std::size_t>(k) * static_cast<std::size_t>(k);
    std::vector<double> first(cells, -1.0), matrix(cells, -1.0);
    int mismatches = 0;
    for (int i = 0; i < 3; ++i) {
      dijkstra.run(graph.forward, sources[static_cast<std::size_t>(i)], reference.data(), nullptr,
                   0, CancelToken());
      for (int j = 0; j < k; ++j)
        first[static_cast<std::size_t>(i) * k + j] =
            reference[static_cast<std::size_t>(targets[static_cast<std::size_t>(j)])];
    }
    // Buckets: fill, then rows in groups of kGroup sources a thread.
    constexpr int kGroup = 8;
    const auto by_buckets = [&](int column_share, double* fill_ms) {
      CchBuckets buckets;
      std::vector<double> fills, rows_ms;
      for (int r = 0; r < runs + 1; ++r) {
        const double f = time_ms([&] {
          cch.fill_buckets(targets.data(), k, buckets, workspace_of.data(), threads, column_share);
        });
        const double t = time_ms([&] {
          parallel_for_each((k + kGroup - 1) / kGroup, threads, [&](int g, int thread) {
            const int at = g * kGroup;
            const int count = std::min(kGroup, k - at);
            double* rows[kGroup];
            for (int i = 0; i < count; ++i)
              rows[i] = matrix.data() + static_cast<std::size_t>(at + i) * k;
            cch.rows_from_buckets(sources.data() + at, count, rows, buckets,
                                  *workspace_of[static_cast<std::size_t>(thread)]);
          });
        });
        if (r > 0) {
          fills.push_back(f);
          rows_ms.push_back(t);
        }
      }
      *fill_ms = median(fills);
      return median(rows_ms);
    };
    const auto by_sweeps = [&] {
      std::vector<double> ms;
      constexpr int kLanes = Cch::kMaxSweepLanes;
      for (int r = 0; r < runs + 1; ++r) {
        const double t = time_ms([&] {
          parallel_for_each((k + kLanes - 1) / kLanes, threads, [&](int g, int thread) {
            const int at = g * kLanes;
            const int count = std::min(kLanes, k - at);
            double* rows[kLanes];
            for (int i = 0; i < count; ++i)
              rows[i] = matrix.data() + static_cast<std::size_t>(at + i) * k;
            Cch::SweepOptions options;
            options.targets = targets.data();
            options.target_count = k;
            cch.many_to_all(sources.data() + at, count, rows,
                            *workspace_of[static_cast<std::size_t>(thread)], options);
          });
        });
        if (r > 0) ms.push_back(t);
      }
      return median(ms);
    };
    // Against the Dijkstra rows, then against the first matrix, whole.
    const auto check = [&](bool whole) {
      for (int i = 0; i < 3; ++i)
        if (std::memcmp(matrix.data() + static_cast<std::size_t>(i) * k,
                        first.data() + static_cast<std::size_t>(i) * k, k * sizeof(double)))
          ++mismatches;
      if (whole && std::memcmp(matrix.data(), first.data(), cells * sizeof(double))) ++mismatches;
    };
    double columns_fill = 0, scattered_fill = 0;
    const double columns_ms = by_buckets(kBucketColumnShare, &columns_fill);
    check(false);
    first.swap(matrix);
    const double scattered_ms = by_buckets(0, &scattered_fill);
    check(true);
    const double sweeps_ms = k <= 3000 || threads > 2 ? by_sweeps() : -1.0;
    if (sweeps_ms >= 0) check(true);
    char line[400];
    std::snprintf(
        line, sizeof line, "| %s | %d x %d | %d | %.1f | %.1f | %.1f | %.1f | %s | %d |",
        name.c_str(), k, k, threads, columns_fill, columns_ms, scattered_fill, scattered_ms,
        sweeps_ms >= 0 ? std::to_string(static_cast<int>(sweeps_ms + 0.5)).c_str() : "not run",
        mismatches);
    std::fprintf(stderr, "%s\n", line);
    matrix_rows.push_back(line);
  }
}

void run(const std::string& name, const Graph& graph, const std::vector<double>* x,
         const std::vector<double>* y, int queries, int reps, int threads) {
  const VertexIndex n = graph.vertex_count();
  const double* xs = x != nullptr ? x->data() : nullptr;
  const double* ys = y != nullptr ? y->data() : nullptr;
  std::vector<VertexIndex> order;
  std::vector<double> order_ms, build_ms, customize_ms;
  std::unique_ptr<Cch> cch;
  for (int r = 0; r < reps; ++r) {
    order_ms.push_back(time_ms([&] { order = cch_order(graph, xs, ys); }));
    build_ms.push_back(time_ms([&] { cch = std::make_unique<Cch>(graph, order); }));
    customize_ms.push_back(time_ms([&] { cch->customize(graph, CancelToken(), 1); }));
  }
  // The order again on `threads` threads: the same order, faster (the sides of each bisection at
  // once).
  std::vector<double> threads_order_ms;
  int order_mismatches = 0;
  for (int r = 0; r < reps; ++r) {
    std::vector<VertexIndex> again;
    threads_order_ms.push_back(
        time_ms([&] { again = cch_order(graph, xs, ys, CancelToken(), threads); }));
    if (again != order) ++order_mismatches;
  }
  compare_customization_threads(name, graph, order, reps);
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<VertexIndex> pick(0, n - 1);
  std::vector<std::pair<VertexIndex, VertexIndex>> pairs;
  for (int q = 0; q < queries; ++q) pairs.emplace_back(pick(rng), pick(rng));
  DijkstraWorkspace dijkstra(n, graph.integer_weights ? graph.max_weight : -1.0);
  std::vector<double> dist(static_cast<std::size_t>(n)), reference(dist.size());
  std::vector<double> cch_us, path_us, dijkstra_us;
  int mismatches = order_mismatches;
  for (const auto& [s, t] : pairs) {
    double d = 0;
    cch_us.push_back(1000.0 * time_ms([&] { d = cch->distance(s, t); }));
    path_us.push_back(1000.0 * time_ms([&] { (void)cch->path(s, t); }));
    dijkstra_us.push_back(1000.0 * time_ms([&] {
                            dijkstra.run(graph.forward, s, reference.data(), &t, 1, CancelToken());
                          }));
    if (d != reference[static_cast<std::size_t>(t)]) ++mismatches;
  }
  std::vector<double> phast_ms, dijkstra_all_ms;
  for (int q = 0; q < std::min(queries, 20); ++q) {
    const VertexIndex s = pairs[static_cast<std::size_t>(q)].first;
    phast_ms.push_back(time_ms([&] { cch->one_to_all(s, dist.data()); }));
    dijkstra_all_ms.push_back(time_ms(
        [&] { dijkstra.run(graph.forward, s, reference.data(), nullptr, 0, CancelToken()); }));
    if (dist != reference) ++mismatches;
  }
  // Many-to-many by buckets: k x k matrices between random vertices, one core.
  for (const int k : {100, 1000}) {
    if (k > n) break;
    std::vector<VertexIndex> sources, targets;
    for (int i = 0; i < k; ++i) {
      sources.push_back(pick(rng));
      targets.push_back(pick(rng));
    }
    CchBuckets buckets;
    CchWorkspace workspace;
    std::vector<double> matrix(static_cast<std::size_t>(k) * static_cast<std::size_t>(k));
    cch->fill_buckets(targets.data(), k, buckets, workspace);  // warm: allocations made
    const double fill_ms =
        time_ms([&] { cch->fill_buckets(targets.data(), k, buckets, workspace); });
    const double rows_ms = time_ms([&] {
      for (int i = 0; i < k; ++i)
        cch->row_from_buckets(sources[static_cast<std::size_t>(i)], buckets,
                              matrix.data() + static_cast<std::size_t>(i) * k, workspace);
    });
    for (int i = 0; i < std::min(k, 5); ++i) {
      dijkstra.run(graph.forward, sources[static_cast<std::size_t>(i)], reference.data(), nullptr,
                   0, CancelToken());
      for (int j = 0; j < k; ++j)
        if (matrix[static_cast<std::size_t>(i) * k + j] !=
            reference[static_cast<std::size_t>(targets[static_cast<std::size_t>(j)])])
          ++mismatches;
    }
    std::fprintf(stderr, "%s: %d x %d matrix by buckets: %.1f ms (buckets %.1f ms, rows %.1f ms)\n",
                 name.c_str(), k, k, fill_ms + rows_ms, fill_ms, rows_ms);
  }
  std::printf(
      "| %s | %d | %lld | %.0f | %.0f | %.0f | %.0f | %.1f | %d | %.1f | %.1f | %.0f | %.2f | %.2f "
      "| %d |\n",
      name.c_str(), n, static_cast<long long>(cch->arc_count()), median(order_ms),
      median(threads_order_ms), median(build_ms), median(customize_ms),
      static_cast<double>(cch->memory_bytes()) / 1048576.0, cch->elimination_tree_height(),
      median(cch_us), median(path_us), median(dijkstra_us), median(phast_ms),
      median(dijkstra_all_ms), mismatches);
  run_sweeps(name, *cch, threads, std::max(reps, 5));
  run_matrices(name, graph, *cch, threads, std::max(reps, 3));
}

}  // namespace

int main(int argc, char** argv) {
  std::string data = "../shared/data";
  int queries = 1000, reps = 3, threads = 2;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--data")) data = argv[i + 1];
    if (!std::strcmp(argv[i], "--queries")) queries = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--reps")) reps = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--threads")) threads = std::atoi(argv[i + 1]);
  }
  std::printf(
      "cch_bench: one core; medians (ordering, building, customizing over %d runs; "
      "%d random one-to-one pairs; 20 one-to-all sources). Dijkstra: the CPU engine's, "
      "stopping at the target for one-to-one.\n\n",
      reps, queries);
  std::printf(
      "| graph | vertices | CCH arcs | order (ms) | order on --threads (ms) | build (ms) | "
      "customize (ms) | MB | "
      "tree height | distance (us) | path (us) | Dijkstra to target (us) | PHAST "
      "one-to-all (ms) | Dijkstra one-to-all (ms) | mismatches |\n");
  std::printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  {
    const auto edges = bench::read_dimacs(data + "/USA-road-d.NY.gr.gz");
    const Graph graph = build_graph(edges.view(), true);
    std::vector<double> x, y;
    if (read_coordinates(data + "/USA-road-d.NY.co.gz", graph, &x, &y))
      run("New York (distances), coordinates", graph, &x, &y, queries, reps, threads);
    run("New York (distances), no coordinates", graph, nullptr, nullptr, queries, reps, threads);
  }
  {
    const auto edges = bench::read_dimacs(data + "/rome99.gr");
    const Graph graph = build_graph(edges.view(), true);
    run("Rome", graph, nullptr, nullptr, queries, reps, threads);
  }
  std::printf(
      "\nPHAST sweeps (ms, medians of max(reps, 5)): one tree by one_to_all, by many_to_all on one "
      "thread and on `threads` by the sweep plan; 64 trees one_to_all one per thread, and in "
      "lanes of 4 and 8 sources a sweep, on one thread, groups one per thread, and each group "
      "on every thread by the plan. Every row bit-identical to one_to_all's, or counted.\n\n");
  std::printf(
      "| graph | threads | 1 tree one_to_all | 1 tree 1 lane | 1 tree parallel | plan | 64 trees "
      "one_to_all, 1 thread | 4 lanes, 1 thread | 8 lanes, 1 thread | 64 one_to_all, a tree a "
      "thread | 4 lanes, a group a thread | 8 lanes, a group a thread | 4 lanes, parallel plan "
      "| 8 lanes, parallel plan | mismatches |\n");
  std::printf("|---|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (const std::string& line : sweep_rows) std::printf("%s\n", line.c_str());
  std::printf(
      "\nCost matrices k x k between random vertices on `threads` threads (ms, medians of "
      "max(reps, 3)): the buckets' filling, then their rows in groups of 8 sources a thread, with "
      "columns (ranks reaching a %dth of the targets or more) and scattered; sweeps kept to the "
      "targets, 8 sources a sweep, a group a thread (not run at 10,000 on 2 threads or fewer: "
      "minutes). Every matrix bit-identical to the first, and its first rows to Dijkstra's, or "
      "counted.\n\n",
      kBucketColumnShare);
  std::printf(
      "| graph | matrix | threads | fill, columns | rows, columns | fill, scattered | rows, "
      "scattered | sweeps | mismatches |\n");
  std::printf("|---|---|---:|---:|---:|---:|---:|---:|---:|\n");
  for (const std::string& line : matrix_rows) std::printf("%s\n", line.c_str());
  return 0;
}
