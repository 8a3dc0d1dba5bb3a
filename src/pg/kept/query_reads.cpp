// What a kept graph's query reads (see query_reads.hpp).
#include "kept/kept_graphs.hpp"  // (core headers: before PostgreSQL's)
#include "kept/query_reads.hpp"

#include <cstdio>
#include <cstring>

extern "C" {
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
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
// table named as one of its tables: pgTAP's kept_graphs.sql checks it), so every kept plan is
// let go whenever a relation is made, renamed or dropped (pg_class's name cache is invalidated,
// by this session or, from their commit on, by others).
struct KeptAnalysis {
  char* sql;
  char* search_path;
  SPIPlanPtr plan;
  uint64 used;
};
constexpr int kKeptAnalyses = 8;
KeptAnalysis g_kept_analyses[kKeptAnalyses];
uint64 g_analysis_clock = 0;
MemoryContext g_analysis_context = nullptr;
// Set by the invalidation callback, which may run while a kept plan is in use (revalidating it
// takes locks, which reads invalidations): the plans are let go at the next query_plan().
bool g_analyses_stale = false;
bool g_watching_names = false;

void relation_names_changed(Datum, int, uint32) {
  g_analyses_stale = true;
}

void let_go_of_kept_analyses() {
  for (KeptAnalysis& kept : g_kept_analyses) {
    if (kept.plan == nullptr) continue;
    SPI_freeplan(kept.plan);
    pfree(kept.sql);
    pfree(kept.search_path);
    kept.plan = nullptr;
  }
  g_analyses_stale = false;
}

// The plan of `sql` under the current search_path (inside SPI_connect): kept where asked, else
// prepared for this call alone; null with SPI_result set where it does not prepare.
SPIPlanPtr query_plan(const char* sql, bool keep) {
  const char* search_path = namespace_search_path != nullptr ? namespace_search_path : "";
  if (g_analyses_stale) let_go_of_kept_analyses();
  if (keep)
    for (KeptAnalysis& kept : g_kept_analyses)
      if (kept.plan != nullptr && strcmp(kept.sql, sql) == 0 &&
          strcmp(kept.search_path, search_path) == 0) {
        kept.used = ++g_analysis_clock;
        return kept.plan;
      }
  SPIPlanPtr plan = SPI_prepare(sql, 0, nullptr);
  if (plan == nullptr || !keep) return plan;
  if (g_analysis_context == nullptr)
    g_analysis_context =
        AllocSetContextCreate(TopMemoryContext, "gpu_routing kept analyses", ALLOCSET_SMALL_SIZES);
  if (!g_watching_names) {
    CacheRegisterSyscacheCallback(RELNAMENSP, relation_names_changed, 0);
    g_watching_names = true;
  }
  KeptAnalysis* slot = free_or_oldest(
      g_kept_analyses, [](const KeptAnalysis& k) { return k.plan == nullptr; },
      [](const KeptAnalysis&) { return true; },
      [](const KeptAnalysis& a, const KeptAnalysis& b) { return a.used < b.used; });
  if (slot->plan != nullptr) {
    SPI_freeplan(slot->plan);
    pfree(slot->sql);
    pfree(slot->search_path);
    slot->plan = nullptr;
  }
  if (SPI_keepplan(plan) != 0) elog(ERROR, "gpu_routing: keeping the plan of a kept graph failed");
  slot->sql = MemoryContextStrdup(g_analysis_context, sql);
  slot->search_path = MemoryContextStrdup(g_analysis_context, search_path);
  slot->plan = plan;
  slot->used = ++g_analysis_clock;
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
