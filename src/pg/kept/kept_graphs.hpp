// Kept graphs: named graphs registered in the extension's table gpu_routing_graphs, built once into
// dynamic shared memory and served to every session of the server until their tables change.
//
// The registration is the truth (transactional, dumped by pg_dump); shared memory holds only built
// forms, keyed by (database, graph id, generation, directed), and a version counter per table a
// graph reads. A statement trigger on those tables notes the change in the writing backend, whose
// commit callback raises the tables' versions after the commit became visible; a reader reads the
// versions before taking the snapshot it builds from, so a graph can be newer than its label,
// never older (../shared/STYLE.md). The PostgreSQL layer: raises errors with ereport.
#pragma once

#include <cstdint>

#include "road_index/cch.hpp"
#include "engine/engine.hpp"
#include "base/graph.hpp"

namespace gpu_routing::pg {

// From _PG_init: the settings, and shared memory and callbacks when preloaded.
void kept_graphs_init();
// True when shared memory for kept graphs exists (loaded by shared_preload_libraries).
bool kept_graphs_available();

// How a call gets its graph.
struct KeptGraphUse {
  // A kept graph served the call: the graph (valid until the next call of this session) and the
  // engines kept on it. Null: the call reads `read_sql` (its own edges_sql, or a named graph's
  // query read privately, under `read_search_path` when not null).
  const Graph* graph = nullptr;
  EngineCache* engines = nullptr;
  const char* read_sql = nullptr;
  const char* read_search_path = nullptr;
  char name[64] = {0};  // the graph's name when one was named or matched, else empty
  char how[160] = {0};  // for gpu_routing_last_run().notes: why private, or that it was built
  std::int64_t edge_rows = 0;
  double far_arc_share = -1;  // measured when the form was built (negative: not known)
  double build_ms = 0;        // this call built the shared form
  // The form's DSM segment, which the GPU service maps by name (kept_image_segment_name).
  bool has_image = false;
  unsigned image_handle = 0;
  // The graph's road index for this call (mapped from shared memory; valid until the session's
  // next call), or null; and what happened to it, for gpu_routing_last_run().notes.
  const Cch* road_index = nullptr;
  char index_how[200] = {0};
  // The road index's DSM segment and image size, which the GPU service maps by name.
  unsigned index_handle = 0;
  std::size_t index_bytes = 0;
};

// Resolves a call's edges_sql: 'graph:NAME' names a kept graph (an error when it does not exist,
// is unusable or shared memory is off); any other text is matched against the registered graphs'
// queries. Checks the caller's privileges on the graph's tables on every call.
// `road_index_asked`: the call named the cch engine, so the graph's road index is made (by this
// call) if the graph has none; it is made too when the graph had one before (a kept order).
void resolve_kept_graph(const char* edges_sql, bool directed, const char* function,
                        bool road_index_asked, KeptGraphUse* use);

// After a call on a kept graph: counts the device copy a kept GPU engine now holds for it.
void note_kept_engine(const KeptGraphUse& use);

// Runs fn with search_path set to `path` (when not null) for the current transaction level.
int push_search_path(const char* path);
void pop_search_path(int level);

// Lines for gpu_routing_info().
void kept_graphs_info(void (*add)(void* arg, const char* name, const char* value), void* arg);

}  // namespace gpu_routing::pg
