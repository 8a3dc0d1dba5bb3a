// The engine table of the many-source and dense all-pairs CUDA engines (seeds 000, 002, 004).
// The engines live in apsp_multi_source.cu and apsp_dense.cu.
#include "apsp_engines.cuh"
#include "gpu_engines.hpp"

namespace gpu_routing::gpu {

const std::vector<EngineInfo>& apsp_engines() {
  static const std::vector<EngineInfo> table = {
      {"multi_source", Device::kGpu, false, true, false,
       "Okuyama, Ino and Hagihara: 32 sources per warp (Harish's scatter/check with atomicMin), "
       "adjacency shared "
       "by the warp, interleaved per-source arrays, path recording kernel; splits sources over "
       "every GPU",
       [](const Graph& g, const EngineOptions& o) -> std::unique_ptr<ShortestPathEngine> {
         return apsp::create_multi_source_engine(g, o);
       },
       apsp::estimate_multi_source_bytes},
      {"blocked_fw", Device::kGpu, false, true, true,
       "Pandey and Sharma: three-phase blocked Floyd-Warshall on the dense matrix, register-tiled "
       "min-plus "
       "products in int16x2, int32 or float64",
       [](const Graph& g, const EngineOptions& o) -> std::unique_ptr<ShortestPathEngine> {
         return apsp::create_dense_engine(g, o, apsp::DenseAlgorithm::kBlocked);
       },
       apsp::estimate_dense_bytes},
      {"floyd_warshall", Device::kGpu, false, true, true,
       "the textbook Floyd-Warshall on the dense matrix, one kernel per k (Pandey and Sharma's "
       "baseline)",
       [](const Graph& g, const EngineOptions& o) -> std::unique_ptr<ShortestPathEngine> {
         return apsp::create_dense_engine(g, o, apsp::DenseAlgorithm::kNaive);
       },
       apsp::estimate_dense_bytes},
      {"rkleene", Device::kGpu, false, true, true,
       "Pandey and Sharma: recursive Kleene on quadrants, min-plus products and a shared-memory "
       "Floyd-Warshall base case",
       [](const Graph& g, const EngineOptions& o) -> std::unique_ptr<ShortestPathEngine> {
         return apsp::create_dense_engine(g, o, apsp::DenseAlgorithm::kRecursiveKleene);
       },
       apsp::estimate_dense_bytes},
  };
  return table;
}

}  // namespace gpu_routing::gpu
