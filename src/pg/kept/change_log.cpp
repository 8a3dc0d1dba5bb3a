// The change log (see change_log.hpp): written by the statement trigger, read on standbys.
#include "kept/change_log.hpp"

#include <cstring>

#include "kept/extension_objects.hpp"

extern "C" {
#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/pg_type.h"
#include "storage/backendid.h"
}

namespace gpu_routing::pg {

namespace {

// The tables this transaction has logged, with the subtransaction that logged each: when that
// one aborts, its row is gone and the next change logs the table again.
constexpr int kMaxLogged = 64;
struct Logged {
  Oid relid;
  SubTransactionId subxact;
};
Logged g_logged[kMaxLogged];
int g_logged_count = 0;

// A plan kept for the backend, by query text (the text names the extension's schema).
struct KeptPlan {
  char query[384];
  SPIPlanPtr plan;
};
KeptPlan g_note_plan;
KeptPlan g_sum_plan;

SPIPlanPtr kept_plan(KeptPlan* kept, const char* query, int nargs, Oid* types) {
  if (kept->plan != nullptr && strcmp(kept->query, query) == 0) return kept->plan;
  SPIPlanPtr plan = SPI_prepare(query, nargs, types);
  if (plan == nullptr) elog(ERROR, "preparing \"%s\" failed: %d", query, SPI_result);
  if (SPI_keepplan(plan) != 0) elog(ERROR, "keeping the plan of \"%s\" failed", query);
  if (kept->plan != nullptr) SPI_freeplan(kept->plan);
  strlcpy(kept->query, query, sizeof kept->query);
  kept->plan = plan;
  return plan;
}

void xact_callback(XactEvent event, void*) {
  switch (event) {
    case XACT_EVENT_COMMIT:
    case XACT_EVENT_PARALLEL_COMMIT:
    case XACT_EVENT_ABORT:
    case XACT_EVENT_PARALLEL_ABORT:
    case XACT_EVENT_PREPARE:
      g_logged_count = 0;
      break;
    default:
      break;
  }
}

// Subtransaction ids only grow, so the ones at or above an aborted subtransaction's are it and
// its children: their rows went with it.
void subxact_callback(SubXactEvent event, SubTransactionId subxact, SubTransactionId, void*) {
  if (event != SUBXACT_EVENT_ABORT_SUB) return;
  int kept = 0;
  for (int i = 0; i < g_logged_count; ++i)
    if (g_logged[i].subxact < subxact) g_logged[kept++] = g_logged[i];
  g_logged_count = kept;
}

}  // namespace

void change_log_init() {
  RegisterXactCallback(xact_callback, nullptr);
  RegisterSubXactCallback(subxact_callback, nullptr);
}

void change_log_note(Oid relid) {
  for (int i = 0; i < g_logged_count; ++i)
    if (g_logged[i].relid == relid) return;
  // wal_level = minimal: no standby can replay this server's WAL, so none needs the log.
  if (!XLogIsNeeded() || !OidIsValid(change_log_relid())) return;
  // The row of this table and this backend's slot: a backend runs one transaction at a time, so
  // no writer ever waits on another's row, and a REPEATABLE READ or SERIALIZABLE writer always
  // sees the row's last version (its own backend's earlier, committed transaction). The update
  // touches no indexed column: a HOT update, pruned in place.
  char query[384];
  snprintf(query, sizeof query,
           "INSERT INTO %s.gpu_routing_table_changes AS c (relid, writer, changes) "
           "VALUES ($1, $2, 1) ON CONFLICT (relid, writer) DO UPDATE SET changes = c.changes + 1",
           extension_schema());
  const SavedUser saved = become_registry_owner();
  if (SPI_connect() != SPI_OK_CONNECT) elog(ERROR, "SPI_connect failed");
  Oid types[2] = {OIDOID, INT4OID};
  Datum values[2] = {ObjectIdGetDatum(relid), Int32GetDatum(MyBackendId)};
  const int status =
      SPI_execute_plan(kept_plan(&g_note_plan, query, 2, types), values, nullptr, false, 0);
  if (status != SPI_OK_INSERT) elog(ERROR, "writing gpu_routing_table_changes failed: %d", status);
  SPI_finish();
  restore_user(saved);
  if (g_logged_count < kMaxLogged)
    g_logged[g_logged_count++] = {relid, GetCurrentSubTransactionId()};
}

int64 change_log_sum(const Oid* tables, int count) {
  if (!OidIsValid(change_log_relid())) return -1;
  const char* schema = extension_schema();
  char query[384];
  snprintf(query, sizeof query,
           "SELECT coalesce(sum(changes), 0)::pg_catalog.int8 FROM %s.gpu_routing_table_changes "
           "WHERE relid = ANY ($1)",
           schema);
  Datum* elements = static_cast<Datum*>(palloc(sizeof(Datum) * (count > 0 ? count : 1)));
  for (int i = 0; i < count; ++i) elements[i] = ObjectIdGetDatum(tables[i]);
  ArrayType* array = construct_array(elements, count, OIDOID, sizeof(Oid), true, TYPALIGN_INT);
  const SavedUser saved = become_registry_owner();
  if (SPI_connect() != SPI_OK_CONNECT) elog(ERROR, "SPI_connect failed");
  Oid types[1] = {OIDARRAYOID};
  Datum values[1] = {PointerGetDatum(array)};
  // Read-only: under the caller's active snapshot, the one its data is (or would be) read with.
  const int status =
      SPI_execute_plan(kept_plan(&g_sum_plan, query, 1, types), values, nullptr, true, 1);
  if (status != SPI_OK_SELECT || SPI_processed != 1)
    elog(ERROR, "reading gpu_routing_table_changes failed: %d", status);
  bool isnull = false;
  const int64 sum =
      DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
  SPI_finish();
  restore_user(saved);
  pfree(array);
  pfree(elements);
  return isnull ? 0 : sum;
}

}  // namespace gpu_routing::pg
