// Kept graphs (see kept_graphs.hpp): the registry's SQL functions, the shared forms, the change
// tracking and the per-session mappings.
#include "kept_graphs.hpp"
#include "settings.hpp"
#include "service.hpp"
#include "change_log.hpp"
#include "extension_objects.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>

#include "road_index/cch.hpp"
#include "engine/gpu.hpp"
#include "guard.hpp"
#include "progress.hpp"
#include "query_reader.hpp"

#include "postgres_headers.hpp"

extern "C" {
#include "access/genam.h"
#include "access/sysattr.h"
#include "access/table.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "storage/latch.h"
#include "tcop/tcopprot.h"
#include "catalog/indexing.h"
#include "catalog/pg_extension.h"
#include "utils/fmgroids.h"
#include "utils/rel.h"
#include "catalog/namespace.h"
#include "catalog/pg_attribute.h"
#include "catalog/pg_authid.h"
#include "catalog/pg_class.h"
#include "commands/event_trigger.h"
#include "commands/extension.h"
#include "commands/trigger.h"
#include "executor/executor.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "storage/condition_variable.h"
#include "storage/dsm.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "tcop/deparse_utility.h"
#include "utils/acl.h"
#include "utils/plancache.h"
#include "utils/resowner.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"
#include "utils/wait_event.h"
}

extern "C" {
PG_FUNCTION_INFO_V1(gpu_graph_create);
PG_FUNCTION_INFO_V1(gpu_graph_refresh);
PG_FUNCTION_INFO_V1(gpu_graph_drop);
PG_FUNCTION_INFO_V1(gpu_graph_index);
PG_FUNCTION_INFO_V1(gpu_graphs);
PG_FUNCTION_INFO_V1(gpu_routing_track_changes);
PG_FUNCTION_INFO_V1(gpu_routing_watch_ddl);
}

namespace gpu_routing::pg {

namespace {

constexpr int kMaxForms = 128;          // built forms in shared memory, all databases
constexpr int kMaxTablesPerGraph = 32;  // tables and views one graph's query reads
constexpr int kMaxTrackedTables = 1024;
constexpr int kMaxSessionGraphs = 8;  // kept graphs one session keeps mapped
constexpr const char* kGraphPrefix = "graph:";
#define GPU_ROUTING_TRACK_TRIGGER "gpu_routing_track_changes"
constexpr const char* kTriggerName = GPU_ROUTING_TRACK_TRIGGER;

enum FormState : int { kFormFree = 0, kFormBuilding = 1, kFormReady = 2 };
enum IndexState : int { kIndexNone = 0, kIndexBuilding = 1, kIndexReady = 2 };

// One built (or building) form of a registered graph.
struct SharedForm {
  int state;
  char name[64];
  Oid database;
  int64 graph_id;
  int64 generation;
  bool directed;
  int builder_pid;
  dsm_handle handle;
  Size bytes;
  int64 vertices, arcs, edge_rows;
  int table_count;  // 0 for refresh => 'manual': never stale
  Oid tables[kMaxTablesPerGraph];
  uint64 table_versions[kMaxTablesPerGraph];
  TimestampTz built_at, last_used;
  double build_ms;
  int64 calls;
  int64 device_bytes;  // held by sessions' kept GPU engines (one device copy per session for now)
  // The road index of this form (a customized contraction hierarchy image, Cch::write_image),
  // made by the first call that wants it; never outlives its form.
  int index_state;
  int index_builder_pid;
  bool index_in_worker;  // the builder is a background worker (gpu_routing_index_worker_main)
  dsm_handle index_handle;
  Size index_bytes;
  double index_order_ms;  // 0 when the order was reused from the graph's earlier form
  double index_hierarchy_ms, index_customization_ms;
  bool index_on_gpu;  // customized on the GPU (gpu_routing.index_customization)
  // Built during recovery (a hot standby), where no commit raises the tables' versions: labelled
  // instead by the change log's sum under the build's snapshot (change_log.hpp). Never served
  // once recovery has ended, since the promoted server's versions count its own commits only.
  bool built_in_recovery;
  int64 change_sum;
};

// The contraction order of a graph's road index, kept apart from its forms: a committed change
// replaces the form (and its index), and the next index reuses the order while the topology is
// the same (only the hierarchy and the customization are made again). Its presence is what marks
// a graph as wanting an index. The vertices by rank, as vertex ids (int64).
struct SharedOrder {
  bool used;
  char name[64];  // the graph's, for the NOTICE when it is evicted
  Oid database;
  int64 graph_id;
  bool directed;
  uint64 fingerprint;  // topology_key() of the graph it was made for
  int64 vertices;
  dsm_handle handle;
  Size bytes;
  // The hierarchy's topology image (Cch::write_topology_image) after the order's vertex ids in
  // the same segment; 0 bytes: none (the hierarchy is built again from the order).
  Size topology_offset;
  Size topology_bytes;
  double order_ms;
  TimestampTz made_at;
  TimestampTz last_used;  // made, or an index made from it: eviction goes by this
};

struct TrackedTable {
  Oid database;
  Oid relid;
  uint64 version;
  // Transactions between their pre-commit and their commit callback that changed this table.
  // While any is, its change may be visible to a snapshot but not yet in `version`: no form of
  // the table is served (calls read privately).
  int committing;
};

struct SharedState {
  LWLock* lock;
  ConditionVariable form_changed;  // a build finished or was abandoned
  int tracked_count;
  int committing_untracked;  // committing transactions whose tables could not all be marked
  TrackedTable tracked[kMaxTrackedTables];
  SharedForm forms[kMaxForms];
  SharedOrder orders[kMaxForms];
};

SharedState* g_shared = nullptr;
shmem_request_hook_type g_previous_shmem_request = nullptr;
shmem_startup_hook_type g_previous_shmem_startup = nullptr;
int g_graph_memory_mb = 1024;
// gpu_routing.test_index_pause: a test's advisory lock key that the maker of a road index waits on
// (shared) before keeping it, so that a test can switch the index off in between; 0: none.
int g_test_index_pause = 0;

// --- Backend-local state -----------------------------------------------------------------------

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

// Forms this backend is building (cleared on error and at exit) and ids registered by the open
// transaction (their forms are dropped if it aborts).
int g_building_form = -1;
// The form whose road index this backend is making (its handle identifies the form), or -1.
int g_building_index = -1;
dsm_handle g_building_index_form = DSM_HANDLE_INVALID;
// Graphs whose road index this transaction switched off (gpu_graph_index(name, false)): freed
// again at commit, so that an index a concurrent call made from the registry as it was before
// the commit is not kept either.
constexpr int kMaxSwitchedOff = 16;
int64 g_switched_off[kMaxSwitchedOff];
int g_switched_off_count = 0;
constexpr int kMaxRegisteredInXact = 16;
int64 g_registered_in_xact[kMaxRegisteredInXact];
bool g_registered_after_write[kMaxRegisteredInXact];  // registered after the transaction wrote
int g_registered_count = 0;

bool g_own_ddl = false;  // the event trigger ignores our own CREATE TRIGGER / ALTER TABLE

// A kept graph this session has mapped, with the engines kept on it.
struct SessionGraph {
  bool used;
  dsm_handle handle;
  dsm_segment* segment;
  Graph* view;
  EngineCache* engines;
  int form;
  int64 device_bytes;  // what this session reported into the form's device_bytes
  int64 edge_rows;     // of the form as mapped (the slot may hold another form later)
  Size bytes;
  // The form's road index, mapped (null until a call needs it), and its segment's handle (an
  // index removed by gpu_graph_index(name, false) and made again is another segment).
  dsm_segment* index_segment;
  Cch* index;
  dsm_handle index_handle;
};
SessionGraph g_session[kMaxSessionGraphs];

// --- Helpers -----------------------------------------------------------------------------------

void copy_name(char* target, size_t size, const char* text) {
  snprintf(target, size, "%s", text);
}

Size shared_size() {
  return MAXALIGN(sizeof(SharedState));
}

void shmem_request() {
  if (g_previous_shmem_request != nullptr) g_previous_shmem_request();
  RequestAddinShmemSpace(shared_size());
  RequestNamedLWLockTranche("gpu_routing", 1);
}

void shmem_startup() {
  if (g_previous_shmem_startup != nullptr) g_previous_shmem_startup();
  LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
  bool found = false;
  g_shared =
      static_cast<SharedState*>(ShmemInitStruct("gpu_routing kept graphs", shared_size(), &found));
  if (!found) {
    memset(g_shared, 0, sizeof(SharedState));
    g_shared->lock = &(GetNamedLWLockTranche("gpu_routing"))->lock;
    ConditionVariableInit(&g_shared->form_changed);
  }
  LWLockRelease(AddinShmemInitLock);
}

Size graph_memory_bytes() {
  return static_cast<Size>(g_graph_memory_mb) * 1024 * 1024;
}

std::string bytes_text(Size bytes) {
  return format_bytes(bytes);
}

// The registry is written on the primary only; a standby replays it (and builds its own forms).
void require_primary(const char* function) {
  if (!RecoveryInProgress()) return;
  ereport(ERROR, (errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
                  errmsg("%s cannot run on a hot standby", function),
                  errdetail("Kept graphs are registered in the primary's tables, which a standby "
                            "only replays."),
                  errhint("Run it on the primary: the change reaches every standby through WAL, "
                          "and each standby builds its own copy of the graph on first use.")));
}

void require_shared_memory(const char* function) {
  if (g_shared != nullptr) return;
  ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
                  errmsg("%s: kept graphs need gpu_routing in shared_preload_libraries", function),
                  errdetail("Kept graphs and their road indexes live in the server's shared "
                            "memory, which only a library loaded at server start can have."),
                  errhint("Add shared_preload_libraries = 'gpu_routing' to postgresql.conf "
                          "(keeping any libraries listed there) and restart the server; calls "
                          "with edges_sql work without it.")));
}

bool valid_graph_name(const char* name) {
  const size_t n = strlen(name);
  if (n == 0 || n > 63) return false;
  if (!(isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_')) return false;
  for (size_t i = 1; i < n; ++i)
    if (!(isalnum(static_cast<unsigned char>(name[i])) || name[i] == '_')) return false;
  return true;
}

// Whitespace folded to single spaces, trimmed: the key calls with edges_sql are matched on.
char* normalize_sql(const char* sql) {
  const size_t n = strlen(sql);
  char* out = static_cast<char*>(palloc(n + 1));
  size_t o = 0;
  bool space = false;
  for (size_t i = 0; i < n; ++i) {
    if (isspace(static_cast<unsigned char>(sql[i]))) {
      space = o > 0;
      continue;
    }
    if (space) out[o++] = ' ';
    space = false;
    out[o++] = sql[i];
  }
  out[o] = '\0';
  return out;
}

// --- The registry (SPI) -----------------------------------------------------------------------

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

// The registry lookups' plans, kept for the backend by query text (the text names the extension's
// schema and the installed version's columns, so a changed installation gets plans of its own).
// Every call with a kept graph reads its registration: planned each time, that was a fifth of a
// path query on Rome's road index (perf, 2-core machine: parse, analyse and plan of this SELECT).
// PostgreSQL's plan cache replans a kept plan when the registry table changes.
struct RegistryPlan {
  char query[512];
  SPIPlanPtr plan;
};
RegistryPlan g_registry_plans[4];

// The kept plan of `query`, prepared and kept on first use (inside SPI_connect).
SPIPlanPtr registry_plan(const char* query, Oid* types) {
  for (RegistryPlan& kept : g_registry_plans)
    if (kept.plan != nullptr && strcmp(kept.query, query) == 0) return kept.plan;
  SPIPlanPtr plan = SPI_prepare(query, 1, types);
  if (plan == nullptr)
    elog(ERROR, "preparing the gpu_routing_graphs lookup failed: %d", SPI_result);
  // Full (an installation changed several times in one session): the first slot's plan goes.
  RegistryPlan* slot = &g_registry_plans[0];
  for (RegistryPlan& kept : g_registry_plans)
    if (kept.plan == nullptr) {
      slot = &kept;
      break;
    }
  if (slot->plan != nullptr) SPI_freeplan(slot->plan);
  slot->plan = nullptr;
  if (SPI_keepplan(plan) != 0) elog(ERROR, "keeping the gpu_routing_graphs lookup failed");
  strlcpy(slot->query, query, sizeof slot->query);
  slot->plan = plan;
  return plan;
}

// Reads one registration by name (by_name) or by normalized edges_sql, as the registry's owner
// (other roles may not read the registry: query texts are private, 0.5.0). Palloc'd in the
// caller's context.
void read_registration(const char* key, bool by_name, Registration* out) {
  memset(out, 0, sizeof *out);
  const char* schema = extension_schema();
  if (schema == nullptr) return;
  // A database still on gpu_routing 0.1.0 (the library is updated first, the SQL objects by
  // ALTER EXTENSION UPDATE) has no registry: no graph matches its queries, none can be named.
  if (!OidIsValid(registry_relid())) {
    if (by_name)
      ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
                      errmsg("kept graphs need gpu_routing 0.2.0 or later in this database"),
                      errhint("Update the extension: ALTER EXTENSION gpu_routing UPDATE.")));
    return;
  }
  MemoryContext caller = CurrentMemoryContext;
  if (SPI_connect() != SPI_OK_CONNECT) elog(ERROR, "SPI_connect failed");
  char query[512];
  snprintf(query, sizeof query,
           "SELECT id, name, owner::oid, edges_sql, search_path, tables::oid[], refresh = 'manual',"
           " generation, unusable, %s FROM %s.gpu_routing_graphs WHERE %s",
           road_index_column(), schema,
           by_name ? "name = $1" : "md5(normalized_sql) = md5($1) AND normalized_sql = $1");
  Oid types[1] = {TEXTOID};
  Datum values[1] = {CStringGetTextDatum(key)};
  const SavedUser saved = become_registry_owner();
  // Not read-only: the command counter advances, so a registration this transaction just wrote
  // is seen.
  int status = SPI_execute_plan(registry_plan(query, types), values, nullptr, false, 2);
  restore_user(saved);
  if (status != SPI_OK_SELECT) elog(ERROR, "reading gpu_routing_graphs failed: %d", status);
  if (SPI_processed >= 1) {
    HeapTuple row = SPI_tuptable->vals[0];
    TupleDesc desc = SPI_tuptable->tupdesc;
    bool isnull;
    MemoryContext spi = MemoryContextSwitchTo(caller);
    out->found = true;
    out->id = DatumGetInt64(SPI_getbinval(row, desc, 1, &isnull));
    out->name = TextDatumGetCString(SPI_getbinval(row, desc, 2, &isnull));
    out->owner = DatumGetObjectId(SPI_getbinval(row, desc, 3, &isnull));
    out->edges_sql = TextDatumGetCString(SPI_getbinval(row, desc, 4, &isnull));
    out->search_path = TextDatumGetCString(SPI_getbinval(row, desc, 5, &isnull));
    ArrayType* tables = DatumGetArrayTypeP(SPI_getbinval(row, desc, 6, &isnull));
    Datum* elements;
    bool* nulls;
    int count;
    deconstruct_array(tables, OIDOID, sizeof(Oid), true, TYPALIGN_INT, &elements, &nulls, &count);
    out->table_count = std::min(count, kMaxTablesPerGraph);
    for (int i = 0; i < out->table_count; ++i) out->tables[i] = DatumGetObjectId(elements[i]);
    out->manual = DatumGetBool(SPI_getbinval(row, desc, 7, &isnull));
    out->generation = DatumGetInt64(SPI_getbinval(row, desc, 8, &isnull));
    Datum unusable = SPI_getbinval(row, desc, 9, &isnull);
    out->unusable = isnull ? nullptr : TextDatumGetCString(unusable);
    out->road_index = DatumGetBool(SPI_getbinval(row, desc, 10, &isnull));
    MemoryContextSwitchTo(spi);
  }
  SPI_finish();
}

// --- What a query reads ------------------------------------------------------------------------

struct QueryReads {
  int table_count;
  Oid tables[kMaxTablesPerGraph];
  char relkinds[kMaxTablesPerGraph];
  bool row_security;      // RLS policies apply to the caller
  char untrackable[256];  // why changes cannot be tracked (empty: they can)
  // The columns read of each table (RangeTblEntry::selectedCols: attribute numbers offset by
  // FirstLowInvalidHeapAttributeNumber, 0 the whole row), in the caller's memory context.
  Bitmapset* columns[kMaxTablesPerGraph];
};

// The index of `relid` in reads->tables, added if new.
int add_table(QueryReads* reads, Oid relid, char relkind) {
  for (int i = 0; i < reads->table_count; ++i)
    if (reads->tables[i] == relid) return i;
  if (reads->table_count == kMaxTablesPerGraph)
    ereport(ERROR, (errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
                    errmsg("the query of a kept graph may read at most %d tables and views",
                           kMaxTablesPerGraph)));
  reads->relkinds[reads->table_count] = relkind;
  reads->tables[reads->table_count] = relid;
  return reads->table_count++;
}

// Prepares `sql` (under the current search_path) as the current user, checks that user may read
// what it reads (the executor's own check), and lists the tables and views it reads. With
// `check_tracking`, says what would stop changes from being seen.
void analyze_query(const char* sql, const char* function, bool check_tracking, QueryReads* reads) {
  memset(reads, 0, sizeof *reads);
  MemoryContext caller = CurrentMemoryContext;
  if (SPI_connect() != SPI_OK_CONNECT) elog(ERROR, "SPI_connect failed");
  SPIPlanPtr plan = SPI_prepare(sql, 0, nullptr);
  if (plan == nullptr)
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                    errmsg("edges_sql of %s cannot be prepared: %s", function,
                           SPI_result_code_string(SPI_result))));
  List* sources = SPI_plan_get_plan_sources(plan);
  if (list_length(sources) != 1)
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                    errmsg("edges_sql of %s must be one SQL query", function)));
  CachedPlanSource* source = static_cast<CachedPlanSource*>(linitial(sources));
  reads->row_security = source->dependsOnRLS;
  ListCell* cell;
  if (check_tracking) {
    foreach (cell, source->query_list) {
      Query* query = lfirst_node(Query, cell);
      if (query->commandType != CMD_SELECT)
        snprintf(reads->untrackable, sizeof reads->untrackable, "it is not a SELECT");
      else if (contain_mutable_functions(reinterpret_cast<Node*>(query)))
        snprintf(reads->untrackable, sizeof reads->untrackable,
                 "it calls a function that is not IMMUTABLE (such a function may read tables, "
                 "the time or settings that no trigger sees)");
    }
  }
  CachedPlan* cached = SPI_plan_get_cached_plan(plan);
  if (cached == nullptr) elog(ERROR, "gpu_routing: no plan for edges_sql");
  foreach (cell, cached->stmt_list) {
    PlannedStmt* statement = lfirst_node(PlannedStmt, cell);
    if (statement->commandType != CMD_SELECT) continue;
    ExecCheckRTPerms(statement->rtable, true);
    ListCell* rt;
    foreach (rt, statement->rtable) {
      RangeTblEntry* rte = static_cast<RangeTblEntry*>(lfirst(rt));
      if (rte->rtekind != RTE_RELATION) continue;
      const int index = add_table(reads, rte->relid, rte->relkind);
      MemoryContext spi = MemoryContextSwitchTo(caller);
      reads->columns[index] = bms_union(reads->columns[index], rte->selectedCols);
      MemoryContextSwitchTo(spi);
      if (!check_tracking || reads->untrackable[0] != '\0') continue;
      if (rte->tablesample != nullptr)
        snprintf(reads->untrackable, sizeof reads->untrackable, "it samples a table (TABLESAMPLE)");
      else if (rte->relkind == RELKIND_FOREIGN_TABLE)
        snprintf(reads->untrackable, sizeof reads->untrackable,
                 "it reads the foreign table %s, whose changes no trigger here sees",
                 get_rel_name(rte->relid));
      else if (rte->relkind == RELKIND_MATVIEW)
        snprintf(reads->untrackable, sizeof reads->untrackable,
                 "it reads the materialized view %s (REFRESH is not a change a trigger sees)",
                 get_rel_name(rte->relid));
    }
  }
  ReleaseCachedPlan(cached, nullptr);
  SPI_freeplan(plan);
  SPI_finish();
}

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

// --- Shared forms (call with g_shared->lock held) ------------------------------------------------

TrackedTable* find_tracked(Oid relid, bool create) {
  for (int i = 0; i < g_shared->tracked_count; ++i)
    if (g_shared->tracked[i].database == MyDatabaseId && g_shared->tracked[i].relid == relid)
      return &g_shared->tracked[i];
  if (!create) return nullptr;
  if (g_shared->tracked_count == kMaxTrackedTables) {
    // Reuse entries no form refers to.
    int kept = 0;
    for (int i = 0; i < g_shared->tracked_count; ++i) {
      const TrackedTable& t = g_shared->tracked[i];
      bool referenced = false;
      for (int f = 0; f < kMaxForms && !referenced; ++f) {
        const SharedForm& form = g_shared->forms[f];
        if (form.state == kFormFree || form.database != t.database) continue;
        for (int k = 0; k < form.table_count; ++k)
          if (form.tables[k] == t.relid) referenced = true;
      }
      if (referenced || t.committing > 0) g_shared->tracked[kept++] = t;
    }
    g_shared->tracked_count = kept;
    if (kept == kMaxTrackedTables) return nullptr;
  }
  TrackedTable* t = &g_shared->tracked[g_shared->tracked_count++];
  t->database = MyDatabaseId;
  t->relid = relid;
  t->version = 1;
  t->committing = 0;
  return t;
}

int find_form(int64 id, int64 generation, bool directed) {
  for (int f = 0; f < kMaxForms; ++f) {
    const SharedForm& form = g_shared->forms[f];
    if (form.state != kFormFree && form.database == MyDatabaseId && form.graph_id == id &&
        form.generation == generation && form.directed == directed)
      return f;
  }
  return -1;
}

// A transaction that changed one of these tables is committing: its changes may be visible to
// the caller's snapshot before the versions say so.
bool change_being_committed(const Registration& reg) {
  if (g_shared->committing_untracked > 0) return true;
  for (int k = 0; k < reg.table_count; ++k) {
    const TrackedTable* t = find_tracked(reg.tables[k], false);
    if (t != nullptr && t->committing > 0) return true;
  }
  return false;
}

bool form_is_fresh(const SharedForm& form) {
  for (int k = 0; k < form.table_count; ++k) {
    TrackedTable* t = find_tracked(form.tables[k], false);
    if (t == nullptr || t->version != form.table_versions[k]) return false;
  }
  return true;
}

// What a call knows of the server and of its snapshot, to judge forms with: whether the server
// is in recovery (a hot standby) and then how many committed changes to the graph's tables the
// call's snapshot sees (change_log_sum).
struct CallView {
  bool in_recovery = false;
  int64 change_sum = 0;
};

// A ready form may serve a call: its tables' versions unchanged since its snapshot and, on a
// standby, its snapshot saw every change the call's sees. A form built on a standby serves no
// call after promotion (it is rebuilt once), and none is built elsewhere while in recovery.
bool form_serves(const SharedForm& form, const CallView& view) {
  if (!form_is_fresh(form) || form.built_in_recovery != view.in_recovery) return false;
  return !view.in_recovery || form.table_count == 0 || form.change_sum >= view.change_sum;
}

void free_form(int f) {
  SharedForm& form = g_shared->forms[f];
  if (form.state == kFormReady && form.handle != DSM_HANDLE_INVALID)
    dsm_unpin_segment(form.handle);  // sessions still mapping it keep it until they let go
  if (form.index_state == kIndexReady && form.index_handle != DSM_HANDLE_INVALID)
    dsm_unpin_segment(form.index_handle);
  memset(&form, 0, sizeof form);
}

void free_order(SharedOrder& order) {
  if (order.used && order.handle != DSM_HANDLE_INVALID) dsm_unpin_segment(order.handle);
  memset(&order, 0, sizeof order);
}

// The graph's forms lose their road index (gpu_graph_index(name, false)). An index being made
// loses its claim too: its maker (a session or a background worker) then publishes nothing and
// keeps no order (make_claimed_index checks the claim at both steps), so a switched-off index
// never comes back by itself.
void free_indexes_of(int64 id) {
  for (auto& form : g_shared->forms) {
    if (form.state != kFormReady || form.database != MyDatabaseId || form.graph_id != id) continue;
    if (form.index_state == kIndexReady && form.index_handle != DSM_HANDLE_INVALID)
      dsm_unpin_segment(form.index_handle);  // sessions still mapping it keep it until they let go
    form.index_state = kIndexNone;
    form.index_builder_pid = 0;
    form.index_in_worker = false;
    form.index_handle = DSM_HANDLE_INVALID;
    form.index_bytes = 0;
  }
}

// The graph no longer wants an index (dropped): its orders go too.
void free_orders_of(int64 id) {
  for (auto& order : g_shared->orders)
    if (order.used && order.database == MyDatabaseId && order.graph_id == id) free_order(order);
}

SharedOrder* find_order(int64 id, bool directed) {
  for (auto& order : g_shared->orders)
    if (order.used && order.database == MyDatabaseId && order.graph_id == id &&
        order.directed == directed)
      return &order;
  return nullptr;
}

// Forms of a graph's older generations (from before a refresh or a schema change committed) serve
// no call whose registration is current: they go once the current generation is built.
void free_older_generations(int64 id, int64 generation) {
  for (int f = 0; f < kMaxForms; ++f) {
    const SharedForm& form = g_shared->forms[f];
    if (form.state == kFormReady && form.database == MyDatabaseId && form.graph_id == id &&
        form.generation < generation)
      free_form(f);
  }
}

// Frees every form of a graph id in this database (all generations).
void free_forms_of(int64 id) {
  for (int f = 0; f < kMaxForms; ++f) {
    SharedForm& form = g_shared->forms[f];
    if (form.state == kFormReady && form.database == MyDatabaseId && form.graph_id == id)
      free_form(f);
  }
}

Size used_bytes() {
  Size total = 0;
  for (int f = 0; f < kMaxForms; ++f)
    if (g_shared->forms[f].state != kFormFree)
      total += g_shared->forms[f].bytes + g_shared->forms[f].index_bytes;
  for (const auto& order : g_shared->orders)
    if (order.used) total += order.bytes;
  return total;
}

// --- Cleanup: a build abandoned by an error, a cancel or the backend's exit
// -----------------------

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

void report_device_bytes_at_exit(SessionGraph& entry);

// The process is going: its mappings and device memory go with it; only the shared counts and
// a build it left half done need putting right.
void release_commit_marks();

void on_backend_exit(int, Datum) {
  abandon_build();
  release_commit_marks();
  for (auto& entry : g_session)
    if (entry.used) report_device_bytes_at_exit(entry);
}

bool g_exit_registered = false;
void register_exit_cleanup() {
  if (g_exit_registered) return;
  before_shmem_exit(on_backend_exit, 0);
  g_exit_registered = true;
}

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

void release_commit_marks() {
  release_commit_marks(false);
}

void xact_callback(XactEvent event, void*) {
  switch (event) {
    case XACT_EVENT_PRE_COMMIT:
      if (g_shared != nullptr && (g_changed_count > 0 || g_changed_overflow)) {
        release_commit_marks();   // none should be left; never count one twice
        register_exit_cleanup();  // an exit between here and the commit releases the marks
        LWLockAcquire(g_shared->lock, LW_EXCLUSIVE);
        set_commit_marks();
        LWLockRelease(g_shared->lock);
      }
      break;
    case XACT_EVENT_PRE_PREPARE:
      if (g_changed_count > 0 || g_changed_overflow)
        ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
                        errmsg("cannot PREPARE a transaction that changed a table of a kept graph"),
                        errhint("Commit it directly: kept graphs see changes at commit.")));
      break;
    case XACT_EVENT_COMMIT:
    case XACT_EVENT_PARALLEL_COMMIT:
      // After the commit became visible to others: from now on a reader reading the versions
      // first sees the new versions or builds from data that includes this commit.
      if (g_shared != nullptr && (g_changed_count > 0 || g_changed_overflow)) {
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
      if (g_shared != nullptr && g_switched_off_count > 0) {
        LWLockAcquire(g_shared->lock, LW_EXCLUSIVE);
        for (int i = 0; i < g_switched_off_count; ++i) {
          free_indexes_of(g_switched_off[i]);
          free_orders_of(g_switched_off[i]);
        }
        LWLockRelease(g_shared->lock);
      }
      g_switched_off_count = 0;
      g_changed_count = 0;
      g_changed_overflow = false;
      g_registered_count = 0;
      break;
    case XACT_EVENT_ABORT:
    case XACT_EVENT_PARALLEL_ABORT:
      abandon_build();
      release_commit_marks();  // an error after pre-commit: nothing became visible
      if (g_shared != nullptr && g_registered_count > 0) {
        // Forms built for registrations that never committed.
        LWLockAcquire(g_shared->lock, LW_EXCLUSIVE);
        for (int i = 0; i < g_registered_count; ++i) {
          free_forms_of(g_registered_in_xact[i]);
          free_orders_of(g_registered_in_xact[i]);
        }
        LWLockRelease(g_shared->lock);
      }
      g_switched_off_count = 0;
      g_changed_count = 0;
      g_changed_overflow = false;
      g_registered_count = 0;
      break;
    default:
      break;
  }
}

void subxact_callback(SubXactEvent event, SubTransactionId, SubTransactionId, void*) {
  // A build inside a savepoint or an exception block that failed there.
  if (event == SUBXACT_EVENT_ABORT_SUB) abandon_build();
}

bool changed_in_this_transaction(const Oid* tables, int count) {
  if (g_changed_overflow) return count > 0;
  for (int i = 0; i < count; ++i)
    for (int c = 0; c < g_changed_count; ++c)
      if (g_changed_tables[c] == tables[i]) return true;
  return false;
}

// --- Session mappings ---------------------------------------------------------------------------

// `locked`: the caller holds g_shared->lock exclusively.
void report_device_bytes(SessionGraph& entry, int64 bytes, bool locked = false) {
  if (g_shared == nullptr || entry.form < 0 || bytes == entry.device_bytes) return;
  if (!locked) LWLockAcquire(g_shared->lock, LW_EXCLUSIVE);
  SharedForm& form = g_shared->forms[entry.form];
  if (form.state == kFormReady && form.handle == entry.handle)
    form.device_bytes = std::max<int64>(0, form.device_bytes - entry.device_bytes + bytes);
  if (!locked) LWLockRelease(g_shared->lock);
  entry.device_bytes = bytes;
}

void report_device_bytes_at_exit(SessionGraph& entry) {
  report_device_bytes(entry, 0);
}

void release_session_graph(SessionGraph& entry, bool locked = false) {
  report_device_bytes(entry, 0, locked);
  Failure failure;
  guarded(&failure, [&] {
    delete entry.engines;  // before the index and the graph they use
    delete entry.index;
    delete entry.view;
  });
  entry.engines = nullptr;
  entry.index = nullptr;
  entry.view = nullptr;
  if (entry.index_segment != nullptr) dsm_detach(entry.index_segment);
  if (entry.segment != nullptr) dsm_detach(entry.segment);
  memset(&entry, 0, sizeof entry);
}

// Lets go of mappings whose form is gone or was replaced (the segment is freed once every
// session has let go). Call without the lock.
void sweep_session_graphs() {
  for (auto& entry : g_session) {
    if (!entry.used) continue;
    LWLockAcquire(g_shared->lock, LW_SHARED);
    const SharedForm& form = g_shared->forms[entry.form];
    const bool current =
        form.state == kFormReady && form.handle == entry.handle && form.database == MyDatabaseId;
    LWLockRelease(g_shared->lock);
    if (!current) release_session_graph(entry);
  }
}

SessionGraph* session_graph_for(dsm_handle handle) {
  for (auto& entry : g_session)
    if (entry.used && entry.handle == handle) return &entry;
  return nullptr;
}

// Maps a ready form (called with the lock held, so the segment cannot go away meanwhile).
SessionGraph* map_form(int f) {
  SharedForm& form = g_shared->forms[f];
  SessionGraph* entry = session_graph_for(form.handle);
  if (entry != nullptr) return entry;
  SessionGraph* slot = nullptr;
  for (auto& e : g_session)
    if (!e.used) {
      slot = &e;
      break;
    }
  if (slot == nullptr) {
    // The least recently mapped one makes room (the lock is held: report under it).
    slot = &g_session[0];
    release_session_graph(*slot, true);
  }
  dsm_segment* segment = dsm_attach(form.handle);
  if (segment == nullptr) return nullptr;
  dsm_pin_mapping(segment);
  Graph* view = nullptr;
  EngineCache* engines = nullptr;
  Failure failure;
  const void* address = dsm_segment_address(segment);
  const Size length = dsm_segment_map_length(segment);
  bool ok = guarded(&failure, [&] {
    view = new Graph(view_graph_image(address, length));
    engines = new EngineCache();
  });
  if (!ok) {
    dsm_detach(segment);
    raise_failure(&failure);
  }
  slot->used = true;
  slot->handle = dsm_segment_handle(segment);
  slot->segment = segment;
  slot->view = view;
  slot->engines = engines;
  slot->form = f;
  slot->device_bytes = 0;
  slot->edge_rows = form.edge_rows;
  slot->bytes = form.bytes;
  return slot;
}

// --- Building -----------------------------------------------------------------------------------

struct BuiltGraph {
  Graph* graph;  // owned, freed by the caller's guarded delete
  int64 edge_rows;
  int64 change_sum;  // the change log's sum under the build's snapshot, where asked
};

// Reads the graph's query with a fresh snapshot under its search_path and builds it (with its
// reversed CSR). The caller holds no lock.
BuiltGraph read_and_build(const Registration& reg, bool directed, const char* function,
                          bool label_by_log) {
  static const ColumnSpec kEdgeColumns[] = {
      {"id", ColumnKind::kInteger, true},
      {"source", ColumnKind::kInteger, true},
      {"target", ColumnKind::kInteger, true},
      {"cost", ColumnKind::kNumerical, true},
      {"reverse_cost", ColumnKind::kNumerical, false},
  };
  int level = push_search_path(reg.search_path);
  // A snapshot taken now, after the versions were read: data at least as new as the label. On a
  // standby the label is the change log's sum under this very snapshot: exactly the data's.
  PushActiveSnapshot(GetTransactionSnapshot());
  const int64 change_sum = label_by_log ? change_log_sum(reg.tables, reg.table_count) : 0;
  QueryColumns edges;
  read_query_columns(reg.edges_sql, "edges_sql", function, kEdgeColumns, 5, &edges);
  PopActiveSnapshot();
  pop_search_path(level);
  EdgeArrays arrays;
  arrays.count = static_cast<std::size_t>(edges.rows);
  arrays.ids = edges.present[0] ? edges.integers[0] : nullptr;
  arrays.sources = edges.integers[1];
  arrays.targets = edges.integers[2];
  arrays.costs = edges.numbers[3];
  arrays.reverse_costs = edges.present[4] ? edges.numbers[4] : nullptr;
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

// Makes room for `bytes`: what was used longest ago goes first, whether a graph's built form
// (with its road index) or the contraction order kept for re-making an index (named in `evicted`,
// for a NOTICE after the lock is let go; both are made again when next needed). Only what is
// being built stays: the form `building` and forms other sessions are building or indexing. False,
// with the reason in `problem` naming what holds the memory, when the graph alone exceeds
// gpu_routing.graph_memory or cannot fit beside those. Called with the lock held exclusively;
// never raises.
bool make_room(const Registration& reg, bool for_index, Size bytes, int building, char* problem,
               size_t size, char* evicted, size_t evicted_size) {
  const Size limit = graph_memory_bytes();
  evicted[0] = '\0';
  char what[128];
  snprintf(what, sizeof what, "%skept graph \"%s\"", for_index ? "the road index of " : "",
           reg.name);
  if (bytes > limit) {
    snprintf(problem, size, "%s takes %s, more than gpu_routing.graph_memory (%s)", what,
             bytes_text(bytes).c_str(), bytes_text(limit).c_str());
    return false;
  }
  while (used_bytes() + bytes > limit) {
    int oldest_form = -1;
    for (int f = 0; f < kMaxForms; ++f) {
      const SharedForm& form = g_shared->forms[f];
      if (form.state != kFormReady || f == building || form.index_state == kIndexBuilding) continue;
      if (oldest_form < 0 || form.last_used < g_shared->forms[oldest_form].last_used)
        oldest_form = f;
    }
    SharedOrder* oldest_order = nullptr;
    for (auto& order : g_shared->orders)
      if (order.used && (oldest_order == nullptr || order.last_used < oldest_order->last_used))
        oldest_order = &order;
    if (oldest_form < 0 && oldest_order == nullptr) {
      // What is left is being built: name it.
      std::string holders;
      for (int f = 0; f < kMaxForms; ++f) {
        const SharedForm& form = g_shared->forms[f];
        if (form.state == kFormFree || form.bytes + form.index_bytes == 0) continue;
        if (!holders.empty()) holders += ", ";
        holders +=
            std::string("\"") + form.name + "\" " + bytes_text(form.bytes + form.index_bytes) +
            (form.state == kFormBuilding ? " (being built)" : " (its road index being made)");
      }
      snprintf(problem, size,
               "%s (%s) does not fit in gpu_routing.graph_memory (%s) beside what is being built: "
               "%s",
               what, bytes_text(bytes).c_str(), bytes_text(limit).c_str(),
               holders.empty() ? "nothing" : holders.c_str());
      return false;
    }
    const size_t used = strlen(evicted);
    if (oldest_order != nullptr &&
        (oldest_form < 0 || oldest_order->last_used < g_shared->forms[oldest_form].last_used)) {
      snprintf(evicted + used, evicted_size - used, "%sthe road index order of %s (%s)",
               used > 0 ? ", " : "", oldest_order->name, bytes_text(oldest_order->bytes).c_str());
      free_order(*oldest_order);
    } else {
      const SharedForm& form = g_shared->forms[oldest_form];
      snprintf(evicted + used, evicted_size - used, "%s%s (%s)", used > 0 ? ", " : "", form.name,
               bytes_text(form.bytes + form.index_bytes).c_str());
      free_form(oldest_form);
    }
  }
  return true;
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
      make_room(reg, false, bytes, f, problem, sizeof problem, evicted, sizeof evicted);
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
  form.change_sum = built.change_sum;
  form.built_at = GetCurrentTimestamp();
  form.last_used = form.built_at;
  form.build_ms = *build_ms;
  LWLockRelease(g_shared->lock);
  g_building_form = -1;
  ConditionVariableBroadcast(&g_shared->form_changed);
  if (!ok) raise_failure(&failure);
  SessionGraph* slot = nullptr;
  for (auto& e : g_session)
    if (!e.used) {
      slot = &e;
      break;
    }
  if (slot == nullptr) {
    slot = &g_session[0];
    release_session_graph(*slot);
  }
  slot->used = true;
  // Not form.handle: the lock is released, and the slot may already hold another build.
  slot->handle = dsm_segment_handle(segment);
  slot->segment = segment;
  slot->view = view;
  slot->engines = engines;
  slot->form = f;
  slot->device_bytes = 0;
  slot->edge_rows = built.edge_rows;
  slot->bytes = bytes;
  return slot;
}

// The form of `reg` for `directed`: mapped into this session, fresh (its tables' versions
// unchanged since its snapshot). Waits for a build in progress elsewhere; builds it otherwise.
// With `null_while_committing`, returns nullptr when a change to its tables is being committed
// (the caller reads privately): the versions may not yet cover what the caller's snapshot sees.
SessionGraph* acquire_form(const Registration& reg, bool directed, double* build_ms,
                           const char* function, bool null_while_committing = false) {
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
    if (null_while_committing && !reg.manual && change_being_committed(reg)) {
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
    int slot = -1;
    for (int i = 0; i < kMaxForms && slot < 0; ++i)
      if (g_shared->forms[i].state == kFormFree) slot = i;
    if (slot < 0) {
      // Every slot taken: the least recently used ready form goes.
      for (int i = 0; i < kMaxForms; ++i) {
        const SharedForm& form = g_shared->forms[i];
        if (form.state == kFormReady &&
            (slot < 0 || form.last_used < g_shared->forms[slot].last_used))
          slot = i;
      }
      if (slot < 0) {
        LWLockRelease(g_shared->lock);
        ereport(ERROR, (errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
                        errmsg("every one of the %d kept graph slots is being built", kMaxForms)));
      }
      free_form(slot);
    }
    SharedForm& form = g_shared->forms[slot];
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

// --- The road index
// -------------------------------------------------------------------------------

// What a kept order depends on: the graph's vertices and arcs as vertex ids, independent of the
// order the rows came in (an UPDATE moves a row, and with it its arc's place in the CSR, without
// changing the topology). A sum of mixed (tail, head) pairs.
uint64 topology_key(const Graph& graph) {
  auto mix = [](uint64 x) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    return x ^ (x >> 33);
  };
  const CsrGraph& forward = graph.forward;
  uint64 key = mix(static_cast<uint64>(forward.vertex_count));
  for (VertexIndex u = 0; u < forward.vertex_count; ++u) {
    const uint64 tail = mix(static_cast<uint64>(graph.vertices.id(u)));
    key += mix(tail ^ 0x9e3779b97f4a7c15ULL);  // the vertex itself, arcs or none
    for (ArcIndex a = forward.begin(u); a < forward.end(u); ++a)
      key += mix(tail + mix(static_cast<uint64>(
                            graph.vertices.id(forward.heads[static_cast<std::size_t>(a)]))));
  }
  return key;
}

// Lets go of the session's mapping of its form's road index, and of the engine kept on it (which
// points into it).
void drop_index_mapping(SessionGraph* entry) {
  if (entry->index == nullptr) return;
  Failure ignored;
  guarded(&ignored, [&] {
    entry->engines->clear();
    delete entry->index;
  });
  entry->index = nullptr;
  dsm_detach(entry->index_segment);
  entry->index_segment = nullptr;
  entry->index_handle = DSM_HANDLE_INVALID;
}

// Makes the attached index image `segment` the session's index of `entry`'s form, in place of
// any earlier one. False, with the segment detached, when it is no image of this graph.
bool adopt_index(SessionGraph* entry, dsm_segment* segment, Failure* failure) {
  drop_index_mapping(entry);
  dsm_pin_mapping(segment);
  Cch* index = nullptr;
  const bool ok = guarded(failure, [&] {
    index = new Cch(Cch::view_image(dsm_segment_address(segment), dsm_segment_map_length(segment),
                                    *entry->view));
  });
  if (!ok) {
    dsm_detach(segment);
    return false;
  }
  entry->index_segment = segment;
  entry->index = index;
  entry->index_handle = dsm_segment_handle(segment);
  return true;
}

// Maps the ready index of `entry`'s form (called with the lock held, so it cannot go away),
// unless the session has it mapped already. A newer index of the same form (removed and made
// again) replaces the old mapping; an image that does not fit its graph is not used (the call
// uses the search engines).
void map_index(SessionGraph* entry, const SharedForm& form) {
  if (entry->index != nullptr && entry->index_handle == form.index_handle) return;
  drop_index_mapping(entry);
  dsm_segment* segment = dsm_attach(form.index_handle);
  if (segment == nullptr) return;
  Failure failure;
  adopt_index(entry, segment, &failure);
}

// Stores `order` (vertex indices by rank of `graph`) as the graph's kept order, as vertex ids.
// Called without the lock; a failure only loses the order (the next index orders again).
// The bytes keep_order takes for an order of `vertices` vertices and its hierarchy's topology.
Size order_bytes(std::size_t vertices, const Cch& hierarchy) {
  return std::max<Size>(1, MAXALIGN(vertices * sizeof(int64)) + hierarchy.topology_image_bytes());
}

// Whether this process still holds the claim on the index of `entry`'s form (a switch-off or a
// replaced form takes it away). Call with the lock held.
bool index_claim_held(const SessionGraph* entry) {
  const SharedForm& form = g_shared->forms[entry->form];
  return form.state == kFormReady && form.handle == entry->handle &&
         form.index_state == kIndexBuilding && form.index_builder_pid == MyProcPid;
}

// Keeps the order of the index this process is making for `entry`'s form, while it still holds
// the claim.
void keep_order(const Registration& reg, bool directed, const SessionGraph* entry,
                const std::vector<VertexIndex>& order, uint64 fingerprint, double order_ms,
                const Cch& hierarchy) {
  const Graph& graph = *entry->view;
  const Size topology_offset = MAXALIGN(order.size() * sizeof(int64));
  const Size topology_bytes = hierarchy.topology_image_bytes();
  const Size bytes = order_bytes(order.size(), hierarchy);
  dsm_segment* segment = dsm_create(bytes, DSM_CREATE_NULL_IF_MAXSEGMENTS);
  if (segment == nullptr) return;
  auto* ids = static_cast<int64*>(dsm_segment_address(segment));
  for (std::size_t r = 0; r < order.size(); ++r) ids[r] = graph.vertices.id(order[r]);
  hierarchy.write_topology_image(static_cast<char*>(dsm_segment_address(segment)) +
                                 topology_offset);
  LWLockAcquire(g_shared->lock, LW_EXCLUSIVE);
  if (!index_claim_held(entry)) {  // switched off (or replaced) meanwhile: nothing is kept
    LWLockRelease(g_shared->lock);
    dsm_detach(segment);
    return;
  }
  SharedOrder* slot = find_order(reg.id, directed);
  if (slot == nullptr)
    for (auto& o : g_shared->orders)
      if (!o.used) {
        slot = &o;
        break;
      }
  if (slot == nullptr) {  // every slot taken: the oldest order goes
    slot = &g_shared->orders[0];
    for (auto& o : g_shared->orders)
      if (o.made_at < slot->made_at) slot = &o;
  }
  free_order(*slot);
  dsm_pin_segment(segment);
  slot->used = true;
  copy_name(slot->name, sizeof slot->name, reg.name);
  slot->database = MyDatabaseId;
  slot->graph_id = reg.id;
  slot->directed = directed;
  slot->fingerprint = fingerprint;
  slot->vertices = static_cast<int64>(order.size());
  slot->handle = dsm_segment_handle(segment);
  slot->bytes = bytes;
  slot->topology_offset = topology_offset;
  slot->topology_bytes = topology_bytes;
  slot->order_ms = order_ms;
  slot->made_at = GetCurrentTimestamp();
  slot->last_used = slot->made_at;
  LWLockRelease(g_shared->lock);
  dsm_detach(segment);
}

// Where an index is customized: the call's (or the launching call's) settings.
// (And the test hook gpu_routing.test_index_pause, which a worker gets from its launching call.)
struct CustomizationChoice {
  IndexCustomization setting = IndexCustomization::kAuto;
  bool device_cpu = false;  // gpu_routing.device = cpu: never touch CUDA
  int threads = 0;
  int test_pause_key = 0;
};

CustomizationChoice customization_choice() {
  const Settings settings = current_settings();
  CustomizationChoice choice;
  choice.setting = settings.index_customization;
  choice.device_cpu = settings.device == DeviceSetting::kCpu;
  choice.threads = settings.threads;
  choice.test_pause_key = g_test_index_pause;
  return choice;
}

// This process's GPU customizer, kept with the hierarchy it was made for (its topology and
// order, hierarchy_key), so that the index of the graph's next form (after a committed cost
// change: same topology, kept order) is customized on the device again without laying out the
// topology anew (New York, H100: 7.2 ms against 14.5 on 16 cores; a fresh customizer 42 ms).
// It holds about 60 bytes of device memory a hierarchy arc until the process ends or another
// hierarchy replaces it. Never destroyed at exit (the CUDA runtime may be torn down before static
// destructors run; the process's end frees the device memory).
gpu::CchCustomizer* g_customizer = nullptr;
uint64 g_customizer_key = 0;

// The hierarchy's identity for the customizer: the graph's topology and the order (the same
// topology and order make the same hierarchy; the customizer itself checks only sizes).
uint64 hierarchy_key(const Cch& index, uint64 topology) {
  uint64 key = topology ^ 0x6a09e667f3bcc909ULL;
  const auto at_rank = index.vertex_at_rank();
  for (std::size_t r = 0; r < at_rank.size(); ++r)
    key = (key ^ static_cast<uint64>(static_cast<uint32>(at_rank[r]))) * 0x100000001b3ULL;
  return key;
}

// Customizes `index` for `graph` where `choice` says; true when on the GPU. `note` says why not
// where the GPU was asked for and the GPU service owns it. Plain C++: throws RoutingError.
bool customize_index(Cch& index, const Graph& graph, uint64 topology,
                     const CustomizationChoice& choice, std::string* note) {
  const CancelToken cancel(cancel_requested);
  bool on_gpu = false;
  // The customizer kept by this session serves one hierarchy: compared only where one may be
  // used (a pass over the ranks).
  const bool customizer_may_serve = choice.setting != IndexCustomization::kCpu;
  const uint64 key = customizer_may_serve ? hierarchy_key(index, topology) : 0;
  if (choice.setting == IndexCustomization::kGpu) {
    if (choice.device_cpu)
      throw RoutingError(
          ErrorKind::kInvalidParameter,
          "gpu_routing.index_customization = gpu contradicts gpu_routing.device = cpu",
          "SET gpu_routing.index_customization = auto (or cpu), or gpu_routing.device = auto.");
    // With the GPU service configured the GPUs are the service's: this process opens no CUDA
    // context, and customizes on the CPU where the service has a GPU.
    ServiceUse service;
    resolve_service(false, &service);
    const gpu::Availability& gpus = service.configured ? service.gpus : gpu::availability();
    if (!gpus.usable)
      throw RoutingError(
          ErrorKind::kNoDevice,
          "gpu_routing.index_customization = gpu, but no GPU is usable: " + gpus.reason,
          "SET gpu_routing.index_customization = auto to customize on the CPU.");
    if (service.configured)
      *note = "customized on the CPU: the GPU service owns the GPUs";
    else
      on_gpu = true;
  } else if (choice.setting == IndexCustomization::kAuto) {
    on_gpu = !choice.device_cpu && g_customizer != nullptr && g_customizer_key == key &&
             !service_configured();
  }
  if (!on_gpu) {
    index.customize(graph, cancel, choice.threads);
    return false;
  }
  auto forget = [] {
    delete g_customizer;
    g_customizer = nullptr;
    g_customizer_key = 0;
  };
  bool fresh = false;
  if (g_customizer == nullptr || g_customizer_key != key) {
    forget();  // one kept: its device memory goes first
    g_customizer = new gpu::CchCustomizer(index, graph);
    g_customizer_key = key;
    fresh = true;
  }
  try {
    // The same hierarchy; the graph's arcs may have come in another order (an UPDATE moves rows).
    if (!fresh) g_customizer->follow_arc_order(index, graph);
    g_customizer->customize(index, graph, cancel);
  } catch (...) {
    forget();  // a customizer that failed midway (cancel, device error) is not trusted again
    throw;
  }
  return true;
}

// Where the graph's kept order lies, read (with the lock held) when a process claims the making
// of a form's index.
struct OrderPlace {
  dsm_handle handle = DSM_HANDLE_INVALID;
  uint64 fingerprint = 0;
  int64 vertices = -1;
  Size topology_offset = 0;
  Size topology_bytes = 0;
};

OrderPlace order_place(const SharedOrder* order) {
  OrderPlace place;
  if (order == nullptr) return place;
  place.handle = order->handle;
  place.fingerprint = order->fingerprint;
  place.vertices = order->vertices;
  place.topology_offset = order->topology_offset;
  place.topology_bytes = order->topology_bytes;
  return place;
}

// Claims the making of form f's index for this process (called with the lock held).
void claim_index(SharedForm& form, int f, bool in_worker) {
  form.index_state = kIndexBuilding;
  form.index_builder_pid = MyProcPid;
  form.index_in_worker = in_worker;
  g_building_index = f;
  g_building_index_form = form.handle;
}

bool launch_index_worker(const Registration& reg, bool directed, int f, dsm_handle form_handle,
                         int* worker_pid);
void make_claimed_index(const Registration& reg, bool directed, SessionGraph* entry,
                        const OrderPlace& order, const char* maker,
                        const CustomizationChoice& choice, KeptGraphUse* use);

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

// Makes the index of `entry`'s form, whose making this process has claimed (claim_index), from
// the kept order at `order` where it fits; `maker` names who made it in the call's notes.
void make_claimed_index(const Registration& reg, bool directed, SessionGraph* entry,
                        const OrderPlace& order, const char* maker,
                        const CustomizationChoice& choice, KeptGraphUse* use) {
  SharedForm& form = g_shared->forms[entry->form];
  const dsm_handle order_handle = order.handle;
  const uint64 order_fingerprint = order.fingerprint;
  const int64 order_vertices = order.vertices;
  const Size topology_offset = order.topology_offset;
  const Size topology_bytes = order.topology_bytes;

  progress_set_phase(CallPhase::kBuilding);
  const Graph& graph = *entry->view;
  std::unique_ptr<Cch> built;
  std::vector<VertexIndex> new_order;
  uint64 fingerprint = 0;
  double order_ms = 0;
  bool topology_copied = false;
  bool on_gpu = false;
  std::string customization_note;
  Failure failure;
  bool ok = guarded(&failure, [&] {
    fingerprint = topology_key(graph);
    std::vector<VertexIndex> ranked;
    // The kept order, where it was made for this very topology; with it the kept hierarchy, whose
    // topology image names vertex indices, valid while the vertex ids map to the same indices
    // (the same ids in the same CSR: the fingerprint covers it).
    if (order_handle != DSM_HANDLE_INVALID && order_fingerprint == fingerprint &&
        order_vertices == graph.vertex_count()) {
      // Attaching may fail if the order was replaced meanwhile: then order again.
      if (dsm_segment* segment = dsm_attach(order_handle); segment != nullptr) {
        const auto* ids = static_cast<const int64*>(dsm_segment_address(segment));
        bool same_indices = true;
        ranked.reserve(static_cast<std::size_t>(order_vertices));
        for (int64 r = 0; r < order_vertices; ++r) {
          const VertexIndex v = graph.vertices.find(ids[r]);
          if (v == kNoVertex) break;
          ranked.push_back(v);
        }
        if (ranked.size() != static_cast<std::size_t>(order_vertices)) ranked.clear();
        if (!ranked.empty() && topology_bytes > 0) {
          try {
            auto copied = std::make_unique<Cch>(Cch::from_topology_image(
                static_cast<const char*>(dsm_segment_address(segment)) + topology_offset,
                topology_bytes, graph));
            // The image's ranks must be the order's (vertex indices of this graph).
            const auto at_rank = copied->vertex_at_rank();
            for (std::size_t r = 0; r < ranked.size() && same_indices; ++r)
              same_indices = at_rank[r] == ranked[r];
            if (same_indices) built = std::move(copied);
          } catch (const RoutingError&) {
            // Another topology after all: the hierarchy is built from the order below.
          }
        }
        dsm_detach(segment);
      }
    }
    if (ranked.empty()) {
      Stopwatch watch;
      ranked = cch_order(graph, nullptr, nullptr, CancelToken(cancel_requested));
      order_ms = std::max(watch.elapsed_ms(), 0.001);
      new_order = ranked;
    }
    if (built == nullptr)
      built = std::make_unique<Cch>(graph, std::move(ranked), CancelToken(cancel_requested));
    else
      topology_copied = true;
    built->set_huge_pages(true);  // customized once, written into the DSM image, then freed
    on_gpu = customize_index(*built, graph, fingerprint, choice, &customization_note);
  });
  if (!ok) raise_failure(&failure);  // the abort callback gives the claim back

  if (choice.test_pause_key != 0)
    DirectFunctionCall1(pg_advisory_xact_lock_shared_int8,
                        Int64GetDatum(static_cast<int64>(choice.test_pause_key)));
  // The index and, where this call ordered the graph anew, the order kept beside it.
  const Size bytes = built->image_bytes();
  const Size new_order_bytes = new_order.empty() ? 0 : order_bytes(new_order.size(), *built);
  char problem[320] = "", evicted[512] = "";
  LWLockAcquire(g_shared->lock, LW_EXCLUSIVE);
  const bool claimed = index_claim_held(entry);
  bool fits = claimed && make_room(reg, true, bytes + new_order_bytes, entry->form, problem,
                                   sizeof problem, evicted, sizeof evicted);
  if (fits) form.index_bytes = bytes;  // counted while the image is written
  if (claimed && new_order.empty() && order_handle != DSM_HANDLE_INVALID)
    if (SharedOrder* used = find_order(reg.id, directed);
        used != nullptr && used->handle == order_handle)
      used->last_used = GetCurrentTimestamp();
  LWLockRelease(g_shared->lock);
  if (evicted[0] != '\0')
    ereport(NOTICE, (errmsg("evicted from memory to make room for the road index of kept graph "
                            "\"%s\": %s; they are rebuilt when next used",
                            reg.name, evicted)));
  if (!claimed) {  // switched off, or the form replaced, while it was being made
    g_building_index = -1;
    g_building_index_form = DSM_HANDLE_INVALID;
    snprintf(use->index_how, sizeof use->index_how,
             "road index not kept: switched off or replaced while it was being made");
    return;
  }
  if (fits && !new_order.empty()) {
    ok = guarded(&failure, [&] {
      keep_order(reg, directed, entry, new_order, fingerprint, order_ms, *built);
    });
    if (!ok) raise_failure(&failure);
  }
  dsm_segment* segment = fits ? dsm_create(bytes, DSM_CREATE_NULL_IF_MAXSEGMENTS) : nullptr;
  if (segment == nullptr) {
    abandon_index_build();
    snprintf(use->index_how, sizeof use->index_how, "road index not kept: %s",
             fits ? "no dynamic shared memory segment left" : problem);
    return;
  }
  ok = guarded(&failure, [&] { built->write_image(dsm_segment_address(segment)); });
  if (!ok) {
    dsm_detach(segment);
    raise_failure(&failure);
  }
  const double hierarchy_ms = built->build_ms(), customization_ms = built->customization_ms();
  ok = guarded(&failure, [&] { built.reset(); });

  LWLockAcquire(g_shared->lock, LW_EXCLUSIVE);
  const bool still_ours = form.state == kFormReady && form.handle == entry->handle &&
                          form.index_state == kIndexBuilding && form.index_builder_pid == MyProcPid;
  if (still_ours) {
    dsm_pin_segment(segment);
    form.index_state = kIndexReady;
    form.index_builder_pid = 0;
    form.index_handle = dsm_segment_handle(segment);
    form.index_bytes = bytes;
    form.index_order_ms = order_ms;
    form.index_hierarchy_ms = hierarchy_ms;
    form.index_customization_ms = customization_ms;
    form.index_on_gpu = on_gpu;
  }
  LWLockRelease(g_shared->lock);
  g_building_index = -1;
  g_building_index_form = DSM_HANDLE_INVALID;
  if (!still_ours) {  // the form was replaced or evicted meanwhile
    dsm_detach(segment);
    return;
  }
  if (!adopt_index(entry, segment, &failure)) raise_failure(&failure);
  use->road_index = entry->index;
  use->index_handle = static_cast<unsigned>(entry->index_handle);
  use->index_bytes = bytes;
  const std::string where_text =
      on_gpu ? " on the GPU"
             : (customization_note.empty() ? std::string() : " (" + customization_note + ")");
  const char* where = where_text.c_str();
  if (order_ms > 0)
    snprintf(use->index_how, sizeof use->index_how,
             "road index made by %s: order %.0f ms, hierarchy %.0f ms, customization "
             "%.0f ms%s, %s",
             maker, order_ms, hierarchy_ms, customization_ms, where, bytes_text(bytes).c_str());
  else
    snprintf(use->index_how, sizeof use->index_how,
             "road index made by %s with the kept order: hierarchy %s %.0f ms, "
             "customization %.0f ms%s, %s",
             maker, topology_copied ? "copied from the kept one in" : "built in", hierarchy_ms,
             customization_ms, where, bytes_text(bytes).c_str());
}

// --- The background worker that makes a road index
// ------------------------------------------------

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
}  // namespace gpu_routing::pg

// The worker's entry (bgw_function_name). It takes over the claim of the launching backend (whose
// exit or abort gives the claim back until then), connects to the graph's database as the
// registry's owner, maps the form and makes its index as a call would. SIGTERM (server shutdown,
// pg_terminate_backend) cancels it; its exit, however it ends, gives an unfinished claim back.
extern "C" PGDLLEXPORT void gpu_routing_index_worker_main(Datum) {
  using namespace gpu_routing::pg;
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

namespace gpu_routing::pg {
namespace {

// --- Resolving a call's edges_sql ----------------------------------------------------------------

bool same_tables(const QueryReads& reads, const Registration& reg) {
  if (reads.table_count != reg.table_count) return false;
  for (int i = 0; i < reads.table_count; ++i) {
    bool found = false;
    for (int k = 0; k < reg.table_count && !found; ++k) found = reg.tables[k] == reads.tables[i];
    if (!found) return false;
  }
  return true;
}

// The registration a graph-management call names, with the caller's rights to manage it.
Registration registration_to_manage(const char* name, const char* function) {
  Registration reg;
  read_registration(name, true, &reg);
  if (!reg.found)
    ereport(ERROR,
            (errcode(ERRCODE_UNDEFINED_OBJECT),
             errmsg("%s: there is no kept graph named \"%s\" in this database", function, name),
             errhint("SELECT name FROM gpu_graphs() lists them.")));
  if (reg.owner != GetUserId() && !superuser())
    ereport(ERROR,
            (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
             errmsg("%s: only the owner of kept graph \"%s\" (%s) or a superuser may do this",
                    function, name, GetUserNameFromId(reg.owner, false))));
  return reg;
}

// Builds the directed form of a (new or refreshed) registration now, when this transaction has
// written nothing yet: a build sees the transaction's own uncommitted writes, which must never be
// shared. Otherwise the first call after commit builds it. Returns a line for the caller.
std::string build_now(const Registration& reg, bool wrote_before, const char* function) {
  if (wrote_before)
    return "not built yet: this transaction wrote before; the first call after commit builds it";
  double build_ms = 0;
  SessionGraph* entry = acquire_form(reg, true, &build_ms, function);
  char text[256];
  snprintf(text, sizeof text, "%lld vertices, %lld arcs from %lld rows, %s, built in %.0f ms",
           static_cast<long long>(entry->view->vertex_count()),
           static_cast<long long>(entry->view->arc_count()),
           static_cast<long long>(entry->edge_rows), bytes_text(entry->bytes).c_str(), build_ms);
  return text;
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

// Registered or refreshed by this open transaction after it had written: its own uncommitted
// writes (made before any trigger watched the tables) must not reach a shared form.
bool registered_after_write(int64 id) {
  for (int i = 0; i < g_registered_count; ++i)
    if (g_registered_in_xact[i] == id && g_registered_after_write[i]) return true;
  return false;
}

// Lists the tables of `reads` as a regclass[] Datum.
Datum tables_datum(const QueryReads& reads) {
  Datum elements[kMaxTablesPerGraph];
  for (int i = 0; i < reads.table_count; ++i) elements[i] = ObjectIdGetDatum(reads.tables[i]);
  return PointerGetDatum(
      construct_array(elements, reads.table_count, REGCLASSOID, sizeof(Oid), true, TYPALIGN_INT));
}

}  // namespace

int push_search_path(const char* path) {
  int level = NewGUCNestLevel();
  if (path != nullptr)
    (void)set_config_option("search_path", path, PGC_USERSET, PGC_S_SESSION, GUC_ACTION_SAVE, true,
                            0, false);
  return level;
}

void pop_search_path(int level) {
  AtEOXact_GUC(true, level);
}

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
  RegisterXactCallback(xact_callback, nullptr);
  RegisterSubXactCallback(subxact_callback, nullptr);
  change_log_init();
  if (!process_shared_preload_libraries_in_progress) return;
  g_previous_shmem_request = shmem_request_hook;
  shmem_request_hook = shmem_request;
  g_previous_shmem_startup = shmem_startup_hook;
  shmem_startup_hook = shmem_startup;
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
  analyze_query(named ? reg.edges_sql : edges_sql, function, false, &reads);
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
}

}  // namespace gpu_routing::pg

namespace gpu_routing::pg {
namespace {

// Whether `role` may see a graph's query text, tables and state: its owner (and roles with its
// privileges), members of pg_read_all_stats (as pg_stat_statements shows query texts), and roles
// that may SELECT every table and view its query reads.
bool graph_visible(Oid role, Oid owner, Datum tables) {
  if (superuser_arg(role) || has_privs_of_role(role, owner) ||
      has_privs_of_role(role, ROLE_PG_READ_ALL_STATS))
    return true;
  Datum* elements;
  bool* nulls;
  int count;
  deconstruct_array(DatumGetArrayTypeP(tables), OIDOID, sizeof(Oid), true, TYPALIGN_INT, &elements,
                    &nulls, &count);
  for (int i = 0; i < count; ++i) {
    bool missing = false;
    if (nulls[i] || pg_class_aclcheck_ext(DatumGetObjectId(elements[i]), role, ACL_SELECT,
                                          &missing) != ACLCHECK_OK)
      return false;
  }
  return true;
}

}  // namespace
}  // namespace gpu_routing::pg

using namespace gpu_routing::pg;

// gpu_graph_create(name, edges_sql, refresh): checks as the caller, registers as the registry's
// owner, builds the directed form.
extern "C" Datum gpu_graph_create(PG_FUNCTION_ARGS) {
  const char* name = text_to_cstring(PG_GETARG_TEXT_PP(0));
  const char* edges_sql = text_to_cstring(PG_GETARG_TEXT_PP(1));
  const char* refresh = text_to_cstring(PG_GETARG_TEXT_PP(2));
  require_shared_memory("gpu_graph_create");
  require_primary("gpu_graph_create");
  const bool wrote_before = TransactionIdIsValid(GetTopTransactionIdIfAny());
  if (!valid_graph_name(name))
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                    errmsg("\"%s\" is not a valid kept graph name", name),
                    errhint("Names are identifiers: letters, digits and _, at most 63 bytes.")));
  if (strcmp(refresh, "auto") != 0 && strcmp(refresh, "manual") != 0)
    ereport(ERROR,
            (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
             errmsg("refresh of gpu_graph_create must be 'auto' or 'manual', not '%s'", refresh)));
  if (strncmp(edges_sql, kGraphPrefix, strlen(kGraphPrefix)) == 0)
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                    errmsg("edges_sql of gpu_graph_create must be a query, not a graph name")));
  const bool manual = strcmp(refresh, "manual") == 0;
  const char* schema = extension_schema();
  Registration existing;
  read_registration(name, true, &existing);
  if (existing.found)
    ereport(ERROR,
            (errcode(ERRCODE_DUPLICATE_OBJECT), errmsg("kept graph \"%s\" already exists", name),
             errhint("gpu_graph_refresh('%s') rebuilds it; gpu_graph_drop('%s') drops it.", name,
                     name)));
  QueryReads reads;
  analyze_query(edges_sql, "gpu_graph_create", true, &reads);
  if (!manual && reads.untrackable[0] != '\0')
    ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
                    errmsg("the changes edges_sql reads cannot be tracked: %s", reads.untrackable),
                    errhint("Register it with refresh => 'manual': then the owner calls "
                            "gpu_graph_refresh('%s') after every change.",
                            name)));
  // Triggers first: creating one locks its table against writers until this transaction ends, so
  // no change can slip between the build's snapshot and the trigger.
  if (!manual)
    for (int i = 0; i < reads.table_count; ++i)
      if (is_base_table(reads.relkinds[i])) ensure_trigger(reads.tables[i], schema);

  char* search_path = GetConfigOptionByName("search_path", nullptr, false);
  char sql[512];
  Oid types[7] = {TEXTOID, OIDOID, TEXTOID, TEXTOID, TEXTOID, REGCLASSARRAYOID, TEXTOID};
  Datum values[7] = {
      CStringGetTextDatum(name),        ObjectIdGetDatum(GetUserId()),
      CStringGetTextDatum(edges_sql),   CStringGetTextDatum(normalize_sql(edges_sql)),
      CStringGetTextDatum(search_path), tables_datum(reads),
      CStringGetTextDatum(refresh)};
  // owner is regrole: pass the oid through a cast.
  snprintf(sql, sizeof sql,
           "INSERT INTO %s.gpu_routing_graphs (name, owner, edges_sql, normalized_sql, "
           "search_path, tables, refresh) VALUES ($1, $2::regrole, $3, $4, $5, $6, $7)",
           schema);
  run_as_owner(sql, 7, types, values, nullptr, SPI_OK_INSERT);
  Registration reg;
  read_registration(name, true, &reg);
  remember_registration(reg.id, wrote_before);
  progress_begin("gpu_graph_create");
  std::string line = build_now(reg, wrote_before, "gpu_graph_create");
  progress_end();
  char* result = psprintf("kept graph %s: %s", name, line.c_str());
  PG_RETURN_TEXT_P(cstring_to_text(result));
}

extern "C" Datum gpu_graph_refresh(PG_FUNCTION_ARGS) {
  const char* name = text_to_cstring(PG_GETARG_TEXT_PP(0));
  require_shared_memory("gpu_graph_refresh");
  require_primary("gpu_graph_refresh");
  const bool wrote_before = TransactionIdIsValid(GetTopTransactionIdIfAny());
  Registration reg = registration_to_manage(name, "gpu_graph_refresh");
  const char* schema = extension_schema();
  QueryReads reads;
  int level = push_search_path(reg.search_path);
  analyze_query(reg.edges_sql, "gpu_graph_refresh", true, &reads);
  pop_search_path(level);
  if (!reg.manual && reads.untrackable[0] != '\0')
    ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
                    errmsg("the changes the query of \"%s\" reads cannot be tracked: %s", name,
                           reads.untrackable)));
  if (!reg.manual)
    for (int i = 0; i < reads.table_count; ++i)
      if (is_base_table(reads.relkinds[i])) ensure_trigger(reads.tables[i], schema);
  // Which forms were built: refresh rebuilds those (the directed one at least).
  bool had_undirected = false;
  LWLockAcquire(g_shared->lock, LW_EXCLUSIVE);
  for (int f = 0; f < kMaxForms; ++f) {
    const SharedForm& form = g_shared->forms[f];
    if (form.state == kFormReady && form.database == MyDatabaseId && form.graph_id == reg.id &&
        !form.directed)
      had_undirected = true;
  }
  free_forms_of(reg.id);
  LWLockRelease(g_shared->lock);
  char sql[512];
  snprintf(sql, sizeof sql,
           "UPDATE %s.gpu_routing_graphs SET tables = $2, unusable = NULL, "
           "generation = generation + 1 WHERE id = $1",
           schema);
  Oid types[2] = {INT8OID, REGCLASSARRAYOID};
  Datum values[2] = {Int64GetDatum(reg.id), tables_datum(reads)};
  run_as_owner(sql, 2, types, values, nullptr, SPI_OK_UPDATE);
  read_registration(name, true, &reg);
  remember_registration(reg.id, wrote_before);
  progress_begin("gpu_graph_refresh");
  std::string line = build_now(reg, wrote_before, "gpu_graph_refresh");
  if (had_undirected && !wrote_before) {
    double build_ms;
    acquire_form(reg, false, &build_ms, "gpu_graph_refresh");
    line += "; undirected form rebuilt";
  }
  progress_end();
  char* result = psprintf("kept graph %s: %s", name, line.c_str());
  PG_RETURN_TEXT_P(cstring_to_text(result));
}

extern "C" Datum gpu_graph_drop(PG_FUNCTION_ARGS) {
  const char* name = text_to_cstring(PG_GETARG_TEXT_PP(0));
  require_primary("gpu_graph_drop");
  Registration reg = registration_to_manage(name, "gpu_graph_drop");
  const char* schema = extension_schema();
  char sql[256];
  snprintf(sql, sizeof sql, "DELETE FROM %s.gpu_routing_graphs WHERE id = $1", schema);
  Oid types[1] = {INT8OID};
  Datum values[1] = {Int64GetDatum(reg.id)};
  run_as_owner(sql, 1, types, values, nullptr, SPI_OK_DELETE);
  drop_unused_triggers(schema);
  if (g_shared != nullptr) {
    LWLockAcquire(g_shared->lock, LW_EXCLUSIVE);
    free_forms_of(reg.id);
    free_orders_of(reg.id);
    LWLockRelease(g_shared->lock);
  }
  PG_RETURN_VOID();
}

// gpu_graph_index(name, enabled): records in the registry whether the graph's forms carry a road
// index. Enabled, the index of the directed form is made now when this transaction has written
// nothing yet (as gpu_graph_create builds), else by the first call after commit; every later form
// (after a committed change, after a restart) gets it from its first call. Disabled, the graph's
// indexes and kept orders are freed.
extern "C" Datum gpu_graph_index(PG_FUNCTION_ARGS) {
  const char* name = text_to_cstring(PG_GETARG_TEXT_PP(0));
  const bool enabled = PG_GETARG_BOOL(1);
  require_shared_memory("gpu_graph_index");
  require_primary("gpu_graph_index");
  const bool wrote_before = TransactionIdIsValid(GetTopTransactionIdIfAny());
  Registration reg = registration_to_manage(name, "gpu_graph_index");
  if (reg.unusable != nullptr)
    ereport(ERROR,
            (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
             errmsg("kept graph \"%s\" is unusable: %s", name, reg.unusable),
             errhint("Run SELECT gpu_graph_refresh('%s') once its query works again.", name)));
  const char* schema = extension_schema();
  char sql[256];
  snprintf(sql, sizeof sql, "UPDATE %s.gpu_routing_graphs SET road_index = $2 WHERE id = $1",
           schema);
  Oid types[2] = {INT8OID, BOOLOID};
  Datum values[2] = {Int64GetDatum(reg.id), BoolGetDatum(enabled)};
  run_as_owner(sql, 2, types, values, nullptr, SPI_OK_UPDATE);
  if (!enabled) {
    LWLockAcquire(g_shared->lock, LW_EXCLUSIVE);
    free_indexes_of(reg.id);
    free_orders_of(reg.id);
    LWLockRelease(g_shared->lock);
    if (g_switched_off_count == kMaxSwitchedOff)
      ereport(ERROR, (errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
                      errmsg("at most %d road indexes may be switched off in one transaction",
                             kMaxSwitchedOff)));
    g_switched_off[g_switched_off_count++] = reg.id;
    PG_RETURN_TEXT_P(cstring_to_text(psprintf("kept graph %s: road index off", name)));
  }
  reg.road_index = true;
  if (wrote_before)
    PG_RETURN_TEXT_P(cstring_to_text(
        psprintf("kept graph %s: road index on; this transaction wrote before, so the graph's "
                 "next call makes it",
                 name)));
  progress_begin("gpu_graph_index");
  double build_ms = 0;
  SessionGraph* entry = acquire_form(reg, true, &build_ms, "gpu_graph_index");
  KeptGraphUse use;
  prepare_road_index(reg, true, entry, true, &use);
  progress_end();
  // Not kept (it does not fit in gpu_routing.graph_memory, or no segment is left): the registry
  // must not ask for it either (this error rolls the switch-on back).
  if (use.road_index == nullptr && strncmp(use.index_how, "road index not kept", 19) == 0)
    ereport(ERROR,
            (errcode(ERRCODE_OUT_OF_MEMORY), errmsg("kept graph %s: %s", name, use.index_how),
             errhint("Raise gpu_routing.graph_memory in postgresql.conf, or switch other "
                     "graphs' road indexes off.")));
  const char* how = use.index_how[0] != '\0'
                        ? use.index_how
                        : (use.road_index != nullptr ? "road index already made" : "road index on");
  PG_RETURN_TEXT_P(cstring_to_text(psprintf("kept graph %s: %s", name, how)));
}

// gpu_graphs(): the registrations joined with their built forms.
extern "C" Datum gpu_graphs(PG_FUNCTION_ARGS) {
  InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC);
  ReturnSetInfo* rsinfo = reinterpret_cast<ReturnSetInfo*>(fcinfo->resultinfo);
  const char* schema = extension_schema();
  if (schema == nullptr) return (Datum)0;
  MemoryContext caller = CurrentMemoryContext;
  const Oid caller_role = GetUserId();
  // Every registration, read as the registry's owner; what the caller may see of each is decided
  // below (graph_visible).
  const SavedUser saved = become_registry_owner();
  if (SPI_connect() != SPI_OK_CONNECT) elog(ERROR, "SPI_connect failed");
  char sql[512];
  snprintf(sql, sizeof sql,
           "SELECT name, owner, edges_sql, tables, refresh, id, generation, unusable, "
           "tables::oid[], %s FROM %s.gpu_routing_graphs ORDER BY name",
           road_index_column(), schema);
  SPI_execute(sql, true, 0);
  // Kept apart: reading the change log below runs SPI again.
  SPITupleTable* registrations = SPI_tuptable;
  const uint64 registration_count = SPI_processed;
  const bool in_recovery = RecoveryInProgress();
  for (uint64 r = 0; r < registration_count; ++r) {
    HeapTuple row = registrations->vals[r];
    TupleDesc desc = registrations->tupdesc;
    bool isnull;
    Datum values[16];
    bool nulls[16] = {false};
    for (int c = 0; c < 5; ++c) values[c] = SPI_getbinval(row, desc, c + 1, &nulls[c]);
    if (!graph_visible(caller_role, DatumGetObjectId(values[1]),
                       SPI_getbinval(row, desc, 9, &isnull))) {
      // The name and the owner alone: its query's text, tables and state are the business of
      // those who may read what it reads.
      MemoryContext spi = MemoryContextSwitchTo(caller);
      for (int c = 2; c < 15; ++c) nulls[c] = true;
      values[15] = CStringGetTextDatum(
          "hidden: you may not read every table its query reads (pg_read_all_stats may)");
      tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
      MemoryContextSwitchTo(spi);
      continue;
    }
    const int64 id = DatumGetInt64(SPI_getbinval(row, desc, 6, &isnull));
    const int64 generation = DatumGetInt64(SPI_getbinval(row, desc, 7, &isnull));
    bool no_reason;
    Datum unusable = SPI_getbinval(row, desc, 8, &no_reason);
    const bool index_asked = DatumGetBool(SPI_getbinval(row, desc, 10, &isnull)) && !isnull;
    std::string forms, state = "not built", note;
    int64 vertices = -1, edges = -1, calls = 0, host = 0, device = 0;
    TimestampTz built_at = 0, last_used = 0;
    double build_ms = -1;
    bool any = false;
    dsm_handle ready_handles[4];  // the ready forms' segments, for the GPU service's device copies
    int ready_count = 0;
    if (g_shared != nullptr) {
      // On a standby, forms are judged against the changes this statement's snapshot sees.
      CallView view;
      view.in_recovery = in_recovery;
      if (in_recovery) {
        bool no_tables;
        Datum tables = SPI_getbinval(row, desc, 9, &no_tables);
        if (!no_tables) {
          Datum* elements;
          bool* element_nulls;
          int count;
          deconstruct_array(DatumGetArrayTypeP(tables), OIDOID, sizeof(Oid), true, TYPALIGN_INT,
                            &elements, &element_nulls, &count);
          Oid relids[kMaxTablesPerGraph];
          count = std::min(count, kMaxTablesPerGraph);
          for (int i = 0; i < count; ++i) relids[i] = DatumGetObjectId(elements[i]);
          view.change_sum = change_log_sum(relids, count);
        }
      }
      LWLockAcquire(g_shared->lock, LW_SHARED);
      bool fresh = false, stale = false, building = false;
      for (int f = 0; f < kMaxForms; ++f) {
        const SharedForm& form = g_shared->forms[f];
        if (form.state == kFormFree || form.database != MyDatabaseId || form.graph_id != id ||
            form.generation != generation)
          continue;
        any = true;
        if (!forms.empty()) forms += ", ";
        forms += form.directed ? "directed" : "undirected";
        if (form.state == kFormBuilding) {
          building = true;
          continue;
        }
        (form_serves(form, view) ? fresh : stale) = true;
        if (vertices < 0 || form.directed) {
          vertices = form.vertices;
          edges = form.edge_rows;
        }
        host += static_cast<int64>(form.bytes + form.index_bytes);
        device += form.device_bytes;
        if (form.index_state == kIndexReady) {
          char line[200];
          snprintf(
              line, sizeof line,
              " with road index (%s; order %s, hierarchy %.0f ms, customization %.0f ms%s)",
              bytes_text(form.index_bytes).c_str(),
              form.index_order_ms > 0
                  ? (std::to_string(static_cast<long>(std::lround(form.index_order_ms))) + " ms")
                        .c_str()
                  : "kept",
              form.index_hierarchy_ms, form.index_customization_ms,
              form.index_on_gpu ? " on the GPU" : "");
          forms += line;
        } else if (form.index_state == kIndexBuilding) {
          forms += form.index_in_worker ? " (road index being made by a background worker)"
                                        : " (road index being made)";
        } else if (index_asked) {
          forms += " (road index asked for: made by the next call on the graph)";
        }
        if (ready_count < 4) ready_handles[ready_count++] = form.handle;
        calls += form.calls;
        if (form.built_at > built_at) {
          built_at = form.built_at;
          build_ms = form.build_ms;
        }
        last_used = std::max(last_used, form.last_used);
      }
      // Also counted against gpu_routing.graph_memory: forms of older generations (freed when
      // the current one is built) and the contraction order kept for re-making its road index.
      for (const auto& form : g_shared->forms)
        if (form.state == kFormReady && form.database == MyDatabaseId && form.graph_id == id &&
            form.generation != generation) {
          any = true;
          host += static_cast<int64>(form.bytes + form.index_bytes);
        }
      for (const auto& order : g_shared->orders) {
        if (!order.used || order.database != MyDatabaseId || order.graph_id != id) continue;
        any = true;
        host += static_cast<int64>(order.bytes);
        if (!forms.empty()) forms += "; ";
        forms += std::string("road index order kept") + (order.directed ? "" : " (undirected)") +
                 ", " + bytes_text(order.bytes);
      }
      LWLockRelease(g_shared->lock);
      // With the GPU service, the device copy is the service's (one for the server).
      for (int h = 0; h < ready_count; ++h) {
        const long long on_device =
            service_device_bytes(kept_image_segment_name(static_cast<unsigned>(ready_handles[h])));
        if (on_device > 0) device += on_device;
      }
      state = building ? "building" : fresh ? "fresh" : stale ? "stale" : "not built";
      if (stale && !fresh) note = "its tables changed: rebuilt on the next call";
      if (fresh && strcmp(TextDatumGetCString(values[4]), "manual") == 0)
        note = "refresh => manual: changes are seen after gpu_graph_refresh";
      if (state == "not built")
        note = "built on first use (after a restart, an eviction or a refresh)";
    } else {
      note = "kept graphs are off: gpu_routing is not in shared_preload_libraries";
    }
    if (!no_reason) {
      state = "unusable";
      note = TextDatumGetCString(unusable);
    }
    MemoryContext spi = MemoryContextSwitchTo(caller);
    values[5] = CStringGetTextDatum(state.c_str());
    nulls[6] = !any;
    values[6] = CStringGetTextDatum(forms.c_str());
    nulls[7] = vertices < 0;
    values[7] = Int64GetDatum(vertices);
    nulls[8] = edges < 0;
    values[8] = Int64GetDatum(edges);
    nulls[9] = !any;
    values[9] = Int64GetDatum(host);
    nulls[10] = !any;
    values[10] = Int64GetDatum(device);
    nulls[11] = built_at == 0;
    values[11] = TimestampTzGetDatum(built_at);
    nulls[12] = build_ms < 0;
    values[12] = Float8GetDatum(build_ms);
    values[13] = Int64GetDatum(calls);
    nulls[14] = last_used == 0;
    values[14] = TimestampTzGetDatum(last_used);
    nulls[15] = note.empty();
    values[15] = CStringGetTextDatum(note.c_str());
    tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
    MemoryContextSwitchTo(spi);
  }
  SPI_finish();
  restore_user(saved);
  return (Datum)0;
}

// The statement trigger on kept graphs' tables: notes the table as changed by this transaction.
extern "C" Datum gpu_routing_track_changes(PG_FUNCTION_ARGS) {
  if (!CALLED_AS_TRIGGER(fcinfo))
    ereport(ERROR, (errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
                    errmsg("gpu_routing_track_changes() is a trigger function")));
  TriggerData* data = reinterpret_cast<TriggerData*>(fcinfo->context);
  const Oid relid = RelationGetRelid(data->tg_relation);
  bool known = false;
  for (int i = 0; i < g_changed_count && !known; ++i) known = g_changed_tables[i] == relid;
  if (!known) {
    if (g_changed_count < kMaxChangedTables)
      g_changed_tables[g_changed_count++] = relid;
    else
      g_changed_overflow = true;
  }
  // For standbys, whose shared memory no commit here reaches (change_log.hpp).
  change_log_note(relid);
  return PointerGetDatum(nullptr);
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
namespace gpu_routing::pg {
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
}  // namespace gpu_routing::pg

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
