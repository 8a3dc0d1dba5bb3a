// The change log (see change_log.hpp): written by the statement trigger, read on standbys.
#include "change_log.hpp"

#include <cstring>

#include "extension_objects.hpp"

extern "C" {
#include "access/xact.h"
#include "catalog/pg_type.h"
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
  char query[768];
  SPIPlanPtr plan;
};
KeptPlan g_fold_plan;    // READ COMMITTED writers
KeptPlan g_insert_plan;  // REPEATABLE READ and SERIALIZABLE writers
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
  if (!OidIsValid(change_log_relid())) return;
  const char* schema = extension_schema();
  // Under READ COMMITTED the new row folds in the committed rows of the table that no other
  // writer is folding (SKIP LOCKED: writers never wait for each other), so the log keeps a few
  // rows per table. REPEATABLE READ and SERIALIZABLE writers only insert: locking a row another
  // writer deleted after their snapshot would fail them with a serialization error.
  char query[768];
  const bool fold = !IsolationUsesXactSnapshot();
  if (!fold)
    snprintf(query, sizeof query,
             "INSERT INTO %s.gpu_routing_table_changes (relid, changes) VALUES ($1, 1)", schema);
  else
    snprintf(query, sizeof query,
             "WITH folded AS (DELETE FROM %s.gpu_routing_table_changes WHERE ctid = ANY (ARRAY("
             "SELECT ctid FROM %s.gpu_routing_table_changes WHERE relid = $1 "
             "FOR UPDATE SKIP LOCKED)) RETURNING changes) "
             "INSERT INTO %s.gpu_routing_table_changes (relid, changes) "
             "SELECT $1, 1 + coalesce(sum(changes), 0) FROM folded",
             schema, schema, schema);
  const SavedUser saved = become_registry_owner();
  if (SPI_connect() != SPI_OK_CONNECT) elog(ERROR, "SPI_connect failed");
  Oid types[1] = {OIDOID};
  Datum values[1] = {ObjectIdGetDatum(relid)};
  const int status = SPI_execute_plan(
      kept_plan(fold ? &g_fold_plan : &g_insert_plan, query, 1, types), values, nullptr, false, 0);
  if (status != SPI_OK_INSERT) elog(ERROR, "writing gpu_routing_table_changes failed: %d", status);
  SPI_finish();
  restore_user(saved);
  if (g_logged_count < kMaxLogged)
    g_logged[g_logged_count++] = {relid, GetCurrentSubTransactionId()};
}

int64 change_log_sum(const Oid* tables, int count) {
  if (!OidIsValid(change_log_relid())) return -1;
  const char* schema = extension_schema();
  char query[768];
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
