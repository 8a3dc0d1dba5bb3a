// Kept graphs and schema changes: the event trigger gpu_routing_watch_ddl.
#include <cstdio>
#include <cstring>

#include "kept/kept_graphs.hpp"  // (core headers: before PostgreSQL's)
#include "kept/change_tracking.hpp"
#include "kept/extension_objects.hpp"
#include "kept/query_reads.hpp"

extern "C" {
#include "access/sysattr.h"
#include "access/xact.h"
#include "catalog/pg_attribute.h"
#include "catalog/pg_class.h"
#include "commands/event_trigger.h"
#include "commands/extension.h"
#include "tcop/deparse_utility.h"
#include "utils/builtins.h"
#include "utils/resowner.h"
#include "utils/syscache.h"
}

extern "C" {
PG_FUNCTION_INFO_V1(gpu_routing_watch_ddl);
}

// The event trigger (ddl_command_end, sql_drop): a schema change to a table or view a kept graph
// reads. Transactional, as the change itself: a rolled-back ALTER leaves the graph as it was.
//   - What changes neither the rows a query reads nor what its text means (comments, indexes,
//     constraints, defaults, storage, ownership, enabling triggers; a column added, dropped,
//     renamed or retyped that the query does not read) leaves the graph as it is: its built
//     forms keep serving.
//   - A change to what it reads (a column it reads retyped or renamed, a column added to or
//     dropped from a table it reads whole, a view redefined, partitions attached or detached, a
//     table renamed or dropped where the query still finds one) makes it rebuild on next use,
//     on the primary and on its standbys (the registry's generation, which WAL carries): the
//     query is planned again now, as the graph's owner under its search_path, and where it reads
//     other tables than before they are tracked from now on.
//   - Where the query no longer plans, or the trigger that tracks changes is dropped or disabled,
//     the graph is unusable (a clear error) until gpu_graph_refresh.
namespace gpu_routing::pg::kept {
namespace {

// ALTER TABLE subcommands that change neither the rows a query reads nor what its text means:
// constraints, indexes, defaults for future rows, identities, storage, ownership, row-level
// security (a call under RLS reads privately anyway), turning triggers on. pg_restore issues
// exactly these after it has restored gpu_routing_graphs, so a restored database keeps its
// graphs as they are.
bool harmless_alter_table_subcommand(AlterTableType type) {
  switch (type) {
    case AT_AddConstraint:
#if PG_VERSION_NUM < 160000
    case AT_AddConstraintRecurse:  // ALTER TABLE without ONLY
    case AT_ValidateConstraintRecurse:
    case AT_DropConstraintRecurse:
#endif
    case AT_AddIndex:
    case AT_ReAddIndex:
    case AT_AddIndexConstraint:
    case AT_ReAddConstraint:
    case AT_ReAddDomainConstraint:
    case AT_ReAddComment:
    case AT_ReAddStatistics:
    case AT_AlterConstraint:
    case AT_ValidateConstraint:
    case AT_DropConstraint:
    case AT_ColumnDefault:
    case AT_CookedColumnDefault:
    case AT_DropNotNull:
    case AT_SetNotNull:
    case AT_CheckNotNull:
    case AT_DropExpression:  // a generated column becomes a plain one with the same values
    case AT_SetStatistics:
    case AT_SetOptions:
    case AT_ResetOptions:
    case AT_SetStorage:
    case AT_SetCompression:
    case AT_ClusterOn:
    case AT_DropCluster:
    case AT_SetLogged:
    case AT_SetUnLogged:
    case AT_SetAccessMethod:
    case AT_SetTableSpace:
    case AT_SetRelOptions:
    case AT_ResetRelOptions:
    case AT_ReplaceRelOptions:
    case AT_ChangeOwner:
    case AT_EnableTrig:
    case AT_EnableAlwaysTrig:
    case AT_EnableTrigAll:
    case AT_EnableTrigUser:
    case AT_ReplicaIdentity:
    case AT_EnableRowSecurity:
    case AT_DisableRowSecurity:
    case AT_ForceRowSecurity:
    case AT_NoForceRowSecurity:
    case AT_AddIdentity:
    case AT_SetIdentity:
    case AT_DropIdentity:
    case AT_AlterColumnGenericOptions:
      return true;
    default:
      return false;
  }
}

// What one schema change may do to the graphs that read the changed relation.
struct SchemaChange {
  Oid relid;
  char what[200];  // "ALTER TABLE public.roads", for the reasons the registry keeps
  bool check;      // plan the graphs' queries again (else the change leaves them as they are)
  bool rebuild;    // where they still plan: rebuild on next use, whatever they read
  // Where they still plan: rebuild if they read one of these columns (added, retyped, renamed)
  static constexpr int kMaxColumns = 16;
  int column_count;
  AttrNumber columns[kMaxColumns];
  bool some_column;  // a column whose number is unknown (treated as read)
  // A column dropped or renamed: the values a query still planning reads are the same, but one
  // that reads the table whole (SELECT *, a whole-row reference) gets other columns.
  bool whole_table_changed;
  bool tracking_lost;  // our trigger disabled: unusable
};

void note_column(SchemaChange* change, AttrNumber attnum) {
  change->check = true;
  if (attnum <= 0 || change->column_count == SchemaChange::kMaxColumns)
    change->some_column = true;
  else
    change->columns[change->column_count++] = attnum;
}

bool names_our_trigger(const AlterTableCmd* cmd) {
  return cmd->name != nullptr && strcmp(cmd->name, kTriggerName) == 0;
}

// Sorts an ALTER TABLE's subcommands into `change`.
void classify_alter_table(const CollectedCommand* command, SchemaChange* change) {
  if (command->d.alterTable.subcmds == NIL) {
    change->check = change->rebuild = true;
    return;
  }
  ListCell* cell;
  foreach (cell, command->d.alterTable.subcmds) {
    auto* sub = static_cast<CollectedATSubcmd*>(lfirst(cell));
    if (!IsA(sub->parsetree, AlterTableCmd)) {
      change->check = change->rebuild = true;
      continue;
    }
    const AlterTableCmd* cmd = castNode(AlterTableCmd, sub->parsetree);
    const bool ours =
        sub->address.classId == RelationRelationId && sub->address.objectId == change->relid;
    switch (cmd->subtype) {
      case AT_AddColumn:
      case AT_AddColumnRecurse:
      case AT_AddColumnToView:
      case AT_AlterColumnType:
        // A query that reads the table whole reads a new column too.
        note_column(change, ours ? sub->address.objectSubId : 0);
        break;
      case AT_DropColumn:
      case AT_DropColumnRecurse:
        break;  // sql_drop lists the column, with its number
      case AT_DisableTrig:
      case AT_EnableReplicaTrig:  // fires only for replicated changes
        if (names_our_trigger(cmd)) change->tracking_lost = true;
        break;
      case AT_DisableTrigAll:
      case AT_DisableTrigUser:
        change->tracking_lost = true;
        break;
      default:
        if (!harmless_alter_table_subcommand(cmd->subtype)) change->check = change->rebuild = true;
        break;
    }
  }
}

// Sorts a ddl_command_end command on relation `change->relid` into `change`.
void classify_command(const CollectedCommand* command, SchemaChange* change) {
  switch (command->type) {
    case SCT_AlterTable:
      classify_alter_table(command, change);
      return;
    case SCT_Simple: {
      const Node* tree = command->parsetree;
      // COMMENT ON, SECURITY LABEL, CREATE INDEX and CREATE STATISTICS name the table too.
      if (IsA(tree, CommentStmt) || IsA(tree, SecLabelStmt) || IsA(tree, IndexStmt) ||
          IsA(tree, CreateStatsStmt))
        return;
      if (IsA(tree, RenameStmt) && castNode(RenameStmt, tree)->renameType == OBJECT_COLUMN) {
        // The same values under another name (a view reading it keeps its own column names).
        change->check = change->whole_table_changed = true;
        return;
      }
      // A relation renamed or moved to another schema holds the same rows: the query must still
      // find the same tables (else it reads others now, and is rebuilt from them).
      if (IsA(tree, RenameStmt) || IsA(tree, AlterObjectSchemaStmt)) {
        change->check = true;
        return;
      }
      // Redefined views, rules: planned again, rebuilt.
      change->check = change->rebuild = true;
      return;
    }
    case SCT_Grant:
      return;  // privileges are checked on every call
    default:
      change->check = change->rebuild = true;
      return;
  }
}

// Runs `body` as `role`, in a subtransaction: false, with PostgreSQL's message in `error`, where it
// raised (the subtransaction's abort undoes what it did and restores the role).
template <typename Body>
bool as_role_in_subtransaction(Oid role, Body&& body, char* error, size_t size) {
  MemoryContext caller = CurrentMemoryContext;
  ResourceOwner owner = CurrentResourceOwner;
  BeginInternalSubTransaction(nullptr);
  MemoryContextSwitchTo(caller);
  bool done = true;
  PG_TRY();
  {
    Oid saved_user;
    int saved_context;
    GetUserIdAndSecContext(&saved_user, &saved_context);
    SetUserIdAndSecContext(role, saved_context | SECURITY_LOCAL_USERID_CHANGE);
    body();
    SetUserIdAndSecContext(saved_user, saved_context);
    ReleaseCurrentSubTransaction();
  }
  PG_CATCH();
  {
    MemoryContextSwitchTo(caller);
    ErrorData* data = CopyErrorData();
    FlushErrorState();
    RollbackAndReleaseCurrentSubTransaction();
    snprintf(error, size, "%s", data->message);
    FreeErrorData(data);
    done = false;
  }
  PG_END_TRY();
  MemoryContextSwitchTo(caller);
  CurrentResourceOwner = owner;
  return done;
}

// The graph's query planned again as its owner under its search_path: false with the planner's
// message in `error` where it no longer plans.
bool plan_again(const Registration& reg, QueryReads* reads, char* error, size_t size) {
  return as_role_in_subtransaction(
      reg.owner,
      [&] {
        int level = push_search_path(reg.search_path);
        analyze_query(reg.edges_sql, "a kept graph", false, reads);
        pop_search_path(level);
      },
      error, size);
}

// Whether the query, as planned, reads this column of `relid` (or the whole row).
bool reads_column(const QueryReads& reads, Oid relid, AttrNumber attnum) {
  for (int i = 0; i < reads.table_count; ++i) {
    if (reads.tables[i] != relid) continue;
    if (bms_is_member(0 - FirstLowInvalidHeapAttributeNumber, reads.columns[i])) return true;
    if (bms_is_member(attnum - FirstLowInvalidHeapAttributeNumber, reads.columns[i])) return true;
  }
  return false;
}

// Whether the query reads `relid` whole: a whole-row reference, or every live column (as
// SELECT * does, which read a dropped column too before it was dropped).
bool reads_whole_table(const QueryReads& reads, Oid relid) {
  for (int i = 0; i < reads.table_count; ++i) {
    if (reads.tables[i] != relid) continue;
    if (bms_is_member(0 - FirstLowInvalidHeapAttributeNumber, reads.columns[i])) return true;
    HeapTuple relation = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
    if (!HeapTupleIsValid(relation)) return false;
    const int natts = reinterpret_cast<Form_pg_class>(GETSTRUCT(relation))->relnatts;
    ReleaseSysCache(relation);
    bool every = natts > 0;
    for (AttrNumber a = 1; a <= natts && every; ++a) {
      HeapTuple tuple = SearchSysCache2(ATTNUM, ObjectIdGetDatum(relid), Int16GetDatum(a));
      if (!HeapTupleIsValid(tuple)) continue;
      const bool dropped = reinterpret_cast<Form_pg_attribute>(GETSTRUCT(tuple))->attisdropped;
      ReleaseSysCache(tuple);
      if (!dropped && !bms_is_member(a - FirstLowInvalidHeapAttributeNumber, reads.columns[i]))
        every = false;
    }
    return every;
  }
  return false;
}

// Writes the registry as its owner.
void set_unusable(const Registration& reg, const char* reason) {
  char sql[256];
  snprintf(sql, sizeof sql, "UPDATE %s.gpu_routing_graphs SET unusable = $2 WHERE id = $1",
           extension_schema());
  Oid types[2] = {INT8OID, TEXTOID};
  Datum values[2] = {Int64GetDatum(reg.id), CStringGetTextDatum(reason)};
  run_as_owner(sql, 2, types, values, nullptr, SPI_OK_UPDATE);
}

void raise_generation(const Registration& reg, const QueryReads* new_tables) {
  char sql[256];
  snprintf(sql, sizeof sql,
           "UPDATE %s.gpu_routing_graphs SET generation = generation + 1%s WHERE id = $1",
           extension_schema(), new_tables != nullptr ? ", tables = $2" : "");
  Oid types[2] = {INT8OID, REGCLASSARRAYOID};
  Datum values[2] = {Int64GetDatum(reg.id),
                     new_tables != nullptr ? tables_datum(*new_tables) : (Datum)0};
  run_as_owner(sql, new_tables != nullptr ? 2 : 1, types, values, nullptr, SPI_OK_UPDATE);
}

// The query now reads other tables: they get the trigger (as the graph's owner, who needs the
// TRIGGER privilege on them); false with the reason where that fails.
bool track_new_tables(const Registration& reg, const QueryReads& reads, char* error, size_t size) {
  return as_role_in_subtransaction(
      reg.owner,
      [&] {
        const char* schema = extension_schema();
        for (int i = 0; i < reads.table_count; ++i)
          if (is_base_table(reads.relkinds[i])) ensure_trigger(reads.tables[i], schema);
      },
      error, size);
}

// Applies one schema change to one usable graph that reads its relation.
void apply_schema_change(const SchemaChange& change, const Registration& reg) {
  char reason[1024];
  if (change.tracking_lost) {
    snprintf(reason, sizeof reason, "%s: the changes of what it reads are no longer tracked",
             change.what);
    set_unusable(reg, reason);
    return;
  }
  if (!change.check) return;
  QueryReads reads;
  char error[512];
  if (!plan_again(reg, &reads, error, sizeof error)) {
    snprintf(reason, sizeof reason, "%s changed what it reads: %s", change.what, error);
    set_unusable(reg, reason);
    return;
  }
  if (!reg.manual && !same_tables(reads, reg)) {
    if (!track_new_tables(reg, reads, error, sizeof error)) {
      snprintf(reason, sizeof reason, "%s changed which tables it reads: %s", change.what, error);
      set_unusable(reg, reason);
      return;
    }
    raise_generation(reg, &reads);
    return;
  }
  bool rebuild = change.rebuild || change.some_column;
  for (int c = 0; c < change.column_count && !rebuild; ++c)
    rebuild = reads_column(reads, change.relid, change.columns[c]);
  if (!rebuild && change.whole_table_changed) rebuild = reads_whole_table(reads, change.relid);
  if (rebuild) raise_generation(reg, nullptr);
}

// The names of the usable graphs that read `relid`, palloc'd in the caller's context.
List* graphs_reading(Oid relid) {
  MemoryContext caller = CurrentMemoryContext;
  char sql[256];
  snprintf(sql, sizeof sql,
           "SELECT name FROM %s.gpu_routing_graphs WHERE $1 = ANY (tables::oid[]) AND "
           "unusable IS NULL ORDER BY name",
           extension_schema());
  const SavedUser saved = become_registry_owner();
  if (SPI_connect() != SPI_OK_CONNECT) elog(ERROR, "SPI_connect failed");
  Oid types[1] = {OIDOID};
  Datum values[1] = {ObjectIdGetDatum(relid)};
  // Not read-only: the command counter advances, so the registry as this transaction left it.
  if (SPI_execute_with_args(sql, 1, types, values, nullptr, false, 0) != SPI_OK_SELECT)
    elog(ERROR, "reading gpu_routing_graphs failed");
  List* names = NIL;
  for (uint64 r = 0; r < SPI_processed; ++r) {
    char* name = SPI_getvalue(SPI_tuptable->vals[r], SPI_tuptable->tupdesc, 1);
    MemoryContext spi = MemoryContextSwitchTo(caller);
    names = lappend(names, pstrdup(name));
    MemoryContextSwitchTo(spi);
  }
  SPI_finish();
  restore_user(saved);
  return names;
}

}  // namespace
}  // namespace gpu_routing::pg::kept

using namespace gpu_routing::pg;
using namespace gpu_routing::pg::kept;

extern "C" Datum gpu_routing_watch_ddl(PG_FUNCTION_ARGS) {
  if (!CALLED_AS_EVENT_TRIGGER(fcinfo)) PG_RETURN_NULL();
  if (g_own_ddl) PG_RETURN_NULL();
  if (creating_extension || !OidIsValid(registry_relid())) PG_RETURN_NULL();
  EventTriggerData* data = reinterpret_cast<EventTriggerData*>(fcinfo->context);
  const bool dropping = strcmp(data->event, "sql_drop") == 0;
  // Each changed relation, with what changed it. sql_drop: dropped relations and columns (with
  // their numbers), and our trigger dropped (its table's oid); ddl_command_end: commands on
  // relations (REFRESH MATERIALIZED VIEW changes data, not structure: graphs reading a
  // materialized view are refreshed by hand, refresh => 'manual').
  const char* changed_sql =
      dropping
          ? "SELECT CASE WHEN classid = 'pg_catalog.pg_trigger'::regclass THEN "
            "pg_catalog.to_regclass(pg_catalog.quote_ident(address_names[1]) || '.' || "
            "pg_catalog.quote_ident(address_names[2]))::oid ELSE objid END AS objid, "
            "'DROP ' || object_type || ' ' || object_identity AS what, NULL::pg_catalog.text, "
            "CASE WHEN classid = 'pg_catalog.pg_class'::regclass THEN objsubid ELSE 0 END, "
            "classid = 'pg_catalog.pg_trigger'::regclass "
            "FROM pg_catalog.pg_event_trigger_dropped_objects() WHERE classid = "
            "'pg_catalog.pg_class'::regclass OR (classid = 'pg_catalog.pg_trigger'::regclass AND "
            "address_names[3] = '" GPU_ROUTING_TRACK_TRIGGER "')"
          : "SELECT objid, command_tag || ' ' || object_identity AS what, command, 0, false FROM "
            "pg_catalog.pg_event_trigger_ddl_commands() WHERE classid = "
            "'pg_catalog.pg_class'::regclass AND command_tag <> 'REFRESH MATERIALIZED VIEW'";
  MemoryContext caller = CurrentMemoryContext;
  if (SPI_connect() != SPI_OK_CONNECT) elog(ERROR, "SPI_connect failed");
  if (SPI_execute(changed_sql, true, 0) != SPI_OK_SELECT) elog(ERROR, "reading the DDL failed");
  const int count = static_cast<int>(SPI_processed);
  SchemaChange* changes = static_cast<SchemaChange*>(
      MemoryContextAllocZero(caller, sizeof(SchemaChange) * (count + 1)));
  int used = 0;
  for (int i = 0; i < count; ++i) {
    HeapTuple row = SPI_tuptable->vals[i];
    TupleDesc desc = SPI_tuptable->tupdesc;
    bool isnull;
    Datum relid = SPI_getbinval(row, desc, 1, &isnull);
    if (isnull) continue;
    Datum what = SPI_getbinval(row, desc, 2, &isnull);
    if (isnull) continue;
    SchemaChange* change = &changes[used++];
    change->relid = DatumGetObjectId(relid);
    text_to_cstring_buffer(DatumGetTextPP(what), change->what, sizeof change->what);
    const AttrNumber objsubid =
        static_cast<AttrNumber>(DatumGetInt32(SPI_getbinval(row, desc, 4, &isnull)));
    const bool trigger = DatumGetBool(SPI_getbinval(row, desc, 5, &isnull));
    if (dropping) {
      if (trigger) {
        change->tracking_lost = true;
      } else if (objsubid != 0) {
        change->check = change->whole_table_changed = true;  // a column
      } else {
        change->check = change->rebuild = true;  // a relation: where the query still plans
      }
      continue;
    }
    bool no_command;
    Datum command = SPI_getbinval(row, desc, 3, &no_command);
    if (no_command)
      change->check = change->rebuild = true;
    else
      classify_command(reinterpret_cast<CollectedCommand*>(DatumGetPointer(command)), change);
  }
  SPI_finish();
  for (int i = 0; i < used; ++i) {
    const SchemaChange& change = changes[i];
    if (!change.check && !change.tracking_lost) continue;
    ListCell* cell;
    List* names = graphs_reading(change.relid);
    foreach (cell, names) {
      Registration reg;
      read_registration(static_cast<const char*>(lfirst(cell)), true, &reg);
      if (reg.found && reg.unusable == nullptr) apply_schema_change(change, reg);
    }
  }
  PG_RETURN_NULL();
}
