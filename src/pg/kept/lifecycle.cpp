// What a backend claims, and its transaction callbacks (see lifecycle.hpp).
#include "kept/lifecycle.hpp"

#include "kept/change_tracking.hpp"
#include "kept/sessions.hpp"

extern "C" {
#include "access/xact.h"
#include "storage/ipc.h"
}

namespace gpu_routing::pg::kept {

int g_building_form = -1;
int g_building_index = -1;
dsm_handle g_building_index_form = DSM_HANDLE_INVALID;

void abandon_index_build() {
  if (g_building_index < 0 || g_shared == nullptr) return;
  LWLockAcquire(g_shared->lock, LW_EXCLUSIVE);
  SharedForm& form = g_shared->forms[g_building_index];
  if (form.handle == g_building_index_form && form.index_state == kIndexBuilding &&
      form.index_builder_pid == MyProcPid) {
    form.index_state = kIndexNone;
    form.index_builder_pid = 0;
    form.index_bytes = 0;
  }
  LWLockRelease(g_shared->lock);
  g_building_index = -1;
  g_building_index_form = DSM_HANDLE_INVALID;
}

void abandon_build() {
  abandon_index_build();
  if (g_building_form < 0 || g_shared == nullptr) return;
  LWLockAcquire(g_shared->lock, LW_EXCLUSIVE);
  SharedForm& form = g_shared->forms[g_building_form];
  if (form.state == kFormBuilding && form.builder_pid == MyProcPid) memset(&form, 0, sizeof form);
  LWLockRelease(g_shared->lock);
  g_building_form = -1;
  ConditionVariableBroadcast(&g_shared->form_changed);
}

namespace {

// Graphs whose road index this transaction switched off (gpu_graph_index(name, false)): freed
// again at commit, so that an index a concurrent call made from the registry as it was before
// the commit is not kept either.
constexpr int kMaxSwitchedOff = 16;
int64 g_switched_off[kMaxSwitchedOff];
int g_switched_off_count = 0;
// Ids registered by the open transaction (their forms are dropped if it aborts).
constexpr int kMaxRegisteredInXact = 16;
int64 g_registered_in_xact[kMaxRegisteredInXact];
bool g_registered_after_write[kMaxRegisteredInXact];  // registered after the transaction wrote
int g_registered_count = 0;

void free_at(const int64* ids, int count, bool forms_too) {
  if (g_shared == nullptr || count == 0) return;
  LWLockAcquire(g_shared->lock, LW_EXCLUSIVE);
  for (int i = 0; i < count; ++i) {
    if (forms_too)
      free_forms_of(ids[i]);
    else
      free_indexes_of(ids[i]);
    free_orders_of(ids[i]);
  }
  LWLockRelease(g_shared->lock);
}

void xact_callback(XactEvent event, void*) {
  switch (event) {
    case XACT_EVENT_PRE_COMMIT:
      if (g_shared != nullptr && tables_changed()) {
        release_commit_marks();   // none should be left; never count one twice
        register_exit_cleanup();  // an exit between here and the commit releases the marks
        mark_changes_committing();
      }
      break;
    case XACT_EVENT_PRE_PREPARE:
      if (tables_changed())
        ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
                        errmsg("cannot PREPARE a transaction that changed a table of a kept graph"),
                        errhint("Commit it directly: kept graphs see changes at commit.")));
      break;
    case XACT_EVENT_COMMIT:
    case XACT_EVENT_PARALLEL_COMMIT:
      raise_versions_at_commit();
      free_at(g_switched_off, g_switched_off_count, false);
      g_switched_off_count = 0;
      g_registered_count = 0;
      forget_changes();
      break;
    case XACT_EVENT_ABORT:
    case XACT_EVENT_PARALLEL_ABORT:
      abandon_build();
      release_commit_marks();  // an error after pre-commit: nothing became visible
      // Forms built for registrations that never committed.
      free_at(g_registered_in_xact, g_registered_count, true);
      g_switched_off_count = 0;
      g_registered_count = 0;
      forget_changes();
      break;
    default:
      break;
  }
}

void subxact_callback(SubXactEvent event, SubTransactionId, SubTransactionId, void*) {
  // A build inside a savepoint or an exception block that failed there.
  if (event == SUBXACT_EVENT_ABORT_SUB) abandon_build();
}

// The process is going: its mappings and device memory go with it; only the shared counts and
// a build it left half done need putting right.
void on_backend_exit(int, Datum) {
  abandon_build();
  release_commit_marks();
  for (auto& entry : g_session)
    if (entry.used) report_device_bytes_at_exit(entry);
}

}  // namespace

namespace {
bool g_exit_registered = false;
}  // namespace

void register_exit_cleanup() {
  if (g_exit_registered) return;
  before_shmem_exit(on_backend_exit, 0);
  g_exit_registered = true;
}

void lifecycle_init() {
  RegisterXactCallback(xact_callback, nullptr);
  RegisterSubXactCallback(subxact_callback, nullptr);
}

void remember_registration(int64 id, bool wrote_before) {
  if (g_registered_count < kMaxRegisteredInXact) {
    g_registered_after_write[g_registered_count] = wrote_before;
    g_registered_in_xact[g_registered_count++] = id;
  } else if (wrote_before) {
    ereport(ERROR, (errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
                    errmsg("at most %d kept graphs may be registered or refreshed in one "
                           "transaction that wrote before",
                           kMaxRegisteredInXact)));
  }
}

bool registered_after_write(int64 id) {
  for (int i = 0; i < g_registered_count; ++i)
    if (g_registered_in_xact[i] == id && g_registered_after_write[i]) return true;
  return false;
}

void note_switched_off(int64 id) {
  if (g_switched_off_count == kMaxSwitchedOff)
    ereport(ERROR, (errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
                    errmsg("at most %d road indexes may be switched off in one transaction",
                           kMaxSwitchedOff)));
  g_switched_off[g_switched_off_count++] = id;
}

}  // namespace gpu_routing::pg::kept
