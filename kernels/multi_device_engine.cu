// The multi-device engine (see multi_device_engine.cuh).
#include "multi_device_engine.cuh"

#include <algorithm>
#include <exception>
#include <string>
#include <thread>
#include <vector>

#include "base/parallel.hpp"
#include "cuda_common.cuh"

namespace gpu_routing::gpu {

namespace {

class MultiDeviceEngine final : public ShortestPathEngine {
 public:
  MultiDeviceEngine(const Graph& graph, const EngineOptions& options, int engines, int devices,
                    DeviceEngineFactory make)
      : ShortestPathEngine(graph, options),
        make_(std::move(make)),
        engine_count_(engines),
        device_count_(devices) {
    // gpu_routing.max_memory bounds the whole call: each device's engine gets its share.
    share_options_ = options;
    share_options_.budget =
        MemoryBudget(options.budget.limit_bytes() / static_cast<std::size_t>(engines));
    use_device(0);
    engines_.push_back(make_(0, share_options_));
    report_ = engines_.front()->report();
    report_.device_name +=
        " and " + std::to_string(std::min(engines, devices) - 1) + " more GPU(s) for many sources";
    device_name_ = report_.device_name;
  }
  ~MultiDeviceEngine() override {
    engines_.clear();  // each engine frees its buffers with its own device current
    cudaSetDevice(0);
  }

  const char* name() const override { return engines_.front()->name(); }
  Device device() const override { return Device::kGpu; }
  int preferred_batch_size() const override {
    return engines_.front()->preferred_batch_size() * engine_count_;
  }
  bool supports_compact_targets() const override {
    return engines_.front()->supports_compact_targets();
  }
  const ShortestPathEngine& first() const { return *engines_.front(); }

  void rebind(const EngineOptions& options) override {
    ShortestPathEngine::rebind(options);
    share_options_.cancel = options.cancel;
    share_options_.budget =
        MemoryBudget(options.budget.limit_bytes() / static_cast<std::size_t>(engine_count_));
    for (auto& engine : engines_) engine->rebind(share_options_);
  }

  void solve(const SolveRequest& request) override {
    const int engines =
        request.source_count <= 1 ? 1 : std::min(engine_count_, request.source_count);
    while (static_cast<int>(engines_.size()) < engines) {
      const int device = static_cast<int>(engines_.size()) % device_count_;
      use_device(device);
      engines_.push_back(make_(device, share_options_));
    }
    const std::size_t row = request.compact_targets
                                ? static_cast<std::size_t>(std::max(request.target_count, 0))
                                : static_cast<std::size_t>(graph_.vertex_count());
    const std::size_t vertices = static_cast<std::size_t>(graph_.vertex_count());
    std::vector<SolveRequest> shares(static_cast<std::size_t>(engines), request);
    int first = 0;
    for (int e = 0; e < engines; ++e) {
      // Equal shares: the devices are alike, and each share is large enough to even out.
      const int count = request.source_count / engines + (e < request.source_count % engines);
      SolveRequest& share = shares[static_cast<std::size_t>(e)];
      share.sources = request.sources + first;
      share.source_count = count;
      if (request.target_offsets != nullptr) share.target_offsets = request.target_offsets + first;
      if (request.distances != nullptr)
        share.distances = request.distances + static_cast<std::size_t>(first) * row;
      if (request.predecessor_arcs != nullptr)
        share.predecessor_arcs =
            request.predecessor_arcs + static_cast<std::size_t>(first) * vertices;
      first += count;
    }
    std::vector<std::exception_ptr> failures(static_cast<std::size_t>(engines));
    auto run = [&](int e) {
      try {
        engines_[static_cast<std::size_t>(e)]->solve(shares[static_cast<std::size_t>(e)]);
      } catch (...) {
        failures[static_cast<std::size_t>(e)] = std::current_exception();
      }
    };
    if (engines == 1) {
      run(0);
    } else {
      std::vector<std::thread> threads;
      {
        SignalBlock block;  // worker threads never run PostgreSQL's signal handlers
        for (int e = 1; e < engines; ++e) threads.emplace_back(run, e);
      }
      run(0);
      for (auto& t : threads) t.join();
    }
    merge_reports();
    // A cancel reaches every share; report it (or the first other failure) once.
    for (const auto& failure : failures)
      if (failure) std::rethrow_exception(failure);
  }

 private:
  // Engine reports are cumulative; so is the merged one.
  void merge_reports() {
    EngineReport merged;
    merged.device_name = device_name_;
    for (const auto& e : engines_) {
      merged.transfer_ms += e->report().transfer_ms;
      merged.compute_ms = std::max(merged.compute_ms, e->report().compute_ms);
      merged.rounds += e->report().rounds;
    }
    merged.notes = engines_.front()->report().notes;
    if (engines_.size() > 1)
      merged.notes += "; many sources split over " + std::to_string(engines_.size()) + " engines";
    report_ = merged;
  }

  DeviceEngineFactory make_;
  EngineOptions share_options_;
  int engine_count_;
  int device_count_;
  std::string device_name_;
  std::vector<std::unique_ptr<ShortestPathEngine>> engines_;
};

}  // namespace

std::unique_ptr<ShortestPathEngine> make_multi_device_engine(const Graph& graph,
                                                             const EngineOptions& options,
                                                             int engines,
                                                             DeviceEngineFactory make) {
  if (options.device >= 0) {  // one device named: its engine alone
    use_device(options.device);
    return make(options.device, options);
  }
  if (engines <= 1) {
    use_device(0);
    return make(0, options);
  }
  const int devices = std::max(1, device_count());
  return std::make_unique<MultiDeviceEngine>(graph, options, engines, devices, std::move(make));
}

const ShortestPathEngine& first_device_engine(const ShortestPathEngine& engine) {
  if (const auto* multi = dynamic_cast<const MultiDeviceEngine*>(&engine)) return multi->first();
  return engine;
}

}  // namespace gpu_routing::gpu
