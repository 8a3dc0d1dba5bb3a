// The road index's customization on the GPU (gpu::CchCustomizer, kernels/cch_customize.cu)
// against Cch::customize on the CPU: the four arrays (weights and vias, both directions) equal
// byte for byte on random graphs (directed and undirected, zero costs, few distinct costs and so
// many ties, parallel arcs, self loops, disconnected parts) and grids, with the triangle lists and
// with row searches, and several thread-group sizes; again after the weights change; refusals and
// cancel. Skips where no GPU is usable.
#include <gtest/gtest.h>

#include <algorithm>

#include <atomic>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "../../kernels/gpu_engines.hpp"
#include "road_index/cch.hpp"
#include "engine/gpu.hpp"
#include "gpu_testing.hpp"
#include "test_graphs.hpp"

namespace gpu_routing {
namespace {

using testing::EdgeTable;
using testing::RandomGraphSpec;

template <typename T>
bool same_bytes(CchSpan<T> a, CchSpan<T> b) {
  return a.size() == b.size() &&
         (a.size() == 0 || std::memcmp(a.data, b.data, a.size() * sizeof(T)) == 0);
}

// Both customized, with the same weights and vias bit for bit.
::testing::AssertionResult same_customization(const Cch& got, const Cch& want) {
  if (!got.customized()) return ::testing::AssertionFailure() << "not customized";
  if (!same_bytes(got.upward_weights(), want.upward_weights()))
    return ::testing::AssertionFailure() << "upward weights differ";
  if (!same_bytes(got.downward_weights(), want.downward_weights()))
    return ::testing::AssertionFailure() << "downward weights differ";
  if (!same_bytes(got.upward_vias(), want.upward_vias()))
    return ::testing::AssertionFailure() << "upward vias differ";
  if (!same_bytes(got.downward_vias(), want.downward_vias()))
    return ::testing::AssertionFailure() << "downward vias differ";
  return ::testing::AssertionSuccess();
}

// The same edges with other costs (the same signs: the same arcs, so the same topology).
EdgeTable reweighted(EdgeTable t, unsigned seed, int max_weight) {
  std::mt19937 rng(seed);
  auto next = [&](double old) {
    return old < 0 ? old : static_cast<double>(rng() % static_cast<unsigned>(max_weight + 1));
  };
  for (double& c : t.costs) c = next(c);
  for (double& c : t.reverse_costs) c = next(c);
  return t;
}

// How the customizer finds an arc's triangles and how many middles a thread takes.
struct Mode {
  bool triangle_lists;
  int middles_per_thread;
};
constexpr Mode kModes[] = {{false, 1}, {true, 1}, {false, 4}, {true, 4}, {true, 64}};

// Sets a mode for the customizers made in its scope, the defaults back after.
struct ModeScope {
  explicit ModeScope(Mode mode) {
    gpu::set_cch_customize_triangle_lists(mode.triangle_lists);
    gpu::set_cch_customize_middles_per_thread(mode.middles_per_thread);
  }
  ~ModeScope() {
    gpu::set_cch_customize_triangle_lists(false);
    gpu::set_cch_customize_middles_per_thread(0);
  }
};

std::string describe(Mode mode) {
  return std::string(mode.triangle_lists ? " triangle lists" : " row searches") + ", " +
         std::to_string(mode.middles_per_thread) + " middles a thread";
}

RandomGraphSpec spec_for(unsigned seed) {
  RandomGraphSpec spec;
  spec.vertices = 1 + static_cast<int>(seed * 37 % 500);
  spec.edges = static_cast<int>(seed * 101 % 2500);
  spec.integer_weights = seed % 3 != 0;
  spec.zero_weights = seed % 2 == 0;
  spec.max_weight = seed % 3 == 1 ? 3 : 100;  // costs 0..3 or 1..3: ties everywhere
  spec.components = 1 + static_cast<int>(seed % 4);
  spec.parallel_edges = seed % 5 != 0;
  spec.self_loops = seed % 3 != 2;
  spec.with_reverse = seed % 7 != 0;
  return spec;
}

TEST(GpuCchCustomize, EqualsTheCpuOnRandomGraphs) {
  SKIP_WITHOUT_GPU();
  for (unsigned seed = 1; seed <= 60; ++seed) {
    const RandomGraphSpec spec = spec_for(seed);
    const EdgeTable t = testing::random_edges(spec, seed);
    const bool directed = seed % 2 == 1;
    const Graph g = build_graph(t.view(), directed);
    if (g.vertex_count() == 0) continue;
    const std::string what = testing::describe(spec, seed) + (directed ? " directed" : "");
    const std::vector<VertexIndex> order = cch_order(g);
    Cch cpu(g, order), gpu_side(g, order);
    cpu.customize(g, {}, seed % 4 == 0 ? 3 : 1);
    for (const Mode mode : kModes) {
      ModeScope scope(mode);
      const gpu::CchCustomizationTimes times = gpu::customize_cch_on_device(gpu_side, g);
      ASSERT_TRUE(same_customization(gpu_side, cpu)) << what << describe(mode);
      EXPECT_GE(times.compute_ms, 0.0);
      EXPECT_GT(gpu_side.customization_ms(), 0.0);
    }
    // Queries answer from it as from the CPU's.
    CchWorkspace a(g.vertex_count()), b(g.vertex_count());
    for (VertexIndex s = 0; s < g.vertex_count(); s += 17)
      for (VertexIndex d = 0; d < g.vertex_count(); d += 13)
        ASSERT_EQ(gpu_side.distance(s, d, a), cpu.distance(s, d, b)) << what;
  }
}

// A road-like grid: random travel times, one-way streets, a river with few bridges.
EdgeTable road_grid_edges(int side, unsigned seed, int max_weight) {
  EdgeTable t;
  t.with_reverse = true;
  std::mt19937 rng(seed);
  auto id = [side](int x, int y) { return static_cast<std::int64_t>(y) * side + x + 1; };
  for (int y = 0; y < side; ++y)
    for (int x = 0; x < side; ++x) {
      const double east = rng() % static_cast<unsigned>(max_weight + 1);
      const double north = rng() % static_cast<unsigned>(max_weight + 1);
      if (x + 1 < side && !(x + 1 == side / 2 && y % 17 != 0))
        t.add(id(x, y), id(x + 1, y), east, rng() % 9 == 0 ? -1.0 : east);
      if (y + 1 < side) t.add(id(x, y), id(x, y + 1), north, rng() % 11 == 0 ? -1.0 : north);
    }
  return t;
}

TEST(GpuCchCustomize, EqualsTheCpuOnGridsAndAgainAfterTheWeightsChange) {
  SKIP_WITHOUT_GPU();
  for (const int max_weight : {3, 60}) {
    ModeScope scope(kModes[max_weight == 3 ? 0 : 1]);  // rows searched, then lists
    const EdgeTable t = road_grid_edges(160, 5 + static_cast<unsigned>(max_weight), max_weight);
    const Graph g = build_graph(t.view(), true);
    const std::vector<VertexIndex> order = cch_order(g);
    Cch cpu(g, order), gpu_side(g, order);
    cpu.customize(g, {}, 2);
    gpu::CchCustomizer customizer(gpu_side, g);
    const gpu::CchCustomizationTimes first = customizer.customize(gpu_side, g);
    ASSERT_TRUE(same_customization(gpu_side, cpu)) << "max weight " << max_weight;
    EXPECT_GT(first.topology_ms, 0.0);
    // New weights on the same topology, then the first ones again, with the same customizer.
    for (unsigned round = 1; round <= 3; ++round) {
      const EdgeTable other = round == 3 ? t : reweighted(t, round, round == 1 ? 2 : 1000);
      const Graph h = build_graph(other.view(), true);
      ASSERT_TRUE(cpu.same_topology(h));
      cpu.customize(h, {}, 1);
      const gpu::CchCustomizationTimes again = customizer.customize(gpu_side, h);
      EXPECT_EQ(again.topology_ms, 0.0);
      ASSERT_TRUE(same_customization(gpu_side, cpu))
          << "max weight " << max_weight << " round " << round;
    }
    // A copy of the topology (what a kept graph's index is re-customized from) takes the same
    // customizer.
    std::vector<std::uint64_t> image((gpu_side.topology_image_bytes() + 7) / 8);
    gpu_side.write_topology_image(image.data());
    Cch copied = Cch::from_topology_image(image.data(), gpu_side.topology_image_bytes(), g);
    customizer.customize(copied, g);
    cpu.customize(g);
    ASSERT_TRUE(same_customization(copied, cpu));
  }
}

// A kept graph's rows after an UPDATE: the same edges in another order, so the same topology and
// vertex indices but other CSR places for the arcs. The customizer refuses the moved graph until
// follow_arc_order has listed the input arcs again, then gives the CPU's customization.
TEST(GpuCchCustomize, FollowsTheGraphsArcsIntoAnotherOrder) {
  SKIP_WITHOUT_GPU();
  const EdgeTable t = road_grid_edges(120, 11, 9);
  const Graph g = build_graph(t.view(), true);
  Cch gpu_side(g, cch_order(g));
  gpu::CchCustomizer customizer(gpu_side, g);
  customizer.customize(gpu_side, g);
  std::vector<std::uint64_t> image((gpu_side.topology_image_bytes() + 7) / 8);
  gpu_side.write_topology_image(image.data());
  EdgeTable moved;
  moved.with_reverse = t.with_reverse;
  std::vector<std::size_t> rows(t.ids.size());
  for (std::size_t i = 0; i < rows.size(); ++i) rows[i] = i;
  std::shuffle(rows.begin(), rows.end(), std::mt19937(5));
  for (const std::size_t i : rows) {
    moved.ids.push_back(t.ids[i]);
    moved.sources.push_back(t.sources[i]);
    moved.targets.push_back(t.targets[i]);
    moved.costs.push_back(t.costs[i] + (i % 7 == 0 ? 1 : 0));  // a cost change too
    moved.reverse_costs.push_back(t.reverse_costs[i]);
  }
  const Graph h = build_graph(moved.view(), true);
  Cch copied = Cch::from_topology_image(image.data(), gpu_side.topology_image_bytes(), h);
  try {
    customizer.customize(copied, h);
    FAIL() << "the moved arcs were not noticed";
  } catch (const RoutingError& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidParameter);
  }
  customizer.follow_arc_order(copied, h);
  customizer.customize(copied, h);
  Cch cpu = Cch::from_topology_image(image.data(), gpu_side.topology_image_bytes(), h);
  cpu.customize(h, {}, 1);
  ASSERT_TRUE(same_customization(copied, cpu));
}

TEST(GpuCchCustomize, RefusesAnotherTopology) {
  SKIP_WITHOUT_GPU();
  RandomGraphSpec spec;
  spec.vertices = 200;
  spec.edges = 700;
  const EdgeTable t = testing::random_edges(spec, 3);
  const Graph g = build_graph(t.view(), true);
  RandomGraphSpec other_spec = spec;
  other_spec.edges = 701;
  const Graph other = build_graph(testing::random_edges(other_spec, 4).view(), true);
  Cch cch(g, cch_order(g));
  Cch other_cch(other, cch_order(other));
  try {
    gpu::CchCustomizer customizer(cch, other);
    FAIL() << "a customizer for a graph of another topology";
  } catch (const RoutingError& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidParameter);
  }
  gpu::CchCustomizer customizer(cch, g);
  try {
    customizer.customize(other_cch, other);
    FAIL() << "another hierarchy accepted";
  } catch (const RoutingError& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidParameter);
  }
  try {
    customizer.customize(cch, other);
    FAIL() << "a graph of another topology accepted";
  } catch (const RoutingError& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidParameter);
  }
  EXPECT_FALSE(cch.customized());
}

std::atomic<int> g_polls_left{0};
bool cancel_after_polls() {
  return g_polls_left.fetch_sub(1) <= 0;
}

TEST(GpuCchCustomize, CancelLeavesTheIndexNotCustomizedAndTheNextCustomizationWorks) {
  SKIP_WITHOUT_GPU();
  const EdgeTable t = road_grid_edges(120, 9, 40);
  const Graph g = build_graph(t.view(), true);
  const std::vector<VertexIndex> order = cch_order(g);
  Cch cpu(g, order), gpu_side(g, order);
  cpu.customize(g, {}, 1);
  gpu::CchCustomizer customizer(gpu_side, g);
  customizer.customize(gpu_side, g);
  ASSERT_TRUE(gpu_side.customized());
  for (const int polls : {0, 1, 2}) {  // before any work, between levels, after the last
    g_polls_left = polls;
    EXPECT_THROW(customizer.customize(gpu_side, g, CancelToken(&cancel_after_polls)), Cancelled)
        << polls << " polls";
    EXPECT_FALSE(gpu_side.customized());
    EXPECT_THROW(gpu_side.distance(0, 1), RoutingError);
  }
  customizer.customize(gpu_side, g);
  ASSERT_TRUE(same_customization(gpu_side, cpu));
  std::atomic<bool> stop{true};
  Cch fresh(g, order);
  EXPECT_THROW(gpu::customize_cch_on_device(fresh, g, CancelToken(nullptr, &stop)), Cancelled);
  EXPECT_FALSE(fresh.customized());
}

}  // namespace
}  // namespace gpu_routing
