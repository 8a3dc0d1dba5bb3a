// auto's cost model: the stored speeds, the graph features it samples, the choices it makes on
// the shapes of the SQL benchmarks, what its reason says, and a calibration run on this CPU.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "cpu/cch_engine_policy.hpp"
#include "calibration/calibration.hpp"
#include "road_index/cch.hpp"
#include "choice/cost_model.hpp"
#include "choice/engine_select.hpp"
#include "base/parallel.hpp"
#include "base/predecessors.hpp"
#include "test_graphs.hpp"

namespace gpu_routing {
namespace {

using testing::EdgeTable;

TEST(MachineSpeeds, StoredFormRoundTripsAndKeepsDefaultsForBadLines) {
  MachineSpeeds speeds;
  speeds.cpu_dijkstra_arc_ns = 12.5;
  speeds.gpu_context_ms = 88;
  speeds.origin = "calibrated 2026-11-26 on a test";
  MachineSpeeds read;
  ASSERT_TRUE(read.parse(speeds.serialize()));
  EXPECT_DOUBLE_EQ(read.cpu_dijkstra_arc_ns, 12.5);
  EXPECT_DOUBLE_EQ(read.gpu_context_ms, 88);
  EXPECT_EQ(read.origin, "calibrated 2026-11-26 on a test");
  EXPECT_EQ(read.values().size(), speeds.values().size());

  MachineSpeeds partial;
  EXPECT_TRUE(partial.parse("gpu_fw_ns = 0.5\ncpu_fw_ns = -3\ncpu_cch_query_us = abc\nnonsense\n"));
  EXPECT_DOUBLE_EQ(partial.gpu_fw_ns, 0.5);
  EXPECT_DOUBLE_EQ(partial.cpu_fw_ns, MachineSpeeds().cpu_fw_ns);  // negative: refused
  EXPECT_DOUBLE_EQ(partial.cpu_cch_query_us, MachineSpeeds().cpu_cch_query_us);
  MachineSpeeds none;
  EXPECT_FALSE(none.parse("# nothing here\n"));
}

Graph grid_graph(int side) {
  EdgeTable table;
  for (int r = 0; r < side; ++r)
    for (int c = 0; c < side; ++c) {
      const std::int64_t v = r * side + c;
      if (c + 1 < side) table.add(v, v + 1, 1.0, 1.0);
      if (r + 1 < side) table.add(v, v + side, 1.0, 1.0);
    }
  table.with_reverse = true;
  return build_graph(table.view(), true);
}

TEST(CostModel, LocalityAndHopDepth) {
  const Graph grid = grid_graph(200);
  EXPECT_EQ(far_arc_share(grid.forward), 0.0);
  EXPECT_EQ(hop_depth(grid.forward, 0), 2 * 199);
  EdgeTable table;
  std::mt19937 random(3);
  for (int v = 0; v < 100000; ++v) table.add(v, static_cast<std::int64_t>(random() % 100000), 1.0);
  const Graph scattered = build_graph(table.view(), true);
  EXPECT_GT(far_arc_share(scattered.forward), 0.8);
}

// auto's hop depth is measured once per topology: a later call on the same arcs (from another
// source, or with other weights) gets the first one's; any change of arcs measures again.
// A kept graph's far share is remembered by where its arrays lie: the same graph gives the same
// share, another graph (other arrays) its own, each the one far_arc_share() measures.
TEST(CostModel, FarShareRememberedForTheSameArrays) {
  const Graph local = build_graph(testing::grid_edges(100, 100, 10, 1).view(), true);
  testing::RandomGraphSpec spec;
  spec.vertices = 40000;
  spec.edges = 120000;
  const Graph scattered = build_graph(testing::random_edges(spec, 3).view(), true);
  const double local_share = far_arc_share(local.forward);
  const double scattered_share = far_arc_share(scattered.forward);
  EXPECT_LT(local_share, 0.1);
  EXPECT_GT(scattered_share, 0.5);
  for (int pass = 0; pass < 2; ++pass) {
    EXPECT_EQ(remembered_far_arc_share(local.forward), local_share);
    EXPECT_EQ(remembered_far_arc_share(scattered.forward), scattered_share);
  }
}

TEST(CostModel, HopDepthRememberedByTopology) {
  // A 120 x 120 grid, its arcs weighted `weight`, with an extra arc from the corner when asked.
  auto grid = [](double weight, bool shortcut) {
    const int side = 120;
    EdgeTable table;
    table.with_reverse = true;
    for (int r = 0; r < side; ++r)
      for (int c = 0; c < side; ++c) {
        const std::int64_t v = r * side + c;
        if (c + 1 < side) table.add(v, v + 1, weight, weight);
        if (r + 1 < side) table.add(v, v + side, weight, weight);
      }
    if (shortcut) table.add(0, side * side - 1, weight, weight);
    return build_graph(table.view(), true);
  };
  const Graph plain = grid(1, false);
  const int corner = remembered_hop_depth(plain.forward, 0);
  EXPECT_EQ(corner, 2 * 119);
  const VertexIndex middle = 60 * 120 + 60;
  EXPECT_EQ(hop_depth(plain.forward, middle), 120);
  EXPECT_EQ(remembered_hop_depth(plain.forward, middle), corner);  // remembered, not measured
  EXPECT_EQ(remembered_hop_depth(grid(7, false).forward, middle), corner);  // weights aside
  // One arc more: another topology, measured (from the middle this time).
  EXPECT_EQ(remembered_hop_depth(grid(1, true).forward, middle),
            hop_depth(grid(1, true).forward, middle));
  EXPECT_NE(hop_depth(grid(1, true).forward, middle), corner);
  // Another graph is another entry; the first is still remembered beside it.
  EXPECT_EQ(remembered_hop_depth(grid_graph(50).forward, 0), 2 * 49);
  EXPECT_EQ(remembered_hop_depth(plain.forward, middle), corner);
}

// Shapes of the SQL benchmarks, with the built-in speeds and a GPU that is usable (selection
// only: nothing runs on it).
struct Decide {
  gpu::Availability gpu;
  AutoCosts costs;
  ProblemShape problem;
  Decide() {
    gpu.usable = true;
    costs.state.gpu_usable = true;
    costs.state.cpu_threads = 16;
  }
  const EngineInfo* pick(DeviceSetting device = DeviceSetting::kAuto) {
    problem.vertices = costs.shape.vertices;
    problem.arcs = costs.shape.arcs;
    problem.source_count = static_cast<int>(costs.shape.sources);
    problem.all_pairs = costs.shape.all_pairs;
    problem.compact_targets = costs.shape.compact_targets;
    last = select_engine(device, "auto", problem, gpu, &costs);
    return last.engine;
  }
  EngineSelection last;
};

TEST(CostModel, ChoicesOnTheBenchmarkShapes) {
  if (find_engine("near_far", Device::kGpu) == nullptr) GTEST_SKIP() << "a build without CUDA";
  Decide d;
  // One route on New York from edges_sql in a session with no CUDA context: the CPU (the
  // context alone costs more than Dijkstra's whole search).
  d.costs.shape.vertices = 264346;
  d.costs.shape.arcs = 733846;
  d.costs.shape.sources = 1;
  d.costs.shape.targets_per_source = 1;
  d.costs.shape.result_rows = 500;
  d.costs.shape.result_cells = 264346;
  EXPECT_EQ(d.pick()->device, Device::kCpu);
  EXPECT_NE(d.last.reason.find("best alternative gpu near_far, estimated"), std::string::npos)
      << d.last.reason;
  EXPECT_NE(d.last.reason.find("(built-in speeds)"), std::string::npos) << d.last.reason;

  // One-to-all on a random graph of 1M vertices through the GPU service: the GPU (the CPU's
  // Dijkstra misses the caches on every arc).
  d.costs.shape.vertices = 1 << 20;
  d.costs.shape.arcs = 4 << 20;
  d.costs.shape.targets_per_source = 0;
  d.costs.shape.result_rows = 1 << 20;
  d.costs.shape.result_cells = 1 << 20;
  d.costs.shape.far_fraction = 0.99;
  d.costs.state.service = true;
  EXPECT_STREQ(d.pick()->name, "near_far");

  // A 1000 x 1000 cost matrix on New York: the GPU's near_far, one source per thread block.
  d.costs.shape.vertices = 264346;
  d.costs.shape.arcs = 733846;
  d.costs.shape.far_fraction = 0.05;
  d.costs.shape.sources = 1000;
  d.costs.shape.targets_per_source = 1000;
  d.costs.shape.compact_targets = true;
  d.costs.shape.result_rows = 1e6;
  d.costs.shape.result_cells = 1e6;
  EXPECT_STREQ(d.pick()->name, "near_far");
  EXPECT_EQ(d.last.engine->device, Device::kGpu);
  // ... device = cpu: among the CPU's engines only.
  EXPECT_EQ(d.pick(DeviceSetting::kCpu)->device, Device::kCpu);
  // ... and with the road index: buckets on the CPU.
  d.costs.shape.index_arcs = 1550000;
  EXPECT_STREQ(d.pick()->name, "cch");
  EXPECT_EQ(d.last.engine->device, Device::kCpu);
  d.costs.shape.index_arcs = 0;

  // Dense all pairs of 2000 vertices: a Floyd-Warshall.
  d.costs.shape.vertices = 2000;
  d.costs.shape.arcs = 800000;
  d.costs.shape.sources = 2000;
  d.costs.shape.targets_per_source = 0;
  d.costs.shape.compact_targets = false;
  d.costs.shape.all_pairs = true;
  d.costs.shape.dense = true;
  d.costs.shape.result_rows = 4e6;
  d.costs.shape.result_cells = 4e6;
  d.problem.many_source = true;
  EXPECT_STREQ(d.pick()->name, "blocked_fw");

  // device = gpu where no GPU is usable: refused, as without estimates.
  d.gpu.usable = false;
  d.gpu.reason = "test: no GPU";
  EXPECT_THROW(d.pick(DeviceSetting::kGpu), RoutingError);
  // auto without a GPU: the CPU, and the reason says why.
  EXPECT_EQ(d.pick()->device, Device::kCpu);
  EXPECT_NE(d.last.reason.find("no usable GPU (test: no GPU)"), std::string::npos) << d.last.reason;
}

// Cost matrices on New York's kept road index with the H200 host's calibrated speeds
// (docs/results/h200_auto.md): the CPU's buckets at every size up to 10,000 x 10,000 (there 7.8,
// 45 and 448 ms against the GPU's sweeps' 40, 240 and 1,115, docs/results/road_table_h200.md).
TEST(CostModel, LargeMatricesOnTheIndexPriceBothDevices) {
  if (find_engine("cch", Device::kGpu) == nullptr) GTEST_SKIP() << "a build without CUDA";
  Decide d;
  ASSERT_TRUE(d.costs.speeds.parse(
      "cpu_dijkstra_vertex_ns = 43.2209\ncpu_dijkstra_arc_ns = 2.3028\n"
      "cpu_dijkstra_far_factor = 1.6907\ncpu_parallel_efficiency = 0.6878\n"
      "cpu_cch_sweep_ns = 1.9293\ncpu_cch_query_us = 63.9028\ncpu_cch_build_ns = 149.2003\n"
      "cpu_predecessor_ns = 3.9879\ngpu_upload_ns_per_byte = 3.2802\n"
      "gpu_download_ns_per_byte = 0.9620\ngpu_service_call_ms = 1.6702\n"
      "gpu_single_local_ns = 5.1501\ngpu_single_far_ns = 1.0634\ngpu_many_local_ns = 0.2286\n"
      "gpu_many_far_ns = 0.1752\ngpu_many_source_us = 2.4172\ngpu_multi_source_ns = 0.0317\n"
      "gpu_fw_ns = 0.0105\n"));
  d.costs.speeds.origin = "calibrated on the H200 host";
  d.costs.state.service = true;
  d.costs.state.kept_engine = "*";
  d.costs.state.hardware_threads = 16;
  d.costs.shape.vertices = 264346;
  d.costs.shape.arcs = 733846;
  d.costs.shape.far_fraction = 0.05;
  d.costs.shape.kept_graph = true;
  d.costs.shape.index_arcs = 1550000;
  d.costs.shape.compact_targets = true;
  d.problem.road_index = true;
  d.problem.many_source = true;
  auto matrix = [&](int n) {
    d.costs.shape.sources = n;
    d.costs.shape.targets_per_source = n;
    d.costs.shape.result_rows = n;  // as arrays: a row per source
    d.costs.shape.result_cells = static_cast<double>(n) * n;
    return d.pick();
  };
  for (int n : {1000, 3000, 10000}) {
    const EngineInfo* chosen = matrix(n);
    EXPECT_STREQ(chosen->name, "cch") << n;
    EXPECT_EQ(chosen->device, Device::kCpu) << n << ": " << d.last.reason;
  }
  // 10000 x 10000 by buckets (10,000 targets are under an eighth of New York's vertices): the
  // CPU took 2.4 times less than the GPU there, and the estimates keep at least half that
  // margin; before the buckets' columns the CPU swept (1,131 ms) and each came within 1.5x of
  // the other.
  const double cpu = estimate_call_ms(*find_engine("cch", Device::kCpu), d.costs.shape,
                                      d.costs.state, d.costs.speeds);
  const double gpu = estimate_call_ms(*find_engine("cch", Device::kGpu), d.costs.shape,
                                      d.costs.state, d.costs.speeds);
  EXPECT_LT(cpu * 1.2, gpu) << d.last.reason;
  // The engine and the estimate share the line between buckets and sweeps: an eighth of the
  // vertices (Rome's 3,353: 419 targets).
  EXPECT_TRUE(cch_engine::by_buckets(10000, 264346));
  EXPECT_TRUE(cch_engine::by_buckets(33043, 264346));
  EXPECT_FALSE(cch_engine::by_buckets(33044, 264346));
  EXPECT_FALSE(cch_engine::by_buckets(1000, 3353));
  // And never past kBucketMostTargets, whose buckets' memory the call's estimate does not count.
  EXPECT_TRUE(cch_engine::by_buckets(50000, 10000000));
  EXPECT_FALSE(cch_engine::by_buckets(50001, 10000000));
}

// A named engine both devices have, with the device at auto: the device of the smaller estimate;
// without estimates (or where one device has none), the GPU as before.
TEST(CostModel, NamedEngineOnBothDevicesTakesTheCheaperDevice) {
  if (find_engine("cch", Device::kGpu) == nullptr) GTEST_SKIP() << "a build without CUDA";
  Decide d;
  // One path on a city's kept road index through the GPU service: the CPU's point queries.
  d.costs.shape.vertices = 3353;
  d.costs.shape.arcs = 8870;
  d.costs.shape.sources = 1;
  d.costs.shape.targets_per_source = 1;
  d.costs.shape.kept_graph = true;
  d.costs.shape.index_arcs = 19493;
  d.costs.state.service = true;
  d.costs.state.kept_engine = "*";
  d.problem.road_index = true;
  d.problem.vertices = 3353;
  d.problem.arcs = 8870;
  EngineSelection cch = select_engine(DeviceSetting::kAuto, "cch", d.problem, d.gpu, &d.costs);
  EXPECT_EQ(cch.engine->device, Device::kCpu);
  EXPECT_NE(cch.reason.find("gpu_routing.sssp_algorithm = cch, device auto: cpu cch, estimated"),
            std::string::npos)
      << cch.reason;
  EXPECT_NE(cch.reason.find("; gpu cch, estimated"), std::string::npos) << cch.reason;
  // Without estimates: the GPU, as the name says nothing of the device.
  EXPECT_EQ(select_engine(DeviceSetting::kAuto, "cch", d.problem, d.gpu).engine->device,
            Device::kGpu);
  // device = gpu still means the GPU.
  EXPECT_EQ(select_engine(DeviceSetting::kGpu, "cch", d.problem, d.gpu, &d.costs).engine->device,
            Device::kGpu);
  // A 10,000 x 10,000 matrix on New York's index: the GPU's sweeps (930 ms on the H200 host
  // against 3,087 on its 16 cores, docs/results/road_table_h200.md).
  d.costs.shape.sources = 10000;
  d.costs.shape.targets_per_source = 10000;
  d.costs.shape.compact_targets = true;
  d.costs.shape.result_rows = 10000.0 * 10000;
  d.costs.shape.result_cells = 10000.0 * 10000;
  d.costs.shape.vertices = d.problem.vertices = 264346;
  d.costs.shape.arcs = d.problem.arcs = 733846;
  d.costs.shape.index_arcs = 1550000;
  d.problem.many_source = true;
  d.problem.source_count = 10000;
  EXPECT_EQ(select_engine(DeviceSetting::kAuto, "cch", d.problem, d.gpu, &d.costs).engine->device,
            Device::kGpu);
  d.costs.shape.compact_targets = false;
  // No GPU estimate (a sparse graph's all pairs for blocked_fw): the GPU.
  d.costs.shape.dense = false;
  d.costs.shape.all_pairs = true;
  d.problem.all_pairs = true;
  EXPECT_EQ(
      select_engine(DeviceSetting::kAuto, "blocked_fw", d.problem, d.gpu, &d.costs).engine->device,
      Device::kGpu);
}

// All pairs of a graph that stays in the caches, written as rows by a backend that shares its
// cores with the search: the CPU's estimate follows the small graph's parallel efficiency and
// counts half the overlap of writing and computing. Speeds and shape from the H100 host
// (docs/results/h100_auto.md), the small graph's efficiency set low to show its effect: there the
// CPU's Dijkstra took 0.17-0.21 s against near_far's 0.17-0.19 on 16 threads, and the model said
// 86 ms against 167 before.
TEST(CostModel, CpuAllPairsOnASmallGraphWithEveryCore) {
  MachineSpeeds speeds;
  speeds.cpu_dijkstra_vertex_ns = 53.76;
  speeds.cpu_dijkstra_arc_ns = 2.508;
  speeds.cpu_parallel_efficiency = 0.82;
  speeds.emit_row_ns = 66.75;
  CallCostShape shape;
  shape.vertices = 4096;
  shape.arcs = 16384;
  shape.sources = 4096;
  shape.all_pairs = true;
  shape.result_rows = 4096.0 * (1 + 4096 / 16);  // arrays: a row a source
  shape.result_cells = 4096.0 * 4096;
  DeviceState state;
  state.cpu_threads = 16;
  state.hardware_threads = 16;
  const EngineInfo& dijkstra = *find_engine("dijkstra", Device::kCpu);

  // The small graph's efficiency applies in full at calibration's small graph's size...
  speeds.cpu_parallel_efficiency_small = speeds.cpu_parallel_efficiency;
  const double as_large = estimate_call_ms(dijkstra, shape, state, speeds);
  speeds.cpu_parallel_efficiency_small = 0.41;
  const double as_small = estimate_call_ms(dijkstra, shape, state, speeds);
  EXPECT_GT(as_small, 1.5 * as_large);
  // ... and not at all on a graph the size of the 512 x 512 grid.
  CallCostShape large = shape;
  large.vertices = 512 * 512;
  large.arcs = 4 * 512 * 511;
  const double large_small = estimate_call_ms(dijkstra, large, state, speeds);
  speeds.cpu_parallel_efficiency_small = speeds.cpu_parallel_efficiency;
  EXPECT_NEAR(estimate_call_ms(dijkstra, large, state, speeds), large_small, 1e-9);

  // A writer with a core of its own hides more of the rows than one sharing every core.
  speeds.cpu_parallel_efficiency_small = 0.41;
  state.hardware_threads = 32;
  EXPECT_LT(estimate_call_ms(dijkstra, shape, state, speeds), as_small);
  // H100 host: compute 145 ms, rows 96 ms, 171 ms in all (gpu_routing_last_run).
  EXPECT_GT(as_small, 150);
  EXPECT_LT(as_small, 230);
}

// A search on a graph of the small calibration graph's size is priced from the timing on that
// graph: two calibrations whose vertex and arc speeds differ, but agree on what one source costs
// there, estimate the same; on a graph the grid's size, or for one source, the factor does not
// apply.
TEST(CostModel, SmallGraphSearchPricedFromItsOwnTiming) {
  CallCostShape shape;
  shape.vertices = 4096;
  shape.arcs = 16384;
  shape.sources = 4096;
  shape.all_pairs = true;
  shape.result_rows = 4096;
  shape.result_cells = 4096.0 * 4096;
  DeviceState state;
  state.cpu_threads = 15;
  state.hardware_threads = 16;
  const EngineInfo& dijkstra = *find_engine("dijkstra", Device::kCpu);

  MachineSpeeds fast;  // the vertex speed the small graph's timing agrees with
  fast.cpu_dijkstra_vertex_ns = 44;
  fast.cpu_dijkstra_arc_ns = 1.5;
  MachineSpeeds slow = fast;  // a calibration that caught the grid's searches slow
  slow.cpu_dijkstra_vertex_ns = 56;
  slow.cpu_dijkstra_arc_ns = 2.5;
  const double small_ns = 4096 * 44 + 16384 * 1.5;
  const double slow_small_ns = 4096 * 56 + 16384 * 2.5;
  const double unscaled = estimate_call_ms(dijkstra, shape, state, slow);
  EXPECT_GT(unscaled, 1.15 * estimate_call_ms(dijkstra, shape, state, fast));
  slow.cpu_dijkstra_small_factor = small_ns / slow_small_ns;
  EXPECT_NEAR(estimate_call_ms(dijkstra, shape, state, slow),
              estimate_call_ms(dijkstra, shape, state, fast), 1e-6);

  // One source on that graph is priced by the same timing (its fresh arrays are a few kB).
  CallCostShape one = shape;
  one.sources = 1;
  one.all_pairs = false;
  one.result_rows = 4096;
  one.result_cells = 4096;
  EXPECT_NEAR(estimate_call_ms(dijkstra, one, state, slow),
              estimate_call_ms(dijkstra, one, state, fast), 1e-6);

  CallCostShape large = shape;
  large.vertices = 512 * 512;
  large.arcs = 4 * 512 * 511;
  large.sources = 64;
  large.result_rows = 64;
  large.result_cells = 64.0 * 512 * 512;
  const double with_factor = estimate_call_ms(dijkstra, large, state, slow);
  slow.cpu_dijkstra_small_factor = 1;
  EXPECT_NEAR(estimate_call_ms(dijkstra, large, state, slow), with_factor, 1e-9);
}

// CPU Dijkstra on a dense graph follows the dense graphs' own timings (1024 and 2048 vertices,
// the line between them in log2(V)), not the small graph's. Speeds from the 2-core machine's
// calibration at 518f694, where all pairs of the dense 2000-vertex graph took 1.17-1.29 s with
// Dijkstra forced and 1.25-1.39 with blocked_fw, estimated at 757 and 1091 ms, and in a slower
// hour 1.71-1.79 s against 1.38-1.57.
TEST(CostModel, DenseGraphSearchPricedFromTheDenseTimings) {
  CallCostShape shape;
  shape.vertices = 2000;
  shape.arcs = 800000;
  shape.sources = 2000;
  shape.all_pairs = true;
  shape.dense = true;
  shape.result_rows = 4e6;
  shape.result_cells = 4e6;
  DeviceState state;
  state.cpu_threads = 2;
  state.hardware_threads = 2;
  MachineSpeeds speeds;
  speeds.cpu_dijkstra_vertex_ns = 41.3557;
  speeds.cpu_dijkstra_arc_ns = 0.6258;
  speeds.cpu_parallel_efficiency = 0.8657;
  speeds.cpu_parallel_efficiency_small = 0.9938;
  speeds.cpu_dijkstra_small_factor = 0.7174;
  speeds.cpu_fw_ns = 0.1871;
  speeds.cpu_fw_large_ns = 0.1910;
  speeds.emit_row_ns = 49.23;
  speeds.cpu_row_cell_ns = 3.05;
  const EngineInfo& dijkstra = *find_engine("dijkstra", Device::kCpu);
  const EngineInfo& fw = *find_engine("blocked_fw", Device::kCpu);
  const double unscaled = estimate_call_ms(dijkstra, shape, state, speeds);
  EXPECT_LT(unscaled, estimate_call_ms(fw, shape, state, speeds));  // the miss

  speeds.cpu_dijkstra_dense_factor = 1.2;
  speeds.cpu_dijkstra_dense_large_factor = 1.6;
  EXPECT_GT(estimate_call_ms(dijkstra, shape, state, speeds),
            estimate_call_ms(fw, shape, state, speeds));
  // At 2048 vertices and beyond the large graph's factor, at 1024 and below the other's; the
  // small graph's factor plays no part.
  MachineSpeeds plain = speeds;
  plain.cpu_dijkstra_dense_factor = plain.cpu_dijkstra_dense_large_factor = 1;
  plain.cpu_dijkstra_small_factor = 1;
  const auto search_ms = [&](const MachineSpeeds& s, VertexIndex v) {
    CallCostShape one = shape;
    one.vertices = v;
    one.arcs = static_cast<ArcIndex>(0.2 * v * v);
    one.result_rows = one.result_cells = 0;
    return estimate_call_ms(dijkstra, one, state, s);
  };
  EXPECT_NEAR(search_ms(speeds, 4096) / search_ms(plain, 4096), 1.6, 1e-9);
  EXPECT_NEAR(search_ms(speeds, 1024) / search_ms(plain, 1024), 1.2, 1e-9);
  EXPECT_NEAR(search_ms(speeds, 600) / search_ms(plain, 600), 1.2, 1e-9);
  EXPECT_NEAR(search_ms(speeds, 1448) / search_ms(plain, 1448), 1.4, 1e-3);
}

// One path on Rome's kept graph (3353 vertices, 8870 arcs) with its road index (19493 arcs).
CallCostShape rome_path_on_its_index() {
  CallCostShape shape;
  shape.vertices = 3353;
  shape.arcs = 8870;
  shape.sources = 1;
  shape.targets_per_source = 1;
  shape.result_rows = 60;
  shape.result_cells = 3353;
  shape.kept_graph = true;
  shape.index_arcs = 19493;
  return shape;
}

// The CPU of the 2-core development machine, every core for the call.
DeviceState two_cores() {
  DeviceState state;
  state.cpu_threads = 2;
  state.hardware_threads = 2;
  return state;
}

// A path on a small road network's kept index (Rome, 3353 vertices, 8870 arcs; its hierarchy
// 19493 arcs): CPU Dijkstra stopping at the target, not the index's whole tree. On the 2-core
// machine at 518f694 the call's compute was 52 us with Dijkstra and 95-105 with cch; the model
// said 72 and 68 (speeds from that calibration), and auto took cch.
TEST(CostModel, SmallGraphPathPricedFromTheSmallGraphsTiming) {
  const CallCostShape shape = rome_path_on_its_index();
  const DeviceState state = two_cores();
  MachineSpeeds speeds;
  speeds.cpu_dijkstra_vertex_ns = 41.3557;
  speeds.cpu_dijkstra_arc_ns = 0.6258;
  speeds.cpu_dijkstra_small_factor = 0.7174;
  speeds.cpu_cch_sweep_ns = 2.3839;
  speeds.cpu_cch_query_us = 144.7216;
  speeds.cpu_cch_query_vertices = 147456;
  const double by_dijkstra =
      estimate_call_ms(*find_engine("dijkstra", Device::kCpu), shape, state, speeds);
  const double by_index = estimate_call_ms(*find_engine("cch", Device::kCpu), shape, state, speeds);
  EXPECT_LT(by_dijkstra, by_index);
  EXPECT_NEAR(by_dijkstra, 0.052, 0.01);
}

// gpu_path to a few targets on the road index: the paths traced from distances settled one by
// one, priced by the settling work sampled on the index (a source's first path, then each
// further one) at the unit's time the sample took, else cpu_cch_settle_ns; from 17 targets on,
// or where the sample gave up settling, whole sweeps as before. The development machine: Rome
// about 4800 units a path (settled ranks and their arcs 4069, 36 hops), New York 76000 (66208,
// 413 hops); 4.3 ns a unit on the grid, 9-13 in New York's sample.
TEST(CostModel, FewPathsOnTheIndexPricedBySettling) {
  CallCostShape shape = rome_path_on_its_index();
  shape.paths = true;
  shape.settled_first_path_work = 4800;
  shape.settled_further_path_work = 2400;
  const DeviceState state = two_cores();
  MachineSpeeds speeds;
  speeds.cpu_cch_settle_ns = 5;
  speeds.emit_row_ns = 0;
  const EngineInfo& cch = *find_engine("cch", Device::kCpu);
  EXPECT_NEAR(estimate_call_ms(cch, shape, state, speeds), 4800 * 5 * 1e-6, 1e-9);
  speeds.cpu_cch_settle_ns = 10;  // twice the unit, twice the estimate
  EXPECT_NEAR(estimate_call_ms(cch, shape, state, speeds), 4800 * 10 * 1e-6, 1e-9);
  // The index's own sample of its unit's time, where there is one, before the calibrated one.
  shape.settled_path_unit_ns = 13;
  EXPECT_NEAR(estimate_call_ms(cch, shape, state, speeds), 4800 * 13 * 1e-6, 1e-9);
  shape.settled_path_unit_ns = 0;
  // Further targets cost what they settle beyond the first's.
  shape.targets_per_source = 10;
  EXPECT_NEAR(estimate_call_ms(cch, shape, state, speeds), (4800 + 9 * 2400) * 10 * 1e-6, 1e-9);
  // New York's 10 targets: 1.7 ms (2.5 measured on the H100 host, 4.4 here cold), against a
  // sweep of its 1.55M index arcs each.
  shape.vertices = 264346;
  shape.arcs = 733846;
  shape.index_arcs = 1550000;
  shape.settled_first_path_work = 76000;
  shape.settled_further_path_work = 30000;
  speeds.cpu_cch_settle_ns = 5;
  const double settled = estimate_call_ms(cch, shape, state, speeds);
  EXPECT_NEAR(settled, (76000 + 9 * 30000) * 5 * 1e-6, 1e-9);
  // 17 targets, or a sample that gave up (zero-cost ties): whole sweeps, as for a cost matrix's
  // rows.
  CallCostShape swept = shape;
  swept.paths = false;
  CallCostShape seventeen = shape;
  seventeen.targets_per_source = 17;
  CallCostShape seventeen_swept = swept;
  seventeen_swept.targets_per_source = 17;
  EXPECT_EQ(estimate_call_ms(cch, seventeen, state, speeds),
            estimate_call_ms(cch, seventeen_swept, state, speeds));
  CallCostShape gave_up = shape;
  gave_up.settled_first_path_work = -1;
  gave_up.settled_further_path_work = -1;
  EXPECT_EQ(estimate_call_ms(cch, gave_up, state, speeds),
            estimate_call_ms(cch, swept, state, speeds));
  EXPECT_GT(estimate_call_ms(cch, swept, state, speeds), settled);
}

// The work the model prices is the settling's own: on a grid's index, the ranks settled and the
// arcs they read plus kTraceHopWork a hop, a further target from the same source costs only what
// it settles anew, and the remembered sample equals a fresh one and gives up on zero-cost ties.
TEST(CostModel, SettledPathWorkIsWhatTheSettlingDoes) {
  EdgeTable t = testing::grid_edges(48, 48, 100, 3);
  Graph g = build_graph(t.view(), true);
  ensure_reverse(g);
  Cch cch(g, cch_order(g));
  cch.customize(g);
  const VertexIndex n = g.vertex_count();
  CchWorkspace workspace(n);
  const std::vector<double> one = settled_paths_work(cch, g.reverse, 5, {n - 7}, workspace);
  ASSERT_EQ(one.size(), 1u);
  cch.start_settling(5, workspace);
  std::vector<ArcIndex> path;
  ASSERT_TRUE(trace_strict_path(
      g.reverse, [&](VertexIndex v) { return cch.settled_distance(v, workspace); }, 5, n - 7,
      path));
  const double expected = static_cast<double>(workspace.settled_count()) +
                          static_cast<double>(workspace.settled_arc_count()) +
                          kTraceHopWork * static_cast<double>(path.size());
  cch.finish_settling(5, workspace);
  EXPECT_EQ(workspace.settled_count(), 0u);
  EXPECT_EQ(workspace.settled_arc_count(), 0);
  EXPECT_DOUBLE_EQ(one[0], expected);
  EXPECT_GT(path.size(), 40u);
  // The same target again settles nothing: only its hops are traced anew.
  const std::vector<double> twice =
      settled_paths_work(cch, g.reverse, 5, {n - 7, n - 7}, workspace);
  ASSERT_EQ(twice.size(), 2u);
  EXPECT_DOUBLE_EQ(twice[0], one[0]);
  EXPECT_DOUBLE_EQ(twice[1], kTraceHopWork * static_cast<double>(path.size()));
  const SettledPathWork sampled = remembered_settled_path_work(cch, g.reverse);
  EXPECT_GT(sampled.first, 0);
  EXPECT_GT(sampled.further, 0);
  EXPECT_LT(sampled.further, sampled.first);
  EXPECT_GT(sampled.ns_per_unit, 0);
  const SettledPathWork again = remembered_settled_path_work(cch, g.reverse);
  EXPECT_EQ(again.first, sampled.first);
  EXPECT_EQ(again.further, sampled.further);
  EXPECT_EQ(again.ns_per_unit, sampled.ns_per_unit);  // remembered, not timed again

  // Every weight 0: every vertex's best arc ties, the settling gives up, as a call would.
  for (auto* costs : {&t.costs, &t.reverse_costs})
    for (double& cost : *costs)
      if (cost > 0) cost = 0;
  Graph flat = build_graph(t.view(), true);
  ensure_reverse(flat);
  Cch flat_index(flat, cch_order(flat));
  flat_index.customize(flat);
  EXPECT_TRUE(settled_paths_work(flat_index, flat.reverse, 5, {n - 7}, workspace).empty());
  EXPECT_LT(remembered_settled_path_work(flat_index, flat.reverse).first, 0);
}

// The GPU's Floyd-Warshall was calibrated as a fresh engine closing and copying back a whole
// matrix: its estimate adds the call and the rows, not the graph's upload and the matrix's
// download again. Speeds and shape from the H100 host at 2f6a885 (docs/results/h100_auto.md, part
// 5): dense 1000 vertices, all pairs through the GPU service; forced, the GPU's blocked_fw took
// 0.139 s, the CPU's Dijkstra (auto's choice then) 0.154 and the GPU's multi_source 0.157.
TEST(CostModel, GpuFloydWarshallCountsItsCopiesOnce) {
  if (find_engine("blocked_fw", Device::kGpu) == nullptr) GTEST_SKIP() << "a build without CUDA";
  MachineSpeeds speeds;
  speeds.cpu_dijkstra_vertex_ns = 41.4135;
  speeds.cpu_dijkstra_arc_ns = 1.4725;
  speeds.cpu_parallel_efficiency = 0.6938;
  speeds.cpu_parallel_efficiency_small = 0.6845;
  speeds.cpu_dijkstra_small_factor = 0.7062;
  speeds.cpu_fw_ns = 0.2478;
  speeds.cpu_fw_large_ns = 0.2478;
  speeds.gpu_upload_ns_per_byte = 3.4534;
  speeds.gpu_download_ns_per_byte = 0.8755;
  speeds.gpu_service_call_ms = 1.4762;
  speeds.gpu_many_local_ns = 0.2282;
  speeds.gpu_many_far_ns = 0.1902;
  speeds.gpu_many_source_us = 2.2299;
  speeds.gpu_multi_source_ns = 0.0081;
  speeds.gpu_fw_ns = 0.0102;
  speeds.emit_row_ns = 51.9655;
  speeds.cpu_row_cell_ns = 2.6903;
  CallCostShape shape;
  shape.vertices = 1000;
  shape.arcs = 200000;
  shape.sources = 1000;
  shape.all_pairs = true;
  shape.dense = true;
  shape.hop_depth = 2;
  shape.result_rows = 1e6;
  shape.result_cells = 1e6;
  DeviceState state;
  state.gpu_usable = true;
  state.service = true;
  state.cpu_threads = 15;
  state.hardware_threads = 16;
  const double gpu_fw =
      estimate_call_ms(*find_engine("blocked_fw", Device::kGpu), shape, state, speeds);
  // The call, the matrix (1e9 x 0.0102 ns) and the rows (1e6 x 52 ns), nothing more.
  EXPECT_NEAR(gpu_fw, 1.4762 + 10.2 + 51.9655, 1e-6);
  EXPECT_LT(gpu_fw, estimate_call_ms(*find_engine("dijkstra", Device::kCpu), shape, state, speeds));
  EXPECT_LT(gpu_fw,
            estimate_call_ms(*find_engine("multi_source", Device::kGpu), shape, state, speeds));
}

// Many-source calls leave the backend that writes their rows a core on machines of 8 or more.
TEST(CostModel, ManySourceCallsLeaveTheWriterACore) {
  EXPECT_EQ(threads_leaving_a_writer_core(16), 15);
  EXPECT_EQ(threads_leaving_a_writer_core(8), 7);
  EXPECT_EQ(threads_leaving_a_writer_core(4), 4);
  EXPECT_EQ(threads_leaving_a_writer_core(2), 2);
  EXPECT_EQ(threads_leaving_a_writer_core(1), 1);
}

// The hardware a calibration is stored for names each GPU once: the GPU service lists its lanes
// as devices (three on one H100 read "NVIDIA H100 80GB HBM3" three times, and a change of the lane
// count made the stored speeds look like other hardware); two GPUs of one model are two.
TEST(Calibration, HardwareNamesEachGpuOnce) {
  gpu::Availability gpus;
  gpus.usable = true;
  auto device = [](int index, int physical, const char* name) {
    gpu::DeviceInfo info;
    info.index = index;
    info.physical = physical;
    info.name = name;
    return info;
  };
  gpus.devices = {device(0, 0, "GPU A"), device(1, 0, "GPU A"), device(2, 0, "GPU A")};
  const std::string one = hardware_description(gpus, 16);
  EXPECT_EQ(one.substr(one.find(" x 16 threads")), " x 16 threads; GPU A");
  gpus.devices.push_back(device(3, 1, "GPU A"));
  gpus.devices.push_back(device(4, 1, "GPU A"));
  const std::string two = hardware_description(gpus, 16);
  EXPECT_EQ(two.substr(two.find(" x 16 threads")), " x 16 threads; GPU A; GPU A");
  // Devices found in this process (no service): their index is the CUDA device.
  gpus.devices = {device(0, -1, "GPU A"), device(1, -1, "GPU B")};
  const std::string local = hardware_description(gpus, 16);
  EXPECT_EQ(local.substr(local.find(" x 16 threads")), " x 16 threads; GPU A; GPU B");
  gpus.usable = false;
  const std::string none = hardware_description(gpus, 16);
  EXPECT_EQ(none.substr(none.find(" x 16 threads")), " x 16 threads; no GPU");
}

// A calibration on this machine's CPU (the GPU not asked for): every CPU speed measured and
// positive, the GPU's left built-in and said so.
TEST(Calibration, MeasuresTheCpu) {
  CalibrationOptions options;
  options.threads = 2;
  const Calibration result = calibrate(options);
  EXPECT_GT(result.speeds.cpu_dijkstra_vertex_ns, 0);
  EXPECT_GT(result.speeds.cpu_dijkstra_arc_ns, 0);
  EXPECT_GE(result.speeds.cpu_dijkstra_far_factor, 1);
  EXPECT_GT(result.speeds.cpu_fw_ns, 0);
  EXPECT_GE(result.speeds.cpu_fw_large_ns, result.speeds.cpu_fw_ns);
  EXPECT_GT(result.speeds.cpu_parallel_efficiency_small, 0);
  EXPECT_LE(result.speeds.cpu_parallel_efficiency_small, 1.5);
  EXPECT_GT(result.speeds.cpu_row_cell_ns, 0);
  EXPECT_GT(result.speeds.cpu_cch_sweep_ns, 0);
  EXPECT_GT(result.speeds.cpu_cch_query_us, 0);
  EXPECT_GT(result.speeds.cpu_cch_settle_ns, 0);
  for (const char* name :
       {"cpu_dijkstra_vertex_ns", "cpu_dijkstra_arc_ns", "cpu_parallel_efficiency",
        "cpu_parallel_efficiency_small", "cpu_dijkstra_small_factor", "cpu_dijkstra_dense_factor",
        "cpu_dijkstra_dense_large_factor", "cpu_fw_ns", "cpu_fw_large_ns", "cpu_cch_sweep_ns",
        "cpu_cch_query_us", "cpu_cch_settle_ns", "cpu_row_cell_ns"})
    EXPECT_NE(std::find(result.measured.begin(), result.measured.end(), name),
              result.measured.end())
        << name;
  EXPECT_EQ(std::find(result.measured.begin(), result.measured.end(), "gpu_context_ms"),
            result.measured.end());
  ASSERT_FALSE(result.notes.empty());
  EXPECT_NE(result.notes.front().find("GPU speeds: built-in"), std::string::npos);
}

// Whole trees on the CPU's road index: sources share sweeps in lanes of 8, and once the work is a
// few milliseconds every thread takes part, a lone tree too (the sweep plan's subtrees). One New
// York tree on 16 threads is estimated at a fraction of its one-thread sweep, 8 trees at less than
// 8 single sweeps on one thread, and 64 trees at less than 64 / 16 sweeps' time a thread.
TEST(CostModel, RoadIndexTreesShareSweepsAndThreads) {
  MachineSpeeds speeds;
  CallCostShape shape;
  shape.vertices = 264346;
  shape.arcs = 733846;
  shape.index_arcs = 1550000;
  shape.kept_graph = true;
  DeviceState state;
  state.hardware_threads = 16;
  const EngineInfo& cch = *find_engine("cch", Device::kCpu);
  const auto trees = [&](int sources, int threads) {
    shape.sources = sources;
    shape.result_rows = 0;  // the sweeps alone (rows are priced alike either way)
    shape.result_cells = 0;
    state.cpu_threads = threads;
    return estimate_call_ms(cch, shape, state, speeds);
  };
  const double one_alone = trees(1, 1);
  EXPECT_LT(trees(1, 16), 0.5 * one_alone);
  EXPECT_LT(trees(8, 1), 8 * 0.6 * one_alone);
  EXPECT_LT(trees(64, 16), 64.0 / 16 * one_alone);
  EXPECT_GT(trees(64, 16), trees(8, 16));
  // As arrays (a row a source) the engine's rows are handed over, not copied on the batch thread
  // cell by cell as rows of (source, vertex, cost) are.
  const double sweeps_alone = trees(64, 16);
  shape.result_rows = 64;
  shape.result_cells = 64.0 * shape.vertices;
  const double as_arrays = estimate_call_ms(cch, shape, state, speeds);
  shape.result_rows = shape.result_cells;
  const double as_rows = estimate_call_ms(cch, shape, state, speeds);
  EXPECT_LT(as_arrays, sweeps_alone + 0.1 * (as_rows - sweeps_alone));
  EXPECT_GT(as_rows, as_arrays);
}

// A cost matrix's GPU sweeps on the road index cover only its targets' closure while that holds
// at most half the ranks (RPHAST): the estimate follows the closure's arcs, and a closure over
// half the ranks (or none measured) prices whole sweeps. New York, 10,000 x 10,000.
TEST(CostModel, GpuRoadIndexMatricesPriceTheTargetsClosure) {
  MachineSpeeds speeds;
  CallCostShape shape;
  shape.vertices = 264346;
  shape.arcs = 733846;
  shape.index_arcs = 1550000;
  shape.kept_graph = true;
  shape.compact_targets = true;
  shape.sources = 10000;
  shape.targets_per_source = 10000;
  shape.result_rows = 10000;
  shape.result_cells = 1e8;
  DeviceState state;
  state.gpu_usable = true;
  state.service = true;
  state.kept_engine = "*";
  state.hardware_threads = 16;
  state.cpu_threads = 15;
  const EngineInfo& cch = *find_engine("cch", Device::kGpu);
  const double whole = estimate_call_ms(cch, shape, state, speeds);
  shape.target_closure_ranks = 66841;
  shape.target_closure_arcs = 900000;
  const double restricted = estimate_call_ms(cch, shape, state, speeds);
  EXPECT_GT(whole, 0);
  EXPECT_LT(restricted, whole);
  // The sweeps' share of the estimate falls with the arcs: at least by a third of what the arcs
  // saved (the rows' crossing stays).
  const double sweeps = shape.sources * 1550000.0 * speeds.gpu_cch_sweep_ns * 1e-6;
  EXPECT_NEAR(whole - restricted, sweeps * (1 - 900000.0 / 1550000.0), 0.01 * whole);
  shape.target_closure_ranks = 200000;  // more than half: whole sweeps
  EXPECT_DOUBLE_EQ(estimate_call_ms(cch, shape, state, speeds), whole);
  // Fewer than 512 sources sweep the whole hierarchy too.
  shape.target_closure_ranks = 66841;
  shape.sources = 300;
  shape.result_rows = 300;
  shape.result_cells = 300.0 * 10000;
  const double few = estimate_call_ms(cch, shape, state, speeds);
  shape.target_closure_ranks = 0;
  EXPECT_DOUBLE_EQ(few, estimate_call_ms(cch, shape, state, speeds));
}

}  // namespace
}  // namespace gpu_routing
