#include "query_reader.hpp"

#include "base/common.hpp"
#include "settings.hpp"

#include <algorithm>
#include <cmath>

#include "postgres_headers.hpp"

extern "C" {
#include "nodes/parsenodes.h"
#include "utils/plancache.h"
}

namespace gpu_routing::pg {

namespace {

enum class ValueType { kInt2, kInt4, kInt8, kFloat4, kFloat8, kNumeric };

struct Receiver {
  DestReceiver pub;  // first member: the executor sees a DestReceiver*
  MemoryContext arrays_context;
  const char* what;
  const char* function;
  const ColumnSpec* specs;
  int spec_count;
  int attribute[kMaxQueryColumns];  // 0-based attribute number, -1 when absent
  ValueType type[kMaxQueryColumns];
  int max_attribute;
  bool started;  // rStartup ran: the query returns rows
  std::int64_t capacity;
  QueryColumns* out;
};

const char* kind_text(ColumnKind kind) {
  return kind == ColumnKind::kInteger
             ? "ANY-INTEGER (smallint, integer or bigint)"
             : "ANY-NUMERICAL (smallint, integer, bigint, real, double precision or numeric)";
}

bool value_type_of(Oid type, ColumnKind kind, ValueType* value_type) {
  switch (getBaseType(type)) {
    case INT2OID:
      *value_type = ValueType::kInt2;
      return true;
    case INT4OID:
      *value_type = ValueType::kInt4;
      return true;
    case INT8OID:
      *value_type = ValueType::kInt8;
      return true;
    case FLOAT4OID:
      *value_type = ValueType::kFloat4;
      return kind == ColumnKind::kNumerical;
    case FLOAT8OID:
      *value_type = ValueType::kFloat8;
      return kind == ColumnKind::kNumerical;
    case NUMERICOID:
      *value_type = ValueType::kNumeric;
      return kind == ColumnKind::kNumerical;
    default:
      return false;
  }
}

void receiver_startup(DestReceiver* self, int, TupleDesc desc) {
  Receiver* r = reinterpret_cast<Receiver*>(self);
  if (r->started)  // a second result set (a rule's extra query): never mix two shapes of rows
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                    errmsg("%s of %s returned more than one result set", r->what, r->function)));
  r->started = true;
  r->max_attribute = -1;
  for (int c = 0; c < r->spec_count; ++c) {
    const ColumnSpec& spec = r->specs[c];
    r->attribute[c] = -1;
    for (int a = 0; a < desc->natts; ++a) {
      Form_pg_attribute attr = TupleDescAttr(desc, a);
      if (attr->attisdropped || strcmp(NameStr(attr->attname), spec.name) != 0) continue;
      if (r->attribute[c] >= 0)
        ereport(ERROR, (errcode(ERRCODE_AMBIGUOUS_COLUMN),
                        errmsg("%s of %s returns more than one column named \"%s\"", r->what,
                               r->function, spec.name)));
      r->attribute[c] = a;
      if (!value_type_of(attr->atttypid, spec.kind, &r->type[c]))
        ereport(ERROR, (errcode(ERRCODE_DATATYPE_MISMATCH),
                        errmsg("column \"%s\" of %s has type %s, expected %s", spec.name, r->what,
                               format_type_be(attr->atttypid), kind_text(spec.kind)),
                        errhint("Cast it in the query, e.g. %s::%s.", spec.name,
                                spec.kind == ColumnKind::kInteger ? "bigint" : "float8")));
      if (a > r->max_attribute) r->max_attribute = a;
    }
    if (r->attribute[c] < 0 && spec.required) {
      char expected[256] = "";
      for (int k = 0; k < r->spec_count; ++k) {
        strlcat(expected, k == 0 ? "" : ", ", sizeof expected);
        strlcat(expected, r->specs[k].name, sizeof expected);
        if (!r->specs[k].required) strlcat(expected, " (optional)", sizeof expected);
      }
      ereport(ERROR,
              (errcode(ERRCODE_UNDEFINED_COLUMN),
               errmsg("%s of %s has no column named \"%s\"", r->what, r->function, spec.name),
               errhint("%s must return the columns %s; they are found by name, in any order, "
                       "and other columns are ignored.",
                       r->what, expected)));
    }
    r->out->present[c] = r->attribute[c] >= 0;
  }
}

void grow(Receiver* r) {
  // gpu_routing.max_memory holds while the rows arrive: a query of 20M rows under a 1MB limit
  // stops at its first growth past the limit, not after it was read whole. The first block is
  // 65536 rows, or fewer where that alone would pass the limit (never under 1024).
  Size row_bytes = 0;
  for (int c = 0; c < r->spec_count; ++c)
    if (r->out->present[c]) row_bytes += sizeof(std::int64_t);  // int64 or double
  const std::size_t limit = current_settings().max_memory_bytes;
  const std::int64_t first_block = std::max<std::int64_t>(
      1024, std::min<std::int64_t>(
                65536, static_cast<std::int64_t>(limit / std::max<Size>(row_bytes, 1))));
  std::int64_t capacity = r->capacity == 0 ? first_block : r->capacity * 2;
  const std::size_t needed = static_cast<std::size_t>(capacity) * row_bytes;
  if (r->capacity > 0 && needed > limit)
    ereport(ERROR,
            (errcode(ERRCODE_OUT_OF_MEMORY),
             errmsg("%s of %s: %lld rows read so far, %s to hold them and more to come, more than "
                    "gpu_routing.max_memory (%s)",
                    r->what, r->function, static_cast<long long>(r->out->rows),
                    gpu_routing::format_bytes(needed).c_str(),
                    gpu_routing::format_bytes(limit).c_str()),
             errhint("Raise gpu_routing.max_memory if the server has the memory, or read fewer "
                     "rows (a smaller area, a WHERE clause).")));
  for (int c = 0; c < r->spec_count; ++c) {
    if (!r->out->present[c]) continue;
    if (r->specs[c].kind == ColumnKind::kInteger) {
      Size bytes = static_cast<Size>(capacity) * sizeof(std::int64_t);
      r->out->integers[c] = static_cast<std::int64_t*>(
          r->out->integers[c] == nullptr ? MemoryContextAllocHuge(r->arrays_context, bytes)
                                         : repalloc_huge(r->out->integers[c], bytes));
    } else {
      Size bytes = static_cast<Size>(capacity) * sizeof(double);
      r->out->numbers[c] = static_cast<double*>(
          r->out->numbers[c] == nullptr ? MemoryContextAllocHuge(r->arrays_context, bytes)
                                        : repalloc_huge(r->out->numbers[c], bytes));
    }
  }
  r->capacity = capacity;
}

[[noreturn]] void null_value_error(Receiver* r, int c) {
  ereport(ERROR, (errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
                  errmsg("column \"%s\" of %s is NULL in row %lld", r->specs[c].name, r->what,
                         static_cast<long long>(r->out->rows + 1)),
                  errhint("Filter or COALESCE the NULLs in the query; a negative cost means "
                          "\"no edge in this direction\".")));
  pg_unreachable();
}

// The value of an integer-typed column (smallint, integer, bigint).
std::int64_t integer_value(ValueType type, Datum d) {
  switch (type) {
    case ValueType::kInt2:
      return DatumGetInt16(d);
    case ValueType::kInt4:
      return DatumGetInt32(d);
    default:
      return DatumGetInt64(d);
  }
}

bool receiver_receive(TupleTableSlot* slot, DestReceiver* self) {
  Receiver* r = reinterpret_cast<Receiver*>(self);
  if (r->out->rows == r->capacity) grow(r);
  slot_getsomeattrs(slot, r->max_attribute + 1);
  const std::int64_t row = r->out->rows;
  for (int c = 0; c < r->spec_count; ++c) {
    int a = r->attribute[c];
    if (a < 0) continue;
    if (slot->tts_isnull[a]) null_value_error(r, c);
    Datum d = slot->tts_values[a];
    if (r->specs[c].kind == ColumnKind::kInteger) {
      r->out->integers[c][row] = integer_value(r->type[c], d);
    } else {
      double v;
      switch (r->type[c]) {
        case ValueType::kFloat4:
          v = DatumGetFloat4(d);
          break;
        case ValueType::kFloat8:
          v = DatumGetFloat8(d);
          break;
        case ValueType::kNumeric:
          v = DatumGetFloat8(DirectFunctionCall1(numeric_float8, d));
          break;
        default:
          v = static_cast<double>(integer_value(r->type[c], d));
          break;
      }
      if (std::isnan(v))
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                        errmsg("column \"%s\" of %s is NaN in row %lld", r->specs[c].name, r->what,
                               static_cast<long long>(row + 1)),
                        errhint("A cost must be a number: negative or Infinity for \"no edge in "
                                "this direction\", never NaN.")));
      r->out->numbers[c][row] = v;
    }
  }
  r->out->rows = row + 1;
  return true;
}

void receiver_shutdown(DestReceiver*) {}
void receiver_destroy(DestReceiver*) {}

}  // namespace

void read_query_columns(const char* sql, const char* what, const char* function,
                        const ColumnSpec* specs, int spec_count, QueryColumns* out) {
  Assert(spec_count <= kMaxQueryColumns);
  Receiver receiver;
  memset(&receiver, 0, sizeof receiver);
  receiver.pub.receiveSlot = receiver_receive;
  receiver.pub.rStartup = receiver_startup;
  receiver.pub.rShutdown = receiver_shutdown;
  receiver.pub.rDestroy = receiver_destroy;
  receiver.pub.mydest = DestNone;
  receiver.arrays_context = CurrentMemoryContext;
  receiver.what = what;
  receiver.function = function;
  receiver.specs = specs;
  receiver.spec_count = spec_count;
  receiver.out = out;
  *out = QueryColumns();

  if (SPI_connect() != SPI_OK_CONNECT)
    ereport(ERROR, (errcode(ERRCODE_INTERNAL_ERROR), errmsg("%s: SPI_connect failed", function)));
  SPIPlanPtr plan = SPI_prepare(sql, 0, nullptr);
  if (plan == nullptr)
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                    errmsg("%s of %s cannot be prepared: %s", what, function,
                           SPI_result_code_string(SPI_result))));
  // One statement only: several would run one after another into the same arrays (pgRouting
  // refuses them too).
  const int statements = list_length(SPI_plan_get_plan_sources(plan));
  if (statements == 0)
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                    errmsg("%s of %s must be a query returning rows; it holds no statement", what,
                           function)));
  if (statements > 1)
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                    errmsg("%s of %s must be one SQL query, not %d statements", what, function,
                           statements)));
  // A query that would write or lock is refused by name here (read-only execution would refuse
  // it too, with PostgreSQL's words about "non-volatile functions"). A VOLATILE function the
  // query calls can still write: it runs its own statements, as it would under pgRouting.
  CachedPlanSource* source =
      static_cast<CachedPlanSource*>(linitial(SPI_plan_get_plan_sources(plan)));
  ListCell* cell;
  foreach (cell, source->query_list) {
    Query* query = lfirst_node(Query, cell);
    const char* refused = nullptr;
    if (query->commandType != CMD_SELECT || query->utilityStmt != nullptr)
      refused = "it is not a SELECT (or VALUES, TABLE)";
    else if (query->hasModifyingCTE)
      refused = "it writes in a WITH clause";
    else if (query->rowMarks != NIL)
      refused = "it locks rows (FOR UPDATE / FOR SHARE)";
    if (refused != nullptr)
      ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                      errmsg("%s of %s must only read: %s", what, function, refused),
                      errhint("Give a SELECT that returns the columns; write the tables before "
                              "the call.")));
  }
  SPIExecuteOptions options;
  memset(&options, 0, sizeof options);
  options.read_only = true;  // the query may read, never write
  options.dest = &receiver.pub;
  int status = SPI_execute_plan_extended(plan, &options);
  if (status < 0 || !receiver.started)
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                    errmsg("%s of %s must be a query returning rows (SPI status %s)", what,
                           function, SPI_result_code_string(status))));
  SPI_finish();
}

void read_edge_columns(const char* sql, const char* function, bool need_id, QueryColumns* out) {
  ColumnSpec columns[] = {
      {"id", ColumnKind::kInteger, need_id},           {"source", ColumnKind::kInteger, true},
      {"target", ColumnKind::kInteger, true},          {"cost", ColumnKind::kNumerical, true},
      {"reverse_cost", ColumnKind::kNumerical, false},
  };
  read_query_columns(sql, "edges_sql", function, columns, 5, out);
}

}  // namespace gpu_routing::pg
