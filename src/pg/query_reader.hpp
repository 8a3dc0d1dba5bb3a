// Runs a user's query (edges_sql, combinations_sql) read-only through SPI with a DestReceiver of
// our own: each row's values go straight from the executor's slot into growing arrays, with no
// SPI tuple table in between (PERFORMANCE.md: 0.13 s instead of ~0.5 s for 4M rows). Columns are
// found by name; types are checked once, when the query's result shape is known.
//
// PostgreSQL-side code: it raises errors with ereport and must run outside guarded C++ scopes.
// The arrays are palloc'd in the memory context current at the call, so an error frees them.
#pragma once

#include <cstdint>

#include "base/graph.hpp"  // EdgeArrays (the core's headers come before PostgreSQL's: include this first)

namespace gpu_routing::pg {

enum class ColumnKind { kInteger, kNumerical };  // ANY-INTEGER / ANY-NUMERICAL

struct ColumnSpec {
  const char* name;
  ColumnKind kind;
  bool required;
};

constexpr int kMaxQueryColumns = 8;

struct QueryColumns {
  std::int64_t rows = 0;
  bool present[kMaxQueryColumns] = {};
  // For kInteger columns: integers[c]; for kNumerical: numbers[c]. Null when absent.
  std::int64_t* integers[kMaxQueryColumns] = {};
  double* numbers[kMaxQueryColumns] = {};
};

// `what` names the query in errors ("edges_sql"); `function` the SQL function ("gpu_path").
void read_query_columns(const char* sql, const char* what, const char* function,
                        const ColumnSpec* specs, int spec_count, QueryColumns* out);

// The edges of an edges_sql query, by name: id (required where `need_id`: gpu_apsp reports no
// edges, as pgr_floydWarshall), source, target, cost and, where present, reverse_cost. The one
// reader of edges, for calls and for kept graphs' builds.
void read_edge_columns(const char* sql, const char* function, bool need_id, QueryColumns* out);

// The arrays build_graph takes, viewing the columns read_edge_columns read.
inline EdgeArrays edge_arrays(const QueryColumns& edges) {
  EdgeArrays arrays;
  arrays.count = static_cast<std::size_t>(edges.rows);
  arrays.ids = edges.present[0] ? edges.integers[0] : nullptr;
  arrays.sources = edges.integers[1];
  arrays.targets = edges.integers[2];
  arrays.costs = edges.numbers[3];
  arrays.reverse_costs = edges.present[4] ? edges.numbers[4] : nullptr;
  return arrays;
}

}  // namespace gpu_routing::pg
