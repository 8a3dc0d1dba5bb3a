// The GPU service's launch for one-to-one routes, compute only (graph resident, engine kept):
// k random (source, target) pairs of New York solved as one many-source solve(), as the service
// runs k requests that share a launch. For each engine block size and k, three ways to stop:
//   own     each source stops at its own target (SolveRequest::target_offsets)
//   union   every source stops once all k targets are final (one shared target list)
//   none    every source runs to the end
// Prints a table of median milliseconds per launch (5 runs after a warm-up) and routes per
// second = k / time; every row's distance to its own target is checked against the CPU Dijkstra.
//
//   route_batch_bench [--engine near_far] [--blocks 0,256,512,1024] [--k 1,16,32,64,128,256]
//                     [path/to/USA-road-d.NY.gr.gz]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "engine/engine.hpp"
#include "graph_generators.hpp"
#include "engine/gpu.hpp"
#include "cpu/sssp_dijkstra.hpp"

using namespace gpu_routing;

namespace {

std::vector<int> parse_list(const std::string& text) {
  std::vector<int> values;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) values.push_back(std::atoi(item.c_str()));
  return values;
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  std::string engine_name = "near_far";
  std::vector<int> blocks = {0, 256, 512, 1024};
  std::vector<int> ks = {1, 16, 32, 64, 128, 256};
  const char* data = std::getenv("GPU_ROUTING_DATA");
  std::string path =
      std::string(data != nullptr ? data : "../shared/data") + "/USA-road-d.NY.gr.gz";
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--engine" && i + 1 < argc)
      engine_name = argv[++i];
    else if (arg == "--blocks" && i + 1 < argc)
      blocks = parse_list(argv[++i]);
    else if (arg == "--k" && i + 1 < argc)
      ks = parse_list(argv[++i]);
    else
      path = arg;
  }
  const gpu::Availability& gpus = gpu::availability();
  const EngineInfo* info = find_engine(engine_name, gpus.usable ? Device::kGpu : Device::kCpu);
  if (info == nullptr) info = find_engine(engine_name, Device::kCpu);
  if (info == nullptr) {
    std::fprintf(stderr, "route_batch_bench: no engine %s in this build\n", engine_name.c_str());
    return 2;
  }
  const bench::EdgeList edges = bench::read_dimacs(path);
  const Graph graph = build_graph(edges.view(), true);
  const std::size_t n = static_cast<std::size_t>(graph.vertex_count());
  std::printf("# route_batch_bench: %s on %s (%d vertices, %d arcs), %s\n", info->name,
              edges.name.c_str(), graph.vertex_count(), graph.arc_count(),
              gpus.usable ? gpus.devices.front().name.c_str() : "CPU");
  std::printf(
      "| engine block size | k | stop | ms per launch | routes/s |\n|---:|---:|---|---:|---:|\n");

  const int max_k = *std::max_element(ks.begin(), ks.end());
  std::mt19937 rng(20261125);
  std::uniform_int_distribution<VertexIndex> any(0, graph.vertex_count() - 1);
  std::vector<VertexIndex> sources(static_cast<std::size_t>(max_k)), targets(sources.size());
  for (int i = 0; i < max_k; ++i) {
    sources[static_cast<std::size_t>(i)] = any(rng);
    targets[static_cast<std::size_t>(i)] = any(rng);
  }
  // The reference: each pair's distance by the CPU Dijkstra.
  std::vector<double> expected(sources.size());
  {
    DijkstraWorkspace workspace(graph.vertex_count());
    std::vector<double> row(n);
    for (std::size_t i = 0; i < sources.size(); ++i) {
      workspace.run(graph.forward, sources[i], row.data(), nullptr, 0, CancelToken());
      expected[i] = row[static_cast<std::size_t>(targets[i])];
    }
  }
  std::vector<double> distances(static_cast<std::size_t>(max_k) * n);
  int mismatches = 0;
  for (int block : blocks) {
    EngineOptions options;
    options.block_size = block;
    std::unique_ptr<ShortestPathEngine> engine = info->create(graph, options);
    for (int k : ks) {
      std::vector<int> offsets(static_cast<std::size_t>(k) + 1);
      for (int i = 0; i <= k; ++i) offsets[static_cast<std::size_t>(i)] = i;
      for (const char* stop : {"own", "union", "none"}) {
        SolveRequest request;
        request.sources = sources.data();
        request.source_count = k;
        request.distances = distances.data();
        if (std::string(stop) != "none") {
          request.targets = targets.data();
          request.target_count = k;
          if (std::string(stop) == "own") request.target_offsets = offsets.data();
        }
        std::vector<double> times;
        for (int run = 0; run < 6; ++run) {
          Stopwatch watch;
          engine->solve(request);
          if (run > 0) times.push_back(watch.elapsed_ms());
        }
        for (int i = 0; i < k; ++i)
          if (distances[static_cast<std::size_t>(i) * n +
                        static_cast<std::size_t>(targets[static_cast<std::size_t>(i)])] !=
              expected[static_cast<std::size_t>(i)])
            ++mismatches;
        const double ms = median(times);
        std::printf("| %d | %d | %s | %.2f | %.0f |\n", block, k, stop, ms, k / ms * 1000.0);
        std::fflush(stdout);
      }
    }
  }
  std::printf("\n%d mismatches against the CPU Dijkstra\n", mismatches);
  return mismatches == 0 ? 0 : 1;
}
