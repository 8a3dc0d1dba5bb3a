// Where a set-returning call writes its rows: the tuplestore that PostgreSQL reads the result
// from (materialize mode, as InitMaterializedSRF sets it up), made cheaper for results of millions
// of rows, whose writing is the floor of an all-pairs call (docs/results: 16.8M rows take longer
// to write than to compute on the GPU).
//
// Two things make a row cheaper than tuplestore_putvalues() into the per-query AllocSet:
//  - The tuples live in a memory context of our own (result_store.cpp), cut from large
//    pre-faulted mappings: a 40-byte minimal tuple takes 56 bytes there instead of 80, and the
//    kernel maps its pages in one call per block instead of one page fault per 4 kB.
//  - Rows without NULLs whose columns are all fixed-width and passed by value (every all-pairs,
//    cost-matrix and path row) are written into one pre-formed heap tuple, which the tuplestore
//    copies (palloc + memcpy) instead of forming each tuple from Datums.
// Measured on the development machine, 16.8M rows of (bigint, bigint, float8) through
// `SELECT count(*) FROM f()`: 2.35 s with tuplestore_putvalues into the AllocSet, 1.27 s here.
#pragma once

#include "postgres_headers.hpp"

namespace gpu_routing::pg {

constexpr int kMaxResultColumns = 16;

struct ResultStore {
  Tuplestorestate* store;
  TupleDesc desc;
  // The fast path: every column fixed-width and by value.
  bool fixed_layout;
  int columns;
  HeapTuple row_template;  // a formed tuple whose data area each row overwrites
  char* template_data;
  int16 offsets[kMaxResultColumns];
  int16 lengths[kMaxResultColumns];
  MemoryContext arena;            // where the tuples live (the tuplestore's context)
  TupleTableSlot* adopting_slot;  // put_cost_array_row's, made on its first row
};

// Raises an error where a set cannot be returned (called first, before any work).
void check_result_context(FunctionCallInfo fcinfo);

// Sets up materialize mode for the call (the result's tuple descriptor is the expected one) and
// returns where to write rows. Rows stay in memory up to `rows_in_memory_bytes` (at least 64 kB),
// then go to a temporary file.
ResultStore* begin_result_store(FunctionCallInfo fcinfo, std::size_t rows_in_memory_bytes);

// The same store outside a call (gpu_routing_calibrate() times writing rows as calls write
// them): tuples in `arena` (from create_result_arena, deleted by the caller after
// tuplestore_end), the ResultStore itself in the current memory context.
MemoryContext create_result_arena(MemoryContext parent);
ResultStore* make_result_store(TupleDesc expected, MemoryContext arena, bool random_access,
                               std::size_t rows_in_memory_bytes);

// A (bigint, float8[]) row whose array holds `width` costs, for the caller to fill and append
// with tuplestore_puttuple() as often as it likes: *start_vid and *costs point into the tuple.
// Formed without copying or zeroing the costs (a New York row is 2 MB). Freed with
// heap_freetuple(). A row over PostgreSQL's 1 GB allocation limit is refused
// (ERRCODE_PROGRAM_LIMIT_EXCEEDED).
HeapTuple make_cost_array_row(const ResultStore* result, std::size_t width, int64** start_vid,
                              double** costs);
// The bytes of such a row before its costs (its header, the bigint and the array's header): a
// multiple of 8, the same for every width.
std::size_t cost_array_row_prefix();

// Rows written in place: a (bigint, float8[]) result's rows as minimal tuples in the store's own
// memory, whose costs another thread writes (an engine's, CallOptions::row_destinations), then
// handed to the tuplestore as they lie, not copied (a New York tree is 2 MB; the backend's
// one-core copy of 64 of them took longer than computing them on 15 threads).
//  - alloc_cost_array_rows(): room for `count` rows of `width` costs; rows[i] gets where row i's
//    costs go. Their pages are left for the writer to fault in. false (nothing kept): not such a
//    result, too wide, out of memory, or a PostgreSQL version whose contexts this does not know.
//    Raises no ERROR (called inside C++).
//  - set_row_writer(): while rows are handed out, the store's memory is freed only after
//    wait(arg) (an ERROR may free it before the writer's own cleanup runs); forget_row_writer(arg)
//    once the writer is gone. One writer a process: false (rows must not be handed out) while
//    another is set.
//  - put_cost_array_row(): the header written before the costs and the row stored; each
//    allocated row exactly once, in any order.
bool alloc_cost_array_rows(ResultStore* result, int count, std::size_t width,
                           double** rows) noexcept;
bool set_row_writer(ResultStore* result, void (*wait)(void*), void* arg);
void forget_row_writer(void* arg);
void put_cost_array_row(ResultStore* result, double* costs, std::size_t width, int64 start_vid);

// Appends one row: values and nulls hold one entry per column.
inline void put_result_row(ResultStore* result, const Datum* values, const bool* nulls) {
  if (result->fixed_layout) {
    bool any_null = false;
    for (int c = 0; c < result->columns; ++c) any_null |= nulls[c];
    if (!any_null) {
      for (int c = 0; c < result->columns; ++c)
        store_att_byval(result->template_data + result->offsets[c], values[c], result->lengths[c]);
      tuplestore_puttuple(result->store, result->row_template);
      return;
    }
  }
  tuplestore_putvalues(result->store, result->desc, const_cast<Datum*>(values),
                       const_cast<bool*>(nulls));
}

}  // namespace gpu_routing::pg
