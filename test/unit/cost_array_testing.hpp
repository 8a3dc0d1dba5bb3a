// Cost arrays written where a caller asks (CallOptions::row_destinations), for the tests of the
// call (core_test.cpp) and of the GPU service (service_test.cpp): a pool of rows that declines
// every n-th batch, and a call's arrays read back from wherever they went.
#pragma once

#include <memory>
#include <vector>

#include "call/routing_call.hpp"

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

}  // namespace gpu_routing::testing
