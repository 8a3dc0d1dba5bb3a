// Building kept graphs' forms (see build.hpp).
#include <algorithm>
#include <cstring>
#include <memory>

#include "base/graph.hpp"
#include "choice/cost_model.hpp"
#include "guard.hpp"
#include "progress.hpp"
#include "query_reader.hpp"

#include "kept/kept_graphs.hpp"  // (core headers: before PostgreSQL's)
#include "kept/build.hpp"
#include "kept/change_log.hpp"
#include "kept/change_tracking.hpp"
#include "kept/lifecycle.hpp"

extern "C" {
#include "access/xlog.h"
#include "pgstat.h"
#include "utils/snapmgr.h"
#include "utils/wait_event.h"
}

namespace gpu_routing::pg::kept {

namespace {

struct BuiltGraph {
  Graph* graph;  // owned, freed by the caller's guarded delete
  int64 edge_rows;
  int64 change_sum;  // the change log's sum under the build's snapshot, where asked
};

// Reads the graph's query with a fresh snapshot under its search_path and builds it (with its
// reversed CSR). The caller holds no lock.
BuiltGraph read_and_build(const Registration& reg, bool directed, const char* function,
                          bool label_by_log) {
  int level = push_search_path(reg.search_path);
  // A snapshot taken now, after the versions were read: data at least as new as the label. On a
  // standby the label is the change log's sum under this very snapshot: exactly the data's.
  PushActiveSnapshot(GetTransactionSnapshot());
  const int64 change_sum = label_by_log ? change_log_sum(reg.tables, reg.table_count) : 0;
  QueryColumns edges;
  read_edge_columns(reg.edges_sql, function, true, &edges);
  PopActiveSnapshot();
  pop_search_path(level);
  const EdgeArrays arrays = edge_arrays(edges);
  BuiltGraph built{nullptr, edges.rows, change_sum};
  Failure failure;
  bool ok = guarded(&failure, [&] {
    std::unique_ptr<Graph> graph(
        new Graph(build_graph(arrays, directed, CancelToken(cancel_requested))));
    ensure_reverse(*graph);
    built.graph = graph.release();
  });
  if (!ok) raise_failure(&failure);
  return built;
}

// Builds the form `f` (claimed by this backend, state building) and publishes it.
SessionGraph* build_form(const Registration& reg, bool directed, int f, double* build_ms,
                         const char* function) {
  instr_time start;
  INSTR_TIME_SET_CURRENT(start);
  g_building_form = f;
  progress_set_graph(reg.name);
  progress_set_phase(CallPhase::kBuilding);  // reading its query and building, for the view
  BuiltGraph built =
      read_and_build(reg, directed, function, g_shared->forms[f].built_in_recovery && !reg.manual);
  Size bytes = 0;
  Failure failure;
  bool ok = guarded(&failure, [&] { bytes = graph_image_bytes(*built.graph); });
  auto free_built = [&] {
    Failure ignored;
    guarded(&ignored, [&] { delete built.graph; });
    built.graph = nullptr;
  };
  if (!ok) {
    free_built();
    raise_failure(&failure);
  }
  char problem[320], evicted[512];
  LWLockAcquire(g_shared->lock, LW_EXCLUSIVE);
  const bool fits =
      make_room(reg.name, false, bytes, f, problem, sizeof problem, evicted, sizeof evicted);
  if (fits) g_shared->forms[f].bytes = bytes;  // counted while the image is written
  LWLockRelease(g_shared->lock);
  if (evicted[0] != '\0')
    ereport(NOTICE, (errmsg("evicted from memory to make room for kept graph \"%s\": %s; they "
                            "are rebuilt when next used",
                            reg.name, evicted)));
  if (!fits) {
    free_built();
    ereport(ERROR, (errcode(ERRCODE_OUT_OF_MEMORY), errmsg("%s", problem),
                    errhint("Raise gpu_routing.graph_memory in postgresql.conf, or call with "
                            "edges_sql.")));
  }

  dsm_segment* segment = dsm_create(bytes, DSM_CREATE_NULL_IF_MAXSEGMENTS);
  if (segment == nullptr) {
    free_built();
    ereport(ERROR,
            (errcode(ERRCODE_INSUFFICIENT_RESOURCES),
             errmsg("no dynamic shared memory segment left for kept graph \"%s\"", reg.name)));
  }
  ok = guarded(&failure, [&] { write_graph_image(*built.graph, dsm_segment_address(segment)); });
  free_built();
  if (!ok) raise_failure(&failure);
  instr_time now;
  INSTR_TIME_SET_CURRENT(now);
  INSTR_TIME_SUBTRACT(now, start);
  *build_ms = INSTR_TIME_GET_MILLISEC(now);

  LWLockAcquire(g_shared->lock, LW_EXCLUSIVE);
  SharedForm& form = g_shared->forms[f];
  dsm_pin_segment(segment);
  dsm_pin_mapping(segment);
  form.handle = dsm_segment_handle(segment);
  form.state = kFormReady;
  form.builder_pid = 0;
  Graph* view = nullptr;
  EngineCache* engines = nullptr;
  ok = guarded(&failure, [&] {
    view = new Graph(view_graph_image(dsm_segment_address(segment), bytes));
    engines = new EngineCache();
  });
  form.vertices = ok ? view->vertex_count() : 0;
  form.arcs = ok ? view->arc_count() : 0;
  form.edge_rows = built.edge_rows;
  const double share = ok ? far_arc_share(view->forward) : -1;  // pages this build just wrote
  form.far_arc_share = share;
  form.change_sum = built.change_sum;
  form.built_at = GetCurrentTimestamp();
  form.last_used = form.built_at;
  form.build_ms = *build_ms;
  LWLockRelease(g_shared->lock);
  g_building_form = -1;
  ConditionVariableBroadcast(&g_shared->form_changed);
  if (!ok) raise_failure(&failure);
  // The segment's own handle, not form.handle: the lock is released, and the slot may already
  // hold another build.
  SessionGraph* slot = take_session_slot(false);
  fill_session_slot(slot, segment, view, engines, f, built.edge_rows, bytes, share);
  return slot;
}

}  // namespace

SessionGraph* acquire_form(const Registration& reg, bool directed, double* build_ms,
                           const char* function, bool null_while_committing) {
  *build_ms = 0;
  register_exit_cleanup();
  sweep_session_graphs();
  CallView view;
  view.in_recovery = RecoveryInProgress();
  if (view.in_recovery && !reg.manual) {
    // Under a snapshot of now, as a build would take: the changes replayed by the time of the call.
    PushActiveSnapshot(GetTransactionSnapshot());
    view.change_sum = change_log_sum(reg.tables, reg.table_count);
    PopActiveSnapshot();
  }
  for (;;) {
    CHECK_FOR_INTERRUPTS();
    LWLockAcquire(g_shared->lock, LW_EXCLUSIVE);
    if (null_while_committing && !reg.manual &&
        change_being_committed(reg.tables, reg.table_count)) {
      LWLockRelease(g_shared->lock);
      ConditionVariableCancelSleep();
      return nullptr;
    }
    int f = find_form(reg.id, reg.generation, directed);
    if (f >= 0 && g_shared->forms[f].state == kFormReady && form_serves(g_shared->forms[f], view)) {
      SharedForm& form = g_shared->forms[f];
      SessionGraph* entry = map_form(f);
      if (entry != nullptr) {
        form.calls++;
        form.last_used = GetCurrentTimestamp();
        LWLockRelease(g_shared->lock);
        ConditionVariableCancelSleep();
        return entry;
      }
      memset(&form, 0, sizeof form);  // its segment is gone: rebuild
      f = -1;
    }
    if (f >= 0 && g_shared->forms[f].state == kFormBuilding &&
        g_shared->forms[f].builder_pid != MyProcPid) {
      LWLockRelease(g_shared->lock);
      // Another session builds it: wait for that one build (a cancel still lands here).
      ConditionVariableTimedSleep(&g_shared->form_changed, 100, PG_WAIT_EXTENSION);
      continue;
    }
    ConditionVariableCancelSleep();
    // Absent or stale: claim a slot and build. The versions are read now, before the snapshot.
    if (f >= 0) free_form(f);
    free_older_generations(reg.id, reg.generation);
    // A free slot, else the least recently used ready form goes.
    SharedForm* claimed = free_or_oldest(
        g_shared->forms, [](const SharedForm& f) { return f.state == kFormFree; },
        [](const SharedForm& f) { return f.state == kFormReady; },
        [](const SharedForm& a, const SharedForm& b) { return a.last_used < b.last_used; });
    if (claimed == nullptr) {
      LWLockRelease(g_shared->lock);
      ereport(ERROR, (errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
                      errmsg("every one of the %d kept graph slots is being built", kMaxForms)));
    }
    const int slot = static_cast<int>(claimed - g_shared->forms);
    if (claimed->state != kFormFree) free_form(slot);
    SharedForm& form = *claimed;
    form.state = kFormBuilding;
    copy_name(form.name, sizeof form.name, reg.name);
    form.database = MyDatabaseId;
    form.graph_id = reg.id;
    form.generation = reg.generation;
    form.directed = directed;
    form.builder_pid = MyProcPid;
    form.built_in_recovery = view.in_recovery;
    form.table_count = 0;
    if (!reg.manual) {
      for (int k = 0; k < reg.table_count; ++k) {
        TrackedTable* t = find_tracked(reg.tables[k], true);
        if (t == nullptr) {
          memset(&form, 0, sizeof form);
          LWLockRelease(g_shared->lock);
          ereport(ERROR, (errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
                          errmsg("kept graphs track at most %d tables", kMaxTrackedTables)));
        }
        form.tables[form.table_count] = t->relid;
        form.table_versions[form.table_count++] = t->version;
      }
    }
    g_building_form = slot;
    LWLockRelease(g_shared->lock);
    return build_form(reg, directed, slot, build_ms, function);
  }
}

}  // namespace gpu_routing::pg::kept
