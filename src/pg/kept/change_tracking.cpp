// How committed changes reach kept graphs (see change_tracking.hpp).
#include "kept/change_tracking.hpp"

#include <cstdio>

#include "kept/extension_objects.hpp"

extern "C" {
#include "executor/spi.h"
#include "utils/acl.h"
}

namespace gpu_routing::pg::kept {

bool g_own_ddl = false;

namespace {

// Tables (with our trigger) this transaction changed: at commit their versions are raised; while
// it runs, its own calls on graphs reading them read privately (they see their own changes).
constexpr int kMaxChangedTables = 64;
Oid g_changed_tables[kMaxChangedTables];
int g_changed_count = 0;
bool g_changed_overflow = false;  // more than kMaxChangedTables: every tracked table of the db

// The marks this transaction set at pre-commit (TrackedTable::committing, or
// SharedState::committing_untracked), released by its commit callback, its abort or its exit.
Oid g_marked_tables[kMaxChangedTables];
int g_marked_count = 0;
bool g_marked_untracked = false;

// At pre-commit, before this transaction's changes can become visible, each changed table is
// marked committing: a reader whose snapshot already sees the changes, in the moment before the
// commit callback raises the versions, then reads privately instead of serving a form built
// before them. Call with g_shared->lock held.
void set_commit_marks() {
  if (g_changed_overflow) {
    g_shared->committing_untracked++;
    g_marked_untracked = true;
    return;
  }
  for (int c = 0; c < g_changed_count; ++c) {
    TrackedTable* t = find_tracked(g_changed_tables[c], true);
    if (t == nullptr) {
      if (!g_marked_untracked) g_shared->committing_untracked++;
      g_marked_untracked = true;
      continue;
    }
    ++t->committing;
    g_marked_tables[g_marked_count++] = t->relid;
  }
}

// Releases the marks set_commit_marks set; safe to call again. Takes the lock unless `locked`.
void release_commit_marks(bool locked) {
  if (g_shared == nullptr || (g_marked_count == 0 && !g_marked_untracked)) return;
  if (!locked) LWLockAcquire(g_shared->lock, LW_EXCLUSIVE);
  for (int m = 0; m < g_marked_count; ++m) {
    TrackedTable* t = find_tracked(g_marked_tables[m], false);
    if (t != nullptr && t->committing > 0) --t->committing;
  }
  if (g_marked_untracked && g_shared->committing_untracked > 0) g_shared->committing_untracked--;
  if (!locked) LWLockRelease(g_shared->lock);
  g_marked_count = 0;
  g_marked_untracked = false;
}

}  // namespace

bool is_base_table(char relkind) {
  return relkind == RELKIND_RELATION || relkind == RELKIND_PARTITIONED_TABLE;
}

// Adds our statement trigger to a table the graph reads, if it has none (as the registry's
// owner, after checking the caller's TRIGGER right). ENABLE ALWAYS: replicated changes count too.
void ensure_trigger(Oid relid, const char* schema) {
  if (SPI_connect() != SPI_OK_CONNECT) elog(ERROR, "SPI_connect failed");
  Oid types[2] = {OIDOID, TEXTOID};
  Datum values[2] = {ObjectIdGetDatum(relid), CStringGetTextDatum(kTriggerName)};
  // Not read-only: the command counter advances, so a trigger an earlier gpu_graph_create of the
  // same statement made is seen.
  SPI_execute_with_args("SELECT 1 FROM pg_catalog.pg_trigger WHERE tgrelid = $1 AND tgname = $2", 2,
                        types, values, nullptr, false, 1);
  const bool present = SPI_processed > 0;
  SPI_finish();
  if (present) return;
  if (pg_class_aclcheck(relid, GetUserId(), ACL_TRIGGER) != ACLCHECK_OK)
    ereport(ERROR, (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
                    errmsg("gpu_graph_create needs the TRIGGER privilege on table %s to see its "
                           "changes",
                           get_rel_name(relid)),
                    errhint("Ask its owner to GRANT TRIGGER, or register the graph with refresh "
                            "=> 'manual' and call gpu_graph_refresh after changes.")));
  const char* table =
      quote_qualified_identifier(get_namespace_name(get_rel_namespace(relid)), get_rel_name(relid));
  char sql[1024];
  g_own_ddl = true;
  PG_TRY();
  {
    snprintf(sql, sizeof sql,
             "CREATE TRIGGER %s AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON %s "
             "FOR EACH STATEMENT EXECUTE FUNCTION %s.gpu_routing_track_changes()",
             kTriggerName, table, schema);
    run_as_owner(sql, 0, nullptr, nullptr, nullptr, SPI_OK_UTILITY);
    snprintf(sql, sizeof sql, "ALTER TABLE %s ENABLE ALWAYS TRIGGER %s", table, kTriggerName);
    run_as_owner(sql, 0, nullptr, nullptr, nullptr, SPI_OK_UTILITY);
  }
  PG_FINALLY();
  { g_own_ddl = false; }
  PG_END_TRY();
}

// Drops our trigger from tables no remaining auto-refreshed graph reads.
void drop_unused_triggers(const char* schema) {
  char sql[1024];
  snprintf(sql, sizeof sql,
           "SELECT t.tgrelid FROM pg_catalog.pg_trigger t WHERE t.tgname = '%s' AND NOT EXISTS ("
           "SELECT 1 FROM %s.gpu_routing_graphs g WHERE g.refresh = 'auto' AND "
           "t.tgrelid = ANY (g.tables::oid[]))",
           kTriggerName, schema);
  const SavedUser saved = become_registry_owner();
  if (SPI_connect() != SPI_OK_CONNECT) elog(ERROR, "SPI_connect failed");
  // Not read-only: the command counter advances, so the registration just deleted is not seen.
  SPI_execute(sql, false, 0);
  const uint64 count = SPI_processed;
  Oid* relids = static_cast<Oid*>(SPI_palloc(sizeof(Oid) * (count + 1)));
  for (uint64 i = 0; i < count; ++i) {
    bool isnull;
    relids[i] =
        DatumGetObjectId(SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1, &isnull));
  }
  SPI_finish();
  restore_user(saved);
  g_own_ddl = true;
  PG_TRY();
  {
    for (uint64 i = 0; i < count; ++i) {
      const char* table = quote_qualified_identifier(
          get_namespace_name(get_rel_namespace(relids[i])), get_rel_name(relids[i]));
      snprintf(sql, sizeof sql, "DROP TRIGGER IF EXISTS %s ON %s", kTriggerName, table);
      run_as_owner(sql, 0, nullptr, nullptr, nullptr, SPI_OK_UTILITY);
    }
  }
  PG_FINALLY();
  { g_own_ddl = false; }
  PG_END_TRY();
}

// A transaction that changed one of these tables is committing: its changes may be visible to
// the caller's snapshot before the versions say so.
bool change_being_committed(const Oid* tables, int count) {
  if (g_shared->committing_untracked > 0) return true;
  for (int k = 0; k < count; ++k) {
    const TrackedTable* t = find_tracked(tables[k], false);
    if (t != nullptr && t->committing > 0) return true;
  }
  return false;
}

bool changed_in_this_transaction(const Oid* tables, int count) {
  if (g_changed_overflow) return count > 0;
  for (int i = 0; i < count; ++i)
    for (int c = 0; c < g_changed_count; ++c)
      if (g_changed_tables[c] == tables[i]) return true;
  return false;
}

void note_table_changed(Oid relid) {
  bool known = false;
  for (int i = 0; i < g_changed_count && !known; ++i) known = g_changed_tables[i] == relid;
  if (known) return;
  if (g_changed_count < kMaxChangedTables)
    g_changed_tables[g_changed_count++] = relid;
  else
    g_changed_overflow = true;
}

bool tables_changed() {
  return g_changed_count > 0 || g_changed_overflow;
}

void mark_changes_committing() {
  LWLockAcquire(g_shared->lock, LW_EXCLUSIVE);
  set_commit_marks();
  LWLockRelease(g_shared->lock);
}

// After the commit became visible to others: from now on a reader reading the versions first sees
// the new versions or builds from data that includes this commit.
void raise_versions_at_commit() {
  if (g_shared != nullptr && tables_changed()) {
    LWLockAcquire(g_shared->lock, LW_EXCLUSIVE);
    for (int i = 0; i < g_shared->tracked_count; ++i) {
      TrackedTable& t = g_shared->tracked[i];
      if (t.database != MyDatabaseId) continue;
      bool changed = g_changed_overflow;
      for (int c = 0; c < g_changed_count && !changed; ++c)
        changed = g_changed_tables[c] == t.relid;
      if (changed) ++t.version;
    }
    release_commit_marks(true);
    LWLockRelease(g_shared->lock);
  }
  release_commit_marks();
}

void release_commit_marks() {
  release_commit_marks(false);
}

void forget_changes() {
  g_changed_count = 0;
  g_changed_overflow = false;
}

}  // namespace gpu_routing::pg::kept
