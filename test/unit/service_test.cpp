// The GPU service's protocol (issue 10) in one process: a ServiceDispatcher in CPU mode on a
// thread, backends as ServiceClients (one per thread where they run concurrently), and every
// answer compared with the plain CPU engine run here on the same graph. Faults (cancel, a dead
// service, a dead backend, the device budget) are played by writing the control segment the way
// the supervisor or a crashed process would leave it.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "road_index/cch.hpp"
#include "call/routing_call.hpp"
#include "engine/gpu.hpp"
#include "engine/engine.hpp"
#include "base/graph.hpp"
#include "base/predecessors.hpp"
#include "service/service_client.hpp"
#include "service/service_dispatcher.hpp"
#include "service/service_protocol.hpp"
#include "area_testing.hpp"
#include "cost_array_testing.hpp"
#include "test_graphs.hpp"

namespace gpu_routing {
namespace {

using service::ControlHeader;
using service::ServiceClient;
using service::ServiceDispatcher;
using service::ServiceEngine;
using service::ServiceMode;
using service::ServiceState;
using service::SharedMapping;
using service::SlotState;
using testing::EdgeTable;
using testing::RandomGraphSpec;

constexpr std::size_t kRoomyBudget = std::size_t{1} << 30;

const EngineInfo& dijkstra_info() {
  const EngineInfo* info = find_engine("dijkstra", Device::kCpu);
  EXPECT_NE(info, nullptr);
  return *info;
}

Graph make_graph(const RandomGraphSpec& spec, unsigned seed, bool directed) {
  EdgeTable table = testing::random_edges(spec, seed);
  Graph graph = build_graph(table.view(), directed);
  ensure_reverse(graph);  // predecessor arcs need it, on both sides of the service
  return graph;
}

// Graphs of many kinds by seed: sizes, densities, zero weights and few distinct weights (many
// ties, where the predecessor rule decides), parallel arcs, up to three components (unreachable
// vertices), now and then real-valued weights.
RandomGraphSpec varied_spec(unsigned seed) {
  RandomGraphSpec spec;
  spec.vertices = 20 + static_cast<int>(seed * 53 % 400);
  spec.edges = spec.vertices * static_cast<int>(1 + seed % 4);
  spec.zero_weights = seed % 3 == 0;
  spec.max_weight = seed % 3 == 0 ? 3 : 100;
  spec.parallel_edges = true;
  spec.components = 1 + static_cast<int>(seed % 3);
  spec.integer_weights = seed % 8 != 7;  // the same engine on the same image: exact anyway
  return spec;
}

// Rows for some sources: distances, and predecessor arcs when asked.
struct Rows {
  std::vector<double> distances;
  std::vector<ArcIndex> arcs;
};

struct Query {
  std::vector<VertexIndex> sources;
  std::vector<VertexIndex> targets;  // empty: none
  bool compact = false;
  bool predecessors = false;
};

Rows solve_with(ShortestPathEngine& engine, const Query& query) {
  const std::size_t n = static_cast<std::size_t>(engine.graph().vertex_count());
  const std::size_t width = query.compact ? query.targets.size() : n;
  Rows rows;
  rows.distances.assign(query.sources.size() * width, -1.0);
  if (query.predecessors) rows.arcs.assign(query.sources.size() * n, -7);
  SolveRequest request;
  request.sources = query.sources.data();
  request.source_count = static_cast<int>(query.sources.size());
  if (!query.targets.empty()) {
    request.targets = query.targets.data();
    request.target_count = static_cast<int>(query.targets.size());
  }
  request.compact_targets = query.compact;
  request.distances = rows.distances.data();
  if (query.predecessors) request.predecessor_arcs = rows.arcs.data();
  engine.solve(request);
  return rows;
}

// The plain CPU engine in this process: full, exact rows (no targets hint).
Rows solve_locally(const Graph& graph, const std::vector<VertexIndex>& sources, bool predecessors) {
  EngineOptions options;
  options.threads = 1;
  auto engine = dijkstra_info().create(graph, options);
  Query query;
  query.sources = sources;
  query.predecessors = predecessors;
  return solve_with(*engine, query);
}

// Polls `condition` until it holds or 5 s pass; the service's own waits are short slices.
bool eventually(const std::function<bool()>& condition) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!condition()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return true;
}

// A thread a test waits on. A failed ASSERT leaves the test early: the thread is then joined
// after `unblock` (what makes it return: a cancel, a failed service), rather than destroyed while
// joinable (std::terminate) or waited for forever.
class TestThread {
 public:
  TestThread(std::function<void()> body, std::function<void()> unblock)
      : unblock_(std::move(unblock)), thread_(std::move(body)) {}
  ~TestThread() {
    if (!thread_.joinable()) return;
    unblock_();
    thread_.join();
  }
  void join() { thread_.join(); }

 private:
  std::function<void()> unblock_;
  std::thread thread_;
};

class ServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // Far above any pid_max, and different for each test and each run of the binary, so that no
    // two tests (and no real server) share a control segment or its /dev/shm names.
    static std::atomic<int> test_number{0};
    postmaster_pid_ = 900000000L + static_cast<long>(getpid() % 100000) * 100 + test_number++ % 100;
    control_ = SharedMapping::create(service::control_segment_name(postmaster_pid_),
                                     sizeof(ControlHeader));
    header_ = static_cast<ControlHeader*>(control_.data());
    service::initialize_header(header_, ServiceMode::kCpu, getpid());
    set_state(ServiceState::kReady);
  }

  void TearDown() override {
    stop_dispatcher();
    dispatcher_.reset();  // before the header it points into is unmapped
    control_.reset();
    service::remove_service_segments(postmaster_pid_);
  }

  void set_state(ServiceState state) { header_->state.store(static_cast<std::uint32_t>(state)); }

  // `devices`: the workers (header device_count); 0 leaves one, as a single-GPU service has.
  void start_dispatcher(std::size_t automatic_budget = kRoomyBudget, int devices = -1) {
    ASSERT_EQ(dispatcher_, nullptr);
    stop_.store(false);
    // The service process's part at its start: every device serving, none failed.
    if (devices >= 0) header_->device_count = devices;
    for (auto& entry : header_->devices)
      entry.state.store(static_cast<std::uint32_t>(service::WorkerState::kIdle));
    dispatcher_ = std::make_unique<ServiceDispatcher>(header_, ServiceMode::kCpu, automatic_budget);
    exit_code_.store(-1);
    dispatcher_thread_ = std::thread([this] { exit_code_.store(dispatcher_->run(stop_)); });
  }

  // Joins the dispatcher thread; the dispatcher object stays for its counters until the next
  // start (or the end of the test).
  void stop_dispatcher() {
    if (!dispatcher_thread_.joinable()) return;
    stop_.store(true);
    header_->doorbell.fetch_add(1);
    service::futex_wake_all(&header_->doorbell);
    dispatcher_thread_.join();
  }

  void restart_dispatcher() {
    stop_dispatcher();
    dispatcher_.reset();
    start_dispatcher();
  }

  service::WorkerState device_state(int device) const {
    return static_cast<service::WorkerState>(header_->devices[device].state.load());
  }

  std::unique_ptr<ServiceClient> connect_client() {
    // Each client names its segments by its own backend pid (they are fake: several clients run
    // in this one process, which owns all their requests).
    auto client = std::make_unique<ServiceClient>(postmaster_pid_, next_backend_pid_++, getpid());
    EXPECT_TRUE(client->connect());
    return client;
  }

  static std::unique_ptr<ShortestPathEngine> service_engine(
      ServiceClient& client, const Graph& graph, const EngineOptions& options = single_thread(),
      const std::string& image_segment = "") {
    return client.create(dijkstra_info(), graph, options, image_segment);
  }

  static EngineOptions single_thread() {
    EngineOptions options;
    options.threads = 1;
    return options;
  }

  static const ServiceEngine& as_service_engine(const ShortestPathEngine& engine) {
    return dynamic_cast<const ServiceEngine&>(engine);
  }

  SlotState slot_state(int index) const {
    return static_cast<SlotState>(header_->slots[index].state.load());
  }

  int count_slots(SlotState state) const {
    int count = 0;
    for (int i = 0; i < service::kSlotCount; ++i) count += slot_state(i) == state ? 1 : 0;
    return count;
  }

  bool all_slots_free() const { return count_slots(SlotState::kFree) == service::kSlotCount; }

  // The index of the first slot in `state`, or -1.
  int find_slot(SlotState state) const {
    for (int i = 0; i < service::kSlotCount; ++i)
      if (slot_state(i) == state) return i;
    return -1;
  }

  // A graph image in a segment of its own, as a kept graph's DSM segment is: clients pass its
  // name, and the service maps it by that name.
  SharedMapping publish_image(const Graph& graph, std::uint64_t sequence) {
    const std::string name = service::graph_segment_name(postmaster_pid_, getpid(), sequence);
    SharedMapping mapping = SharedMapping::create(name, graph_image_bytes(graph));
    write_graph_image(graph, mapping.data());
    return mapping;
  }

  // A road index of `graph` (made and customized here) published as a kept graph's index
  // segment under `sequence`, as a backend publishes one for the service's cch.
  struct PublishedIndex {
    SharedMapping mapping;
    std::string name;
    std::size_t bytes;
  };
  PublishedIndex publish_index(const Graph& graph, std::uint64_t sequence) {
    Cch index(graph, cch_order(graph));
    index.customize(graph);
    const std::string name = service::graph_segment_name(postmaster_pid_, getpid(), sequence);
    SharedMapping mapping = SharedMapping::create(name, index.image_bytes());
    index.write_image(mapping.data());
    return {std::move(mapping), name, index.image_bytes()};
  }

  // With two devices serving: an injected device fault on `query`'s first run. The device that
  // ran it leaves the service with the CUDA error, the request runs again on the other and is
  // answered (`want`), and the service goes on. The failed device's index, or -1 when none
  // failed (each check reported on its own).
  int fault_one_device(ServiceClient& client, ShortestPathEngine& engine, const Query& query,
                       const Rows& want) {
    client.set_test_fault_flags(service::kFlagFaultDevice);
    const Rows got = solve_with(engine, query);
    EXPECT_TRUE(testing::same_distances(got.distances.data(), want.distances));
    const int failed = device_state(0) == service::WorkerState::kFailed ? 0 : 1;
    EXPECT_EQ(device_state(failed), service::WorkerState::kFailed);
    EXPECT_NE(device_state(1 - failed), service::WorkerState::kFailed);
    EXPECT_NE(std::string(header_->devices[failed].failure).find("CUDA error"), std::string::npos)
        << header_->devices[failed].failure;
    EXPECT_EQ(exit_code_.load(), -1);
    return device_state(failed) == service::WorkerState::kFailed ? failed : -1;
  }

  long postmaster_pid_ = 0;
  long next_backend_pid_ = 1000;
  SharedMapping control_;
  ControlHeader* header_ = nullptr;
  std::atomic<bool> stop_{false};
  std::unique_ptr<ServiceDispatcher> dispatcher_;
  std::thread dispatcher_thread_;
  std::atomic<int> exit_code_{-1};  // what run() returned; -1 while it runs
};

// --- 1. One source ----------------------------------------------------------------------------

TEST_F(ServiceTest, OneSourceMatchesTheCpuEngineOnRandomGraphs) {
  start_dispatcher();
  auto client = connect_client();
  int checked = 0;
  for (unsigned seed = 1; seed <= 24; ++seed) {
    const RandomGraphSpec spec = varied_spec(seed);
    const bool directed = seed % 2 == 0;
    const Graph graph = make_graph(spec, seed, directed);
    if (graph.vertex_count() == 0) continue;
    auto engine = service_engine(*client, graph);
    const VertexIndex n = graph.vertex_count();
    for (VertexIndex source : {VertexIndex{0}, n / 2, n - 1}) {
      Query query;
      query.sources = std::vector<VertexIndex>{source};
      query.predecessors = true;
      const Rows got = solve_with(*engine, query);
      const Rows want = solve_locally(graph, {source}, true);
      ASSERT_TRUE(testing::same_distances(got.distances.data(), want.distances))
          << testing::describe(spec, seed) << " source " << source;
      ASSERT_EQ(got.arcs, want.arcs) << testing::describe(spec, seed) << " source " << source;
      ASSERT_TRUE(
          testing::valid_predecessors(graph, got.distances.data(), got.arcs.data(), source));
      // Distances only: no predecessor pass, the same row.
      query.predecessors = false;
      ASSERT_TRUE(
          testing::same_distances(solve_with(*engine, query).distances.data(), want.distances));
      ++checked;
    }
    EXPECT_EQ(as_service_engine(*engine).service_report().batch_size, 1);
  }
  EXPECT_GT(checked, 60);
  EXPECT_EQ(header_->failed_requests.load(), 0u);
  EXPECT_TRUE(eventually([&] { return all_slots_free(); }));
}

// --- 2. Many sources, targets, compact rows ---------------------------------------------------

TEST_F(ServiceTest, ManySourcesTargetsAndCompactRows) {
  start_dispatcher();
  auto client = connect_client();
  RandomGraphSpec spec;
  spec.vertices = 700;
  spec.edges = 2500;
  spec.zero_weights = true;
  spec.components = 2;
  const Graph graph = make_graph(spec, 42, true);
  const VertexIndex n = graph.vertex_count();
  auto engine = service_engine(*client, graph);
  const std::vector<VertexIndex> sources = {3, n - 1, 3, n / 2, 0, 17, n / 3};  // one twice
  const std::vector<VertexIndex> targets = {n - 2, 5, 0, n / 2, 5, n / 4};      // one twice
  const Rows want = solve_locally(graph, sources, true);
  const std::size_t width = static_cast<std::size_t>(n);

  // Full rows with predecessor arcs, one request.
  Query full;
  full.sources = sources;
  full.predecessors = true;
  const Rows got = solve_with(*engine, full);
  ASSERT_TRUE(testing::same_distances(got.distances.data(), want.distances));
  ASSERT_EQ(got.arcs, want.arcs);

  // Targets as a hint: full rows whose target columns are exact.
  Query hinted;
  hinted.sources = sources;
  hinted.targets = targets;
  const Rows partial = solve_with(*engine, hinted);
  for (std::size_t s = 0; s < sources.size(); ++s)
    for (VertexIndex t : targets)
      ASSERT_EQ(partial.distances[s * width + static_cast<std::size_t>(t)],
                want.distances[s * width + static_cast<std::size_t>(t)])
          << "source " << sources[s] << " target " << t;

  // Compact rows (the CPU Dijkstra engine cannot make them: the service does), many sources and
  // one source (which is not batchable: its row is not a full row).
  for (std::size_t count : {sources.size(), std::size_t{1}}) {
    Query compact;
    compact.sources.assign(sources.begin(), sources.begin() + static_cast<long>(count));
    compact.targets = targets;
    compact.compact = true;
    const Rows cells = solve_with(*engine, compact);
    ASSERT_EQ(cells.distances.size(), count * targets.size());
    for (std::size_t s = 0; s < count; ++s)
      for (std::size_t t = 0; t < targets.size(); ++t)
        ASSERT_EQ(cells.distances[s * targets.size() + t],
                  want.distances[s * width + static_cast<std::size_t>(targets[t])])
            << "source " << sources[s] << " target " << targets[t];
  }
  // Some cells are unreachable (two components), so infinity crossed the service too.
  bool any_unreachable = false;
  for (double d : want.distances) any_unreachable = any_unreachable || d == kInfinity;
  EXPECT_TRUE(any_unreachable);
  EXPECT_EQ(header_->failed_requests.load(), 0u);
}

// --- 3. Concurrency and batching --------------------------------------------------------------

TEST_F(ServiceTest, ConcurrentClientsShareLaunchesAndEachGetsItsOwnRow) {
  RandomGraphSpec spec;
  spec.vertices = 1500;
  spec.edges = 6000;
  spec.zero_weights = true;
  spec.components = 2;
  const Graph graph = make_graph(spec, 7, false);
  const VertexIndex n = graph.vertex_count();
  // One image for every client (a kept graph): only requests on the same image share a launch.
  const SharedMapping image = publish_image(graph, 1);

  constexpr int kThreads = 16;
  constexpr int kRequests = 12;
  auto source_of = [&](int thread, int request) {
    return static_cast<VertexIndex>((thread * 131 + request * 17) % n);
  };
  auto target_of = [&](int thread) { return static_cast<VertexIndex>((thread * 89 + 3) % n); };
  std::map<VertexIndex, Rows> expected;
  for (int t = 0; t < kThreads; ++t)
    for (int r = 0; r < kRequests; ++r)
      if (!expected.count(source_of(t, r)))
        expected[source_of(t, r)] = solve_locally(graph, {source_of(t, r)}, true);

  header_->batch_window_ns.store(20'000'000);
  start_dispatcher();
  std::vector<std::unique_ptr<ServiceClient>> clients;
  for (int t = 0; t < kThreads; ++t) clients.push_back(connect_client());

  std::atomic<int> wrong{0}, failed{0}, largest_batch{0};
  std::atomic<bool> go{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      auto engine = service_engine(*clients[static_cast<std::size_t>(t)], graph, single_thread(),
                                   image.name());
      while (!go.load()) std::this_thread::yield();
      for (int r = 0; r < kRequests; ++r) {
        // Rounds of four kinds (the threads go in step, so each launch mostly holds one kind):
        // with predecessor arcs (which share launches only among themselves), plain rows, rows
        // with targets (one-to-one paths: the launch stops early on the union of the targets),
        // and paths traced by the service (the same launch, only the paths sent back).
        const VertexIndex source = source_of(t, r);
        Query query;
        query.sources = std::vector<VertexIndex>{source};
        query.predecessors = r % 4 == 0;
        if (r % 4 >= 2) query.targets = {target_of(t), target_of(t + 5)};
        try {
          if (r % 4 == 3) {
            std::vector<VertexIndex> targets = query.targets;
            std::sort(targets.begin(), targets.end());
            targets.erase(std::unique(targets.begin(), targets.end()), targets.end());
            service::TracedPaths paths;
            auto& remote = dynamic_cast<ServiceEngine&>(*engine);
            if (!remote.solve_paths(source, targets.data(), static_cast<int>(targets.size()),
                                    paths)) {
              ++wrong;
              continue;
            }
            const Rows& want = expected.at(source);
            for (std::size_t j = 0; j < targets.size(); ++j) {
              const std::size_t at = static_cast<std::size_t>(targets[j]);
              const std::vector<ArcIndex> path(paths.arcs.begin() + (j > 0 ? paths.ends[j - 1] : 0),
                                               paths.arcs.begin() + paths.ends[j]);
              if (paths.distances[j] != want.distances[at] ||
                  path !=
                      path_from_predecessors(graph.reverse, want.arcs.data(), source, targets[j]))
                ++wrong;
            }
            continue;
          }
          const Rows got = solve_with(*engine, query);
          const Rows& want = expected.at(source);
          if (query.targets.empty()) {
            if (got.distances != want.distances || (query.predecessors && got.arcs != want.arcs))
              ++wrong;
            continue;
          }
          // Targets exact, and the paths traced from the row (as RoutingCall does) are the ones
          // the full predecessor row gives.
          for (VertexIndex target : query.targets) {
            const std::size_t at = static_cast<std::size_t>(target);
            if (got.distances[at] != want.distances[at] ||
                trace_path(graph.reverse, got.distances.data(), source, target) !=
                    path_from_predecessors(graph.reverse, want.arcs.data(), source, target))
              ++wrong;
          }
        } catch (const std::exception& error) {
          ADD_FAILURE() << "thread " << t << " request " << r << ": " << error.what();
          ++failed;
        }
      }
      const int batch = as_service_engine(*engine).service_report().batch_size;
      int seen = largest_batch.load();
      while (batch > seen && !largest_batch.compare_exchange_weak(seen, batch)) {
      }
    });
  }
  go.store(true);
  for (auto& thread : threads) thread.join();

  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(failed.load(), 0);
  EXPECT_GT(largest_batch.load(), 1);
  EXPECT_EQ(header_->requests.load(), static_cast<std::uint64_t>(kThreads * kRequests));
  EXPECT_LT(header_->batches.load(), header_->requests.load());
  EXPECT_TRUE(eventually([&] { return all_slots_free(); }));
}

// --- 3b. Paths traced by the service ------------------------------------------------------------

// The paths of TracedPaths for target j.
std::vector<ArcIndex> path_of(const service::TracedPaths& paths, std::size_t j) {
  return std::vector<ArcIndex>(paths.arcs.begin() + (j > 0 ? paths.ends[j - 1] : 0),
                               paths.arcs.begin() + paths.ends[j]);
}

TEST_F(ServiceTest, PathsTracedByTheServiceAreThePathsOfTheRow) {
  start_dispatcher();
  auto client = connect_client();
  int checked = 0;
  for (unsigned seed = 1; seed <= 12; ++seed) {
    const RandomGraphSpec spec = varied_spec(seed + 24);  // other graphs than the one-source test's
    const Graph graph = make_graph(spec, seed + 300, seed % 2 == 0);
    const VertexIndex n = graph.vertex_count();
    if (n < 4) continue;
    auto engine = service_engine(*client, graph);
    auto& remote = dynamic_cast<ServiceEngine&>(*engine);
    for (VertexIndex source : {VertexIndex{0}, n / 2, n - 1}) {
      // The source itself among the targets: its path is empty, its distance 0.
      std::vector<VertexIndex> targets = {0, n / 3, n / 2, n - 2, n - 1};
      std::sort(targets.begin(), targets.end());
      targets.erase(std::unique(targets.begin(), targets.end()), targets.end());
      service::TracedPaths paths;
      ASSERT_TRUE(
          remote.solve_paths(source, targets.data(), static_cast<int>(targets.size()), paths));
      ASSERT_EQ(paths.distances.size(), targets.size());
      ASSERT_EQ(paths.ends.size(), targets.size());
      const Rows want = solve_locally(graph, {source}, true);
      for (std::size_t j = 0; j < targets.size(); ++j) {
        const std::size_t at = static_cast<std::size_t>(targets[j]);
        ASSERT_EQ(paths.distances[j], want.distances[at]) << testing::describe(spec, seed);
        ASSERT_EQ(path_of(paths, j),
                  path_from_predecessors(graph.reverse, want.arcs.data(), source, targets[j]))
            << testing::describe(spec, seed) << " source " << source << " target " << targets[j];
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 100);
  EXPECT_EQ(header_->failed_requests.load(), 0u);
  EXPECT_TRUE(eventually([&] { return all_slots_free(); }));
}

TEST_F(ServiceTest, PathsLongerThanTheirRoomAreRefusedForRowsAndTheNextRequestIsServed) {
  start_dispatcher();
  auto client = connect_client();
  // A chain 0 -> 1 -> ... -> n-1: every path from 0 is as long as its target's index, so ten
  // targets near the end need about ten times n arcs, more than the room for two.
  constexpr int kVertices = 400;
  EdgeTable table;
  for (int v = 0; v + 1 < kVertices; ++v) table.add(v, v + 1, 1.0);  // ids are indices (sorted)
  Graph graph = build_graph(table.view(), true);
  ensure_reverse(graph);
  auto engine = service_engine(*client, graph);
  auto& remote = dynamic_cast<ServiceEngine&>(*engine);
  std::vector<VertexIndex> far;
  for (VertexIndex t = kVertices - 10; t < kVertices; ++t) far.push_back(t);
  service::TracedPaths paths;
  EXPECT_FALSE(remote.solve_paths(0, far.data(), static_cast<int>(far.size()), paths));
  EXPECT_EQ(header_->failed_requests.load(), 0u);  // not a failure: the caller asks for rows
  // Two of them fit.
  ASSERT_TRUE(remote.solve_paths(0, far.data(), 2, paths));
  for (std::size_t j = 0; j < 2; ++j) {
    const std::vector<ArcIndex> path = path_of(paths, j);
    ASSERT_EQ(path.size(), static_cast<std::size_t>(far[j]));
    EXPECT_EQ(paths.distances[j], static_cast<double>(far[j]));
    // Arcs of the reversed CSR in path order: the first leaves the source.
    EXPECT_EQ(graph.reverse.heads[static_cast<std::size_t>(path.front())], 0);
  }
  // A graph without its reversed CSR is not traced (rows instead), and nothing is sent.
  Graph plain = build_graph(table.view(), true);
  auto plain_engine = service_engine(*client, plain);
  const std::uint64_t requests = header_->requests.load();
  EXPECT_FALSE(dynamic_cast<ServiceEngine&>(*plain_engine).solve_paths(0, far.data(), 1, paths));
  EXPECT_EQ(header_->requests.load(), requests);
  EXPECT_TRUE(eventually([&] { return all_slots_free(); }));
}

// --- 4. A kept graph's image replaced under the same name -------------------------------------

TEST_F(ServiceTest, AnImageReplacedUnderItsNameIsAnsweredFromTheNewWeights) {
  start_dispatcher();
  auto client = connect_client();
  RandomGraphSpec spec;
  spec.vertices = 400;
  spec.edges = 1600;
  EdgeTable table = testing::random_edges(spec, 5);
  Graph before = build_graph(table.view(), true);
  ensure_reverse(before);
  // The same arcs, other weights: the same vertices, so only the weights tell them apart.
  for (double& cost : table.costs)
    if (cost >= 0) cost = cost * 3 + 1;
  Graph after = build_graph(table.view(), true);
  ensure_reverse(after);
  ASSERT_EQ(before.vertex_count(), after.vertex_count());

  const SharedMapping first = publish_image(before, 1);
  const std::string name = first.name();
  const std::vector<VertexIndex> sources = {0, 9};
  Query query;
  query.sources = sources;
  query.predecessors = true;
  {
    auto engine = service_engine(*client, before, single_thread(), name);
    const Rows got = solve_with(*engine, query);
    const Rows want = solve_locally(before, sources, true);
    ASSERT_TRUE(testing::same_distances(got.distances.data(), want.distances));
    ASSERT_EQ(got.arcs, want.arcs);
  }

  // The kept graph rebuilt: a new segment under the same name (the old one is still mapped here
  // and by the service, so its inode cannot be reused).
  const SharedMapping second = publish_image(after, 1);
  ASSERT_EQ(second.name(), name);
  ASSERT_NE(second.inode(), first.inode());
  auto engine = service_engine(*client, after, single_thread(), name);
  const Rows got = solve_with(*engine, query);
  const Rows want = solve_locally(after, sources, true);
  const Rows stale = solve_locally(before, sources, true);
  ASSERT_NE(want.distances, stale.distances);
  ASSERT_TRUE(testing::same_distances(got.distances.data(), want.distances));
  ASSERT_EQ(got.arcs, want.arcs);
  // The service's cached copy of the old image is no longer used (and goes at its next sweep).
  EXPECT_EQ(header_->failed_requests.load(), 0u);
}

// The cch engine answers from the kept graph's road index, which the service maps by the name the
// request gives (as a kept graph's index DSM segment), not from an index of its own.
TEST_F(ServiceTest, CchAnswersFromTheRoadIndexTheRequestNames) {
  start_dispatcher();
  auto client = connect_client();
  RandomGraphSpec spec;
  spec.vertices = 500;
  spec.edges = 2000;
  spec.components = 2;
  EdgeTable table = testing::random_edges(spec, 11);
  Graph graph = build_graph(table.view(), true);
  ensure_reverse(graph);
  const SharedMapping image = publish_image(graph, 1);
  const PublishedIndex index = publish_index(graph, 2);
  const EngineInfo* cch = find_engine("cch", Device::kCpu);
  ASSERT_NE(cch, nullptr);
  auto engine = client->create(*cch, graph, single_thread(), image.name(), index.name, index.bytes);
  Query query;
  query.sources = {0, 7, graph.vertex_count() - 1};
  query.predecessors = true;
  const Rows got = solve_with(*engine, query);
  const Rows want = solve_locally(graph, query.sources, true);
  ASSERT_TRUE(testing::same_distances(got.distances.data(), want.distances));
  ASSERT_EQ(got.arcs, want.arcs);
  EXPECT_NE(engine->report().notes.find("road index (shared)"), std::string::npos)
      << engine->report().notes;
  // A size the segment cannot hold fails the request, it does not read past the mapping.
  auto wrong = client->create(*cch, graph, single_thread(), image.name(), index.name,
                              index.bytes + (1 << 20));
  EXPECT_THROW(solve_with(*wrong, query), RoutingError);
  EXPECT_EQ(exit_code_.load(), -1);  // the service goes on
}

// A call's cost arrays through the service go where the caller wants them (the tuples a backend
// sends): the client copies each row there out of the exchange segment, as it is when the rows
// are the arrays (trees, and columns in ascending id order), gathered into the caller's order
// otherwise (columns repeated, reversed, not in the graph); the call's own buffer serves a batch
// the caller declines. Every row equals the one a call without destinations returns, bit for
// bit.
TEST_F(ServiceTest, CostArraysOfACallGoWhereTheCallerAsks) {
  start_dispatcher();
  auto client = connect_client();
  gpu::Availability no_gpu;
  no_gpu.reason = "test: CPU only";
  EdgeTable t = testing::grid_edges(30, 30, 5, 3);
  const testing::CostArrayIds ids = testing::cost_array_ids(900, 7, 31);  // 129: several batches
  const std::vector<std::int64_t>& sources = ids.sources;
  for (const std::vector<std::int64_t>* given : {&ids.ascending, &ids.mixed, &ids.sources}) {
    const bool whole_rows = given == &ids.sources;
    for (const int decline_every : {0, 2}) {
      CallOptions options;
      options.device = DeviceSetting::kCpu;
      options.many_source = true;
      options.apsp_algorithm = "dijkstra";
      options.cost_arrays = true;
      options.remote = client.get();
      options.engine.threads = 2;
      const testing::CostArrayRuns runs = testing::run_with_and_without_destinations(
          t.view(), options, no_gpu, sources, whole_rows ? nullptr : given, decline_every);
      const auto& want = runs.want;
      const auto& got = runs.got;
      EXPECT_NE(runs.summary.device.find("GPU service"), std::string::npos) << runs.summary.device;
      EXPECT_TRUE(runs.engine_wrote_rows);  // the client copies every row there, in either order
      ASSERT_EQ(want.size(), sources.size());
      ASSERT_EQ(got.size(), want.size());
      for (std::size_t r = 0; r < want.size(); ++r)
        ASSERT_EQ(got[r], want[r]) << "row " << r << (whole_rows ? " (trees)" : " (columns)")
                                   << " decline " << decline_every;
      EXPECT_GT(runs.pooled_rows, 0u);
    }
  }
  EXPECT_EQ(header_->failed_requests.load(), 0u);
}

// Service areas through the service (kFlagAreas): each source's area comes back compacted in a
// room of its own, from one worker and from a request split over two (each part writes its own
// sources' rooms), and equals the area the engine gives in this process; a negative distance
// gives empty areas, every vertex in reach within an unbounded one.
TEST_F(ServiceTest, ServiceAreasComeBackCompactedAndEqualTheEnginesOwn) {
  RandomGraphSpec spec;
  spec.vertices = 500;
  spec.edges = 1800;
  spec.components = 2;
  EdgeTable table = testing::random_edges(spec, 41);
  Graph graph = build_graph(table.view(), true);
  ensure_reverse(graph);
  const SharedMapping image = publish_image(graph, 1);
  const EngineInfo* dijkstra = find_engine("dijkstra", Device::kCpu);
  ASSERT_NE(dijkstra, nullptr);
  const std::vector<VertexIndex> sources = {3, 0, 499, 3, 250, 17};
  for (const int workers : {1, 2}) {
    start_dispatcher(kRoomyBudget, workers);
    auto client = connect_client();
    auto remote = client->create(*dijkstra, graph, single_thread(), image.name());
    auto local = dijkstra->create(graph, single_thread());
    for (const double bound : {-1.0, 0.0, 40.0, 1e12, kInfinity}) {
      AreaLists got, want;
      remote->solve_areas(sources.data(), static_cast<int>(sources.size()), bound, got);
      local->solve_areas(sources.data(), static_cast<int>(sources.size()), bound, want);
      ASSERT_EQ(got.ends.size(), sources.size()) << workers << " workers, bound " << bound;
      const auto got_areas = testing::sorted_areas(got);
      const auto want_areas = testing::sorted_areas(want);
      for (std::size_t i = 0; i < sources.size(); ++i) {
        EXPECT_EQ(got_areas[i], want_areas[i])
            << workers << " workers, bound " << bound << ", source " << i;
        EXPECT_EQ(got_areas[i].empty(), bound < 0) << "the source itself is in its area, at 0";
      }
    }
    EXPECT_EQ(header_->failed_requests.load(), 0u);
    remote.reset();
    client.reset();
    stop_dispatcher();
    dispatcher_.reset();
  }
}

// An exchange segment over the allowance a session keeps (gpu_routing.retained_memory) is dropped
// between calls once the allowance is lowered, not only at the end of the next call through the
// service; within it, it stays.
TEST_F(ServiceTest, AnExchangeSegmentOverALoweredAllowanceIsDroppedBetweenCalls) {
  start_dispatcher();
  auto client = connect_client();
  ServiceClient::set_kept_exchange_bytes(std::size_t{1} << 30);
  const std::string name = client->io_segment(std::size_t{100} << 20).name();
  const std::string path = "/dev/shm/" + name;
  client->drop_io_segment_over_kept();
  EXPECT_GE(client->io_segment_bytes(), std::size_t{100} << 20) << "kept within 1 GB";
  EXPECT_EQ(access(path.c_str(), F_OK), 0) << path;
  ServiceClient::set_kept_exchange_bytes(0);  // the floor, 64 MB
  client->drop_io_segment_over_kept();
  EXPECT_EQ(client->io_segment_bytes(), 0u);
  EXPECT_NE(access(path.c_str(), F_OK), 0) << path << " is still there";
  // A segment within the floor stays.
  client->io_segment(std::size_t{8} << 20);
  client->drop_io_segment_over_kept();
  EXPECT_GT(client->io_segment_bytes(), 0u);
}

// A road-index request keeps no batch window while another lane could take it: with two
// workers and a 20 s window it is answered at once (the window held it 20 s before); with one
// worker there is no other lane, and the window holds it as it holds every batchable request.
TEST_F(ServiceTest, CchKeepsNoBatchWindowWhileAnotherLaneIsIdle) {
  RandomGraphSpec spec;
  spec.vertices = 400;
  spec.edges = 1600;
  EdgeTable table = testing::random_edges(spec, 23);
  Graph graph = build_graph(table.view(), true);
  ensure_reverse(graph);
  const SharedMapping image = publish_image(graph, 1);
  const PublishedIndex index = publish_index(graph, 2);
  const EngineInfo* cch = find_engine("cch", Device::kCpu);
  ASSERT_NE(cch, nullptr);
  for (const int workers : {2, 1}) {
    start_dispatcher(kRoomyBudget, workers);
    const std::int64_t window_ms = workers == 2 ? 20'000 : 300;
    header_->batch_window_ns.store(window_ms * 1'000'000);
    auto client = connect_client();
    auto engine =
        client->create(*cch, graph, single_thread(), image.name(), index.name, index.bytes);
    Query query;
    query.sources = {5};
    const auto began = std::chrono::steady_clock::now();
    const Rows got = solve_with(*engine, query);
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - began).count();
    ASSERT_TRUE(testing::same_distances(got.distances.data(),
                                        solve_locally(graph, query.sources, false).distances));
    if (workers == 2)
      EXPECT_LT(ms, 5000.0) << "held by the window with another lane idle";
    else
      EXPECT_GE(ms, 250.0) << "one lane: the window should have held the request";
    engine.reset();
    client.reset();
    header_->batch_window_ns.store(0);
    stop_dispatcher();
    dispatcher_.reset();
  }
}

// --- 5. Cancel --------------------------------------------------------------------------------

TEST_F(ServiceTest, ACancelAlreadyRaisedTouchesNoSlot) {
  start_dispatcher();
  auto client = connect_client();
  RandomGraphSpec spec;
  const Graph graph = make_graph(spec, 3, true);
  std::atomic<bool> cancel{true};
  EngineOptions options = single_thread();
  options.cancel = CancelToken(nullptr, &cancel);
  auto engine = service_engine(*client, graph, options);
  Query query;
  query.sources = std::vector<VertexIndex>{1};
  EXPECT_THROW(solve_with(*engine, query), Cancelled);
  EXPECT_TRUE(all_slots_free());
  EXPECT_EQ(header_->next_ticket.load(), 1u);  // nothing was submitted
  cancel.store(false);
  EXPECT_TRUE(testing::same_distances(solve_with(*engine, query).distances.data(),
                                      solve_locally(graph, {1}, false).distances));
}

TEST_F(ServiceTest, ACancelWhileSubmittedAbandonsTheRequestAndOthersGoOn) {
  // No dispatcher yet: the request waits in its slot until cancelled.
  auto client = connect_client();
  auto other_client = connect_client();
  RandomGraphSpec spec;
  spec.vertices = 300;
  spec.edges = 1200;
  const Graph graph = make_graph(spec, 11, true);
  std::atomic<bool> cancel{false};
  EngineOptions options = single_thread();
  options.cancel = CancelToken(nullptr, &cancel);
  auto engine = service_engine(*client, graph, options);
  Query query;
  query.sources = std::vector<VertexIndex>{4};
  query.predecessors = true;

  std::atomic<int> outcome{0};  // 1: Cancelled, 2: anything else
  TestThread waiter(
      [&] {
        try {
          solve_with(*engine, query);
          outcome = 2;
        } catch (const Cancelled&) {
          outcome = 1;
        } catch (...) {
          outcome = 2;
        }
      },
      [&] { cancel.store(true); });
  ASSERT_TRUE(eventually([&] { return find_slot(SlotState::kSubmitted) >= 0; }));
  const int slot = find_slot(SlotState::kSubmitted);
  cancel.store(true);
  ASSERT_TRUE(eventually([&] { return outcome.load() != 0; }));
  waiter.join();
  EXPECT_EQ(outcome.load(), 1);
  EXPECT_EQ(slot_state(slot), SlotState::kAbandoned);

  // The service frees what was abandoned, and serves the same and other clients.
  start_dispatcher();
  EXPECT_TRUE(eventually([&] { return all_slots_free(); }));
  cancel.store(false);
  const Rows want = solve_locally(graph, {4}, true);
  const Rows got = solve_with(*engine, query);
  EXPECT_TRUE(testing::same_distances(got.distances.data(), want.distances));
  EXPECT_EQ(got.arcs, want.arcs);
  auto other = service_engine(*other_client, graph);
  EXPECT_TRUE(testing::same_distances(solve_with(*other, query).distances.data(), want.distances));
  EXPECT_TRUE(eventually([&] { return all_slots_free(); }));
}

TEST_F(ServiceTest, ACancelWhileQueuedInTheBatchWindowIsDroppedByTheService) {
  // A long batch window holds the request in the dispatcher (state running) while we cancel it.
  header_->batch_window_ns.store(300'000'000);
  start_dispatcher();
  auto client = connect_client();
  auto other_client = connect_client();
  RandomGraphSpec spec;
  spec.vertices = 300;
  spec.edges = 1200;
  const Graph graph = make_graph(spec, 12, false);
  std::atomic<bool> cancel{false};
  EngineOptions options = single_thread();
  options.cancel = CancelToken(nullptr, &cancel);
  auto engine = service_engine(*client, graph, options);
  Query query;
  query.sources = std::vector<VertexIndex>{8};

  std::atomic<int> outcome{0};
  TestThread waiter(
      [&] {
        try {
          solve_with(*engine, query);
          outcome = 2;
        } catch (const Cancelled&) {
          outcome = 1;
        } catch (...) {
          outcome = 2;
        }
      },
      [&] { cancel.store(true); });
  ASSERT_TRUE(eventually([&] { return find_slot(SlotState::kRunning) >= 0 || outcome != 0; }));
  cancel.store(true);
  ASSERT_TRUE(eventually([&] { return outcome.load() != 0; }));
  waiter.join();
  EXPECT_EQ(outcome.load(), 1);
  EXPECT_TRUE(eventually([&] { return all_slots_free(); }));

  header_->batch_window_ns.store(0);
  cancel.store(false);
  const Rows want = solve_locally(graph, {8}, false);
  EXPECT_TRUE(testing::same_distances(solve_with(*engine, query).distances.data(), want.distances));
  auto other = service_engine(*other_client, graph);
  EXPECT_TRUE(testing::same_distances(solve_with(*other, query).distances.data(), want.distances));
  EXPECT_TRUE(eventually([&] { return all_slots_free(); }));
}

TEST_F(ServiceTest, ARequestCancelledInItsBatchDoesNotFailTheOthers) {
  // Two clients' requests wait in one batch window; the first is cancelled (its owner removes its
  // I/O segment at once). The launch still answers the second.
  header_->batch_window_ns.store(300'000'000);
  start_dispatcher();
  RandomGraphSpec spec;
  spec.vertices = 300;
  spec.edges = 1200;
  const Graph graph = make_graph(spec, 13, true);
  const SharedMapping image = publish_image(graph, 1);
  auto cancelled_client = connect_client();
  auto waiting_client = connect_client();
  std::atomic<bool> cancel{false};
  EngineOptions options = single_thread();
  options.cancel = CancelToken(nullptr, &cancel);
  auto cancelled_engine = service_engine(*cancelled_client, graph, options, image.name());
  auto waiting_engine = service_engine(*waiting_client, graph, single_thread(), image.name());

  std::atomic<int> cancelled_outcome{0};  // 1: Cancelled, 2: anything else
  TestThread cancelled_thread(
      [&] {
        Query query;
        query.sources = std::vector<VertexIndex>{10};
        try {
          solve_with(*cancelled_engine, query);
          cancelled_outcome = 2;
        } catch (const Cancelled&) {
          cancelled_outcome = 1;
        } catch (...) {
          cancelled_outcome = 2;
        }
      },
      [&] { cancel.store(true); });
  ASSERT_TRUE(eventually([&] { return count_slots(SlotState::kRunning) == 1; }));
  Rows answer;
  std::string failure;
  TestThread waiting_thread(
      [&] {
        Query query;
        query.sources = std::vector<VertexIndex>{20};
        try {
          answer = solve_with(*waiting_engine, query);
        } catch (const std::exception& error) {
          failure = error.what();
        }
      },
      [] {});  // the dispatcher answers it
  ASSERT_TRUE(eventually([&] { return count_slots(SlotState::kRunning) == 2; }));
  cancel.store(true);
  cancelled_thread.join();
  waiting_thread.join();
  EXPECT_EQ(cancelled_outcome.load(), 1);
  ASSERT_EQ(failure, "");
  EXPECT_TRUE(testing::same_distances(answer.distances.data(),
                                      solve_locally(graph, {20}, false).distances));
  EXPECT_TRUE(eventually([&] { return all_slots_free(); }));
}

// --- 6. The service dies ----------------------------------------------------------------------

TEST_F(ServiceTest, ARequestInFlightWhenTheServiceDiesFailsWithNoDevice) {
  // No dispatcher: the request stays submitted, as with a service that died holding it.
  auto client = connect_client();
  RandomGraphSpec spec;
  const Graph graph = make_graph(spec, 21, true);
  auto engine = service_engine(*client, graph);
  Query query;
  query.sources = std::vector<VertexIndex>{2};

  std::atomic<int> outcome{0};  // 1: RoutingError kNoDevice, 2: anything else
  std::string message;
  TestThread waiter(
      [&] {
        try {
          solve_with(*engine, query);
          outcome = 2;
        } catch (const RoutingError& error) {
          message = error.what();
          outcome = error.kind() == ErrorKind::kNoDevice ? 1 : 2;
        } catch (...) {
          outcome = 2;
        }
      },
      [&] { service::fail_in_flight(header_, "the test gave up"); });
  ASSERT_TRUE(eventually([&] { return find_slot(SlotState::kSubmitted) >= 0; }));
  const std::uint32_t generation = header_->generation.load();
  // What the supervisor does when the service process exits.
  set_state(ServiceState::kStopped);
  service::fail_in_flight(header_, "the GPU service stopped (signal 9) while answering this call");
  EXPECT_EQ(header_->generation.load(), generation + 1);
  ASSERT_TRUE(eventually([&] { return outcome.load() != 0; }));
  waiter.join();
  EXPECT_EQ(outcome.load(), 1) << message;
  EXPECT_NE(message.find("stopped"), std::string::npos) << message;
  // Whichever saw it first (the owner abandoning, or the supervisor failing it), the slot is free.
  EXPECT_TRUE(all_slots_free());

  // While stopped, calls are refused at once; once a new service is ready they are answered.
  EXPECT_THROW(solve_with(*engine, query), RoutingError);
  set_state(ServiceState::kReady);
  start_dispatcher();
  EXPECT_TRUE(testing::same_distances(solve_with(*engine, query).distances.data(),
                                      solve_locally(graph, {2}, false).distances));
}

// --- 7. The device budget ---------------------------------------------------------------------

TEST_F(ServiceTest, AGraphOverTheBudgetIsRefusedNamingTheSetting) {
  start_dispatcher();
  auto client = connect_client();
  RandomGraphSpec spec;
  spec.vertices = 500;
  spec.edges = 2000;
  const Graph graph = make_graph(spec, 31, true);
  const std::size_t estimate = dijkstra_info().estimate_bytes(graph, 1);
  header_->device_budget_bytes.store(estimate - 1);
  auto engine = service_engine(*client, graph);
  Query query;
  query.sources = std::vector<VertexIndex>{0};
  try {
    solve_with(*engine, query);
    ADD_FAILURE() << "a graph over the budget was served";
  } catch (const RoutingError& error) {
    EXPECT_EQ(error.kind(), ErrorKind::kOutOfMemory);
    EXPECT_NE(std::string(error.what()).find("gpu_routing.gpu_graph_memory"), std::string::npos)
        << error.what();
  }
  // Raised (a reload): the same engine is served.
  header_->device_budget_bytes.store(estimate);
  EXPECT_TRUE(testing::same_distances(solve_with(*engine, query).distances.data(),
                                      solve_locally(graph, {0}, false).distances));
  EXPECT_TRUE(eventually([&] { return all_slots_free(); }));
}

TEST_F(ServiceTest, TheLeastRecentlyUsedGraphMakesRoomUnderTheBudget) {
  RandomGraphSpec small_spec, large_spec;
  small_spec.vertices = 600;
  small_spec.edges = 2400;
  large_spec.vertices = 900;
  large_spec.edges = 3600;
  const Graph small = make_graph(small_spec, 41, true);
  const Graph large = make_graph(large_spec, 42, false);
  const std::size_t small_bytes = dijkstra_info().estimate_bytes(small, 1);
  const std::size_t large_bytes = dijkstra_info().estimate_bytes(large, 1);
  const std::size_t budget = std::max(small_bytes, large_bytes) + 16;
  ASSERT_LT(budget, small_bytes + large_bytes);  // room for either graph, never both
  header_->device_budget_bytes.store(budget);
  start_dispatcher();
  auto client = connect_client();
  auto small_engine = service_engine(*client, small);
  auto large_engine = service_engine(*client, large);
  for (int round = 0; round < 6; ++round) {
    const bool use_small = round % 2 == 0;
    const Graph& graph = use_small ? small : large;
    const VertexIndex source = static_cast<VertexIndex>(round * 37 % graph.vertex_count());
    Query query;
    query.sources = std::vector<VertexIndex>{source};
    query.predecessors = true;
    const Rows got = solve_with(use_small ? *small_engine : *large_engine, query);
    const Rows want = solve_locally(graph, {source}, true);
    ASSERT_TRUE(testing::same_distances(got.distances.data(), want.distances)) << round;
    ASSERT_EQ(got.arcs, want.arcs) << round;
    EXPECT_LE(header_->device_bytes_used.load(), budget) << round;
  }
  stop_dispatcher();  // its cache is read on this thread now
  EXPECT_LE(dispatcher_->device_bytes_in_use(), budget);
  EXPECT_EQ(dispatcher_->cached_engines(), 1u);
  EXPECT_EQ(header_->failed_requests.load(), 0u);
}

TEST_F(ServiceTest, ABatchLargerThanTheBudgetAllowsIsSplitNotRefused) {
  // Each request fits the budget alone; a launch of all of them together would not. Batching is
  // the service's own choice, so it must not turn requests that fit into failures.
  RandomGraphSpec spec;
  spec.vertices = 800;
  spec.edges = 3200;
  const Graph graph = make_graph(spec, 51, true);
  const SharedMapping image = publish_image(graph, 1);
  header_->device_budget_bytes.store(dijkstra_info().estimate_bytes(graph, 2));
  header_->batch_window_ns.store(20'000'000);
  start_dispatcher();

  constexpr int kThreads = 8;
  constexpr int kRequests = 3;
  std::vector<std::unique_ptr<ServiceClient>> clients;
  for (int t = 0; t < kThreads; ++t) clients.push_back(connect_client());
  std::atomic<int> wrong{0}, failed{0}, largest_batch{0};
  std::atomic<bool> go{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      auto engine = service_engine(*clients[static_cast<std::size_t>(t)], graph, single_thread(),
                                   image.name());
      while (!go.load()) std::this_thread::yield();
      for (int r = 0; r < kRequests; ++r) {
        const VertexIndex source = static_cast<VertexIndex>((t * 97 + r * 13) % 800);
        Query query;
        query.sources = std::vector<VertexIndex>{source};
        try {
          if (solve_with(*engine, query).distances !=
              solve_locally(graph, {source}, false).distances)
            ++wrong;
        } catch (const std::exception& error) {
          ++failed;
          ADD_FAILURE() << "thread " << t << ": " << error.what();
        }
      }
      const int batch = as_service_engine(*engine).service_report().batch_size;
      int seen = largest_batch.load();
      while (batch > seen && !largest_batch.compare_exchange_weak(seen, batch)) {
      }
    });
  }
  go.store(true);
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(failed.load(), 0);
  // Launches were still shared, two requests at most (what the budget holds).
  EXPECT_EQ(largest_batch.load(), 2);
  EXPECT_LT(header_->batches.load(), header_->requests.load());
  EXPECT_LE(header_->device_bytes_used.load(), header_->device_budget_bytes.load());
}

// --- Injected faults (gpu_routing.test_fault) -------------------------------------------------

TEST_F(ServiceTest, ADeviceFaultFailsTheRequestAndEndsTheServiceProcess) {
  start_dispatcher();
  auto client = connect_client();
  RandomGraphSpec spec;
  const Graph graph = make_graph(spec, 81, true);
  auto engine = service_engine(*client, graph);
  Query query;
  query.sources = std::vector<VertexIndex>{3};
  client->set_test_fault_flags(service::kFlagFaultDevice);
  try {
    solve_with(*engine, query);
    ADD_FAILURE() << "an injected device fault was not reported";
  } catch (const RoutingError& error) {
    EXPECT_EQ(error.kind(), ErrorKind::kInternal);
    EXPECT_NE(std::string(error.what()).find("CUDA error"), std::string::npos) << error.what();
  }
  // The process exits for a fresh context: run() returns the code the supervisor restarts on.
  EXPECT_TRUE(eventually([&] { return exit_code_.load() != -1; }));
  EXPECT_EQ(exit_code_.load(), service::kExitDeviceFault);
  // The supervisor's part, then a new service process.
  service::fail_in_flight(header_, "the GPU service stopped (exit code 3)");
  client->set_test_fault_flags(0);
  restart_dispatcher();
  EXPECT_TRUE(testing::same_distances(solve_with(*engine, query).distances.data(),
                                      solve_locally(graph, {3}, false).distances));
  EXPECT_TRUE(eventually([&] { return all_slots_free(); }));
}

TEST_F(ServiceTest, DeviceMemoryRunningOutEmptiesTheCacheAndTheServiceGoesOn) {
  start_dispatcher();
  auto client = connect_client();
  RandomGraphSpec spec;
  const Graph graph = make_graph(spec, 82, false);
  auto engine = service_engine(*client, graph);
  Query query;
  query.sources = std::vector<VertexIndex>{6};
  const Rows want = solve_locally(graph, {6}, false);
  ASSERT_TRUE(testing::same_distances(solve_with(*engine, query).distances.data(), want.distances));
  EXPECT_GT(header_->device_bytes_used.load(), 0u);
  client->set_test_fault_flags(service::kFlagFaultMemory);
  try {
    solve_with(*engine, query);
    ADD_FAILURE() << "an injected out-of-memory was not reported";
  } catch (const RoutingError& error) {
    EXPECT_EQ(error.kind(), ErrorKind::kOutOfMemory);
    EXPECT_NE(error.hint().find("freed"), std::string::npos) << error.hint();
  }
  EXPECT_EQ(header_->device_bytes_used.load(), 0u);  // the cache was emptied
  EXPECT_EQ(exit_code_.load(), -1);                  // and the service still runs
  client->set_test_fault_flags(0);
  EXPECT_TRUE(testing::same_distances(solve_with(*engine, query).distances.data(), want.distances));
  EXPECT_TRUE(eventually([&] { return all_slots_free(); }));
}

// --- 7b. Several devices ----------------------------------------------------------------------

TEST_F(ServiceTest, ManySourcesAreSplitOverTheDevicesAndEachRowIsExact) {
  start_dispatcher(kRoomyBudget, 2);
  auto client = connect_client();
  RandomGraphSpec spec;
  spec.vertices = 900;
  spec.edges = 3600;
  spec.components = 2;
  const Graph graph = make_graph(spec, 71, true);
  const VertexIndex n = graph.vertex_count();
  auto engine = service_engine(*client, graph);
  const std::vector<VertexIndex> sources = {5, n - 1, 5, n / 2, 0, 17, n / 3, 2, n - 9};
  const Rows want = solve_locally(graph, sources, true);
  Query full;
  full.sources = sources;
  full.predecessors = true;
  const Rows got = solve_with(*engine, full);
  ASSERT_TRUE(testing::same_distances(got.distances.data(), want.distances));
  ASSERT_EQ(got.arcs, want.arcs);
  EXPECT_NE(engine->report().notes.find("rows split over 2 service workers"), std::string::npos)
      << engine->report().notes;
  // Compact rows, split too: each part writes its own rows of the request's cells.
  const std::vector<VertexIndex> targets = {n - 2, 5, 0, n / 2};
  Query compact;
  compact.sources = sources;
  compact.targets = targets;
  compact.compact = true;
  const Rows cells = solve_with(*engine, compact);
  for (std::size_t s = 0; s < sources.size(); ++s)
    for (std::size_t t = 0; t < targets.size(); ++t)
      ASSERT_EQ(
          cells.distances[s * targets.size() + t],
          want.distances[s * static_cast<std::size_t>(n) + static_cast<std::size_t>(targets[t])]);
  // Two requests, two parts each; one answer each.
  EXPECT_EQ(header_->devices[0].requests.load() + header_->devices[1].requests.load(), 4u);
  EXPECT_EQ(header_->requests.load(), 2u);
  EXPECT_EQ(header_->failed_requests.load(), 0u);
  EXPECT_TRUE(eventually([&] { return all_slots_free(); }));
}

TEST_F(ServiceTest, ConcurrentClientsAreServedByEveryDevice) {
  start_dispatcher(kRoomyBudget, 2);
  header_->batch_window_ns.store(0);
  RandomGraphSpec spec;
  spec.vertices = 4000;
  spec.edges = 16000;
  const Graph graph = make_graph(spec, 72, false);
  SharedMapping image = publish_image(graph, 1);
  constexpr int kClients = 8, kCalls = 12;
  std::atomic<int> wrong{0}, failed{0};
  std::vector<std::unique_ptr<ServiceClient>> clients;
  for (int c = 0; c < kClients; ++c) clients.push_back(connect_client());
  std::vector<std::thread> threads;
  for (int c = 0; c < kClients; ++c)
    threads.emplace_back([&, c] {
      try {
        auto engine = service_engine(*clients[static_cast<std::size_t>(c)], graph, single_thread(),
                                     image.name());
        for (int k = 0; k < kCalls; ++k) {
          const VertexIndex source = static_cast<VertexIndex>((c * 131 + k * 17) % 4000);
          Query query;
          query.sources = {source};
          const Rows got = solve_with(*engine, query);
          if (!testing::same_distances(got.distances.data(),
                                       solve_locally(graph, {source}, false).distances))
            ++wrong;
        }
      } catch (const std::exception&) {
        ++failed;
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(failed.load(), 0);
  EXPECT_EQ(header_->requests.load(), static_cast<std::uint64_t>(kClients * kCalls));
  EXPECT_EQ(header_->devices[0].requests.load() + header_->devices[1].requests.load(),
            static_cast<std::uint64_t>(kClients * kCalls));
  // Eight clients against two devices: both served (the first idle device takes a request).
  EXPECT_GT(header_->devices[0].requests.load(), 0u);
  EXPECT_GT(header_->devices[1].requests.load(), 0u);
  EXPECT_TRUE(eventually([&] { return all_slots_free(); }));
}

TEST_F(ServiceTest, ADeviceFaultTakesTheDeviceOutAndTheRequestRunsOnAnother) {
  start_dispatcher(kRoomyBudget, 2);
  auto client = connect_client();
  RandomGraphSpec spec;
  const Graph graph = make_graph(spec, 83, true);
  auto engine = service_engine(*client, graph);
  Query query;
  query.sources = std::vector<VertexIndex>{4};
  const Rows want = solve_locally(graph, {4}, false);
  const int failed = fault_one_device(*client, *engine, query, want);
  ASSERT_GE(failed, 0);
  EXPECT_EQ(header_->failed_requests.load(), 0u);
  // Later requests, many sources included, run on the device left (no split over one device).
  client->set_test_fault_flags(0);
  Query many;
  many.sources = {1, 2, 3};
  ASSERT_TRUE(testing::same_distances(solve_with(*engine, many).distances.data(),
                                      solve_locally(graph, {1, 2, 3}, false).distances));
  EXPECT_EQ(engine->report().notes.find("rows split"), std::string::npos);
  // A fault on the last device fails the request and ends the process for a fresh one.
  client->set_test_fault_flags(service::kFlagFaultDevice);
  try {
    solve_with(*engine, query);
    ADD_FAILURE() << "a device fault on the last device was not reported";
  } catch (const RoutingError& error) {
    EXPECT_NE(std::string(error.what()).find("CUDA error"), std::string::npos) << error.what();
  }
  EXPECT_TRUE(eventually([&] { return exit_code_.load() != -1; }));
  EXPECT_EQ(exit_code_.load(), service::kExitDeviceFault);
  service::fail_in_flight(header_, "the GPU service stopped (exit code 3)");
  client->set_test_fault_flags(0);
  restart_dispatcher();  // both devices serve again
  EXPECT_TRUE(testing::same_distances(solve_with(*engine, many).distances.data(),
                                      solve_locally(graph, {1, 2, 3}, false).distances));
  EXPECT_NE(engine->report().notes.find("rows split over 2 service workers"), std::string::npos);
  EXPECT_TRUE(eventually([&] { return all_slots_free(); }));
}

TEST_F(ServiceTest, AServiceIdleWithADeviceOutEndsItselfSoThatAFreshOneTakesItBack) {
  start_dispatcher(kRoomyBudget, 2);
  dispatcher_->set_recover_after_idle_ns(1'000'000'000);  // 10 s in the service
  auto client = connect_client();
  RandomGraphSpec spec;
  const Graph graph = make_graph(spec, 84, true);
  auto engine = service_engine(*client, graph);
  Query query;
  query.sources = std::vector<VertexIndex>{4};
  const Rows want = solve_locally(graph, {4}, false);
  ASSERT_GE(fault_one_device(*client, *engine, query, want), 0);
  client->set_test_fault_flags(0);
  // While requests keep coming (gaps far below the idle time) it serves on the device left.
  for (int i = 0; i < 6; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    ASSERT_TRUE(
        testing::same_distances(solve_with(*engine, query).distances.data(), want.distances));
    EXPECT_EQ(exit_code_.load(), -1) << "request " << i;
  }
  // Idle: it ends for a fresh process (exit 3), failing nothing.
  EXPECT_TRUE(eventually([&] { return exit_code_.load() != -1; }));
  EXPECT_EQ(exit_code_.load(), service::kExitDeviceFault);
  EXPECT_EQ(header_->failed_requests.load(), 0u);
  restart_dispatcher();  // what the supervisor does: both devices serve again
  EXPECT_NE(device_state(0), service::WorkerState::kFailed);
  EXPECT_NE(device_state(1), service::WorkerState::kFailed);
  Query many;
  many.sources = {1, 2, 3};
  EXPECT_TRUE(testing::same_distances(solve_with(*engine, many).distances.data(),
                                      solve_locally(graph, {1, 2, 3}, false).distances));
  EXPECT_NE(engine->report().notes.find("rows split over 2 service workers"), std::string::npos);
  EXPECT_TRUE(eventually([&] { return all_slots_free(); }));
}

// --- 8. Dead owners ---------------------------------------------------------------------------

TEST_F(ServiceTest, SlotsOfADeadBackendAreReclaimed) {
  // A pid that no process has any more: a child that exited and was reaped.
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) _exit(0);
  ASSERT_EQ(waitpid(child, nullptr, 0), child);
  ASSERT_FALSE(service::process_alive(child));

  auto leave = [&](int index, SlotState state, long owner) {
    header_->slots[index].owner_pid = static_cast<std::int32_t>(owner);
    header_->slots[index].state.store(static_cast<std::uint32_t>(state));
  };
  leave(3, SlotState::kSubmitted, child);   // the service may still pick it up: abandoned
  leave(4, SlotState::kFilling, child);     // never submitted: free
  leave(5, SlotState::kDone, child);        // answered, never read: free
  leave(6, SlotState::kFailed, child);      // the same
  leave(7, SlotState::kFilling, getpid());  // a live owner's: kept
  leave(8, SlotState::kRunning, child);     // the service's to finish: kept
  EXPECT_EQ(service::reclaim_dead_owners(header_), 4);
  EXPECT_EQ(slot_state(3), SlotState::kAbandoned);
  EXPECT_EQ(slot_state(4), SlotState::kFree);
  EXPECT_EQ(slot_state(5), SlotState::kFree);
  EXPECT_EQ(slot_state(6), SlotState::kFree);
  EXPECT_EQ(slot_state(7), SlotState::kFilling);
  EXPECT_EQ(slot_state(8), SlotState::kRunning);
  leave(8, SlotState::kFree, 0);

  // The dispatcher frees abandoned slots when it meets them.
  start_dispatcher();
  EXPECT_TRUE(eventually([&] { return slot_state(3) == SlotState::kFree; }));

  // And reclaims by itself (its sweep): a dead backend's unread answer, and a request it
  // submitted and left (taken and failed, since its segments are gone, then freed).
  leave(9, SlotState::kDone, child);
  header_->slots[10].owner_pid = static_cast<std::int32_t>(child);
  header_->slots[10].ticket = header_->next_ticket.fetch_add(1);
  header_->slots[10].submitted_ns = service::monotonic_ns();
  service::copy_field(header_->slots[10].engine, sizeof header_->slots[10].engine, "dijkstra");
  header_->slots[10].source_count = 1;
  header_->slots[10].state.store(static_cast<std::uint32_t>(SlotState::kSubmitted));
  header_->doorbell.fetch_add(1);
  service::futex_wake_all(&header_->doorbell);
  EXPECT_TRUE(eventually(
      [&] { return slot_state(9) == SlotState::kFree && slot_state(10) == SlotState::kFree; }));
  EXPECT_EQ(slot_state(7), SlotState::kFilling);  // the live owner's is still untouched
  leave(7, SlotState::kFree, 0);

  // The service still serves.
  auto client = connect_client();
  RandomGraphSpec spec;
  const Graph graph = make_graph(spec, 61, true);
  auto engine = service_engine(*client, graph);
  Query query;
  query.sources = std::vector<VertexIndex>{5};
  EXPECT_TRUE(testing::same_distances(solve_with(*engine, query).distances.data(),
                                      solve_locally(graph, {5}, false).distances));
  EXPECT_TRUE(eventually([&] { return all_slots_free(); }));
}

// --- Segment names used again -----------------------------------------------------------------

TEST_F(ServiceTest, ABackendPidUsedAgainGetsItsOwnAnswers) {
  // A backend exits and a new one gets its pid: its segments get the same names as the old
  // one's (new inodes). The service must not answer into the old, unlinked segment.
  start_dispatcher();
  RandomGraphSpec spec;
  spec.vertices = 300;
  spec.edges = 1200;
  const Graph graph = make_graph(spec, 71, true);
  for (int round = 0; round < 3; ++round) {
    ServiceClient client(postmaster_pid_, 4242, getpid());
    ASSERT_TRUE(client.connect());
    auto engine = service_engine(client, graph);
    const VertexIndex source = static_cast<VertexIndex>(round * 7);
    Query query;
    query.sources = std::vector<VertexIndex>{source};
    query.predecessors = true;
    const Rows got = solve_with(*engine, query);
    const Rows want = solve_locally(graph, {source}, true);
    ASSERT_TRUE(testing::same_distances(got.distances.data(), want.distances)) << round;
    ASSERT_EQ(got.arcs, want.arcs) << round;
  }
}

}  // namespace
}  // namespace gpu_routing
