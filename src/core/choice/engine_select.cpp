#include "choice/engine_select.hpp"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <string_view>

namespace gpu_routing {

namespace {

std::string known_names(bool many_source) {
  std::string list;
  for (const auto& name : engine_names(!many_source, many_source)) {
    if (!list.empty()) list += ", ";
    list += name;
  }
  return list;
}

const EngineInfo* find_family_engine(const std::string& name, Device device, bool many_source) {
  const EngineInfo* info = find_engine(name, device);
  if (info == nullptr) return nullptr;
  if (many_source ? !info->many_source : !info->single_source) return nullptr;
  return info;
}

bool is_dense(const ProblemShape& shape) {
  double v = static_cast<double>(shape.vertices);
  return shape.arcs >= kAutoDenseDensity * v * v;
}

// auto's choice of algorithm on a device already chosen.
const char* auto_algorithm(Device device, const ProblemShape& shape, std::string& reason) {
  if (!shape.many_source) {
    if (device == Device::kCpu) {
      reason = "auto: Dijkstra on the CPU";
      return "dijkstra";
    }
    reason = "auto: near-far worklist on the GPU";
    return "near_far";
  }
  const bool dense = is_dense(shape);
  const VertexIndex dense_limit =
      device == Device::kCpu ? kAutoDenseMaxVerticesCpu : kAutoDenseMaxVerticesGpu;
  if (shape.all_pairs && dense && shape.vertices <= dense_limit) {
    reason = "auto: dense all-pairs, blocked Floyd-Warshall";
    return "blocked_fw";
  }
  if (device == Device::kCpu) {
    reason = "auto: Dijkstra from each source in parallel";
    return "dijkstra";
  }
  // near_far runs one source per thread block with no host round trips: on road networks, where
  // Bellman-Ford style engines (multi_source) need thousands of iterations, it is many times
  // faster (NY 1000 x 1000 cost matrix on an H200: 7.1 s multi_source), and it is never far behind
  // on low-diameter graphs.
  reason = "auto: many sources, one thread block each, on the GPU";
  return "near_far";
}

// auto's reasons are written into one buffer and become one string: built from temporaries (a
// label and a number each side, then their sums) one took a dozen allocations, 2% of a one-pair
// distance's backend time on the 2-core machine (perf, call_profile.sh).
class ReasonText {
 public:
  ReasonText& add(std::string_view part) {
    const std::size_t n = std::min(part.size(), sizeof text_ - 1 - length_);
    std::memcpy(text_ + length_, part.data(), n);
    length_ += n;
    return *this;
  }
  ReasonText& engine(const EngineInfo& info) {
    return add(device_label(info.device)).add(" ").add(info.name);
  }
  // Three decimals below a millisecond: a city's paths are estimated at tens of microseconds, and
  // "0.1 ms" for both sides of a near-tie said nothing of why one was chosen. std::to_chars, not
  // snprintf: glibc's printf of a double (a few hundred nanoseconds each, two or three a reason)
  // was 1.5% of a one-pair call.
  ReasonText& ms(double value) {
    const int precision = value < 1 ? 3 : value < 10 ? 1 : 0;
    const auto end = std::to_chars(text_ + length_, text_ + sizeof text_ - 1, value,
                                   std::chars_format::fixed, precision);
    if (end.ec != std::errc()) return add("? ms");
    length_ = static_cast<std::size_t>(end.ptr - text_);
    return add(" ms");
  }
  std::string str() const { return std::string(text_, length_); }

 private:
  char text_[512];
  std::size_t length_ = 0;
};

// auto by estimates: the cheapest modelled engine of the family on the devices the setting allows.
// Null where none applies (the size rules decide then).
const EngineInfo* cheapest_engine(DeviceSetting device, const ProblemShape& shape,
                                  const gpu::Availability& gpus, const AutoCosts& costs,
                                  std::string& reason) {
  const bool many = shape.many_source;
  struct Estimate {
    const EngineInfo* engine;
    double ms;
  };
  std::vector<Estimate> estimates;
  for (const auto& info : engine_table()) {
    if (many ? !info.many_source : !info.single_source) continue;
    if (device == DeviceSetting::kCpu && info.device != Device::kCpu) continue;
    if (device == DeviceSetting::kGpu && info.device != Device::kGpu) continue;
    if (info.device == Device::kGpu && !gpus.usable) continue;
    const double ms = estimate_call_ms(info, costs.shape, costs.state, costs.speeds);
    if (ms >= 0) estimates.push_back({&info, ms});
  }
  if (estimates.empty()) return nullptr;
  std::stable_sort(estimates.begin(), estimates.end(),
                   [](const Estimate& a, const Estimate& b) { return a.ms < b.ms; });
  const Estimate& best = estimates.front();
  // The alternative worth naming: the best on the other device, else the runner-up.
  const Estimate* alternative = nullptr;
  for (std::size_t i = 1; i < estimates.size() && alternative == nullptr; ++i)
    if (estimates[i].engine->device != best.engine->device) alternative = &estimates[i];
  if (alternative == nullptr && estimates.size() > 1) alternative = &estimates[1];
  ReasonText text;
  text.add("auto: ").engine(*best.engine).add(", estimated ").ms(best.ms);
  if (alternative != nullptr)
    text.add("; best alternative ")
        .engine(*alternative->engine)
        .add(", estimated ")
        .ms(alternative->ms);
  if (!gpus.usable && device != DeviceSetting::kCpu)
    text.add("; no usable GPU (").add(gpus.reason).add(")");
  text.add(" (").add(costs.speeds.origin).add(" speeds)");
  reason = text.str();
  return best.engine;
}

}  // namespace

EngineSelection select_engine(DeviceSetting device, const std::string& algorithm,
                              const ProblemShape& shape, const gpu::Availability& gpus,
                              const AutoCosts* costs) {
  const bool many = shape.many_source;
  const char* setting = many ? "gpu_routing.apsp_algorithm" : "gpu_routing.sssp_algorithm";
  if (algorithm == "cch" && shape.road_index_pending) {
    EngineSelection instead = select_engine(device, "auto", shape, gpus, costs);
    instead.reason = std::string(setting) +
                     " = cch, but the kept graph's road index is not ready (being made, or not "
                     "kept): " +
                     instead.reason;
    return instead;
  }
  EngineSelection selection;
  const bool is_auto = algorithm.empty() || algorithm == "auto";

  if (!is_auto) {
    bool known = false;
    for (const auto& name : engine_names(!many, many)) known = known || name == algorithm;
    if (!known) {
      // Name it precisely: an engine of the other family, one this build lacks, or unknown.
      std::string message = std::string(setting) + " = \"" + algorithm + "\" is not an engine";
      if (!engine_names(many, !many).empty()) {
        for (const auto& name : engine_names(many, !many))
          if (name == algorithm)
            message = std::string(setting) + " = \"" + algorithm + "\" is a " +
                      (many ? "single-source" : "many-source") + " engine";
      }
      throw RoutingError(ErrorKind::kInvalidParameter, message,
                         "Engines for " + std::string(setting) + " in this build: auto, " +
                             known_names(many) + ".");
    }
  }

  auto gpu_required = [&](const std::string& what) {
    if (!gpus.usable)
      throw RoutingError(ErrorKind::kNoDevice,
                         what + " needs a GPU, but none is usable: " + gpus.reason,
                         "Set gpu_routing.device = auto or cpu to run on the CPU.");
  };

  if (is_auto && costs != nullptr) {
    if (device == DeviceSetting::kGpu) gpu_required("gpu_routing.device = gpu");
    selection.engine = cheapest_engine(device, shape, gpus, *costs, selection.reason);
    if (selection.engine != nullptr) return selection;
  }

  Device chosen;
  switch (device) {
    case DeviceSetting::kCpu:
      chosen = Device::kCpu;
      break;
    case DeviceSetting::kGpu:
      gpu_required("gpu_routing.device = gpu");
      chosen = Device::kGpu;
      break;
    case DeviceSetting::kAuto:
    default:
      if (!is_auto) {
        // A named engine runs where it exists. Where both devices have it and a GPU is usable,
        // the device of the smaller estimate (cch on a city's kept index: microseconds on the
        // CPU, a service round trip on the GPU); on the GPU where either has no estimate.
        const EngineInfo* cpu_engine = find_family_engine(algorithm, Device::kCpu, many);
        const EngineInfo* gpu_engine = find_family_engine(algorithm, Device::kGpu, many);
        const bool on_cpu = cpu_engine != nullptr, on_gpu = gpu_engine != nullptr;
        if (on_cpu && on_gpu && gpus.usable && costs != nullptr) {
          const double cpu_ms =
              estimate_call_ms(*cpu_engine, costs->shape, costs->state, costs->speeds);
          const double gpu_ms =
              estimate_call_ms(*gpu_engine, costs->shape, costs->state, costs->speeds);
          if (cpu_ms >= 0 && gpu_ms >= 0) {
            const bool cpu_cheaper = cpu_ms <= gpu_ms;
            selection.engine = cpu_cheaper ? cpu_engine : gpu_engine;
            ReasonText text;
            text.add(setting).add(" = ").add(algorithm).add(", device auto: ");
            text.engine(*selection.engine).add(", estimated ").ms(cpu_cheaper ? cpu_ms : gpu_ms);
            text.add("; ").engine(cpu_cheaper ? *gpu_engine : *cpu_engine).add(", estimated ");
            text.ms(cpu_cheaper ? gpu_ms : cpu_ms)
                .add(" (")
                .add(costs->speeds.origin)
                .add(" speeds)");
            selection.reason = text.str();
            return selection;
          }
        }
        if (on_gpu && (gpus.usable || !on_cpu)) {
          gpu_required(std::string(setting) + " = \"" + algorithm + "\"");
          chosen = Device::kGpu;
        } else {
          chosen = Device::kCpu;
        }
      } else if (shape.road_index) {
        chosen = gpus.usable && !shape.compact_targets &&
                         shape.source_count >= kAutoIndexMaxSourcesBeforeGpu
                     ? Device::kGpu
                     : Device::kCpu;
      } else if (!gpus.usable) {
        chosen = Device::kCpu;
        selection.reason = "no usable GPU (" + gpus.reason + "); ";
      } else if (!many && shape.vertices < kAutoGpuMinVertices) {
        chosen = Device::kCpu;
        selection.reason =
            "graph below " + std::to_string(kAutoGpuMinVertices) + " vertices, the CPU is faster; ";
      } else {
        chosen = Device::kGpu;
      }
      break;
  }

  std::string name = algorithm;
  if (is_auto && shape.road_index) {
    name = "cch";
    selection.reason += "auto: the kept graph's road index is current";
    if (chosen == Device::kGpu && device == DeviceSetting::kAuto)
      selection.reason += "; " + std::to_string(kAutoIndexMaxSourcesBeforeGpu) +
                          " sources or more of whole rows: PHAST on the GPU";
  } else if (is_auto) {
    std::string why;
    name = auto_algorithm(chosen, shape, why);
    selection.reason += why;
    // A GPU engine the build lacks (work in progress) falls back to the device's others.
    if (find_family_engine(name, chosen, many) == nullptr) {
      for (const auto& info : engine_table())
        if (info.device == chosen && (many ? info.many_source : info.single_source)) {
          name = info.name;
          break;
        }
    }
  } else {
    selection.reason += std::string(setting) + " = " + algorithm;
  }
  selection.engine = find_family_engine(name, chosen, many);
  if (selection.engine == nullptr)
    throw RoutingError(ErrorKind::kInvalidParameter,
                       std::string(setting) + " = \"" + name + "\" does not run on the " +
                           (chosen == Device::kCpu ? "CPU" : "GPU"),
                       chosen == Device::kCpu
                           ? "It is a GPU engine: set gpu_routing.device = gpu or auto."
                           : "It is a CPU engine: set gpu_routing.device = cpu or auto.");
  return selection;
}

}  // namespace gpu_routing
