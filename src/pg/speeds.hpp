// The machine's speeds auto estimates with (cost_model.hpp), as stored by gpu_routing_calibrate().
#pragma once

#include "choice/cost_model.hpp"
#include "engine/gpu.hpp"

namespace gpu_routing::pg {

// The stored speeds (read again when the file changes), or the built-in ones where none are
// stored or they were measured on other hardware; origin says which. `gpus`: the GPUs the call
// may use (their names are compared only when usable). The hardware is the CPU's model and the
// machine's processor count, not gpu_routing.threads: a session that sets another thread count
// keeps the server's speeds (the model scales the CPU engines by the threads a call uses).
MachineSpeeds current_speeds(const gpu::Availability& gpus);

}  // namespace gpu_routing::pg
