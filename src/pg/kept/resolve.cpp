// Kept graphs' face to the rest of the extension (kept_graphs.hpp): resolving a call's edges_sql,
// the settings and callbacks, gpu_routing_info()'s lines.
#include <cstdio>
#include <cstring>

#include "engine/engine.hpp"
#include "base/graph.hpp"
#include "guard.hpp"
#include "progress.hpp"

#include "kept/kept_graphs.hpp"  // (core headers: before PostgreSQL's)
#include "kept/build.hpp"
#include "kept/change_log.hpp"
#include "kept/change_tracking.hpp"
#include "kept/extension_objects.hpp"
#include "kept/index_worker.hpp"
#include "kept/lifecycle.hpp"
#include "kept/query_reads.hpp"
#include "kept/road_index.hpp"

extern "C" {
#include "access/xact.h"
#include "access/xlog.h"
#include "utils/guc.h"
}

namespace gpu_routing::pg::kept {

int g_graph_memory_mb = 1024;

}  // namespace gpu_routing::pg::kept

namespace gpu_routing::pg {

using namespace kept;

bool kept_graphs_available() {
  return g_shared != nullptr;
}

void kept_graphs_init() {
  DefineCustomIntVariable(
      "gpu_routing.graph_memory", "Shared memory all kept graphs of the server may take.",
      "Graphs unused longest are evicted (and rebuilt when next used) to make room; a graph "
      "larger than this alone is refused.",
      &g_graph_memory_mb, 1024, 1, INT_MAX / 2, PGC_SIGHUP, GUC_UNIT_MB, nullptr, nullptr, nullptr);
  DefineCustomIntVariable(
      "gpu_routing.test_index_pause",
      "Test hook: the maker of a road index waits on this advisory lock key before keeping it.",
      "0 (the default): no wait. Else the session making a road index, or the background worker "
      "it starts, takes a shared advisory lock on this key just before keeping the index, so a "
      "test holding it can switch the index off in between. For tests; superusers only.",
      &g_test_index_pause, 0, 0, INT_MAX, PGC_SUSET, GUC_NOT_IN_SAMPLE, nullptr, nullptr, nullptr);
  lifecycle_init();
  change_log_init();
  if (process_shared_preload_libraries_in_progress) forms_shmem_init();
}

void resolve_kept_graph(const char* edges_sql, bool directed, const char* function,
                        bool road_index_asked, KeptGraphUse* use) {
  *use = KeptGraphUse();
  use->read_sql = edges_sql;
  const bool named = strncmp(edges_sql, kGraphPrefix, strlen(kGraphPrefix)) == 0;
  Registration reg;
  if (named) {
    const char* name = edges_sql + strlen(kGraphPrefix);
    if (!valid_graph_name(name))
      ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                      errmsg("\"%s\" is not a valid kept graph name", name),
                      errhint("Names are identifiers: letters, digits and _, at most 63 bytes.")));
    require_shared_memory(function);
    read_registration(name, true, &reg);
    if (!reg.found)
      ereport(ERROR,
              (errcode(ERRCODE_UNDEFINED_OBJECT),
               errmsg("%s: there is no kept graph named \"%s\" in this database", function, name),
               errhint("Create it with gpu_graph_create('%s', edges_sql); SELECT name FROM "
                       "gpu_graphs() lists them.",
                       name)));
    if (reg.unusable != nullptr)
      ereport(ERROR,
              (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
               errmsg("kept graph \"%s\" is unusable: %s", name, reg.unusable),
               errhint("Run SELECT gpu_graph_refresh('%s') once its query works again.", name)));
  } else {
    if (g_shared == nullptr || extension_schema() == nullptr) return;
    char* normalized = normalize_sql(edges_sql);
    read_registration(normalized, false, &reg);
    if (!reg.found || reg.unusable != nullptr) return;
  }
  copy_name(use->name, sizeof use->name, reg.name);
  progress_set_graph(reg.name);  // while the checks below wait for locks, the view names it
  // The caller's right to read what the graph's query reads, now; and for a matched query, that
  // it reads the same tables under the caller's search_path.
  QueryReads reads;
  int level = push_search_path(named ? reg.search_path : nullptr);
  ErrorContextCallback context;
  context.callback = [](void* name) {
    errcontext("the query of kept graph \"%s\"", static_cast<const char*>(name));
  };
  context.arg = reg.name;
  context.previous = error_context_stack;
  error_context_stack = &context;
  analyze_query(named ? reg.edges_sql : edges_sql, function, false, &reads, true);
  error_context_stack = context.previous;
  pop_search_path(level);
  if (!named && !same_tables(reads, reg)) {
    use->name[0] = '\0';
    return;
  }
  // Preparing the query locked its tables, perhaps after waiting for an ALTER or DROP to commit:
  // read the registration again, so that such a change is seen by this call.
  read_registration(reg.name, true, &reg);
  if (!reg.found || reg.unusable != nullptr) {
    if (!named) {
      use->name[0] = '\0';
      return;
    }
    ereport(ERROR,
            (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
             errmsg("kept graph \"%s\" is unusable: %s", use->name,
                    reg.found ? reg.unusable : "it was dropped"),
             errhint("Run SELECT gpu_graph_refresh('%s') once its query works again.", use->name)));
  }
  use->read_sql = reg.edges_sql;
  use->read_search_path = reg.search_path;
  const char* why_private = nullptr;
  if (reads.row_security)
    why_private = "read privately: row-level security applies to its tables";
  else if (IsolationUsesXactSnapshot())
    why_private = "read privately: REPEATABLE READ and SERIALIZABLE calls read their own snapshot";
  else if (changed_in_this_transaction(reg.tables, reg.table_count))
    why_private = "read privately: this transaction changed its tables";
  else if (registered_after_write(reg.id))
    why_private =
        "read privately: registered by this transaction after it wrote; shared after commit";
  else if (!reg.manual && RecoveryInProgress() && !OidIsValid(change_log_relid()))
    why_private =
        "read privately: on a standby, kept graphs need gpu_routing 0.5.0 or later in the "
        "database (ALTER EXTENSION gpu_routing UPDATE on the primary)";
  if (why_private != nullptr) {
    copy_name(use->how, sizeof use->how, why_private);
    return;
  }
  double build_ms = 0;
  SessionGraph* entry = acquire_form(reg, directed, &build_ms, function, true);
  if (entry == nullptr) {
    copy_name(use->how, sizeof use->how,
              "read privately: a change to its tables was being committed");
    return;
  }
  if (build_ms > 0) {
    // The call that built the form is served by it too (gpu_graph_create's build is no call).
    LWLockAcquire(g_shared->lock, LW_EXCLUSIVE);
    SharedForm& form = g_shared->forms[entry->form];
    if (form.state == kFormReady && form.handle == entry->handle) form.calls++;
    LWLockRelease(g_shared->lock);
  }
  use->graph = entry->view;
  use->engines = entry->engines;
  use->has_image = true;
  use->image_handle = static_cast<unsigned>(entry->handle);
  use->build_ms = build_ms;
  use->edge_rows = entry->edge_rows;
  use->far_arc_share = entry->far_arc_share;
  if (build_ms > 0)
    snprintf(use->how, sizeof use->how, "kept graph built by this call (%.0f ms)", build_ms);
  prepare_road_index(reg, directed, entry, road_index_asked, use);
}

void note_kept_engine(const KeptGraphUse& use) {
  if (use.graph == nullptr || g_shared == nullptr) return;
  for (auto& entry : g_session) {
    if (!entry.used || entry.view != use.graph) continue;
    // A kept GPU engine holds the graph's CSR on the device (forward, and reversed for paths; the
    // road index's GPU engine its hierarchy, of the same order); a kept CPU engine (the road
    // index's) holds nothing there.
    int64 bytes = 0;
    const ShortestPathEngine* kept = entry.engines->peek();
    if (kept != nullptr && kept->device() == Device::kGpu)
      bytes =
          static_cast<int64>(use.graph->forward.memory_bytes() + use.graph->reverse.memory_bytes());
    report_device_bytes(entry, bytes);
  }
}

void kept_graphs_info(void (*add)(void* arg, const char* name, const char* value), void* arg) {
  char text[256];
  if (g_shared == nullptr) {
    add(arg, "kept graphs", "off: gpu_routing is not in shared_preload_libraries");
    return;
  }
  int forms = 0;
  LWLockAcquire(g_shared->lock, LW_SHARED);
  for (int f = 0; f < kMaxForms; ++f)
    if (g_shared->forms[f].state == kFormReady) ++forms;
  const Size used = used_bytes();
  LWLockRelease(g_shared->lock);
  snprintf(text, sizeof text,
           "%d built forms in shared memory, %s of %s (gpu_routing.graph_memory)", forms,
           bytes_text(used).c_str(), bytes_text(graph_memory_bytes()).c_str());
  add(arg, "kept graphs", text);
  snprintf(text, sizeof text, "%d kept by this session, %llu prepared to keep since it began",
           kept_query_plans(), static_cast<unsigned long long>(kept_query_plans_prepared()));
  add(arg, "kept graph query plans", text);
}

}  // namespace gpu_routing::pg
