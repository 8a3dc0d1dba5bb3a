// What a kept graph's query reads (see query_reads.hpp).
#include "kept/kept_graphs.hpp"  // (core headers: before PostgreSQL's)
#include "kept/query_reads.hpp"

#include <cstdio>
#include <cstring>

extern "C" {
#include "catalog/pg_class.h"
#include "executor/executor.h"
#include "optimizer/optimizer.h"
#include "utils/plancache.h"
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

}  // namespace

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
  int level = NewGUCNestLevel();
  if (path != nullptr)
    (void)set_config_option("search_path", path, PGC_USERSET, PGC_S_SESSION, GUC_ACTION_SAVE, true,
                            0, false);
  return level;
}

void pop_search_path(int level) {
  AtEOXact_GUC(true, level);
}

}  // namespace gpu_routing::pg
