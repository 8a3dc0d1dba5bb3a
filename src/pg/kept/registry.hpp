// Kept graphs, the registry: the extension's table gpu_routing_graphs, one row per kept graph of
// the database, read (as its owner: query texts are private) and checked here. Raises PostgreSQL
// errors.
#pragma once

#include "kept/forms.hpp"

namespace gpu_routing::pg::kept {

constexpr const char* kGraphPrefix = "graph:";  // edges_sql naming a kept graph

// One registration, palloc'd in the reader's memory context.
struct Registration {
  bool found;
  int64 id;
  char* name;
  Oid owner;
  char* edges_sql;
  char* search_path;
  int table_count;
  Oid tables[kMaxTablesPerGraph];
  bool manual;
  int64 generation;
  char* unusable;   // null when usable
  bool road_index;  // gpu_graph_index: the graph's forms carry a road index
};

// Reads one registration by name (by_name) or by normalized edges_sql; out->found says whether.
void read_registration(const char* key, bool by_name, Registration* out);
// The registration a graph-management call names, with the caller's rights to manage it.
Registration registration_to_manage(const char* name, const char* function);
// Errors naming what is missing: the registry is written on the primary only; kept graphs need
// the library preloaded.
void require_primary(const char* function);
void require_shared_memory(const char* function);
bool valid_graph_name(const char* name);
// Whitespace folded to single spaces, trimmed: the key calls with edges_sql are matched on.
char* normalize_sql(const char* sql);

}  // namespace gpu_routing::pg::kept
