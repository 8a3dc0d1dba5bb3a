// gpu_routing_progress: see progress.hpp.
#include "progress.hpp"

#include <cstring>

#include "postgres_headers.hpp"

extern "C" {
#include "access/xact.h"
#include "catalog/pg_authid.h"
#include "commands/dbcommands.h"
#include "port/atomics.h"
#include "storage/backendid.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "utils/acl.h"
#include "utils/timestamp.h"

PG_FUNCTION_INFO_V1(gpu_routing_get_progress);
}

namespace gpu_routing::pg {

namespace {

// One backend's running call. Written only by that backend; `changecount` is odd while it writes.
struct ProgressSlot {
  volatile uint32 changecount;
  int pid;  // 0: no call
  Oid database;
  Oid user;
  TimestampTz started;
  int phase;
  int64 sources_done, sources_total, rows;
  char function[32];
  char graph[64];  // empty: edges_sql
  char device[96];
};

ProgressSlot* g_slots = nullptr;  // MaxBackends of them, indexed by MyBackendId - 1
int g_slot_count = 0;
shmem_request_hook_type g_previous_shmem_request = nullptr;
shmem_startup_hook_type g_previous_shmem_startup = nullptr;
bool g_track_progress = true;

ProgressSlot* g_mine = nullptr;  // this backend's slot while its outermost call runs
int g_depth = 0;                 // gpu_routing calls running in this backend (nested in edges_sql)
int g_begin_level = 0;           // transaction nest level the outermost call began at

Size slots_size(int count) {
  return MAXALIGN(sizeof(ProgressSlot) * static_cast<Size>(count));
}

void shmem_request() {
  if (g_previous_shmem_request != nullptr) g_previous_shmem_request();
  RequestAddinShmemSpace(slots_size(MaxBackends));
}

void shmem_startup() {
  if (g_previous_shmem_startup != nullptr) g_previous_shmem_startup();
  LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
  bool found = false;
  g_slots = static_cast<ProgressSlot*>(
      ShmemInitStruct("gpu_routing progress", slots_size(MaxBackends), &found));
  if (!found) memset(g_slots, 0, slots_size(MaxBackends));
  g_slot_count = MaxBackends;
  LWLockRelease(AddinShmemInitLock);
}

// The protocol of PostgreSQL's PgBackendStatus: readers see an even, unchanged counter around
// their copy, or copy again.
void begin_write(ProgressSlot* slot) {
  slot->changecount = slot->changecount + 1;
  pg_write_barrier();
}

void end_write(ProgressSlot* slot) {
  pg_write_barrier();
  slot->changecount = slot->changecount + 1;
}

void copy_text(char* target, std::size_t size, const char* text) {
  strlcpy(target, text == nullptr ? "" : text, size);
}

void clear_mine() {
  if (g_mine != nullptr) {
    begin_write(g_mine);
    g_mine->pid = 0;
    end_write(g_mine);
  }
  g_mine = nullptr;
  g_depth = 0;
}

void xact_callback(XactEvent event, void*) {
  if (event == XACT_EVENT_ABORT || event == XACT_EVENT_PARALLEL_ABORT) clear_mine();
}

// A call that began inside the aborting subtransaction is over; an outer call goes on.
void subxact_callback(SubXactEvent event, SubTransactionId, SubTransactionId, void*) {
  if (event == SUBXACT_EVENT_ABORT_SUB && g_depth > 0 &&
      g_begin_level >= GetCurrentTransactionNestLevel())
    clear_mine();
}

void exit_callback(int, Datum) {
  clear_mine();
}

const char* phase_name(int phase) {
  switch (static_cast<CallPhase>(phase)) {
    case CallPhase::kReading:
      return "reading";
    case CallPhase::kBuilding:
      return "building";
    case CallPhase::kComputing:
      return "computing";
    case CallPhase::kTracing:
      return "tracing";
    case CallPhase::kWriting:
      return "writing";
    default:
      return "starting";
  }
}

}  // namespace

void progress_init() {
  DefineCustomBoolVariable(
      "gpu_routing.track_progress", "Reports running calls in the view gpu_routing_progress.",
      "As track_activities for pg_stat_activity: only superusers may change it.", &g_track_progress,
      true, PGC_SUSET, 0, nullptr, nullptr, nullptr);
  RegisterXactCallback(xact_callback, nullptr);
  RegisterSubXactCallback(subxact_callback, nullptr);
  if (!process_shared_preload_libraries_in_progress) return;
  g_previous_shmem_request = shmem_request_hook;
  shmem_request_hook = shmem_request;
  g_previous_shmem_startup = shmem_startup_hook;
  shmem_startup_hook = shmem_startup;
}

void progress_begin(const char* function) {
  if (g_depth++ > 0) return;
  g_mine = nullptr;
  if (g_slots == nullptr || !g_track_progress || MyBackendId < 1 || MyBackendId > g_slot_count)
    return;
  static bool exit_registered = false;
  if (!exit_registered) {
    before_shmem_exit(exit_callback, 0);
    exit_registered = true;
  }
  g_begin_level = GetCurrentTransactionNestLevel();
  g_mine = &g_slots[MyBackendId - 1];
  begin_write(g_mine);
  g_mine->pid = MyProcPid;
  g_mine->database = MyDatabaseId;
  g_mine->user = GetUserId();
  g_mine->started = GetCurrentTimestamp();
  g_mine->phase = static_cast<int>(CallPhase::kReading);
  g_mine->sources_done = 0;
  g_mine->sources_total = 0;
  g_mine->rows = 0;
  copy_text(g_mine->function, sizeof g_mine->function, function);
  g_mine->graph[0] = '\0';
  g_mine->device[0] = '\0';
  end_write(g_mine);
}

void progress_end() {
  if (g_depth <= 0) return;  // cleared by an abort in between
  if (--g_depth == 0) clear_mine();
}

// The setters report only for the outermost call (g_depth == 1).
void progress_set_graph(const char* graph) {
  if (g_mine == nullptr || g_depth != 1) return;
  begin_write(g_mine);
  copy_text(g_mine->graph, sizeof g_mine->graph, graph);
  end_write(g_mine);
}

void progress_set_device(const char* device) {
  if (g_mine == nullptr || g_depth != 1) return;
  begin_write(g_mine);
  copy_text(g_mine->device, sizeof g_mine->device, device);
  end_write(g_mine);
}

void progress_set_phase(CallPhase phase) {
  if (g_mine == nullptr || g_depth != 1 || g_mine->phase == static_cast<int>(phase)) return;
  begin_write(g_mine);
  g_mine->phase = static_cast<int>(phase);
  end_write(g_mine);
}

void progress_set_sources(std::int64_t done, std::int64_t total) {
  if (g_mine == nullptr || g_depth != 1) return;
  begin_write(g_mine);
  g_mine->sources_done = done;
  g_mine->sources_total = total;
  end_write(g_mine);
}

void progress_add_rows(std::int64_t rows) {
  if (g_mine == nullptr || g_depth != 1) return;
  begin_write(g_mine);
  g_mine->rows += rows;
  end_write(g_mine);
}

}  // namespace gpu_routing::pg

using namespace gpu_routing::pg;

// Every running call the caller may see: its own role's (and roles it has the privileges of), or
// all with pg_read_all_stats, as pg_stat_activity.
extern "C" Datum gpu_routing_get_progress(PG_FUNCTION_ARGS) {
  // As pg_stat_statements: an empty view would say "nothing runs", which nobody could tell from
  // "nothing is tracked".
  if (g_slots == nullptr)
    ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
                    errmsg("gpu_routing_progress needs gpu_routing in shared_preload_libraries"),
                    errhint("Add shared_preload_libraries = 'gpu_routing' to postgresql.conf "
                            "(keeping any libraries listed there) and restart the server.")));
  InitMaterializedSRF(fcinfo, 0);
  ReturnSetInfo* rsinfo = reinterpret_cast<ReturnSetInfo*>(fcinfo->resultinfo);
  const bool see_all = has_privs_of_role(GetUserId(), ROLE_PG_READ_ALL_STATS);
  const TimestampTz now = GetCurrentTimestamp();
  for (int i = 0; i < g_slot_count; ++i) {
    ProgressSlot copy;
    for (;;) {
      const uint32 before = g_slots[i].changecount;
      pg_read_barrier();
      memcpy(&copy, const_cast<ProgressSlot*>(&g_slots[i]), sizeof copy);
      pg_read_barrier();
      if (before == g_slots[i].changecount && (before & 1) == 0) break;
      CHECK_FOR_INTERRUPTS();
    }
    if (copy.pid == 0) continue;
    if (!see_all && !has_privs_of_role(GetUserId(), copy.user)) continue;
    Datum values[12];
    bool nulls[12] = {};
    values[0] = Int32GetDatum(copy.pid);
    const char* database = get_database_name(copy.database);
    values[1] = database != nullptr ? CStringGetTextDatum(database) : (nulls[1] = true, 0);
    const char* user = GetUserNameFromId(copy.user, true);
    values[2] = user != nullptr ? CStringGetTextDatum(user) : (nulls[2] = true, 0);
    copy.function[sizeof copy.function - 1] = '\0';
    copy.graph[sizeof copy.graph - 1] = '\0';
    copy.device[sizeof copy.device - 1] = '\0';
    values[3] = CStringGetTextDatum(copy.function);
    values[4] = CStringGetTextDatum(copy.graph[0] != '\0' ? copy.graph : "edges_sql");
    values[5] = CStringGetTextDatum(phase_name(copy.phase));
    values[6] = Int64GetDatum(copy.sources_done);
    values[7] = Int64GetDatum(copy.sources_total);
    values[8] = Int64GetDatum(copy.rows);
    if (copy.device[0] != '\0')
      values[9] = CStringGetTextDatum(copy.device);
    else
      nulls[9] = true;
    values[10] = TimestampTzGetDatum(copy.started);
    Interval* elapsed = static_cast<Interval*>(palloc0(sizeof(Interval)));
    elapsed->time = now - copy.started;
    values[11] = IntervalPGetDatum(elapsed);
    tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
  }
  return (Datum)0;
}
