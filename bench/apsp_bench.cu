// Benchmarks of the many-source and dense all-pairs GPU engines (seeds 000, 002, 004), printed
// as markdown tables (medians of several runs); --csv PATH writes every measured row; --quick
// runs a short version. Sections (--sections a,b,...): variants, dense, compare, multi, topo,
// concurrent, scaling.
//
//   variants   every compiled min-plus kernel shape of each number mode, blocked_fw at one size
//   dense      blocked_fw at n = 4096, 8192, 16384 in int16x2, int32 and float64 (n^3 / time)
//   compare    blocked_fw against floyd_warshall (seed 002) and rkleene against blocked_fw
//   multi      multi_source against harish on DIMACS-style random graphs (seed 000, E = 4V,
//              weights 1..V), with the path recording overhead
//   topo       the same on seed 000's topologies at V = 4677: random, power law, ring, complete
//   concurrent the other engineer's `concurrent` engine over streams and block sizes
//   scaling    multi_source over 1..N visible GPUs; blocked_fw on 1 GPU against all of them
//
// variants, dense and compare keep blocked_fw on one GPU (DenseTuning::devices = 1), so their
// numbers compare kernels and algorithms, not machines.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "apsp_engines.cuh"
#include "engine/engine.hpp"
#include "engine/gpu.hpp"
#include "graph_generators.hpp"

using namespace gpu_routing;
using gpu::apsp::DenseAlgorithm;
using gpu::apsp::DenseMode;

namespace {

struct Settings {
  bool quick = false;
  std::string csv_path;
  std::set<std::string> sections;
  bool wants(const std::string& s) const { return sections.empty() || sections.count(s) > 0; }
};

struct CsvRow {
  std::string section, engine, mode, variant, graph;
  long long vertices = 0, arcs = 0, sources = 0;
  int streams = 0, block = 0;
  double ms = 0, rate = 0;
  std::string notes;
};
std::vector<CsvRow> g_rows;

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const std::size_t mid = values.size() / 2;
  return values.size() % 2 ? values[mid] : 0.5 * (values[mid - 1] + values[mid]);
}

std::string fixed(double value, int digits) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", digits, value);
  return text;
}
std::string rate_text(double per_second) {
  return fixed(per_second / 1e12, 2) + "e12";
}

// Dense closure once (first solve with one source); returns the closure milliseconds. devices:
// DenseTuning::devices (row bands of blocked_fw, one per GPU).
double dense_closure_ms(const Graph& g, DenseAlgorithm algorithm, DenseMode mode, int variant,
                        int devices = 1) {
  gpu::apsp::DenseTuning tuning;
  tuning.mode = mode;
  tuning.product_variant = variant;
  tuning.devices = devices;
  auto engine = gpu::apsp::create_dense_engine(g, EngineOptions{}, algorithm, tuning);
  std::vector<double> row(static_cast<std::size_t>(g.vertex_count()));
  VertexIndex source = 0;
  SolveRequest request;
  request.sources = &source;
  request.source_count = 1;
  request.distances = row.data();
  engine->solve(request);
  return engine->report().compute_ms;
}

const char* algorithm_name(DenseAlgorithm a) {
  return a == DenseAlgorithm::kBlocked ? "blocked_fw"
         : a == DenseAlgorithm::kNaive ? "floyd_warshall"
                                       : "rkleene";
}

double measure_dense(const Graph& g, DenseAlgorithm algorithm, DenseMode mode, int variant,
                     int reps, const std::string& section, int devices = 1) {
  std::vector<double> times;
  for (int r = 0; r < reps; ++r) {
    times.push_back(dense_closure_ms(g, algorithm, mode, variant, devices));
    if (times.back() > 4000) break;  // one run is enough for the slow ones
  }
  const double ms = median(times);
  const double n = g.vertex_count();
  CsvRow row;
  row.section = section;
  row.engine = algorithm_name(algorithm);
  row.mode = gpu::apsp::dense_mode_name(mode);
  row.variant = gpu::apsp::dense_product_variant_name(mode, variant);
  row.graph = "random E=8V";
  row.vertices = g.vertex_count();
  row.arcs = g.arc_count();
  row.ms = ms;
  row.rate = n * n * n / (ms * 1e-3);
  row.notes = std::to_string(times.size()) + " runs";
  if (section == "scaling") {  // as multi_source's rows there: the streams column counts GPUs
    row.streams = devices;
    row.notes += ", " + std::to_string(devices) + " GPUs";
  }
  g_rows.push_back(row);
  return ms;
}

// A dense-benchmark graph: weights 1..2 so every mode (int16x2 included) applies at n = 16384.
Graph dense_bench_graph(int n) {
  auto edges = bench::random_graph(n, 8, 2, 7);
  return build_graph(edges.view(), true);
}

void section_variants(const Settings& s) {
  const int n = s.quick ? 4096 : 8192;
  Graph g = dense_bench_graph(n);
  std::printf("\n## Min-plus kernel variants (blocked_fw, n = %d)\n\n", n);
  std::printf("| mode | variant | closure ms | updates/s |\n|---|---|---|---|\n");
  for (DenseMode mode : {DenseMode::kInt16x2, DenseMode::kInt32, DenseMode::kFloat64}) {
    for (int v = 0; v < gpu::apsp::dense_product_variant_count(mode); ++v) {
      const double ms =
          measure_dense(g, DenseAlgorithm::kBlocked, mode, v, s.quick ? 2 : 3, "variants");
      std::printf("| %s | %s%s | %.1f | %s |\n", gpu::apsp::dense_mode_name(mode),
                  gpu::apsp::dense_product_variant_name(mode, v).c_str(),
                  v == 0 ? " (default)" : "", ms,
                  rate_text(double(n) * n * n / (ms * 1e-3)).c_str());
      std::fflush(stdout);
    }
  }
}

void section_dense(const Settings& s) {
  std::vector<int> sizes =
      s.quick ? std::vector<int>{4096, 8192} : std::vector<int>{4096, 8192, 16384};
  std::printf("\n## blocked_fw on the dense matrix: n^3 / closure time\n\n");
  std::printf(
      "| n | int16x2 ms | int16x2 updates/s | int32 ms | int32 updates/s | float64 ms | float64 "
      "updates/s |\n");
  std::printf("|---|---|---|---|---|---|---|\n");
  for (int n : sizes) {
    Graph g = dense_bench_graph(n);
    std::printf("| %d", n);
    for (DenseMode mode : {DenseMode::kInt16x2, DenseMode::kInt32, DenseMode::kFloat64}) {
      const int reps = mode == DenseMode::kFloat64 && n >= 16384 ? 1 : (s.quick ? 2 : 3);
      const double ms = measure_dense(g, DenseAlgorithm::kBlocked, mode, 0, reps, "dense");
      std::printf(" | %.1f | %s", ms, rate_text(double(n) * n * n / (ms * 1e-3)).c_str());
      std::fflush(stdout);
    }
    std::printf(" |\n");
  }
}

void section_compare(const Settings& s) {
  const int naive_n = s.quick ? 4096 : 8192;
  {
    Graph g = dense_bench_graph(naive_n);
    std::printf("\n## blocked_fw against floyd_warshall (one kernel per k), n = %d, int32\n\n",
                naive_n);
    const double blocked =
        measure_dense(g, DenseAlgorithm::kBlocked, DenseMode::kInt32, 0, 3, "compare");
    const double naive =
        measure_dense(g, DenseAlgorithm::kNaive, DenseMode::kInt32, 0, 1, "compare");
    std::printf("| engine | closure ms | updates/s |\n|---|---|---|\n");
    std::printf("| blocked_fw | %.1f | %s |\n", blocked,
                rate_text(double(naive_n) * naive_n * naive_n / (blocked * 1e-3)).c_str());
    std::printf("| floyd_warshall | %.1f | %s |\n", naive,
                rate_text(double(naive_n) * naive_n * naive_n / (naive * 1e-3)).c_str());
    std::printf(
        "\nblocked_fw is %.1fx faster (seed 002 claims up to 320x over its naive kernel, on 2014 "
        "hardware)\n",
        naive / blocked);
  }
  std::vector<int> sizes =
      s.quick ? std::vector<int>{4096, 8192} : std::vector<int>{4096, 8192, 16384};
  std::printf("\n## rkleene against blocked_fw (goal: within 1.5x)\n\n");
  std::printf(
      "| n | mode | blocked_fw ms | rkleene ms | rkleene / blocked_fw |\n|---|---|---|---|---|\n");
  for (int n : sizes) {
    Graph g = dense_bench_graph(n);
    for (DenseMode mode : {DenseMode::kInt16x2, DenseMode::kInt32}) {
      const int reps = s.quick ? 1 : 3;
      const double blocked = measure_dense(g, DenseAlgorithm::kBlocked, mode, 0, reps, "compare");
      const double rk =
          measure_dense(g, DenseAlgorithm::kRecursiveKleene, mode, 0, reps, "compare");
      std::printf("| %d | %s | %.1f | %.1f | %.2f |\n", n, gpu::apsp::dense_mode_name(mode),
                  blocked, rk, rk / blocked);
      std::fflush(stdout);
    }
  }
}

// Wall time of solve() over `sources` in the engine's preferred batches, after a warm-up batch.
struct ManySourceResult {
  double ms = 0;
  int sources = 0;
  double path_ms = 0;
  std::int64_t rounds = 0;
};

ManySourceResult time_many_source(
    const EngineInfo& info, const Graph& g, int source_count, const EngineOptions& options,
    bool with_paths, std::function<std::unique_ptr<ShortestPathEngine>()> make = nullptr) {
  auto engine = make ? make() : info.create(g, options);
  const VertexIndex n = g.vertex_count();
  std::vector<VertexIndex> sources(static_cast<std::size_t>(source_count));
  for (int i = 0; i < source_count; ++i)
    sources[std::size_t(i)] = VertexIndex((std::int64_t(i) * 7919) % n);
  const int batch = std::max(1, std::min(engine->preferred_batch_size(), source_count));
  std::vector<double> rows(std::size_t(batch) * std::size_t(n));
  std::vector<ArcIndex> preds(with_paths ? rows.size() : 0);
  auto run = [&](int first, int count) {
    SolveRequest request;
    request.sources = sources.data() + first;
    request.source_count = count;
    request.distances = rows.data();
    if (with_paths) request.predecessor_arcs = preds.data();
    engine->solve(request);
  };
  run(0, std::min(batch, 32));  // warm-up: graph upload, allocation, graph capture
  ManySourceResult result;
  double path_ms = 0;
  std::int64_t rounds_before = engine->report().rounds;
  Stopwatch watch;
  for (int first = 0; first < source_count; first += batch) {
    run(first, std::min(batch, source_count - first));
    path_ms += gpu::apsp::path_recording_ms(*engine);
  }
  result.ms = watch.elapsed_ms();
  result.sources = source_count;
  result.path_ms = path_ms;
  result.rounds = engine->report().rounds - rounds_before;
  return result;
}

// Sources harish gets: as many as fit in about `budget_ms`, from a one-source probe.
int affordable_sources(const EngineInfo& info, const Graph& g, double budget_ms, int cap,
                       int probe_sources) {
  probe_sources = std::max(1, std::min(probe_sources, cap));
  auto probe = time_many_source(info, g, probe_sources, EngineOptions{}, false);
  const double per_source = std::max(probe.ms / probe_sources, 1e-4);
  return std::max(1, std::min(cap, int(budget_ms / per_source)));
}

void compare_multi_source(const Settings& s, const std::string& section,
                          const std::string& graph_name, const Graph& g) {
  const EngineInfo* multi = find_engine("multi_source", Device::kGpu);
  const EngineInfo* harish = find_engine("harish", Device::kGpu);
  const VertexIndex n = g.vertex_count();
  const double budget_ms = s.quick ? 400 : 1500;
  // multi_source: all pairs where affordable, else a fixed share.
  int multi_sources = affordable_sources(*multi, g, budget_ms, n, 256);
  multi_sources = std::max(std::min<int>(n, 64), multi_sources / 32 * 32);
  auto m = time_many_source(*multi, g, multi_sources, EngineOptions{}, false);
  auto mp = time_many_source(*multi, g, multi_sources, EngineOptions{}, true);
  const double m_per = m.ms / m.sources;
  std::string harish_cells = "n/a (no harish engine in this build) | n/a | n/a";
  double ratio = 0, h_per = 0;
  int harish_sources = 0;
  if (harish != nullptr) {
    harish_sources = affordable_sources(*harish, g, budget_ms, n, 2);
    auto h = time_many_source(*harish, g, harish_sources, EngineOptions{}, false);
    h_per = h.ms / h.sources;
    ratio = h_per / m_per;
    harish_cells =
        std::to_string(harish_sources) + " | " + fixed(h_per, 3) + " | " + fixed(ratio, 1) + "x";
  }
  const double overhead = (mp.ms - m.ms) / m.ms * 100.0;
  const double kernel_overhead = mp.path_ms / m.ms * 100.0;
  std::printf("| %s | %d | %d | %d | %.3f | %.0f | %s | %.1f%% (kernel %.1f%%) |\n",
              graph_name.c_str(), n, g.arc_count(), multi_sources, m_per, m_per * n,
              harish_cells.c_str(), overhead, kernel_overhead);
  std::fflush(stdout);
  CsvRow row;
  row.section = section;
  row.graph = graph_name;
  row.vertices = n;
  row.arcs = g.arc_count();
  row.engine = "multi_source";
  row.sources = multi_sources;
  row.ms = m.ms;
  row.rate = m_per;
  row.notes = "rounds=" + std::to_string(m.rounds);
  g_rows.push_back(row);
  row.engine = "multi_source+paths";
  row.ms = mp.ms;
  row.rate = mp.ms / mp.sources;
  row.notes = "path kernel ms=" + fixed(mp.path_ms, 3);
  g_rows.push_back(row);
  if (harish != nullptr) {
    row.engine = "harish";
    row.sources = harish_sources;
    row.ms = h_per * harish_sources;
    row.rate = h_per;
    row.notes = "ratio=" + fixed(ratio, 2);
    g_rows.push_back(row);
  }
}

const char* kMultiHeader =
    "| graph | V | arcs | multi_source sources | multi_source ms/source | all-pairs estimate ms | "
    "harish sources | harish ms/source | harish / multi_source | path recording overhead |\n"
    "|---|---|---|---|---|---|---|---|---|---|\n";

void section_multi(const Settings& s) {
  std::printf(
      "\n## multi_source against harish, DIMACS-style random graphs (E = 4V, weights 1..V)\n\n");
  std::printf(
      "Sources: as many as fit in about %s ms per engine (all pairs where that is all of them); "
      "times are per source. Overhead: the same sources with predecessors (path kernel, copy "
      "and host resolution of zero-cost ties) against without.\n\n",
      s.quick ? "400" : "1500");
  std::printf("%s", kMultiHeader);
  std::vector<int> sizes = s.quick ? std::vector<int>{1024, 8192, 65536}
                                   : std::vector<int>{1024, 2048, 4096, 8192, 16384, 32768, 65536};
  for (int v : sizes) {
    auto edges = bench::random_graph(v, 4, v, 3);
    Graph g = build_graph(edges.view(), true);
    ensure_reverse(g);
    compare_multi_source(s, "multi", "random E=4V", g);
  }
}

void section_topo(const Settings& s) {
  const int v = 4677;
  std::printf("\n## Seed 000's topologies at V = 4677\n\n");
  std::printf("%s", kMultiHeader);
  std::vector<std::pair<std::string, bench::EdgeList>> graphs;
  graphs.emplace_back("random E=16K w<=4096", bench::random_graph(v, 16384 / v + 1, 4096, 5));
  {
    auto rmat = bench::rmat_graph(13, 16384, 4096, 5);
    for (auto& id : rmat.sources) id = (id - 1) % v + 1;  // fold 2^13 ids onto 4677 vertices
    for (auto& id : rmat.targets) id = (id - 1) % v + 1;
    graphs.emplace_back("power law (R-MAT) E=16K", std::move(rmat));
  }
  graphs.emplace_back("ring w=1", bench::ring_graph(v, 1));
  if (!s.quick) graphs.emplace_back("complete w=1", bench::complete_graph(v, 1));
  for (auto& [name, edges] : graphs) {
    Graph g = build_graph(edges.view(), true);
    ensure_reverse(g);
    compare_multi_source(s, "topo", name, g);
  }
}

// multi_source splits the sources of a solve() over every visible GPU, one host worker each.
// The same all-pairs (or many-source) workload with 1, 2, ... workers on as many devices.
void section_scaling(const Settings& s) {
  const int devices = static_cast<int>(gpu::availability().devices.size());
  std::printf(
      "\n## multi_source over %d GPU(s): ms for the whole batch of sources (median of 3)\n\n",
      devices);
  std::printf("| graph | sources |");
  for (int d = 1; d <= devices; ++d) std::printf(" %d GPU%s |", d, d > 1 ? "s" : "");
  std::printf(" speed-up |\n|---|---:|");
  for (int d = 1; d <= devices; ++d) std::printf("---:|");
  std::printf("---:|\n");
  std::vector<std::pair<int, int>> cases =
      s.quick ? std::vector<std::pair<int, int>>{{16384, 4096}}
              : std::vector<std::pair<int, int>>{{16384, 16384}, {65536, 8192}};
  for (auto [v, count] : cases) {
    auto edges = bench::random_graph(v, 4, v, 11);
    Graph g = build_graph(edges.view(), true);
    std::vector<VertexIndex> sources(static_cast<std::size_t>(count));
    for (int i = 0; i < count; ++i)
      sources[static_cast<std::size_t>(i)] =
          static_cast<VertexIndex>((static_cast<long long>(i) * 7919) % v);
    std::vector<double> dist(static_cast<std::size_t>(count) * static_cast<std::size_t>(v));
    std::printf("| random V=%d E=4V | %d |", v, count);
    double first = 0, last = 0;
    for (int d = 1; d <= devices; ++d) {
      gpu::apsp::MultiSourceTuning tuning;
      tuning.workers = d;
      EngineOptions options;
      options.budget = MemoryBudget(std::size_t{64} << 30);
      auto engine = gpu::apsp::create_multi_source_engine(g, options, tuning);
      SolveRequest request;
      request.sources = sources.data();
      request.source_count = count;
      request.distances = dist.data();
      engine->solve(request);  // warm-up: graph upload on every device
      std::vector<double> times;
      for (int r = 0; r < 3; ++r) {
        Stopwatch w;
        engine->solve(request);
        times.push_back(w.elapsed_ms());
      }
      const double ms = median(times);
      if (d == 1) first = ms;
      last = ms;
      std::printf(" %.1f |", ms);
      CsvRow row;
      row.section = "scaling";
      row.engine = "multi_source";
      row.graph = "random E=4V";
      row.vertices = v;
      row.arcs = g.arc_count();
      row.sources = count;
      row.streams = d;  // devices
      row.ms = ms;
      row.notes = std::to_string(d) + " GPUs";
      g_rows.push_back(row);
    }
    std::printf(" %.2fx |\n", first / std::max(last, 1e-9));
    std::fflush(stdout);
  }

  // blocked_fw: row bands of the matrix, one per GPU; the closure only (the build excluded), as
  // in the dense section.
  std::printf(
      "\n## blocked_fw over %d GPU(s), row bands: closure ms on 1 GPU and on all (median of 3), "
      "updates/s = n^3 / time\n\n",
      devices);
  std::vector<int> counts = {1};
  if (devices > 1) counts.push_back(devices);
  std::printf("| n | mode |");
  for (int d : counts)
    std::printf(" %d GPU%s ms | %d GPU%s updates/s |", d, d > 1 ? "s" : "", d, d > 1 ? "s" : "");
  std::printf(" speed-up |\n|---:|---|");
  for (std::size_t i = 0; i < counts.size(); ++i) std::printf("---:|---:|");
  std::printf("---:|\n");
  std::vector<std::pair<int, DenseMode>> dense_cases = {{8192, DenseMode::kInt32}};
  if (!s.quick) {
    dense_cases.push_back({16384, DenseMode::kInt32});
    dense_cases.push_back({16384, DenseMode::kInt16x2});
  }
  for (auto [n, mode] : dense_cases) {
    Graph g = dense_bench_graph(n);
    std::printf("| %d | %s |", n, gpu::apsp::dense_mode_name(mode));
    double first = 0, last = 0;
    for (int d : counts) {
      const double ms = measure_dense(g, DenseAlgorithm::kBlocked, mode, 0, 3, "scaling", d);
      if (d == 1) first = ms;
      last = ms;
      std::printf(" %.1f | %s |", ms, rate_text(double(n) * n * n / (ms * 1e-3)).c_str());
      std::fflush(stdout);
    }
    std::printf(" %.2fx |\n", first / std::max(last, 1e-9));
    std::fflush(stdout);
  }
}

void section_concurrent(const Settings& s) {
  const EngineInfo* concurrent = find_engine("concurrent", Device::kGpu);
  std::printf(
      "\n## concurrent (kernels on several streams), random V = 4096, E = 4V, 256 sources: ms\n\n");
  if (concurrent == nullptr) {
    std::printf("no `concurrent` engine in this build\n");
    return;
  }
  auto edges = bench::random_graph(4096, 4, 4096, 9);
  Graph g = build_graph(edges.view(), true);
  std::vector<int> streams = {1, 2, 4, 8, 16, 32};
  std::vector<int> blocks =
      s.quick ? std::vector<int>{128, 256} : std::vector<int>{64, 96, 128, 256, 512};
  std::printf("| block \\ streams |");
  for (int st : streams) std::printf(" %d |", st);
  std::printf("\n|---|");
  for (std::size_t i = 0; i < streams.size(); ++i) std::printf("---|");
  std::printf("\n");
  for (int block : blocks) {
    std::printf("| %d |", block);
    for (int st : streams) {
      EngineOptions options;
      options.streams = st;
      options.block_size = block;
      std::vector<double> times;
      try {
        for (int r = 0; r < (s.quick ? 1 : 3); ++r) {
          times.push_back(time_many_source(*concurrent, g, 256, options, false).ms);
          if (times.back() > 300) break;  // slow configurations: one run
        }
        std::printf(" %.1f |", median(times));
      } catch (const std::exception& e) {
        std::printf(" error: %s |", e.what());
        continue;
      }
      CsvRow row;
      row.section = "concurrent";
      row.engine = "concurrent";
      row.graph = "random E=4V";
      row.vertices = g.vertex_count();
      row.arcs = g.arc_count();
      row.sources = 256;
      row.streams = st;
      row.block = block;
      row.ms = median(times);
      row.rate = row.ms / 256;
      g_rows.push_back(row);
      std::fflush(stdout);
    }
    std::printf("\n");
  }
}

// CSV fields never hold commas (kernel shape names do): "a, b" becomes "a; b".
std::string csv_field(std::string text) {
  std::replace(text.begin(), text.end(), ',', ';');
  return text;
}

void write_csv(const std::string& path) {
  FILE* file = std::fopen(path.c_str(), "w");
  if (file == nullptr) {
    std::fprintf(stderr, "cannot write %s\n", path.c_str());
    return;
  }
  std::fprintf(
      file,
      "section,engine,mode,variant,graph,vertices,arcs,sources,streams,block,ms,rate,notes\n");
  for (const auto& r : g_rows)
    std::fprintf(file, "%s,%s,%s,%s,%s,%lld,%lld,%lld,%d,%d,%.4f,%.6g,%s\n", r.section.c_str(),
                 r.engine.c_str(), r.mode.c_str(), csv_field(r.variant).c_str(),
                 csv_field(r.graph).c_str(), r.vertices, r.arcs, r.sources, r.streams, r.block,
                 r.ms, r.rate, csv_field(r.notes).c_str());
  std::fclose(file);
}

}  // namespace

int main(int argc, char** argv) {
  Settings settings;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--quick") {
      settings.quick = true;
    } else if (arg == "--csv" && i + 1 < argc) {
      settings.csv_path = argv[++i];
    } else if (arg == "--sections" && i + 1 < argc) {
      std::stringstream list(argv[++i]);
      std::string item;
      while (std::getline(list, item, ',')) settings.sections.insert(item);
    } else {
      std::fprintf(stderr,
                   "usage: %s [--quick] [--csv PATH] [--sections "
                   "variants,dense,compare,multi,topo,concurrent,scaling]\n",
                   argv[0]);
      return 2;
    }
  }
  const auto& gpus = gpu::availability();
  if (!gpus.usable) {
    std::printf("no usable GPU: %s\n", gpus.reason.c_str());
    return 0;
  }
  std::printf("# apsp_bench on %s (%d SMs), %s%s\n", gpus.devices.front().name.c_str(),
              gpus.devices.front().multiprocessors, gpu::build_description().c_str(),
              settings.quick ? ", quick" : "");
  try {
    // The CSV is rewritten after every section, so a run cut short keeps what it measured.
    auto save = [&] {
      if (!settings.csv_path.empty()) write_csv(settings.csv_path);
    };
    if (settings.wants("variants")) section_variants(settings), save();
    if (settings.wants("dense")) section_dense(settings), save();
    if (settings.wants("compare")) section_compare(settings), save();
    if (settings.wants("multi")) section_multi(settings), save();
    if (settings.wants("topo")) section_topo(settings), save();
    if (settings.wants("concurrent")) section_concurrent(settings), save();
    if (settings.wants("scaling")) section_scaling(settings), save();
  } catch (const std::exception& e) {
    std::printf("\nbenchmark stopped: %s\n", e.what());
    if (!settings.csv_path.empty()) write_csv(settings.csv_path);
    return 1;
  }
  if (!settings.csv_path.empty()) write_csv(settings.csv_path);
  return 0;
}
