// Single-source shortest paths: every single-source GPU engine against our CPU Dijkstra, on the
// same graphs, printed as markdown tables (medians of several runs).
//
//   sssp_bench [--quick] [--graphs=ny,grid,random,rmat,ring,complete] [--engines=a,b,...]
//              [--runs=5] [--deadline=10] [--cell-budget=12] [--csv=PATH] [--no-tune]
//              [--no-streams] [DATA_DIR]
//
// DATA_DIR (or the environment variable GPU_ROUTING_DATA) holds USA-road-d.NY.gr.gz.
// Table 1: milliseconds per source, the graph resident on the device (engine created and graph
// uploaded before timing); a GPU time is one solve() call: the rounds plus copying the distance
// row back to the host. A run that passes the deadline is cancelled through the engine's
// CancelToken and printed as "> N s".
// Table 2 (seed 003's tuning): the relax kernels' own time over block sizes.
// Table 3: the concurrent engine over stream counts (and harish), time per source.
// Table 4: rounds captured per iteration of the batch graph's conditional loop.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "engine/engine.hpp"
#include "engine/gpu.hpp"
#include "base/graph.hpp"
#include "graph_generators.hpp"
#include "sssp_tuning.hpp"

using namespace gpu_routing;
using Clock = std::chrono::steady_clock;

namespace {

Clock::time_point g_deadline = Clock::time_point::max();
bool deadline_passed() {
  return Clock::now() > g_deadline;
}

struct Options {
  bool quick = false;
  bool tune = true;
  bool streams = true;
  bool unroll = true;
  int runs = 5;
  double deadline_s = 10;
  std::string csv_path;
  std::string data_dir;
  std::set<std::string> graphs;   // empty: all
  std::set<std::string> engines;  // empty: all
};

std::set<std::string> split(const std::string& text) {
  std::set<std::string> out;
  std::stringstream stream(text);
  std::string item;
  while (std::getline(stream, item, ','))
    if (!item.empty()) out.insert(item);
  return out;
}

struct Measurement {
  std::vector<double> ms;
  bool timed_out = false;
  std::string error;
  std::int64_t rounds = 0;  // engine rounds per source
  int wanted_runs = 0;
  std::string notes;
};

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const std::size_t mid = values.size() / 2;
  return values.size() % 2 ? values[mid] : 0.5 * (values[mid - 1] + values[mid]);
}

std::string format_ms(double ms) {
  char text[64];
  if (ms >= 100)
    std::snprintf(text, sizeof text, "%.0f", ms);
  else if (ms >= 10)
    std::snprintf(text, sizeof text, "%.1f", ms);
  else
    std::snprintf(text, sizeof text, "%.2f", ms);
  return text;
}

std::string cell(const Measurement& m, double deadline_s) {
  if (!m.error.empty()) return "n/a";
  if (m.timed_out && m.ms.empty()) {
    char text[32];
    std::snprintf(text, sizeof text, "> %g s", deadline_s);
    return text;
  }
  std::string text = format_ms(median(m.ms));
  if (static_cast<int>(m.ms.size()) < m.wanted_runs)
    text += " (" + std::to_string(m.ms.size()) + (m.ms.size() == 1 ? " run)" : " runs)");
  return text;
}

struct BenchGraph {
  std::string key;   // option name
  std::string name;  // column title
  Graph graph;
  std::vector<VertexIndex> sources;
};

// Sources spread over the graph, each with at least one outgoing arc.
std::vector<VertexIndex> pick_sources(const Graph& g, int count) {
  std::vector<VertexIndex> sources;
  std::mt19937 rng(42);
  const VertexIndex n = g.vertex_count();
  for (int tries = 0; tries < 100000 && static_cast<int>(sources.size()) < count; ++tries) {
    VertexIndex v = static_cast<VertexIndex>(rng() % static_cast<unsigned>(n));
    if (g.forward.end(v) - g.forward.begin(v) >= 2) sources.push_back(v);
  }
  while (static_cast<int>(sources.size()) < count) sources.push_back(0);
  return sources;
}

std::unique_ptr<BenchGraph> make_graph(const std::string& key, const bench::EdgeList& edges,
                                       const std::string& name) {
  auto g = std::make_unique<BenchGraph>();
  g->key = key;
  g->name = name;
  g->graph = build_graph(edges.view(), true);
  ensure_reverse(g->graph);
  g->sources = pick_sources(g->graph, 16);
  return g;
}

// Builds the graph named `key`; null when it cannot (the NY file missing).
std::unique_ptr<BenchGraph> load_graph(const std::string& key, const Options& options) {
  const bool quick = options.quick;
  if (key == "ny") {
    std::string dir = options.data_dir;
    if (dir.empty() && std::getenv("GPU_ROUTING_DATA") != nullptr)
      dir = std::getenv("GPU_ROUTING_DATA");
    if (dir.empty()) dir = ".";
    const std::string path = dir + "/USA-road-d.NY.gr.gz";
    try {
      return make_graph(key, bench::read_dimacs(path), "NY road");
    } catch (const std::exception& e) {
      std::fprintf(stderr, "skipping the NY road network: %s\n", e.what());
      return nullptr;
    }
  }
  if (key == "grid") {
    int side = quick ? 300 : 1000;
    return make_graph(key, bench::grid_graph(side, 100),
                      "grid " + std::to_string(side) + "x" + std::to_string(side));
  }
  if (key == "random") {
    int v = quick ? 100000 : 1000000;
    return make_graph(key, bench::random_graph(v, 4, 1000),
                      quick ? "random 100k, 4V" : "random 1M, 4V");
  }
  if (key == "rmat") {
    int scale = quick ? 16 : 20;
    std::int64_t arcs = std::int64_t{16} << scale;
    return make_graph(key, bench::rmat_graph(scale, arcs, 1000),
                      "R-MAT 2^" + std::to_string(scale) + ", 16V");
  }
  if (key == "ring") {
    int v = quick ? 1024 : 4096;
    return make_graph(key, bench::ring_graph(v, 1000), "ring " + std::to_string(v));
  }
  if (key == "complete") {
    int v = quick ? 1024 : 4096;
    return make_graph(key, bench::complete_graph(v, 1000), "complete " + std::to_string(v));
  }
  return nullptr;
}

// A cell stops adding runs once it has spent this long (slow engines on big graphs); the table
// then says how many runs its median is of.
double g_cell_budget_s = 12;

// Times engine->solve over `runs` runs, source i of each run taken round robin from `sources`
// (`per_run` sources per call); cancels past the deadline.
Measurement time_engine(ShortestPathEngine& engine, const BenchGraph& bg, int runs, int per_run,
                        double deadline_s) {
  Measurement m;
  m.wanted_runs = runs;
  int solves = 0;
  const auto cell_start = Clock::now();
  const std::size_t n = static_cast<std::size_t>(bg.graph.vertex_count());
  std::vector<double> dist(n * static_cast<std::size_t>(per_run));
  std::size_t next_source = 0;
  bool warmed = false;
  for (int run = 0; run < runs; ++run) {
    std::vector<VertexIndex> sources;
    for (int i = 0; i < per_run; ++i)
      sources.push_back(bg.sources[next_source++ % bg.sources.size()]);
    SolveRequest request;
    request.sources = sources.data();
    request.source_count = per_run;
    request.distances = dist.data();
    g_deadline =
        Clock::now() + std::chrono::milliseconds(static_cast<long long>(deadline_s * 1000));
    const auto start = Clock::now();
    try {
      engine.solve(request);
    } catch (const Cancelled&) {
      g_deadline = Clock::time_point::max();
      m.timed_out = true;
      break;
    }
    g_deadline = Clock::time_point::max();
    ++solves;
    const double ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    // A fast first run also pays one-time costs (module load, caches): a warm-up, not a sample.
    if (!warmed && ms < 200) {
      warmed = true;
      --run;
      continue;
    }
    warmed = true;
    m.ms.push_back(ms / per_run);
    if (std::chrono::duration<double>(Clock::now() - cell_start).count() > g_cell_budget_s) break;
  }
  m.rounds =
      solves > 0 ? engine.report().rounds / (static_cast<std::int64_t>(solves) * per_run) : 0;
  m.notes = engine.report().notes;
  return m;
}

Measurement run_engine(const EngineInfo& info, const BenchGraph& bg, EngineOptions options,
                       int runs, int per_run, double deadline_s) {
  Measurement m;
  options.cancel = CancelToken(deadline_passed);
  try {
    auto engine = info.create(bg.graph, options);
    m = time_engine(*engine, bg, runs, per_run, deadline_s);
  } catch (const RoutingError& e) {
    m.error = e.what();
  }
  return m;
}

struct CsvWriter {
  std::ofstream out;
  explicit CsvWriter(const std::string& path) {
    if (path.empty()) return;
    out.open(path);
    out << "table,graph,vertices,arcs,engine,setting,runs,median_ms,min_ms,max_ms,timed_out,"
           "rounds_per_source,status\n";
  }
  void row(const std::string& table, const BenchGraph& bg, const std::string& engine,
           const std::string& setting, const Measurement& m) {
    if (!out.is_open()) return;
    double lo = m.ms.empty() ? 0 : *std::min_element(m.ms.begin(), m.ms.end());
    double hi = m.ms.empty() ? 0 : *std::max_element(m.ms.begin(), m.ms.end());
    std::string status = m.error;
    std::replace(status.begin(), status.end(), ',', ';');
    std::replace(status.begin(), status.end(), '\n', ' ');
    out << table << ",\"" << bg.name << "\"," << bg.graph.vertex_count() << ","
        << bg.graph.arc_count() << "," << engine << ",\"" << setting << "\"," << m.ms.size() << ","
        << median(m.ms) << "," << lo << "," << hi << "," << (m.timed_out ? 1 : 0) << "," << m.rounds
        << ",\"" << status << "\"\n";
    out.flush();
  }
};

}  // namespace

int main(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&](const char* prefix) { return arg.substr(std::strlen(prefix)); };
    if (arg == "--quick")
      options.quick = true;
    else if (arg == "--no-tune")
      options.tune = false;
    else if (arg == "--no-streams")
      options.streams = false;
    else if (arg == "--no-unroll")
      options.unroll = false;
    else if (arg.rfind("--runs=", 0) == 0)
      options.runs = std::max(1, std::atoi(value("--runs=").c_str()));
    else if (arg.rfind("--deadline=", 0) == 0)
      options.deadline_s = std::atof(value("--deadline=").c_str());
    else if (arg.rfind("--csv=", 0) == 0)
      options.csv_path = value("--csv=");
    else if (arg.rfind("--cell-budget=", 0) == 0)
      g_cell_budget_s = std::atof(value("--cell-budget=").c_str());
    else if (arg.rfind("--graphs=", 0) == 0)
      options.graphs = split(value("--graphs="));
    else if (arg.rfind("--engines=", 0) == 0)
      options.engines = split(value("--engines="));
    else if (arg.rfind("--", 0) == 0) {
      std::fprintf(stderr, "unknown option %s\n", arg.c_str());
      return 2;
    } else {
      options.data_dir = arg;
    }
  }
  const auto& gpus = gpu::availability();
  if (!gpus.usable) {
    std::fprintf(stderr, "no usable GPU: %s\n", gpus.reason.c_str());
    return 1;
  }
  CsvWriter csv(options.csv_path);
  const std::vector<std::string> graph_keys = {"ny", "grid", "random", "rmat", "ring", "complete"};
  std::vector<const EngineInfo*> gpu_engines;
  for (const auto& info : gpu_engine_table())
    if (info.single_source && (options.engines.empty() || options.engines.count(info.name)))
      gpu_engines.push_back(&info);
  const EngineInfo* cpu = find_engine("dijkstra", Device::kCpu);

  std::printf("# sssp_bench on %s (%s)\n\n", gpus.devices[0].name.c_str(),
              gpu::build_description().c_str());
  std::printf(
      "Milliseconds per source, median of %d runs over a few sources; GPU: graph resident on "
      "the device, time of solve() (rounds + distance row back to the host); \"> N s\": "
      "cancelled at the deadline; n/a: refused (see notes).\n\n",
      options.runs);

  struct Column {
    std::string name, size;
    std::map<std::string, std::string> cells;
  };
  std::vector<Column> columns;
  std::vector<std::string> row_names;
  std::vector<std::string> notes;
  auto add_row_name = [&](const std::string& name) {
    if (std::find(row_names.begin(), row_names.end(), name) == row_names.end())
      row_names.push_back(name);
  };
  for (const auto* info : gpu_engines) add_row_name(std::string("gpu ") + info->name);
  const std::string cpu1 = "cpu dijkstra, 1 thread";
  const std::string cpu_all = "cpu dijkstra, all cores (1 source)";
  const std::string cpu16 = "cpu dijkstra, 16 sources on 16 threads (per source)";
  // Throughput: the GPU's many-source mode against the CPU engine's 16 threads, the same
  // sources round robin; per source, so it compares with cpu16.
  const std::string gpu_batch = "gpu near_far, a batch of sources per call (per source)";
  const EngineInfo* near_far = find_engine("near_far", Device::kGpu);
  const bool batch_row =
      near_far != nullptr && (options.engines.empty() || options.engines.count("near_far"));
  for (const auto& name : {cpu1, cpu_all, cpu16}) add_row_name(name);
  if (batch_row) add_row_name(gpu_batch);

  std::unique_ptr<BenchGraph> tune_graph;
  std::unique_ptr<BenchGraph> streams_graph;
  for (const auto& key : graph_keys) {
    if (!options.graphs.empty() && !options.graphs.count(key)) continue;
    std::fprintf(stderr, "building graph %s ...\n", key.c_str());
    auto bg = load_graph(key, options);
    if (!bg) continue;
    Column column;
    column.name = bg->name;
    column.size = "V=" + std::to_string(bg->graph.vertex_count()) +
                  " E=" + std::to_string(bg->graph.arc_count());
    for (const auto* info : gpu_engines) {
      std::fprintf(stderr, "  %s / %s\n", bg->name.c_str(), info->name);
      Measurement m = run_engine(*info, *bg, EngineOptions{}, options.runs, 1, options.deadline_s);
      column.cells[std::string("gpu ") + info->name] = cell(m, options.deadline_s);
      csv.row("sssp", *bg, info->name, "default", m);
      if (!m.error.empty())
        notes.push_back(std::string(info->name) + " on " + bg->name + ": " + m.error);
      else if (!m.notes.empty())
        notes.push_back(std::string(info->name) + " on " + bg->name + ": " + m.notes);
    }
    {
      std::fprintf(stderr, "  %s / cpu\n", bg->name.c_str());
      EngineOptions one;
      one.threads = 1;
      Measurement m = run_engine(*cpu, *bg, one, options.runs, 1, options.deadline_s * 3);
      column.cells[cpu1] = cell(m, options.deadline_s * 3);
      csv.row("sssp", *bg, "cpu_dijkstra", "1 thread", m);
      Measurement all =
          run_engine(*cpu, *bg, EngineOptions{}, options.runs, 1, options.deadline_s * 3);
      column.cells[cpu_all] = cell(all, options.deadline_s * 3);
      csv.row("sssp", *bg, "cpu_dijkstra", "all cores, 1 source", all);
      EngineOptions sixteen;
      sixteen.threads = 16;
      Measurement many =
          run_engine(*cpu, *bg, sixteen, std::min(options.runs, 3), 16, options.deadline_s * 3);
      column.cells[cpu16] = cell(many, options.deadline_s * 3);
      csv.row("sssp", *bg, "cpu_dijkstra", "16 threads, 16 sources, per source", many);
    }
    if (batch_row) {
      std::fprintf(stderr, "  %s / near_far, many sources\n", bg->name.c_str());
      Measurement m;
      EngineOptions batch_options;
      batch_options.cancel = CancelToken(deadline_passed);
      int per_call = 0;
      try {
        auto engine = near_far->create(bg->graph, batch_options);
        per_call = std::max(1, std::min(engine->preferred_batch_size(), 1024));
        m = time_engine(*engine, *bg, 3, per_call, options.deadline_s * 3);
      } catch (const RoutingError& e) {
        m.error = e.what();
      }
      column.cells[gpu_batch] = cell(m, options.deadline_s * 3);
      csv.row("sssp", *bg, "near_far", std::to_string(per_call) + " sources per call, per source",
              m);
      notes.push_back("near_far batch on " + bg->name + ": " + std::to_string(per_call) +
                      " sources per call" + (m.error.empty() ? "; " + m.notes : ": " + m.error));
    }
    columns.push_back(std::move(column));
    if (key == "random") tune_graph = std::move(bg);
  }

  // Table 1.
  std::printf("## Single source: milliseconds per source\n\n| engine |");
  for (const auto& c : columns) std::printf(" %s |", c.name.c_str());
  std::printf("\n|---|");
  for (std::size_t i = 0; i < columns.size(); ++i) std::printf("---:|");
  std::printf("\n| (size) |");
  for (const auto& c : columns) std::printf(" %s |", c.size.c_str());
  std::printf("\n");
  for (const auto& row : row_names) {
    std::printf("| %s |", row.c_str());
    for (const auto& c : columns) {
      auto it = c.cells.find(row);
      std::printf(" %s |", it == c.cells.end() ? "" : it->second.c_str());
    }
    std::printf("\n");
  }
  if (!notes.empty()) {
    std::printf("\nNotes:\n");
    for (const auto& n : notes) std::printf("- %s\n", n.c_str());
  }
  std::fflush(stdout);

  // Table 2: relax kernel time over block sizes (seed 003).
  if (options.tune) {
    if (!tune_graph) {
      Options quick = options;
      std::fprintf(stderr, "building the tuning graph ...\n");
      tune_graph = load_graph("random", quick);
    }
    const std::vector<int> block_sizes = {64, 96, 128, 192, 256, 512};
    const std::vector<std::string> tuned = {"frontier", "frontier_pred", "crauser", "bellman_ford"};
    std::printf(
        "\n## Relax kernel time (ms per source, median) over block sizes, %s (V=%d, E=%d)\n\n"
        "Device timestamps (%%globaltimer) from each relax kernel's start to the start of the "
        "round's next kernel, summed over the rounds; rounds run in the batch graphs as usual.\n\n",
        tune_graph->name.c_str(), tune_graph->graph.vertex_count(), tune_graph->graph.arc_count());
    std::printf("| engine |");
    for (int b : block_sizes) std::printf(" %d |", b);
    std::printf(" best | whole solve at best (ms) |\n|---|");
    for (std::size_t i = 0; i <= block_sizes.size() + 1; ++i) std::printf("---:|");
    std::printf("\n");
    gpu::set_relax_kernel_timing(true);
    for (const auto& name : tuned) {
      const EngineInfo* info = find_engine(name, Device::kGpu);
      if (info == nullptr) continue;
      std::printf("| %s |", name.c_str());
      double best_ms = 0;
      int best_block = 0;
      for (int b : block_sizes) {
        std::fprintf(stderr, "  tuning %s block %d\n", name.c_str(), b);
        EngineOptions o;
        o.block_size = b;
        o.cancel = CancelToken(deadline_passed);
        std::vector<double> relax;
        bool timed_out = false;
        try {
          auto engine = info->create(tune_graph->graph, o);
          double before = 0;
          const int runs = std::min(options.runs, 3);
          for (int run = 0; run < runs && !timed_out; ++run) {
            VertexIndex source =
                tune_graph->sources[static_cast<std::size_t>(run) % tune_graph->sources.size()];
            std::vector<double> dist(static_cast<std::size_t>(tune_graph->graph.vertex_count()));
            SolveRequest request;
            request.sources = &source;
            request.source_count = 1;
            request.distances = dist.data();
            g_deadline = Clock::now() + std::chrono::milliseconds(
                                            static_cast<long long>(options.deadline_s * 1000));
            try {
              engine->solve(request);
            } catch (const Cancelled&) {
              timed_out = true;
            }
            g_deadline = Clock::time_point::max();
            double now = gpu::relax_kernel_ms(*engine);
            if (!timed_out) relax.push_back(now - before);
            before = now;
          }
        } catch (const RoutingError& e) {
          std::fprintf(stderr, "    %s\n", e.what());
        }
        Measurement m;
        m.ms = relax;
        m.timed_out = timed_out;
        csv.row("relax_block_size", *tune_graph, name, std::to_string(b), m);
        if (relax.empty()) {
          std::printf(" %s |", timed_out ? "timeout" : "n/a");
          continue;
        }
        double ms = median(relax);
        std::printf(" %s |", format_ms(ms).c_str());
        if (best_block == 0 || ms < best_ms) {
          best_ms = ms;
          best_block = b;
        }
      }
      gpu::set_relax_kernel_timing(false);
      std::string whole = "";
      if (best_block > 0) {
        EngineOptions o;
        o.block_size = best_block;
        Measurement m = run_engine(*info, *tune_graph, o, options.runs, 1, options.deadline_s);
        whole = cell(m, options.deadline_s);
        csv.row("whole_at_best_block", *tune_graph, name, std::to_string(best_block), m);
      }
      gpu::set_relax_kernel_timing(true);
      std::printf(" %d | %s |\n", best_block, whole.c_str());
      std::fflush(stdout);
    }
    gpu::set_relax_kernel_timing(false);
  }

  // Table 3: concurrent streams (seed 003) and harish, many sources per call.
  if (options.streams) {
    std::fprintf(stderr, "building the streams graph ...\n");
    Options small = options;
    small.quick = true;
    streams_graph = load_graph("random", small);
    const int sources = 32;
    std::printf("\n## Many sources: ms per source, %d sources per call, %s (V=%d, E=%d)\n\n",
                sources, streams_graph->name.c_str(), streams_graph->graph.vertex_count(),
                streams_graph->graph.arc_count());
    std::printf("| engine | setting | ms per source |\n|---|---|---:|\n");
    // Sources: 32 distinct ones.
    streams_graph->sources = pick_sources(streams_graph->graph, sources);
    for (int streams : {1, 2, 4, 8, 16, 32}) {
      const EngineInfo* info = find_engine("concurrent", Device::kGpu);
      if (info == nullptr) break;
      EngineOptions o;
      o.streams = streams;
      Measurement m = run_engine(*info, *streams_graph, o, std::min(options.runs, 3), sources,
                                 options.deadline_s * 3);
      std::printf("| concurrent | %d streams | %s |\n", streams,
                  cell(m, options.deadline_s * 3).c_str());
      csv.row("streams", *streams_graph, "concurrent", std::to_string(streams), m);
    }
    for (const char* name : {"harish", "crauser"}) {
      const EngineInfo* info = find_engine(name, Device::kGpu);
      if (info == nullptr) continue;
      Measurement m = run_engine(*info, *streams_graph, EngineOptions{}, std::min(options.runs, 3),
                                 sources, options.deadline_s * 3);
      std::printf("| %s | one source at a time | %s |\n", name,
                  cell(m, options.deadline_s * 3).c_str());
      csv.row("streams", *streams_graph, name, "sequential", m);
    }
    EngineOptions sixteen;
    sixteen.threads = 16;
    Measurement m = run_engine(*cpu, *streams_graph, sixteen, std::min(options.runs, 3), sources,
                               options.deadline_s * 3);
    std::printf("| cpu dijkstra | 16 threads | %s |\n", cell(m, options.deadline_s * 3).c_str());
    csv.row("streams", *streams_graph, "cpu_dijkstra", "16 threads", m);
  }
  // Table 4: rounds per iteration of the batch graph's loop (pure per-round overhead on the
  // ring, a mix on the random graph).
  if (options.unroll) {
    std::vector<std::unique_ptr<BenchGraph>> graphs;
    std::fprintf(stderr, "building the unroll graphs ...\n");
    graphs.push_back(load_graph("ring", options));
    if (streams_graph) graphs.push_back(std::move(streams_graph));
    const std::vector<int> unrolls = {1, 2, 4, 8};
    std::printf("\n## Rounds per iteration of the batch graph's loop: ms per source\n\n");
    std::printf("| engine | graph |");
    for (int u : unrolls) std::printf(" %d |", u);
    std::printf("\n|---|---|");
    for (std::size_t i = 0; i < unrolls.size(); ++i) std::printf("---:|");
    std::printf("\n");
    for (const char* name : {"frontier", "crauser", "bellman_ford"}) {
      const EngineInfo* info = find_engine(name, Device::kGpu);
      if (info == nullptr) continue;
      for (const auto& bg : graphs) {
        std::printf("| %s | %s |", name, bg->name.c_str());
        for (int u : unrolls) {
          gpu::set_rounds_per_graph_iteration(u);
          Measurement m =
              run_engine(*info, *bg, EngineOptions{}, options.runs, 1, options.deadline_s);
          std::printf(" %s |", cell(m, options.deadline_s).c_str());
          csv.row("rounds_per_iteration", *bg, name, std::to_string(u), m);
        }
        gpu::set_rounds_per_graph_iteration(0);
        std::printf("\n");
        std::fflush(stdout);
      }
    }
  }
  return 0;
}
