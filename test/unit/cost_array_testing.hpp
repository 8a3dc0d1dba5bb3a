// Cost arrays written where a caller asks (CallOptions::row_destinations), for the tests of the
// call (core_test.cpp) and of the GPU service (service_test.cpp): a pool of rows that declines
// every n-th batch, the ids such a test asks for, and a call's arrays read back from wherever
// they went.
#pragma once

#include <memory>
#include <vector>

#include "call/routing_call.hpp"
#include "engine/gpu.hpp"

namespace gpu_routing::testing {

// Rows a batch asks for, each poisoned with -1 (every entry must be written); every
// decline_every-th batch is declined (0: none), so that it goes to the call's own buffers.
class RowPool final : public RowDestinations {
 public:
  std::vector<std::unique_ptr<std::vector<double>>> rows;
  int asked = 0, declined = 0, decline_every = 0;
  bool take(int count, std::size_t width, double** out) noexcept override {
    ++asked;
    if (decline_every > 0 && asked % decline_every == 0) {
      ++declined;
      return false;
    }
    for (int i = 0; i < count; ++i) {
      rows.push_back(std::make_unique<std::vector<double>>(width, -1.0));
      out[i] = rows.back()->data();
    }
    return true;
  }
};

// Sources and columns of a cost-array call over ids 1..`last`: sources from 1 every
// `source_step`; ascending columns from 5 every `column_step` (the engine's rows are the arrays);
// mixed, the same reversed with one repeated and one not in the graph (gathered from its rows).
struct CostArrayIds {
  std::vector<std::int64_t> sources, ascending, mixed;
};
inline CostArrayIds cost_array_ids(std::int64_t last, std::int64_t source_step,
                                   std::int64_t column_step) {
  CostArrayIds ids;
  for (std::int64_t id = 1; id <= last; id += source_step) ids.sources.push_back(id);
  for (std::int64_t id = 5; id <= last; id += column_step) ids.ascending.push_back(id);
  ids.mixed.assign(ids.ascending.rbegin(), ids.ascending.rend());
  ids.mixed.push_back(ids.mixed.front());  // a repeated column
  ids.mixed.push_back(99999);              // not in the graph: a column of infinities
  return ids;
}

// Every array a prepared call returns, in order, from the caller's rows or the call's buffer.
inline std::vector<std::vector<double>> collect_cost_arrays(RoutingCall& call) {
  std::vector<std::vector<double>> arrays;
  ResultBatch batch;
  while (call.next_batch(batch)) {
    for (std::size_t r = 0; r < batch.rows(); ++r) {
      const double* row = !batch.array_rows.empty()
                              ? batch.array_rows[r]
                              : batch.array_costs.data() + batch.array_row_prefix +
                                    r * (batch.array_row_prefix + batch.array_width);
      arrays.emplace_back(row, row + batch.array_width);
    }
  }
  return arrays;
}

// A cost-array call (kCostMatrix) from `sources` to `columns` (every vertex where null), run and
// read back; its summary into *summary where given, and into *engine_wrote_rows whether its
// engine wrote the caller's rows itself.
inline std::vector<std::vector<double>> run_cost_array_call(
    const EdgeArrays& edges, const CallOptions& options, const gpu::Availability& gpus,
    const std::vector<std::int64_t>& sources, const std::vector<std::int64_t>* columns,
    CallSummary* summary = nullptr, bool* engine_wrote_rows = nullptr) {
  RoutingCall call(CallKind::kCostMatrix, edges, options, gpus);
  call.set_sources(sources.data(), sources.size());
  if (columns == nullptr)
    call.set_all_targets();
  else
    call.set_array_columns(columns->data(), columns->size());
  call.prepare();
  if (engine_wrote_rows != nullptr) *engine_wrote_rows = call.engine_writes_caller_rows();
  auto arrays = collect_cost_arrays(call);
  if (summary != nullptr) *summary = call.summary();
  return arrays;
}

// A cost-array call run twice, the same but for where its arrays go: without destinations (the
// call's own buffers: `want`) and into a RowPool that declines every decline_every-th batch
// (`got`, and what the pool saw).
struct CostArrayRuns {
  std::vector<std::vector<double>> want, got;
  CallSummary summary;             // of the second run
  bool engine_wrote_rows = false;  // the second run's engine wrote the caller's rows itself
  int asked = 0, declined = 0;
  std::size_t pooled_rows = 0;
};
inline CostArrayRuns run_with_and_without_destinations(const EdgeArrays& edges, CallOptions options,
                                                       const gpu::Availability& gpus,
                                                       const std::vector<std::int64_t>& sources,
                                                       const std::vector<std::int64_t>* columns,
                                                       int decline_every) {
  CostArrayRuns runs;
  options.row_destinations = nullptr;
  runs.want = run_cost_array_call(edges, options, gpus, sources, columns);
  RowPool pool;
  pool.decline_every = decline_every;
  options.row_destinations = &pool;
  runs.got = run_cost_array_call(edges, options, gpus, sources, columns, &runs.summary,
                                 &runs.engine_wrote_rows);
  runs.asked = pool.asked;
  runs.declined = pool.declined;
  runs.pooled_rows = pool.rows.size();
  return runs;
}

}  // namespace gpu_routing::testing
