// Kept graphs, who makes a road index: the call that asked for it, or a background worker the call
// hands it to (so that a graph's first index, seconds on a city, holds up no call that did not
// ask for it).
#pragma once

#include "kept/registry.hpp"
#include "kept/sessions.hpp"

namespace gpu_routing::pg {
struct KeptGraphUse;  // kept_graphs.hpp
}

namespace gpu_routing::pg::kept {

// The road index of `entry`'s form for this call: see index_worker.cpp.
void prepare_road_index(const Registration& reg, bool directed, SessionGraph* entry, bool asked,
                        KeptGraphUse* use);

}  // namespace gpu_routing::pg::kept
