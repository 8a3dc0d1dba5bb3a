// Kept graphs, the build: a registered graph's form read from its query and written into a DSM
// segment of its own, once for every session that asks at the same time (the others wait for it).
#pragma once

#include "kept/registry.hpp"
#include "kept/sessions.hpp"

namespace gpu_routing::pg::kept {

// The form of `reg` for `directed`: mapped into this session, fresh (its tables' versions
// unchanged since its snapshot). Waits for a build in progress elsewhere; builds it otherwise.
// With `null_while_committing`, returns nullptr when a change to its tables is being committed
// (the caller reads privately): the versions may not yet cover what the caller's snapshot sees.
SessionGraph* acquire_form(const Registration& reg, bool directed, double* build_ms,
                           const char* function, bool null_while_committing = false);

}  // namespace gpu_routing::pg::kept
