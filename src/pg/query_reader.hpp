// Runs a user's query (edges_sql, combinations_sql) read-only through SPI with a DestReceiver of
// our own: each row's values go straight from the executor's slot into growing arrays, with no
// SPI tuple table in between (PERFORMANCE.md: 0.13 s instead of ~0.5 s for 4M rows). Columns are
// found by name; types are checked once, when the query's result shape is known.
//
// PostgreSQL-side code: it raises errors with ereport and must run outside guarded C++ scopes.
// The arrays are palloc'd in the memory context current at the call, so an error frees them.
#pragma once

#include <cstdint>

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

}  // namespace gpu_routing::pg
