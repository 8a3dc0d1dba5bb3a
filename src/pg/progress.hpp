// Progress of running calls, for the view gpu_routing_progress: one slot per backend in shared
// memory, written only by its own backend with a change counter (as PostgreSQL's
// PgBackendStatus), so a report costs a few stores and no lock, and readers retry a slot they
// caught mid-write. Needs shared_preload_libraries; without it every call below does nothing.
#pragma once

#include <cstdint>

namespace gpu_routing::pg {

enum class CallPhase : int {
  kNone = 0,
  kReading = 1,    // running edges_sql / combinations_sql
  kBuilding = 2,   // building the graph (a kept graph's too)
  kComputing = 3,  // the engine
  kTracing = 4,    // turning predecessors into path rows
  kWriting = 5,    // writing result rows
};

// From _PG_init: the setting gpu_routing.track_progress, and shared memory when preloaded.
void progress_init();

// The outermost gpu_routing call of this backend starts and ends; a call nested in another's
// edges_sql reports nothing of its own. progress_end() runs on success; an error clears the slot
// from the (sub)transaction abort callback, and backend exit from a shmem exit callback.
void progress_begin(const char* function);
void progress_end();
void progress_set_graph(const char* graph);  // a kept graph's name, or nullptr: "edges_sql"
void progress_set_device(const char* device);
void progress_set_phase(CallPhase phase);
void progress_set_sources(std::int64_t done, std::int64_t total);
void progress_add_rows(std::int64_t rows);

}  // namespace gpu_routing::pg
