// Kept graphs: what a graph's query reads (its tables and views, the columns of each, whether
// row-level security applies), found by preparing it as the current user, whose right to read
// it the executor's own check confirms. Raises PostgreSQL errors.
#pragma once

#include "kept/registry.hpp"

extern "C" {
#include "nodes/bitmapset.h"
}

namespace gpu_routing::pg::kept {

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

// Prepares `sql` (under the current search_path) as the current user, checks that user may read
// what it reads, and lists the tables and views it reads with their columns. With
// `check_tracking`, says what would stop changes from being seen.
// With `keep_plan`, the query's plan is kept for later calls (by text and search_path).
void analyze_query(const char* sql, const char* function, bool check_tracking, QueryReads* reads,
                   bool keep_plan = false);
// The kept plans of this session (at most 8), and how many it has prepared to keep (a plan is
// prepared again after a relation is made, renamed or dropped under a name it reads, in a schema
// its search_path looks in): gpu_routing_info()'s "kept graph query plans".
int kept_query_plans();
uint64 kept_query_plans_prepared();
// The query reads exactly the registration's tables.
bool same_tables(const QueryReads& reads, const Registration& reg);
// Lists the tables of `reads` as a regclass[] Datum.
Datum tables_datum(const QueryReads& reads);

}  // namespace gpu_routing::pg::kept
