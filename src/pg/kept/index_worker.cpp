// Who makes a kept graph's road index (see index_worker.hpp), and the background worker.
#include <cstring>

#include "guard.hpp"
#include "progress.hpp"

#include "kept/kept_graphs.hpp"  // (core headers: before PostgreSQL's)
#include "kept/extension_objects.hpp"
#include "kept/index_worker.hpp"
#include "kept/lifecycle.hpp"
#include "kept/road_index.hpp"

extern "C" {
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "storage/ipc.h"
#include "tcop/tcopprot.h"
#include "utils/snapmgr.h"
#include "utils/wait_event.h"
}

namespace gpu_routing::pg::kept {

namespace {

// What a worker is handed (BackgroundWorker::bgw_extra, 128 bytes): which form's index, claimed
// by which process, and where to connect.
struct IndexJob {
  int form;
  dsm_handle form_handle;
  int launcher_pid;
  Oid database;
  Oid user;
  int64 graph_id;
  bool directed;
  int customization;  // IndexCustomization of the launching call
  bool device_cpu;
  int threads;
  int test_pause_key;
  char name[64];
};
static_assert(sizeof(IndexJob) <= BGW_EXTRALEN, "an index job must fit bgw_extra");

// Starts a worker for the index of form f, whose making this process has claimed, and waits for
// the worker to take the claim over (the time to fork and attach: milliseconds). True: the claim
// is the worker's (or the worker is done with it); false: no worker could start or it stopped
// before taking the claim, which then is still this process's.
bool launch_index_worker(const Registration& reg, bool directed, int f, dsm_handle form_handle,
                         int* worker_pid) {
  BackgroundWorker worker;
  memset(&worker, 0, sizeof worker);
  worker.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
  worker.bgw_start_time = BgWorkerStart_ConsistentState;  // it only reads: standbys too
  worker.bgw_restart_time = BGW_NEVER_RESTART;
  snprintf(worker.bgw_library_name, BGW_MAXLEN, "gpu_routing");
  snprintf(worker.bgw_function_name, BGW_MAXLEN, "gpu_routing_index_worker_main");
  snprintf(worker.bgw_name, BGW_MAXLEN, "gpu_routing road index of %s", reg.name);
  snprintf(worker.bgw_type, BGW_MAXLEN, "gpu_routing index builder");
  worker.bgw_notify_pid = MyProcPid;
  IndexJob job;
  memset(&job, 0, sizeof job);
  job.form = f;
  job.form_handle = form_handle;
  job.launcher_pid = MyProcPid;
  job.database = MyDatabaseId;
  job.user = registry_owner();
  job.graph_id = reg.id;
  job.directed = directed;
  const CustomizationChoice choice = customization_choice();
  job.customization = static_cast<int>(choice.setting);
  job.device_cpu = choice.device_cpu;
  job.threads = choice.threads;
  job.test_pause_key = choice.test_pause_key;
  copy_name(job.name, sizeof job.name, reg.name);
  memcpy(worker.bgw_extra, &job, sizeof job);  // the worker reads its form from the job
  BackgroundWorkerHandle* handle = nullptr;
  if (!RegisterDynamicBackgroundWorker(&worker, &handle)) return false;
  pid_t pid = 0;
  if (WaitForBackgroundWorkerStartup(handle, &pid) != BGWH_STARTED) return false;
  *worker_pid = pid;
  // The worker takes the claim over first thing (before connecting); wait for that, or for it to
  // stop without (then the claim is still ours and this call makes the index).
  bool handed = false;
  ConditionVariablePrepareToSleep(&g_shared->form_changed);
  for (;;) {
    LWLockAcquire(g_shared->lock, LW_SHARED);
    const SharedForm& form = g_shared->forms[f];
    handed = !(form.handle == form_handle && form.index_state == kIndexBuilding &&
               form.index_builder_pid == MyProcPid);
    LWLockRelease(g_shared->lock);
    if (handed) break;
    pid_t now = 0;
    if (GetBackgroundWorkerPid(handle, &now) != BGWH_STARTED) break;
    ConditionVariableTimedSleep(&g_shared->form_changed, 10, PG_WAIT_EXTENSION);
  }
  ConditionVariableCancelSleep();
  if (handed) {
    g_building_index = -1;
    g_building_index_form = DSM_HANDLE_INVALID;
  }
  return handed;
}

}  // namespace

// The road index of `entry`'s form for this call: mapped when the form has one. When the graph
// wants one (the call named the cch engine, `asked`; the registry asks for it; or a kept order
// marks the graph) and no other process is making it: a call that asked makes it now; any other
// call hands the making to a background worker (gpu_routing_index_worker_main) and goes on with a
// search engine, so that a graph's first index (seconds on a city) holds up no call that did not
// ask for it. Where no worker can start, the call makes it itself. Until it is ready, calls use
// the search engines (use->road_index stays null). The order is reused while the topology is the
// same, so after a committed cost change the next index costs its hierarchy and customization.
void prepare_road_index(const Registration& reg, bool directed, SessionGraph* entry, bool asked,
                        KeptGraphUse* use) {
  LWLockAcquire(g_shared->lock, LW_EXCLUSIVE);
  SharedForm& form = g_shared->forms[entry->form];
  if (!(form.state == kFormReady && form.handle == entry->handle)) {
    LWLockRelease(g_shared->lock);
    return;
  }
  if (form.index_state == kIndexReady) {
    map_index(entry, form);
    use->index_handle = static_cast<unsigned>(form.index_handle);
    use->index_bytes = form.index_bytes;
    LWLockRelease(g_shared->lock);
    use->road_index = entry->index;
    return;
  }
  const SharedOrder* order = find_order(reg.id, directed);
  if (form.index_state == kIndexBuilding || !(asked || reg.road_index || order != nullptr)) {
    if (form.index_state == kIndexBuilding)
      snprintf(use->index_how, sizeof use->index_how,
               "road index being made by %s %d: a search engine meanwhile",
               form.index_in_worker ? "background worker" : "process", form.index_builder_pid);
    LWLockRelease(g_shared->lock);
    return;
  }
  claim_index(form, entry->form, false);
  const dsm_handle form_handle = form.handle;
  const OrderPlace place = order_place(order);
  LWLockRelease(g_shared->lock);

  const char* why_here = nullptr;
  if (!asked) {
    int worker_pid = 0;
    if (launch_index_worker(reg, directed, entry->form, form_handle, &worker_pid)) {
      snprintf(use->index_how, sizeof use->index_how,
               "road index handed to background worker %d: a search engine meanwhile", worker_pid);
      return;
    }
    why_here = "no background worker could make it";
  }
  make_claimed_index(reg, directed, entry, place, "this call", customization_choice(), use);
  if (why_here != nullptr && use->index_how[0] != '\0') {
    const std::string how = use->index_how;
    snprintf(use->index_how, sizeof use->index_how, "%s (%s)", how.c_str(), why_here);
  }
}

}  // namespace gpu_routing::pg::kept

// The worker's entry (bgw_function_name). It takes over the claim of the launching backend (whose
// exit or abort gives the claim back until then), connects to the graph's database as the
// registry's owner, maps the form and makes its index as a call would. SIGTERM (server shutdown,
// pg_terminate_backend) cancels it; its exit, however it ends, gives an unfinished claim back.
extern "C" PGDLLEXPORT void gpu_routing_index_worker_main(Datum) {
  using namespace gpu_routing::pg;
  using namespace gpu_routing::pg::kept;
  pqsignal(SIGTERM, die);
  BackgroundWorkerUnblockSignals();
  IndexJob job;
  memcpy(&job, MyBgworkerEntry->bgw_extra, sizeof job);
  const int f = job.form;
  if (g_shared == nullptr || f < 0 || f >= kMaxForms) proc_exit(0);
  register_exit_cleanup();
  bool ours = false;
  OrderPlace place;
  LWLockAcquire(g_shared->lock, LW_EXCLUSIVE);
  SharedForm& form = g_shared->forms[f];
  if (form.state == kFormReady && form.handle == job.form_handle &&
      form.index_state == kIndexBuilding && form.index_builder_pid == job.launcher_pid) {
    claim_index(form, f, true);
    ours = true;
  }
  LWLockRelease(g_shared->lock);
  ConditionVariableBroadcast(&g_shared->form_changed);
  if (!ours) proc_exit(0);  // the launcher gave up meanwhile

  BackgroundWorkerInitializeConnectionByOid(job.database, job.user, 0);
  SetCurrentStatementStartTimestamp();
  StartTransactionCommand();
  PushActiveSnapshot(GetTransactionSnapshot());
  char activity[128];
  snprintf(activity, sizeof activity, "making the road index of kept graph %s", job.name);
  pgstat_report_activity(STATE_RUNNING, activity);
  progress_begin("road index");
  progress_set_graph(job.name);
  Registration reg;
  read_registration(job.name, true, &reg);
  SessionGraph* entry = nullptr;
  if (reg.found && reg.id == job.graph_id && reg.unusable == nullptr) {
    LWLockAcquire(g_shared->lock, LW_EXCLUSIVE);
    if (form.state == kFormReady && form.handle == job.form_handle &&
        form.index_state == kIndexBuilding && form.index_builder_pid == MyProcPid) {
      entry = map_form(f);
      place = order_place(find_order(job.graph_id, job.directed));  // of MyDatabaseId, now set
    }
    LWLockRelease(g_shared->lock);
  }
  KeptGraphUse use;
  CustomizationChoice choice;  // the launching call's settings
  choice.setting = static_cast<IndexCustomization>(job.customization);
  choice.device_cpu = job.device_cpu;
  choice.threads = job.threads;
  choice.test_pause_key = job.test_pause_key;
  if (entry != nullptr)
    make_claimed_index(reg, job.directed, entry, place, "a background worker", choice, &use);
  else
    abandon_index_build();  // dropped, unusable or replaced meanwhile: nothing to make
  if (use.index_how[0] != '\0')
    ereport(LOG, (errmsg("gpu_routing: kept graph \"%s\": %s", job.name, use.index_how)));
  progress_end();
  PopActiveSnapshot();
  CommitTransactionCommand();
  pgstat_report_activity(STATE_IDLE, nullptr);
  proc_exit(0);
}
