// Module entry: PG_MODULE_MAGIC and the settings. Nothing here touches CUDA: a context made in
// the postmaster would not survive fork(), so the GPU is probed lazily in each backend.
#include <string>

#include "engine/engine.hpp"
#include "guard.hpp"
#include "kept/kept_graphs.hpp"
#include "progress.hpp"
#include "retained_memory.hpp"
#include "service.hpp"
#include "settings.hpp"

#include "postgres_headers.hpp"

extern "C" {
PG_MODULE_MAGIC;
void _PG_init(void);
}

namespace gpu_routing::pg {

namespace {

int g_device = 0;  // index into kDeviceOptions
char* g_sssp_algorithm = nullptr;
char* g_apsp_algorithm = nullptr;
int g_threads = 0;
int g_max_memory_kb = 4 * 1024 * 1024;  // 4 GB
int g_block_size = 0;
int g_streams = 0;
int g_index_paths = 0;          // index into kIndexPathOptions
int g_index_customization = 0;  // IndexCustomization
// Administrators' caps on what sessions may set (superuser settings, as temp_file_limit): a
// session asking for more is refused at SET, and a call never uses more.
int g_max_threads = 0;          // 0: no cap
int g_max_memory_limit_kb = 0;  // 0: no cap

const struct config_enum_entry kIndexPathOptions[] = {
    {"rule", 0, false},
    {"hierarchy", 1, false},
    {nullptr, 0, false},
};

const struct config_enum_entry kIndexCustomizationOptions[] = {
    {"auto", static_cast<int>(IndexCustomization::kAuto), false},
    {"cpu", static_cast<int>(IndexCustomization::kCpu), false},
    {"gpu", static_cast<int>(IndexCustomization::kGpu), false},
    {nullptr, 0, false},
};

const struct config_enum_entry kDeviceOptions[] = {
    {"auto", static_cast<int>(DeviceSetting::kAuto), false},
    {"gpu", static_cast<int>(DeviceSetting::kGpu), false},
    {"cpu", static_cast<int>(DeviceSetting::kCpu), false},
    {nullptr, 0, false},
};

// Fills `list` with the engine names of a family; false if C++ failed (reported as invalid).
bool engine_list(bool many_source, char* list, std::size_t size, const char* candidate,
                 bool* known) {
  Failure failure;
  return guarded(&failure, [&] {
    std::string text;
    *known = false;
    for (const auto& name : engine_names(!many_source, many_source)) {
      if (!text.empty()) text += ", ";
      text += name;
      if (candidate != nullptr && name == candidate) *known = true;
    }
    snprintf(list, size, "%s", text.c_str());
  });
}

bool check_algorithm(char** newval, bool many_source) {
  if (*newval == nullptr || strcmp(*newval, "auto") == 0) return true;
  char list[1024];
  bool known = false;
  if (!engine_list(many_source, list, sizeof list, *newval, &known)) return false;
  if (known) return true;
  GUC_check_errdetail("\"%s\" is not a %s engine of this build.", *newval,
                      many_source ? "many-source" : "single-source");
  GUC_check_errhint("Use auto or one of: %s.", list);
  return false;
}

// SET by a session (not the configuration, ALTER ROLE or ALTER DATABASE) above the cap: refused.
bool check_threads(int* newval, void**, GucSource source) {
  if (source >= PGC_S_INTERACTIVE && g_max_threads > 0 && *newval > g_max_threads) {
    GUC_check_errdetail(
        "gpu_routing.max_threads (%d), set by an administrator, is the most a "
        "session may use.",
        g_max_threads);
    return false;
  }
  return true;
}

bool check_max_memory(int* newval, void**, GucSource source) {
  if (source >= PGC_S_INTERACTIVE && g_max_memory_limit_kb > 0 && *newval > g_max_memory_limit_kb) {
    GUC_check_errdetail(
        "gpu_routing.max_memory_limit (%d kB), set by an administrator, is the "
        "most a session may use.",
        g_max_memory_limit_kb);
    return false;
  }
  return true;
}

bool check_sssp_algorithm(char** newval, void**, GucSource) {
  return check_algorithm(newval, false);
}
bool check_apsp_algorithm(char** newval, void**, GucSource) {
  return check_algorithm(newval, true);
}

}  // namespace

const char* device_setting_name(DeviceSetting device) {
  switch (device) {
    case DeviceSetting::kGpu:
      return "gpu";
    case DeviceSetting::kCpu:
      return "cpu";
    default:
      return "auto";
  }
}

void define_settings() {
  DefineCustomEnumVariable(
      "gpu_routing.device", "Where shortest paths are computed: auto, gpu or cpu.",
      "auto uses a GPU when one is usable and the problem is large enough to gain from it, "
      "else the CPU; gpu raises an error when no GPU is usable; cpu never touches the GPU.",
      &g_device, static_cast<int>(DeviceSetting::kAuto), kDeviceOptions, PGC_USERSET, 0, nullptr,
      nullptr, nullptr);
  DefineCustomStringVariable(
      "gpu_routing.sssp_algorithm", "Engine for single-source calls (gpu_sssp, gpu_path).",
      "auto, or an engine name listed by gpu_routing_info().", &g_sssp_algorithm, "auto",
      PGC_USERSET, 0, check_sssp_algorithm, nullptr, nullptr);
  DefineCustomStringVariable(
      "gpu_routing.apsp_algorithm",
      "Engine for all-pairs and many-source calls (gpu_apsp, gpu_sssp and gpu_path with arrays).",
      "auto, or an engine name listed by gpu_routing_info().", &g_apsp_algorithm, "auto",
      PGC_USERSET, 0, check_apsp_algorithm, nullptr, nullptr);
  DefineCustomEnumVariable(
      "gpu_routing.index_paths",
      "Which path the road index (engine cch) returns where several shortest paths tie.",
      "rule: the path every engine returns (the common predecessor rule; for up to 16 targets "
      "the index settles only what their paths depend on, for more a whole tree); hierarchy: the "
      "path the hierarchy finds, one query per pair "
      "(microseconds on a city), the same cost, possibly other edges where paths tie.",
      &g_index_paths, 0, kIndexPathOptions, PGC_USERSET, 0, nullptr, nullptr, nullptr);
  DefineCustomEnumVariable(
      "gpu_routing.index_customization",
      "Where a kept graph's road index is customized: auto, cpu or gpu.",
      "The same index either way. auto: on the GPU only where this process keeps the GPU's "
      "customizer for the graph's topology (a re-customization after a committed change in a "
      "session that customized on the GPU before: New York on an H100, 7 ms against 15 ms on 16 "
      "cores), else on every core (a fresh GPU customizer, 42 ms plus a CUDA context, costs more "
      "than the CPU's whole customization); gpu: on this backend's GPU, an error where none is "
      "usable; cpu: never on the GPU. With the GPU service on, backends open no CUDA context, so "
      "the index is customized on the CPU.",
      &g_index_customization, static_cast<int>(IndexCustomization::kAuto),
      kIndexCustomizationOptions, PGC_USERSET, 0, nullptr, nullptr, nullptr);
  DefineCustomIntVariable("gpu_routing.threads",
                          "OpenMP threads of the CPU engines (0 = every core).", nullptr,
                          &g_threads, 0, 0, 1024, PGC_USERSET, 0, check_threads, nullptr, nullptr);
  DefineCustomIntVariable(
      "gpu_routing.max_memory",
      "Largest memory one call may plan to use (graph, engine buffers, results).",
      "A call that would need more is refused with an error naming the size, before it "
      "allocates. An all-pairs call over V vertices counts its V x V result.",
      &g_max_memory_kb, 4 * 1024 * 1024, 1024, INT_MAX, PGC_USERSET, GUC_UNIT_KB, check_max_memory,
      nullptr, nullptr);
  DefineCustomIntVariable(
      "gpu_routing.max_threads",
      "Most OpenMP threads a session may give the CPU engines (0 = no cap).",
      "Superusers set it (postgresql.conf, ALTER ROLE, ALTER DATABASE); a session's "
      "gpu_routing.threads above it is refused, and 0 (every core) means this many.",
      &g_max_threads, 0, 0, 1024, PGC_SUSET, 0, nullptr, nullptr, nullptr);
  DefineCustomIntVariable(
      "gpu_routing.max_memory_limit",
      "Most a session may set gpu_routing.max_memory to (0 = no cap).",
      "Superusers set it (postgresql.conf, ALTER ROLE, ALTER DATABASE); a session's "
      "gpu_routing.max_memory above it is refused, and no call plans for more.",
      &g_max_memory_limit_kb, 0, 0, INT_MAX, PGC_SUSET, GUC_UNIT_KB, nullptr, nullptr, nullptr);
  DefineCustomIntVariable(
      "gpu_routing.block_size",
      "CUDA threads per block of the GPU engines (0 = each engine's tuned default).", nullptr,
      &g_block_size, 0, 0, 1024, PGC_USERSET, 0, nullptr, nullptr, nullptr);
  DefineCustomIntVariable("gpu_routing.streams",
                          "CUDA streams of the concurrent engine (0 = its default).", nullptr,
                          &g_streams, 0, 0, 256, PGC_USERSET, 0, nullptr, nullptr, nullptr);
}

Settings current_settings() {
  Settings s;
  s.device = static_cast<DeviceSetting>(g_device);
  s.sssp_algorithm = g_sssp_algorithm != nullptr ? g_sssp_algorithm : "auto";
  s.apsp_algorithm = g_apsp_algorithm != nullptr ? g_apsp_algorithm : "auto";
  // The caps hold even where the setting came from before them (the configuration file's order,
  // a cap lowered later).
  s.threads = g_threads;
  if (g_max_threads > 0 && (s.threads == 0 || s.threads > g_max_threads)) s.threads = g_max_threads;
  int memory_kb = g_max_memory_kb;
  if (g_max_memory_limit_kb > 0 && memory_kb > g_max_memory_limit_kb)
    memory_kb = g_max_memory_limit_kb;
  s.max_memory_bytes = static_cast<std::size_t>(memory_kb) * 1024;
  s.block_size = g_block_size;
  s.streams = g_streams;
  s.index_paths_hierarchy = g_index_paths == 1;
  s.index_customization = static_cast<IndexCustomization>(g_index_customization);
  return s;
}

}  // namespace gpu_routing::pg

void _PG_init(void) {
  gpu_routing::pg::define_settings();
  gpu_routing::pg::define_retained_memory_setting();
  gpu_routing::pg::kept_graphs_init();
  gpu_routing::pg::progress_init();
  gpu_routing::pg::service_init();
  MarkGUCPrefixReserved("gpu_routing");
}
