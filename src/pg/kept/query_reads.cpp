// What a kept graph's query reads (see query_reads.hpp).
#include "kept/kept_graphs.hpp"  // (core headers: before PostgreSQL's)
#include "kept/query_reads.hpp"

#include <cstdio>
#include <cstring>

extern "C" {
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "miscadmin.h"
#include "utils/lsyscache.h"
#include "executor/executor.h"
#include "optimizer/optimizer.h"
#include "utils/inval.h"
#include "utils/plancache.h"
#include "utils/syscache.h"
}

namespace gpu_routing::pg::kept {

namespace {

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

// Plans of the queries calls analyze, kept for the backend by query text and search_path: a call
// on a kept graph checks what its query reads on every call (the caller's rights, row-level
// security), and preparing it each time (parse, analysis, planning) was a tenth of a one-pair
// call on New York's index. PostgreSQL's plan cache revalidates a kept plan (and plans again
// after a change to what it reads, a new search_path or, with row-level security, another role),
// but not when a new relation would now be found first under a name the query uses (a temporary
// table named as one of its tables: pgTAP's kept_graphs.sql checks it). So a kept plan is let go
// when pg_class's name cache is invalidated (by this session or, from their commit on, by others)
// for a name it reads in a schema its search would look in: each plan keeps the name cache's
// hash of (name, schema) for every relation it depends on and every schema of its search_path,
// the session's temporary schema included once it exists. Any relation made, renamed, dropped
// or vacuumed let every kept plan go before, so a server whose other sessions made temporary
// tables prepared every call's query again. A hash of 0 (a cache reset), a plan with more names
// than it keeps, or a new schema (one of a search_path's names could come to exist, or the
// session's temporary schema be made) lets every plan go.
constexpr int kMaxNameHashes = 64;
struct KeptAnalysis {
  char* sql;
  char* search_path;
  SPIPlanPtr plan;
  uint64 used;
  bool stale;     // set by the callbacks; let go at the next query_plan()
  bool any_name;  // more names than name_hashes holds: any relation's change
  int name_hash_count;
  uint32 name_hashes[kMaxNameHashes];
};
constexpr int kKeptAnalyses = 8;
KeptAnalysis g_kept_analyses[kKeptAnalyses];
uint64 g_analysis_clock = 0;
uint64 g_analyses_prepared = 0;
MemoryContext g_analysis_context = nullptr;
// Set by the invalidation callbacks, which may run while a kept plan is in use (revalidating it
// takes locks, which reads invalidations): the plans are let go at the next query_plan().
bool g_analyses_stale = false;
bool g_watching_names = false;

// Name-cache invalidations that arrive while a plan is prepared or its names noted (preparing takes
// locks, which reads invalidations) may concern a name not noted yet: their hashes are held, and
// the plan is kept stale where one is its own (or too many came to hold, or a schema changed).
constexpr int kMaxHeldHashes = 16;
bool g_holding_hashes = false;
bool g_held_overflow = false;
int g_held_count = 0;
uint32 g_held_hashes[kMaxHeldHashes];

void hold_hash(uint32 hashvalue) {
  if (!g_holding_hashes) return;
  if (hashvalue == 0 || g_held_count == kMaxHeldHashes)
    g_held_overflow = true;
  else
    g_held_hashes[g_held_count++] = hashvalue;
}

// Whether a name-cache invalidation of `hashvalue` may concern a name `kept` reads.
bool may_read_name(const KeptAnalysis& kept, uint32 hashvalue) {
  if (hashvalue == 0 || kept.any_name) return true;
  for (int i = 0; i < kept.name_hash_count; ++i)
    if (kept.name_hashes[i] == hashvalue) return true;
  return false;
}

void relation_names_changed(Datum, int, uint32 hashvalue) {
  hold_hash(hashvalue);
  for (KeptAnalysis& kept : g_kept_analyses)
    if (kept.plan != nullptr && !kept.stale && may_read_name(kept, hashvalue))
      kept.stale = g_analyses_stale = true;
}

void schemas_changed(Datum, int, uint32) {
  if (g_holding_hashes) g_held_overflow = true;
  for (KeptAnalysis& kept : g_kept_analyses)
    if (kept.plan != nullptr) kept.stale = g_analyses_stale = true;
}

void let_go(KeptAnalysis& kept) {
  SPI_freeplan(kept.plan);
  pfree(kept.sql);
  pfree(kept.search_path);
  kept.plan = nullptr;
  kept.stale = false;
}

void let_go_of_stale_analyses() {
  for (KeptAnalysis& kept : g_kept_analyses)
    if (kept.plan != nullptr && kept.stale) let_go(kept);
  g_analyses_stale = false;
}

void add_name_hash(KeptAnalysis* kept, const char* name, Oid schema) {
  if (!OidIsValid(schema)) return;
  if (kept->name_hash_count == kMaxNameHashes) {
    kept->any_name = true;
    return;
  }
  kept->name_hashes[kept->name_hash_count++] =
      GetSysCacheHashValue2(RELNAMENSP, CStringGetDatum(name), ObjectIdGetDatum(schema));
}

// The names `plan` would find its relations under again: each relation it depends on, by its
// name, in its own schema and in every schema its search_path looks in (the session's temporary
// schema too, where it exists in the catalog, even before this session first uses it).
void note_names(KeptAnalysis* kept, SPIPlanPtr plan) {
  kept->name_hash_count = 0;
  kept->any_name = false;
  List* schemas = fetch_search_path(true);
  char temp_name[NAMEDATALEN];
  snprintf(temp_name, sizeof temp_name, "pg_temp_%d", MyBackendId);
  const Oid temp_schema = get_namespace_oid(temp_name, true);
  ListCell* source_cell;
  foreach (source_cell, SPI_plan_get_plan_sources(plan)) {
    const CachedPlanSource* source = static_cast<CachedPlanSource*>(lfirst(source_cell));
    ListCell* relation;
    foreach (relation, source->relationOids) {
      const Oid relid = lfirst_oid(relation);
      char* name = get_rel_name(relid);
      if (name == nullptr) {
        kept->any_name = true;
        continue;
      }
      add_name_hash(kept, name, get_rel_namespace(relid));
      add_name_hash(kept, name, temp_schema);
      ListCell* schema;
      foreach (schema, schemas) add_name_hash(kept, name, lfirst_oid(schema));
      pfree(name);
    }
  }
  list_free(schemas);
}

// The plan of `sql` under the current search_path (inside SPI_connect): kept where asked, else
// prepared for this call alone; null with SPI_result set where it does not prepare.
SPIPlanPtr query_plan(const char* sql, bool keep) {
  const char* search_path = namespace_search_path != nullptr ? namespace_search_path : "";
  if (g_analyses_stale) let_go_of_stale_analyses();
  if (keep)
    for (KeptAnalysis& kept : g_kept_analyses)
      if (kept.plan != nullptr && strcmp(kept.sql, sql) == 0 &&
          strcmp(kept.search_path, search_path) == 0) {
        kept.used = ++g_analysis_clock;
        return kept.plan;
      }
  if (keep && !g_watching_names) {
    CacheRegisterSyscacheCallback(RELNAMENSP, relation_names_changed, 0);
    CacheRegisterSyscacheCallback(NAMESPACENAME, schemas_changed, 0);
    g_watching_names = true;
  }
  g_holding_hashes = keep;
  g_held_overflow = false;
  g_held_count = 0;
  SPIPlanPtr plan = SPI_prepare(sql, 0, nullptr);
  if (plan == nullptr || !keep) {
    g_holding_hashes = false;
    return plan;
  }
  if (g_analysis_context == nullptr)
    g_analysis_context =
        AllocSetContextCreate(TopMemoryContext, "gpu_routing kept analyses", ALLOCSET_SMALL_SIZES);
  KeptAnalysis* slot = free_or_oldest(
      g_kept_analyses, [](const KeptAnalysis& k) { return k.plan == nullptr; },
      [](const KeptAnalysis&) { return true; },
      [](const KeptAnalysis& a, const KeptAnalysis& b) { return a.used < b.used; });
  if (slot->plan != nullptr) let_go(*slot);
  if (SPI_keepplan(plan) != 0) elog(ERROR, "gpu_routing: keeping the plan of a kept graph failed");
  slot->sql = MemoryContextStrdup(g_analysis_context, sql);
  slot->search_path = MemoryContextStrdup(g_analysis_context, search_path);
  slot->plan = plan;
  slot->used = ++g_analysis_clock;
  slot->stale = false;
  note_names(slot, plan);
  g_holding_hashes = false;
  bool held_hit = g_held_overflow;
  for (int h = 0; h < g_held_count && !held_hit; ++h)
    held_hit = may_read_name(*slot, g_held_hashes[h]);
  if (held_hit) slot->stale = g_analyses_stale = true;
  ++g_analyses_prepared;
  return plan;
}

}  // namespace

void analyze_query(const char* sql, const char* function, bool check_tracking, QueryReads* reads,
                   bool keep_plan) {
  memset(reads, 0, sizeof *reads);
  MemoryContext caller = CurrentMemoryContext;
  if (SPI_connect() != SPI_OK_CONNECT) elog(ERROR, "SPI_connect failed");
  SPIPlanPtr plan = query_plan(sql, keep_plan);
  if (plan == nullptr)
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                    errmsg("edges_sql of %s cannot be prepared: %s", function,
                           SPI_result_code_string(SPI_result))));
  List* sources = SPI_plan_get_plan_sources(plan);
  if (list_length(sources) != 1)
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                    errmsg("edges_sql of %s must be one SQL query", function)));
  CachedPlanSource* source = static_cast<CachedPlanSource*>(linitial(sources));
  // The plan, revalidated (planned again where what it reads changed): what it reads, below.
  CachedPlan* cached = SPI_plan_get_cached_plan(plan);
  if (cached == nullptr) elog(ERROR, "gpu_routing: no plan for edges_sql");
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
  // A kept plan's reference belongs to the resource owner (SPI_plan_get_cached_plan).
  ReleaseCachedPlan(cached, keep_plan ? CurrentResourceOwner : nullptr);
  if (!keep_plan) SPI_freeplan(plan);
  SPI_finish();
}

int kept_query_plans() {
  int kept = 0;
  for (const KeptAnalysis& analysis : g_kept_analyses) kept += analysis.plan != nullptr;
  return kept;
}

uint64 kept_query_plans_prepared() {
  return g_analyses_prepared;
}

bool same_tables(const QueryReads& reads, const Registration& reg) {
  if (reads.table_count != reg.table_count) return false;
  for (int i = 0; i < reads.table_count; ++i) {
    bool found = false;
    for (int k = 0; k < reg.table_count && !found; ++k) found = reg.tables[k] == reads.tables[i];
    if (!found) return false;
  }
  return true;
}

// Lists the tables of `reads` as a regclass[] Datum.
Datum tables_datum(const QueryReads& reads) {
  Datum elements[kMaxTablesPerGraph];
  for (int i = 0; i < reads.table_count; ++i) elements[i] = ObjectIdGetDatum(reads.tables[i]);
  return PointerGetDatum(
      construct_array(elements, reads.table_count, REGCLASSOID, sizeof(Oid), true, TYPALIGN_INT));
}

}  // namespace gpu_routing::pg::kept

namespace gpu_routing::pg {

int push_search_path(const char* path) {
  // Already the session's: nothing to set or undo (setting it and AtEOXact_GUC's walk over every
  // setting were 2% of a one-pair call on a kept graph).
  if (path == nullptr ||
      (namespace_search_path != nullptr && strcmp(path, namespace_search_path) == 0))
    return -1;
  int level = NewGUCNestLevel();
  (void)set_config_option("search_path", path, PGC_USERSET, PGC_S_SESSION, GUC_ACTION_SAVE, true, 0,
                          false);
  return level;
}

void pop_search_path(int level) {
  if (level >= 0) AtEOXact_GUC(true, level);
}

}  // namespace gpu_routing::pg
