// The GPU service inside PostgreSQL (issue 10): the supervisor background worker that starts and
// restarts the service executable, the settings, and each backend's connection to it.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "engine/gpu.hpp"
#include "service/service_client.hpp"

namespace gpu_routing::pg {

// From _PG_init: the settings; the supervisor worker when preloaded and not turned off.
void service_init();

// The backend's view of the service for one call.
struct ServiceUse {
  // Engines the service runs (null: every engine runs in this backend, as without the service).
  RemoteEngines* remote = nullptr;
  // True when the service is configured for this server: then the GPUs are the service's
  // (`gpus`), and this backend never opens a CUDA context.
  bool configured = false;
  gpu::Availability gpus;
};

// Where the call's GPU work goes. `wait_for_gpu`: the call insists on a GPU (device = gpu), so a
// service still starting is waited for (a few seconds, cancel checked). `gpus_wanted`: fill
// `gpus` (a call under device = cpu reads none of it, and writing its text was 1% of a one-pair
// call). Plain C++: call it inside guarded code.
void resolve_service(bool wait_for_gpu, bool gpus_wanted, ServiceUse* use);

// Drops this backend's exchange segment with the service when it is larger than
// gpu_routing.retained_memory now allows (between calls; nothing when it has none).
void trim_service_exchange();
// True when gpu_routing.service is on for this server (preloaded, not off).
bool service_configured();
bool service_cpu_mode();  // gpu_routing.service = cpu
// The settings the service reads (device budget, batch window), into its control segment.
void write_service_settings(service::ControlHeader* header);

// The name under which the service can map a kept graph's DSM segment (empty where the server's
// dynamic_shared_memory_type is not posix: the service engine then writes its own image).
std::string kept_image_segment_name(unsigned handle);

// Lines for gpu_routing_info(). Plain C++.
void service_info(std::vector<std::pair<std::string, std::string>>* rows);

// Device bytes the service holds for a shared-memory segment (a kept graph's form), its copies
// on every GPU together, or -1 when the service is not running.
long long service_device_bytes(const std::string& segment);

}  // namespace gpu_routing::pg
