// The SQL functions. Each call: read the arguments and the edges (PostgreSQL), then alternate
// guarded C++ work on one batch of sources with writing that batch's rows into the result
// tuplestore (PostgreSQL). C++ objects live on the heap, owned by a memory-context callback, so an
// error or a cancel anywhere frees them; no C++ object with a destructor sits on the stack while
// PostgreSQL code that can raise an error runs.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <new>
#include <string>

#include "engine/gpu.hpp"
#include "call/routing_call.hpp"
#include "guard.hpp"
#include "kept/kept_graphs.hpp"
#include "progress.hpp"
#include "base/parallel.hpp"
#include "query_reader.hpp"
#include "service.hpp"
#include "settings.hpp"
#include "speeds.hpp"

#include "postgres_headers.hpp"
#include "owned.hpp"
#include "result_store.hpp"
#include "retained_memory.hpp"

#ifdef _OPENMP
#include <omp.h>
#endif

extern "C" {
#include "commands/prepare.h"
#include "nodes/parsenodes.h"
#include "utils/guc_tables.h"
#include "utils/plancache.h"

PG_FUNCTION_INFO_V1(gpu_sssp_one);
PG_FUNCTION_INFO_V1(gpu_sssp_many);
PG_FUNCTION_INFO_V1(gpu_path_one_to_one);
PG_FUNCTION_INFO_V1(gpu_path_one_to_many);
PG_FUNCTION_INFO_V1(gpu_path_many_to_one);
PG_FUNCTION_INFO_V1(gpu_path_many_to_many);
PG_FUNCTION_INFO_V1(gpu_path_combinations);
PG_FUNCTION_INFO_V1(gpu_apsp_all);
PG_FUNCTION_INFO_V1(gpu_apsp_matrix);
PG_FUNCTION_INFO_V1(gpu_apsp_array_all);
PG_FUNCTION_INFO_V1(gpu_apsp_combinations);
PG_FUNCTION_INFO_V1(gpu_apsp_array_matrix);
PG_FUNCTION_INFO_V1(gpu_driving_distance_one);
PG_FUNCTION_INFO_V1(gpu_driving_distance_many);
PG_FUNCTION_INFO_V1(gpu_routing_info);
PG_FUNCTION_INFO_V1(gpu_routing_last_run);
}

namespace gpu_routing::pg {

namespace {

// ---------------------------------------------------------------------------------------------
// What gpu_routing_last_run() shows: plain C data, so it survives any error path.

struct LastRun {
  bool valid;
  char function[32];
  char device[160];
  char algorithm[64];
  char reason[320];
  char notes[640];
  char graph[64];  // the kept graph that served the call, or empty
  int64 vertices, edges, sources, rows, rounds;
  int batch_size;  // through the GPU service: requests that shared its launch (0: not through it)
  double wait_ms;  // through the GPU service: time its requests waited for their launch
  double load_ms, build_ms, compute_ms, transfer_ms, emit_ms, total_ms;
};
LastRun g_last_run;

void copy_text(char* target, std::size_t size, const std::string& text) {
  snprintf(target, size, "%s", text.c_str());
}

// ---------------------------------------------------------------------------------------------
// Arguments.

enum class PathShape { kNone, kOneToOne, kOneToMany, kManyToOne, kManyToMany, kCombinations };

struct CallArguments {
  CallKind kind;
  PathShape shape;
  const char* function;
  bool directed;
  bool many_source;
  char* edges_sql;
  char* combinations_sql;  // kCombinations
  int64* sources;
  int source_count;
  int64* targets;
  int target_count;
  bool all_targets;  // gpu_apsp with targets NULL
  bool cost_arrays;  // gpu_apsp_array: one row per source, its costs as a float8[]
  double distance;   // kServiceArea: the areas' distance
  bool equicost;     // kServiceArea: each vertex in its nearest start's area only
  bool many_starts;  // kServiceArea: the from_v column (several starts given)
};

// A vertex id array argument, as pgRouting's ANY-INTEGER arrays: smallint[], integer[], bigint[]
// or numeric[] (whole numbers only); one dimension, not empty, no NULLs.
int64* array_argument(FunctionCallInfo fcinfo, int arg, const char* name, const char* function,
                      int* count) {
  ArrayType* array = PG_GETARG_ARRAYTYPE_P(arg);
  if (ARR_NDIM(array) == 0)
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                    errmsg("%s of %s is an empty array", name, function),
                    errhint("Give at least one vertex id.")));
  if (ARR_NDIM(array) != 1)
    ereport(ERROR, (errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
                    errmsg("%s of %s must be a one-dimensional array, not %d-dimensional", name,
                           function, ARR_NDIM(array))));
  const Oid element_type = ARR_ELEMTYPE(array);
  if (element_type != INT2OID && element_type != INT4OID && element_type != INT8OID &&
      element_type != NUMERICOID)
    ereport(ERROR, (errcode(ERRCODE_DATATYPE_MISMATCH),
                    errmsg("%s of %s must be smallint[], integer[], bigint[] or numeric[], not %s",
                           name, function, format_type_be(get_array_type(element_type)))));
  int16 width;
  bool by_value;
  char align;
  get_typlenbyvalalign(element_type, &width, &by_value, &align);
  Datum* elements;
  bool* nulls;
  int n;
  deconstruct_array(array, element_type, width, by_value, align, &elements, &nulls, &n);
  int64* values = static_cast<int64*>(palloc(sizeof(int64) * std::max(n, 1)));
  for (int i = 0; i < n; ++i) {
    if (nulls[i])
      ereport(ERROR, (errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
                      errmsg("%s of %s contains NULL at position %d", name, function, i + 1)));
    switch (element_type) {
      case INT2OID:
        values[i] = DatumGetInt16(elements[i]);
        break;
      case INT4OID:
        values[i] = DatumGetInt32(elements[i]);
        break;
      case INT8OID:
        values[i] = DatumGetInt64(elements[i]);
        break;
      default: {
        // numeric_int8 rounds: refuse what is not a whole number instead of routing elsewhere.
        const Datum truncated = DirectFunctionCall2(numeric_trunc, elements[i], Int32GetDatum(0));
        if (DatumGetInt32(DirectFunctionCall2(numeric_cmp, elements[i], truncated)) != 0)
          ereport(ERROR,
                  (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                   errmsg("%s of %s contains %s at position %d, which is not a whole vertex id",
                          name, function,
                          DatumGetCString(DirectFunctionCall1(numeric_out, elements[i])), i + 1)));
        const Datum lowest = DirectFunctionCall1(int8_numeric, Int64GetDatum(PG_INT64_MIN));
        const Datum highest = DirectFunctionCall1(int8_numeric, Int64GetDatum(PG_INT64_MAX));
        if (DatumGetInt32(DirectFunctionCall2(numeric_cmp, elements[i], lowest)) < 0 ||
            DatumGetInt32(DirectFunctionCall2(numeric_cmp, elements[i], highest)) > 0)
          ereport(ERROR,
                  (errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
                   errmsg("%s of %s contains %s at position %d, outside the range of vertex ids "
                          "(bigint)",
                          name, function,
                          DatumGetCString(DirectFunctionCall1(numeric_out, elements[i])), i + 1)));
        values[i] = DatumGetInt64(DirectFunctionCall1(numeric_int8, elements[i]));
      }
    }
  }
  *count = n;
  return values;
}

// ---------------------------------------------------------------------------------------------
// Rows.

void put_batch(ResultStore* result, const CallArguments& args, const ResultBatch& batch,
               int32* seq) {
  Datum values[8];
  bool nulls[8] = {false, false, false, false, false, false, false, false};
  const std::size_t rows = batch.rows();
  if (args.cost_arrays && !batch.array_rows.empty()) {
    // The engine wrote each array into its tuple in the store's memory (StoreRowDestinations):
    // each gets its header and is stored as it lies.
    for (std::size_t r = 0; r < rows; ++r) {
      put_cost_array_row(result, batch.array_rows[r], batch.array_width, batch.start_vid[r]);
      CHECK_FOR_INTERRUPTS();
    }
    return;
  }
  if (args.cost_arrays) {
    // One (bigint, float8[]) tuple per source, formed once and overwritten row by row: each row's
    // costs are copied once, into the tuple, which the tuplestore then copies. Forming each row's
    // array and then its tuple (palloc0 + copy) wrote every cost three times and faulted in
    // fresh pages for each (New York, 64 trees: 135 MB of costs).
    const std::size_t width = batch.array_width;
    const Size data_bytes = width * sizeof(double);
    if (rows == 0) return;
    int64* start_vid = nullptr;
    double* costs = nullptr;
    HeapTuple tuple = make_cost_array_row(result, width, &start_vid, &costs);
    if (batch.array_row_prefix != 0) {
      // The engine wrote each row after room for its tuple's header (CallOptions::
      // cost_array_row_prefix): the header goes there and the tuplestore copies the tuple from
      // where it lies, the costs' only copy.
      char* const header = reinterpret_cast<char*>(tuple->t_data);
      const std::size_t prefix = static_cast<std::size_t>(reinterpret_cast<char*>(costs) - header);
      if (prefix != batch.array_row_prefix * sizeof(double))
        elog(ERROR, "gpu_routing: a cost array row's header is not the size its room was made for");
      const std::size_t id_offset =
          static_cast<std::size_t>(reinterpret_cast<char*>(start_vid) - header);
      // The batch's buffer is the backend's own now (handed over by next_batch); only the room
      // before each row is written.
      char* slot = reinterpret_cast<char*>(const_cast<double*>(batch.array_costs.data()));
      const std::size_t stride = prefix + data_bytes;
      HeapTupleData view = *tuple;
      for (std::size_t r = 0; r < rows; ++r, slot += stride) {
        memcpy(slot, header, prefix);
        memcpy(slot + id_offset, &batch.start_vid[r], sizeof(int64));
        view.t_data = reinterpret_cast<HeapTupleHeader>(slot);
        tuplestore_puttuple(result->store, &view);
        CHECK_FOR_INTERRUPTS();
      }
      heap_freetuple(tuple);
      return;
    }
    for (std::size_t r = 0; r < rows; ++r) {
      *start_vid = batch.start_vid[r];
      memcpy(costs, batch.array_costs.data() + r * width, data_bytes);
      tuplestore_puttuple(result->store, tuple);
      CHECK_FOR_INTERRUPTS();
    }
    heap_freetuple(tuple);
    return;
  }
  // Checked once per 64k rows: a row costs well under a microsecond.
  auto poll = [](std::size_t r) {
    if ((r & 0xFFFF) == 0xFFFF) CHECK_FOR_INTERRUPTS();
  };
  switch (args.kind) {
    case CallKind::kCostMatrix:
    case CallKind::kAllPairs:
      // The all-pairs floor: millions of rows, so the loop does nothing else.
      for (std::size_t r = 0; r < rows; ++r) {
        values[0] = Int64GetDatum(batch.start_vid[r]);
        values[1] = Int64GetDatum(batch.end_vid[r]);
        values[2] = Float8GetDatum(batch.agg_cost[r]);
        put_result_row(result, values, nulls);
        poll(r);
      }
      return;
    case CallKind::kSsspOne:
    case CallKind::kSsspMany:
      for (std::size_t r = 0; r < rows; ++r) {
        int c = 0;
        if (args.kind == CallKind::kSsspMany) values[c++] = Int64GetDatum(batch.start_vid[r]);
        values[c++] = Int64GetDatum(batch.node[r]);
        values[c++] = Float8GetDatum(batch.agg_cost[r]);
        // The source's row has no predecessor and no edge.
        nulls[c] = nulls[c + 1] = !batch.has_predecessor[r];
        values[c++] = Int64GetDatum(batch.predecessor[r]);
        values[c++] = Int64GetDatum(batch.edge[r]);
        put_result_row(result, values, nulls);
        poll(r);
      }
      return;
    case CallKind::kServiceArea:
      for (std::size_t r = 0; r < rows; ++r) {
        int c = 0;
        values[c++] = Int32GetDatum(++*seq);
        if (args.many_starts) values[c++] = Int64GetDatum(batch.start_vid[r]);
        values[c++] = Int64GetDatum(batch.node[r]);
        values[c++] = Int64GetDatum(batch.edge[r]);
        values[c++] = Float8GetDatum(batch.cost[r]);
        values[c++] = Float8GetDatum(batch.agg_cost[r]);
        put_result_row(result, values, nulls);
        poll(r);
      }
      return;
    case CallKind::kPaths: {
      const bool with_start = args.shape == PathShape::kManyToOne ||
                              args.shape == PathShape::kManyToMany ||
                              args.shape == PathShape::kCombinations;
      const bool with_end = args.shape == PathShape::kOneToMany ||
                            args.shape == PathShape::kManyToMany ||
                            args.shape == PathShape::kCombinations;
      for (std::size_t r = 0; r < rows; ++r) {
        int c = 0;
        values[c++] = Int32GetDatum(++*seq);
        values[c++] = Int32GetDatum(batch.path_seq[r]);
        if (with_start) values[c++] = Int64GetDatum(batch.start_vid[r]);
        if (with_end) values[c++] = Int64GetDatum(batch.end_vid[r]);
        values[c++] = Int64GetDatum(batch.node[r]);
        values[c++] = Int64GetDatum(batch.edge[r]);
        values[c++] = Float8GetDatum(batch.cost[r]);
        values[c++] = Float8GetDatum(batch.agg_cost[r]);
        put_result_row(result, values, nulls);
        poll(r);
      }
      return;
    }
  }
}

double elapsed_ms(instr_time start) {
  instr_time now;
  INSTR_TIME_SET_CURRENT(now);
  INSTR_TIME_SUBTRACT(now, start);
  return INSTR_TIME_GET_MILLISEC(now);
}

// pgRouting accepts the name of a prepared statement wherever it takes a query (PREPARE e AS
// SELECT ...; pgr_dijkstra('e', 6, 10)). Returns the statement's SQL when `sql` is such a name,
// else `sql` itself. A name is an identifier: no query is one.
bool is_identifier(const char* text) {
  if (!(isalpha(static_cast<unsigned char>(*text)) || *text == '_')) return false;
  for (const char* c = text; *c != '\0'; ++c)
    if (!(isalnum(static_cast<unsigned char>(*c)) || *c == '_' || *c == '$')) return false;
  return true;
}

// Skips "PREPARE name [(types)] AS" at the start of `text`; nullptr when it is not there.
const char* after_prepare_as(const char* text) {
  const char* c = text;
  auto skip_space = [&] {
    while (isspace(static_cast<unsigned char>(*c))) ++c;
  };
  skip_space();
  if (pg_strncasecmp(c, "prepare", 7) != 0) return nullptr;
  c += 7;
  skip_space();
  if (*c == '"') {
    for (++c; *c != '\0' && !(c[0] == '"' && c[1] != '"'); c += (c[0] == '"' ? 2 : 1)) {
    }
    if (*c == '"') ++c;
  } else {
    while (isalnum(static_cast<unsigned char>(*c)) || *c == '_' || *c == '$') ++c;
  }
  skip_space();
  if (*c == '(') {
    int depth = 0;
    for (; *c != '\0'; ++c) {
      if (*c == '(') ++depth;
      if (*c == ')' && --depth == 0) {
        ++c;
        break;
      }
    }
  }
  skip_space();
  if (pg_strncasecmp(c, "as", 2) != 0 || !isspace(static_cast<unsigned char>(c[2]))) return nullptr;
  return c + 2;
}

const char* statement_sql(const char* sql, const char* what, const char* function) {
  while (isspace(static_cast<unsigned char>(*sql))) ++sql;
  char* name = pstrdup(sql);
  for (char* end = name + strlen(name); end > name && isspace(static_cast<unsigned char>(end[-1]));)
    *--end = '\0';
  if (!is_identifier(name)) return sql;
  PreparedStatement* prepared = FetchPreparedStatement(name, false);
  if (prepared == nullptr)
    ereport(
        ERROR,
        (errcode(ERRCODE_UNDEFINED_PSTATEMENT),
         errmsg("%s of %s is \"%s\": neither a query nor a prepared statement of this session",
                what, function, name),
         errhint("Give a query, or the name of a statement made in this session with PREPARE name "
                 "AS SELECT ...")));
  CachedPlanSource* source = prepared->plansource;
  if (source->num_params > 0)
    ereport(ERROR,
            (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
             errmsg("%s of %s names the prepared statement \"%s\", which takes %d "
                    "parameter%s",
                    what, function, name, source->num_params, source->num_params == 1 ? "" : "s"),
             errhint("A prepared statement given as %s must take no parameters.", what)));
  // The statement's own text: query_string may hold a whole multi-statement string.
  const char* text = source->query_string;
  int length = static_cast<int>(strlen(text));
  if (source->raw_parse_tree != nullptr) {
    const int location = std::max(source->raw_parse_tree->stmt_location, 0);
    const int len = source->raw_parse_tree->stmt_len;
    text += std::min(location, length);
    length = len > 0 ? std::min(len, length - location) : length - location;
  }
  char* statement = pnstrdup(text, static_cast<Size>(std::max(length, 0)));
  const char* body = prepared->from_sql ? after_prepare_as(statement) : statement;
  if (body == nullptr) return sql;
  char* result = pstrdup(body);
  for (char* end = result + strlen(result);
       end > result && (isspace(static_cast<unsigned char>(end[-1])) || end[-1] == ';');)
    *--end = '\0';
  return result;
}

// What a call read: its kept graph (or its edges, read privately) and pairs, and how long the
// reading took. PostgreSQL memory: freed with the call's context.
struct CallInputs {
  KeptGraphUse kept;
  QueryColumns edges;
  QueryColumns pairs;
  bool road_index_asked = false;  // the call named the road index's engine
  double load_ms = 0;
};

// Phase 1 (PostgreSQL): the graph and the pairs. A kept graph named ('graph:NAME') or registered
// with this very query serves the call; otherwise the edges are read (a kept graph's query too,
// when it must be read privately).
void read_call_inputs(CallArguments* args, const Settings& settings, CallInputs* in) {
  instr_time start;
  INSTR_TIME_SET_CURRENT(start);
  args->edges_sql = const_cast<char*>(statement_sql(args->edges_sql, "edges_sql", args->function));
  if (args->combinations_sql != nullptr)
    args->combinations_sql = const_cast<char*>(
        statement_sql(args->combinations_sql, "combinations_sql", args->function));
  // Naming the road index's engine (on the CPU or the GPU) asks for the kept graph's index (made
  // by this call if absent).
  in->road_index_asked =
      (args->many_source ? settings.apsp_algorithm : settings.sssp_algorithm) == "cch";
  resolve_kept_graph(args->edges_sql, args->directed, args->function, in->road_index_asked,
                     &in->kept);
  const KeptGraphUse& kept = in->kept;
  progress_set_graph(kept.graph != nullptr ? kept.name : nullptr);  // read privately: edges_sql
  progress_set_phase(CallPhase::kReading);  // after a kept graph's build, or reading it privately
  if (kept.graph == nullptr) {
    // gpu_apsp reports no edges, so it needs no id (as pgr_floydWarshall and pgr_johnson).
    const bool need_id = args->kind != CallKind::kAllPairs && args->kind != CallKind::kCostMatrix;
    const int level =
        kept.read_search_path != nullptr ? push_search_path(kept.read_search_path) : -1;
    read_edge_columns(kept.read_sql, args->function, need_id, &in->edges);
    if (level >= 0) pop_search_path(level);
  }
  if (args->shape == PathShape::kCombinations) {
    static const ColumnSpec kPairColumns[] = {{"source", ColumnKind::kInteger, true},
                                              {"target", ColumnKind::kInteger, true}};
    read_query_columns(args->combinations_sql, "combinations_sql", args->function, kPairColumns, 2,
                       &in->pairs);
  }
  // A kept graph this call built counts as build time, not loading.
  in->load_ms = elapsed_ms(start) - kept.build_ms;
}

// Phase 2 (C++, inside guarded): the call's options from the settings, the kept graph and the
// GPU service (which `service` receives; its GPUs go to *gpus).
CallOptions call_options(const CallArguments& args, const Settings& settings, const CallInputs& in,
                         ServiceUse* service, const gpu::Availability** gpus) {
  CallOptions options;
  options.device = settings.device;
  options.sssp_algorithm = settings.sssp_algorithm;
  options.apsp_algorithm = settings.apsp_algorithm;
  options.engine.threads = settings.threads;
  options.engine.block_size = settings.block_size;
  options.engine.streams = settings.streams;
  options.engine.budget = MemoryBudget(settings.max_memory_bytes);
  options.engine.cancel = CancelToken(cancel_requested);
  options.directed = args.directed;
  options.many_source = args.many_source;
  options.cost_arrays = args.cost_arrays;
  if (args.cost_arrays) options.cost_array_row_prefix = cost_array_row_prefix();
  options.index_paths_hierarchy = settings.index_paths_hierarchy;
  options.service_distance = args.distance;
  options.equicost = args.equicost;
  // The GPU is probed only when the settings may use it: device = cpu never touches CUDA.
  static const gpu::Availability kCpuOnly = [] {
    gpu::Availability a;
    a.reason = "gpu_routing.device = cpu";
    return a;
  }();
  // Service areas go to the GPU only when gpu_routing.device = gpu asks for it (whole trees cut
  // to the distance there, prepare_service_areas); otherwise no GPU is asked.
  if (args.kind == CallKind::kServiceArea && settings.device != DeviceSetting::kGpu) {
    *gpus = &kCpuOnly;
    return options;
  }
  // With the GPU service the GPUs are the service's: this backend never opens a CUDA context.
  resolve_service(settings.device == DeviceSetting::kGpu, settings.device != DeviceSetting::kCpu,
                  service);
  *gpus = settings.device == DeviceSetting::kCpu ? &kCpuOnly
          : service->configured                  ? &service->gpus
                                                 : &gpu::availability();
  options.remote = service->remote;
  // auto estimates each engine's cost with this server's speeds (gpu_routing_calibrate()).
  static MachineSpeeds speeds;
  speeds = current_speeds(**gpus);
  options.speeds = &speeds;
  const KeptGraphUse& kept = in.kept;
  if (kept.graph != nullptr && kept.has_image)
    options.kept_image_segment = kept_image_segment_name(kept.image_handle);
  options.engine_cache = kept.engines;
  options.kept_far_arc_share = kept.far_arc_share;
  options.engine.road_index = kept.road_index;
  if (kept.road_index != nullptr && kept.index_bytes > 0) {
    options.kept_index_segment = kept_image_segment_name(kept.index_handle);
    options.kept_index_bytes = kept.index_bytes;
  }
  return options;
}

// Where a call's engine writes its cost arrays (CallOptions::row_destinations): tuples in the
// result store's memory, handed to the tuplestore as they lie (put_cost_array_row). `result` is
// set once the store exists and the call is registered as its writer; until then (and for a
// nested call while another writes) the call's own buffers serve.
class StoreRowDestinations final : public RowDestinations {
 public:
  ResultStore* result = nullptr;
  bool take(int count, std::size_t width, double** rows) noexcept override {
    return result != nullptr && alloc_cost_array_rows(result, count, width, rows);
  }
};

// The row arena is freed while the call still lives (an ERROR deletes it first): its batch stops.
void abandon_call_batch(void* call) {
  static_cast<RoutingCall*>(call)->abandon_batch();
}

// The call's owner: it is no longer the store's writer once gone (its destructor waits for the
// batch in flight).
void destroy_call(void* call) noexcept {
  forget_row_writer(call);
  delete static_cast<RoutingCall*>(call);
}

// Phase 2 (C++, inside guarded): the call's sources, targets or pairs, and its engine chosen and
// prepared.
void set_call_work(const CallArguments& args, const CallInputs& in, RoutingCall* call) {
  switch (args.kind) {
    case CallKind::kAllPairs:
      call->set_all_pairs();
      break;
    case CallKind::kServiceArea:
      call->set_starts(args.sources, static_cast<std::size_t>(args.source_count));
      break;
    default:
      if (args.shape == PathShape::kCombinations) {
        call->set_pairs(in.pairs.integers[0], in.pairs.integers[1],
                        static_cast<std::size_t>(in.pairs.rows));
      } else {
        call->set_sources(args.sources, static_cast<std::size_t>(args.source_count));
        if (args.cost_arrays && !args.all_targets && args.targets != nullptr)
          call->set_array_columns(args.targets, static_cast<std::size_t>(args.target_count));
        else if (args.all_targets)
          call->set_all_targets();
        else if (args.targets != nullptr)
          call->set_targets(args.targets, static_cast<std::size_t>(args.target_count));
      }
      break;
  }
  call->prepare();
}

// Phase 3 (PostgreSQL between C++ batches): compute and emit, batch by batch; rows emitted and
// the milliseconds spent writing them.
void emit_call_rows(const CallArguments& args, RoutingCall* call, ResultBatch* batch,
                    ResultStore* result, int64* rows, double* emit_ms) {
  const auto source_total = static_cast<int64>(call->source_count());
  progress_set_sources(0, source_total);
  progress_set_device(call->summary().device.c_str());
  int32 seq = 0;
  Failure failure;
  while (true) {
    // Wait for the batch in short slices with a cancel check between them: a batch can take
    // seconds, and a cancel must not wait for it.
    for (bool ready = false; !ready;) {
      progress_set_phase(call->work_stage() == RoutingCall::WorkStage::kTracing
                             ? CallPhase::kTracing
                             : CallPhase::kComputing);
      if (!guarded(&failure, [&] { ready = call->batch_ready(20); })) raise_failure(&failure);
      if (!ready) CHECK_FOR_INTERRUPTS();
    }
    bool more = false;
    if (!guarded(&failure, [&] { more = call->next_batch(*batch); })) raise_failure(&failure);
    if (!more) break;
    instr_time start;
    INSTR_TIME_SET_CURRENT(start);
    progress_set_sources(static_cast<int64>(call->sources_delivered()), source_total);
    progress_set_phase(CallPhase::kWriting);
    put_batch(result, args, *batch, &seq);
    *rows += static_cast<int64>(batch->rows());
    progress_add_rows(static_cast<int64>(batch->rows()));
    *emit_ms += elapsed_ms(start);
    CHECK_FOR_INTERRUPTS();
  }
}

// Phase 4 (C++, inside guarded): what gpu_routing_last_run() shows of this call.
void record_last_run(const CallArguments& args, const CallInputs& in, const CallSummary& s,
                     int64 rows, double emit_ms) {
  const KeptGraphUse& kept = in.kept;
  LastRun& last = g_last_run;
  copy_text(last.function, sizeof last.function, args.function);
  copy_text(last.device, sizeof last.device,
            s.device.empty() ? "none (nothing to compute)" : s.device);
  copy_text(last.algorithm, sizeof last.algorithm, s.algorithm.empty() ? "none" : s.algorithm);
  copy_text(last.reason, sizeof last.reason,
            s.algorithm.empty() ? "no source in the graph or no edges: empty result" : s.reason);
  std::string notes = kept.how;
  if (kept.index_how[0] != '\0') notes += (notes.empty() ? "" : "; ") + std::string(kept.index_how);
  if (!s.notes.empty() && !(kept.index_how[0] != '\0' && s.algorithm == "cch"))
    notes += (notes.empty() ? "" : "; ") + s.notes;
  copy_text(last.notes, sizeof last.notes, notes);
  copy_text(last.graph, sizeof last.graph, kept.graph != nullptr ? kept.name : "");
  last.vertices = s.vertices;
  last.edges = kept.graph != nullptr ? kept.edge_rows : in.edges.rows;
  last.sources = s.sources;
  last.rows = rows;
  last.rounds = s.rounds;
  last.batch_size = s.service_batch_size;
  last.wait_ms = s.service_wait_ms;
  last.load_ms = in.load_ms;
  last.build_ms = kept.graph != nullptr ? kept.build_ms : s.build_ms;
  last.compute_ms = s.compute_ms;
  last.transfer_ms = s.transfer_ms;
  last.emit_ms = emit_ms;
}

// The whole call: read, prepare, compute and emit, report.
Datum run_call(FunctionCallInfo fcinfo, CallArguments* args) {
  check_result_context(fcinfo);
  instr_time call_start;
  INSTR_TIME_SET_CURRENT(call_start);
  g_last_run.valid = false;
  progress_begin(args->function);                // phase "reading"; an error clears it at abort
  const Settings settings = current_settings();  // read once for the whole call
  retain_freed_memory();

  CallInputs in;
  read_call_inputs(args, settings, &in);
  const EdgeArrays arrays = edge_arrays(in.edges);

  progress_set_phase(in.kept.graph != nullptr ? CallPhase::kComputing : CallPhase::kBuilding);
  OwnedObject* call_slot = new_owned_slot();
  OwnedObject* batch_slot = new_owned_slot();
  OwnedObject* service_slot = new_owned_slot();
  RoutingCall* call = nullptr;
  ResultBatch* batch = nullptr;
  // Plain memory of the call's (nothing to destroy); palloc outside the guarded code.
  auto* destinations = args->cost_arrays ? new (palloc(sizeof(StoreRowDestinations)))
                                               StoreRowDestinations()
                                         : nullptr;
  Failure failure;
  bool ok = guarded(&failure, [&] {
    ServiceUse* service = own(service_slot, new ServiceUse());
    const gpu::Availability* gpus = nullptr;
    CallOptions options = call_options(*args, settings, in, service, &gpus);
    options.row_destinations = destinations;
    call = in.kept.graph != nullptr ? new RoutingCall(args->kind, *in.kept.graph, options, *gpus)
                                    : new RoutingCall(args->kind, arrays, options, *gpus);
    call_slot->destroy = destroy_call;
    call_slot->object = call;
    batch = own(batch_slot, new ResultBatch());
    set_call_work(*args, in, call);
  });
  if (!ok) raise_failure(&failure);
  // gpu_routing.max_memory holds for everything together: what prepare() counted, then the
  // result rows kept in memory (up to work_mem, and at most half of what is left; the rest goes
  // to a temporary file), then a batch's traced path rows within the remainder.
  const std::size_t max_memory = settings.max_memory_bytes;
  const std::size_t left =
      max_memory > call->prepared_bytes() ? max_memory - call->prepared_bytes() : 0;
  const std::size_t rows_in_memory = std::max<std::size_t>(
      64 * 1024, std::min<std::size_t>(static_cast<std::size_t>(work_mem) * 1024, left / 2));
  call->reserve_result_rows(rows_in_memory);
  ResultStore* result = begin_result_store(fcinfo, rows_in_memory);
  if (destinations != nullptr && set_row_writer(result, abandon_call_batch, call))
    destinations->result = result;

  int64 rows = 0;
  double emit_ms = 0;
  emit_call_rows(*args, call, batch, result, &rows, &emit_ms);

  ok = guarded(&failure, [&] { record_last_run(*args, in, call->summary(), rows, emit_ms); });
  if (!ok) raise_failure(&failure);
  g_last_run.total_ms = elapsed_ms(call_start);
  g_last_run.valid = true;
  note_kept_engine(in.kept);
  // Free the graph and buffers now rather than at the end of the query.
  destroy_owned(call_slot);
  destroy_owned(batch_slot);
  progress_end();
  return (Datum)0;
}

CallArguments base_arguments(CallKind kind, PathShape shape, const char* function,
                             bool many_source) {
  CallArguments args;
  memset(&args, 0, sizeof args);
  args.kind = kind;
  args.shape = shape;
  args.function = function;
  args.many_source = many_source;
  return args;
}

Datum path_call(FunctionCallInfo fcinfo, PathShape shape) {
  bool many = shape == PathShape::kManyToOne || shape == PathShape::kManyToMany ||
              shape == PathShape::kCombinations;
  CallArguments args = base_arguments(CallKind::kPaths, shape, "gpu_path", many);
  args.edges_sql = text_to_cstring(PG_GETARG_TEXT_PP(0));
  if (shape == PathShape::kCombinations) {
    args.combinations_sql = text_to_cstring(PG_GETARG_TEXT_PP(1));
    args.directed = PG_GETARG_BOOL(2);
    return run_call(fcinfo, &args);
  }
  if (shape == PathShape::kOneToOne || shape == PathShape::kOneToMany) {
    args.sources = static_cast<int64*>(palloc(sizeof(int64)));
    args.sources[0] = PG_GETARG_INT64(1);
    args.source_count = 1;
  } else {
    args.sources = array_argument(fcinfo, 1, "start_vids", "gpu_path", &args.source_count);
  }
  if (shape == PathShape::kOneToOne || shape == PathShape::kManyToOne) {
    args.targets = static_cast<int64*>(palloc(sizeof(int64)));
    args.targets[0] = PG_GETARG_INT64(2);
    args.target_count = 1;
  } else {
    args.targets = array_argument(fcinfo, 2, "end_vids", "gpu_path", &args.target_count);
  }
  args.directed = PG_GETARG_BOOL(3);
  return run_call(fcinfo, &args);
}

void put_text_row(Tuplestorestate* store, TupleDesc desc, const char* name, const char* value) {
  Datum values[2] = {CStringGetTextDatum(name), CStringGetTextDatum(value)};
  bool nulls[2] = {false, false};
  tuplestore_putvalues(store, desc, values, nulls);
}

}  // namespace

}  // namespace gpu_routing::pg

using gpu_routing::CallKind;
using namespace gpu_routing::pg;

extern "C" Datum gpu_sssp_one(PG_FUNCTION_ARGS) {
  CallArguments args = base_arguments(CallKind::kSsspOne, PathShape::kNone, "gpu_sssp", false);
  args.edges_sql = text_to_cstring(PG_GETARG_TEXT_PP(0));
  args.sources = static_cast<int64*>(palloc(sizeof(int64)));
  args.sources[0] = PG_GETARG_INT64(1);
  args.source_count = 1;
  args.directed = PG_GETARG_BOOL(2);
  return run_call(fcinfo, &args);
}

extern "C" Datum gpu_sssp_many(PG_FUNCTION_ARGS) {
  CallArguments args = base_arguments(CallKind::kSsspMany, PathShape::kNone, "gpu_sssp", true);
  args.edges_sql = text_to_cstring(PG_GETARG_TEXT_PP(0));
  args.sources = array_argument(fcinfo, 1, "sources", "gpu_sssp", &args.source_count);
  args.directed = PG_GETARG_BOOL(2);
  return run_call(fcinfo, &args);
}

// gpu_driving_distance(edges_sql, start_vid, distance, directed) and
// (edges_sql, start_vids[], distance, directed, equicost): pgr_drivingDistance's two forms.
static Datum driving_distance_call(FunctionCallInfo fcinfo, bool many) {
  CallArguments args =
      base_arguments(CallKind::kServiceArea, PathShape::kNone, "gpu_driving_distance", many);
  args.edges_sql = text_to_cstring(PG_GETARG_TEXT_PP(0));
  if (many) {
    args.sources =
        array_argument(fcinfo, 1, "start_vids", "gpu_driving_distance", &args.source_count);
  } else {
    args.sources = static_cast<int64*>(palloc(sizeof(int64)));
    args.sources[0] = PG_GETARG_INT64(1);
    args.source_count = 1;
  }
  args.distance = PG_GETARG_FLOAT8(2);
  if (std::isnan(args.distance))
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                    errmsg("distance of gpu_driving_distance is NaN")));
  args.directed = PG_GETARG_BOOL(3);
  args.equicost = many && PG_GETARG_BOOL(4);
  args.many_starts = many;
  return run_call(fcinfo, &args);
}

extern "C" Datum gpu_driving_distance_one(PG_FUNCTION_ARGS) {
  return driving_distance_call(fcinfo, false);
}

extern "C" Datum gpu_driving_distance_many(PG_FUNCTION_ARGS) {
  return driving_distance_call(fcinfo, true);
}

extern "C" Datum gpu_path_one_to_one(PG_FUNCTION_ARGS) {
  return path_call(fcinfo, PathShape::kOneToOne);
}
extern "C" Datum gpu_path_one_to_many(PG_FUNCTION_ARGS) {
  return path_call(fcinfo, PathShape::kOneToMany);
}
extern "C" Datum gpu_path_many_to_one(PG_FUNCTION_ARGS) {
  return path_call(fcinfo, PathShape::kManyToOne);
}
extern "C" Datum gpu_path_many_to_many(PG_FUNCTION_ARGS) {
  return path_call(fcinfo, PathShape::kManyToMany);
}
extern "C" Datum gpu_path_combinations(PG_FUNCTION_ARGS) {
  return path_call(fcinfo, PathShape::kCombinations);
}

extern "C" Datum gpu_apsp_all(PG_FUNCTION_ARGS) {
  CallArguments args = base_arguments(CallKind::kAllPairs, PathShape::kNone, "gpu_apsp", true);
  args.edges_sql = text_to_cstring(PG_GETARG_TEXT_PP(0));
  args.directed = PG_GETARG_BOOL(1);
  return run_call(fcinfo, &args);
}

// gpu_apsp and gpu_apsp_array's matrix form, not STRICT: targets NULL means every vertex, by
// ascending id; other NULL arguments give an empty result, as for the STRICT functions.
Datum cost_matrix_call(FunctionCallInfo fcinfo, const char* function, bool cost_arrays) {
  if (PG_ARGISNULL(0) || PG_ARGISNULL(1) || PG_ARGISNULL(3)) {
    InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC);
    return (Datum)0;
  }
  CallArguments args = base_arguments(CallKind::kCostMatrix, PathShape::kNone, function, true);
  args.cost_arrays = cost_arrays;
  args.edges_sql = text_to_cstring(PG_GETARG_TEXT_PP(0));
  args.sources = array_argument(fcinfo, 1, "sources", function, &args.source_count);
  if (PG_ARGISNULL(2))
    args.all_targets = true;
  else
    args.targets = array_argument(fcinfo, 2, "targets", function, &args.target_count);
  args.directed = PG_GETARG_BOOL(3);
  return run_call(fcinfo, &args);
}

extern "C" Datum gpu_apsp_matrix(PG_FUNCTION_ARGS) {
  return cost_matrix_call(fcinfo, "gpu_apsp", false);
}

// gpu_apsp(edges_sql, combinations_sql): the costs of the (source, target) pairs of a query, as
// pgr_dijkstraCost's combinations form.
extern "C" Datum gpu_apsp_combinations(PG_FUNCTION_ARGS) {
  CallArguments args =
      base_arguments(CallKind::kCostMatrix, PathShape::kCombinations, "gpu_apsp", true);
  args.edges_sql = text_to_cstring(PG_GETARG_TEXT_PP(0));
  args.combinations_sql = text_to_cstring(PG_GETARG_TEXT_PP(1));
  args.directed = PG_GETARG_BOOL(2);
  return run_call(fcinfo, &args);
}

// gpu_apsp_array: the cost matrix (or all pairs) as one row per source with a float8[] of costs.
extern "C" Datum gpu_apsp_array_all(PG_FUNCTION_ARGS) {
  CallArguments args =
      base_arguments(CallKind::kAllPairs, PathShape::kNone, "gpu_apsp_array", true);
  args.cost_arrays = true;
  args.edges_sql = text_to_cstring(PG_GETARG_TEXT_PP(0));
  args.directed = PG_GETARG_BOOL(1);
  return run_call(fcinfo, &args);
}

extern "C" Datum gpu_apsp_array_matrix(PG_FUNCTION_ARGS) {
  return cost_matrix_call(fcinfo, "gpu_apsp_array", true);
}

extern "C" Datum gpu_routing_last_run(PG_FUNCTION_ARGS) {
  InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC);
  if (!g_last_run.valid) return (Datum)0;
  ReturnSetInfo* rsinfo = reinterpret_cast<ReturnSetInfo*>(fcinfo->resultinfo);
  const LastRun& r = g_last_run;
  Datum values[19] = {
      CStringGetTextDatum(r.function),  CStringGetTextDatum(r.device),
      CStringGetTextDatum(r.algorithm), CStringGetTextDatum(r.reason),
      Int64GetDatum(r.vertices),        Int64GetDatum(r.edges),
      Int64GetDatum(r.sources),         Int64GetDatum(r.rows),
      Int64GetDatum(r.rounds),          Float8GetDatum(r.load_ms),
      Float8GetDatum(r.build_ms),       Float8GetDatum(r.compute_ms),
      Float8GetDatum(r.transfer_ms),    Float8GetDatum(r.emit_ms),
      Float8GetDatum(r.total_ms),       CStringGetTextDatum(r.notes),
      CStringGetTextDatum(r.graph),     Int32GetDatum(r.batch_size),
      Float8GetDatum(r.wait_ms),
  };
  // Older versions of the SQL declare fewer columns (0.1.0: 16, 0.2.0: 17): the rest are left
  // out. batch_size and wait_ms are NULL for a call that did not go through the GPU service.
  bool nulls[19] = {false};
  nulls[15] = r.notes[0] == '\0';
  nulls[16] = r.graph[0] == '\0';
  nulls[17] = nulls[18] = r.batch_size == 0;
  tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
  return (Datum)0;
}

extern "C" Datum gpu_routing_info(PG_FUNCTION_ARGS) {
  InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC);
  ReturnSetInfo* rsinfo = reinterpret_cast<ReturnSetInfo*>(fcinfo->resultinfo);
  OwnedObject* slot = new_owned_slot();
  using Rows = std::vector<std::pair<std::string, std::string>>;
  Rows* rows = nullptr;
  Failure failure;
  bool ok = guarded(&failure, [&] {
    rows = own(slot, new Rows());
    rows->emplace_back("version", "0.5.0");
    rows->emplace_back(
        "shared_preload_libraries",
        kept_graphs_available()
            ? "gpu_routing is preloaded: kept graphs, their road indexes, the GPU service and "
              "gpu_routing_progress are on"
            : "gpu_routing is not preloaded: calls with edges_sql work, each session opening "
              "its own CUDA context; kept graphs ('graph:NAME' and matched queries), their road "
              "indexes, the GPU service and gpu_routing_progress are off. To turn them on, add "
              "shared_preload_libraries = 'gpu_routing' to postgresql.conf and restart the "
              "server");
    rows->emplace_back("build", gpu_routing::gpu::build_description());
    Settings settings = current_settings();
    ServiceUse service;
    resolve_service(false, true, &service);
    if (settings.device == gpu_routing::DeviceSetting::kCpu) {
      rows->emplace_back("gpu", "not probed: gpu_routing.device = cpu");
    } else {
      // With the GPU service, its GPUs: this session opens no CUDA context to list them.
      const auto& gpus = service.configured ? service.gpus : gpu_routing::gpu::availability();
      if (gpus.devices.empty()) rows->emplace_back("gpu", "none: " + gpus.reason);
      // One row per physical GPU: the service lists each of its lanes as a device, several to
      // a GPU, and a row per lane would read as that many GPUs.
      const auto physical_of = [](const gpu_routing::gpu::DeviceInfo& d) {
        return d.physical >= 0 ? d.physical : d.index;
      };
      std::vector<int> listed;
      for (const auto& d : gpus.devices) {
        const int physical = physical_of(d);
        if (std::find(listed.begin(), listed.end(), physical) != listed.end()) continue;
        listed.push_back(physical);
        char text[256];
        snprintf(text, sizeof text, "%s, compute capability %d.%d, %s, %d multiprocessors",
                 d.name.c_str(), d.compute_major, d.compute_minor,
                 gpu_routing::format_bytes(d.total_memory_bytes).c_str(), d.multiprocessors);
        std::string value = text;
        int lanes = 0;
        for (const auto& other : gpus.devices) lanes += physical_of(other) == physical;
        if (service.configured && lanes > 1)
          value += ", " + std::to_string(lanes) + " lanes of the GPU service";
        rows->emplace_back("gpu " + std::to_string(physical), value);
      }
      if (gpu_routing::gpu::context_memory_bytes() > 0)
        rows->emplace_back("gpu context memory",
                           gpu_routing::format_bytes(gpu_routing::gpu::context_memory_bytes()) +
                               " (this session's CUDA context)");
    }
    rows->emplace_back("openmp threads",
                       std::to_string(gpu_routing::resolve_thread_count(settings.threads)));
    for (const auto& info : gpu_routing::engine_table()) {
      std::string family = info.single_source && info.many_source ? "sssp, apsp"
                           : info.single_source                   ? "sssp"
                                                                  : "apsp";
      rows->emplace_back(
          std::string("engine ") + info.name + " (" + gpu_routing::device_label(info.device) + ")",
          family + ": " + info.description);
    }
    rows->emplace_back("gpu_routing.device", device_setting_name(settings.device));
    rows->emplace_back("gpu_routing.sssp_algorithm", settings.sssp_algorithm);
    rows->emplace_back("gpu_routing.apsp_algorithm", settings.apsp_algorithm);
    rows->emplace_back("gpu_routing.threads", std::to_string(settings.threads));
    rows->emplace_back("gpu_routing.max_memory",
                       gpu_routing::format_bytes(settings.max_memory_bytes));
    rows->emplace_back("gpu_routing.block_size", std::to_string(settings.block_size));
    rows->emplace_back("gpu_routing.streams", std::to_string(settings.streams));
    service_info(rows);
  });
  if (!ok) raise_failure(&failure);
  // The settings listed so far (rows dies with the slot).
  std::vector<std::string> listed;
  for (const auto& row : *rows) {
    put_text_row(rsinfo->setResult, rsinfo->setDesc, row.first.c_str(), row.second.c_str());
    listed.push_back(row.first);
  }
  destroy_owned(slot);
  {
    // Every other setting of the extension as SHOW prints it, so that none is missing from the
    // list (test hooks aside).
    struct config_generic** variables = get_guc_variables();
    const int count = GetNumConfigOptions();
    std::vector<std::string> names;
    for (int i = 0; i < count; ++i) {
      const char* name = variables[i]->name;
      if (strncmp(name, "gpu_routing.", 12) != 0 || strncmp(name, "gpu_routing.test_", 17) == 0 ||
          (variables[i]->flags & GUC_CUSTOM_PLACEHOLDER) != 0)
        continue;
      if (std::find(listed.begin(), listed.end(), name) == listed.end()) names.emplace_back(name);
    }
    std::sort(names.begin(), names.end());
    for (const auto& name : names) {
      char* value = GetConfigOptionByName(name.c_str(), nullptr, true);
      if (value != nullptr) put_text_row(rsinfo->setResult, rsinfo->setDesc, name.c_str(), value);
    }
  }
  struct InfoSink {
    ReturnSetInfo* rsinfo;
  } sink{rsinfo};
  kept_graphs_info(
      [](void* arg, const char* name, const char* value) {
        auto* sink = static_cast<InfoSink*>(arg);
        put_text_row(sink->rsinfo->setResult, sink->rsinfo->setDesc, name, value);
      },
      &sink);
  return (Datum)0;
}
