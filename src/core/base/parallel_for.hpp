// A parallel loop for host code compiled with OpenMP: the CPU engines, and the CUDA files' host
// code (nvcc passes -fopenmp to the host compiler).
#pragma once

#include <exception>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "base/parallel.hpp"

namespace gpu_routing {

// Runs body(i, thread) for i in [0, count) on `threads` OpenMP threads; the first exception
// thrown by any iteration (Cancelled included) is rethrown on the calling thread after the loop.
template <typename Body>
void parallel_for_each(int count, int threads, Body&& body) {
  // One thread or one item: no parallel region (entering one costs more than a road-index row).
  if (threads <= 1 || count <= 1) {
    for (int i = 0; i < count; ++i) body(i, 0);
    return;
  }
  std::exception_ptr failure;
  bool failed = false;
  prepare_worker_threads(threads);
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1)
  for (int i = 0; i < count; ++i) {
    bool skip;
#pragma omp atomic read
    skip = failed;
    if (skip) continue;
    try {
#ifdef _OPENMP
      body(i, omp_get_thread_num());
#else
      body(i, 0);
#endif
    } catch (...) {
#pragma omp critical(gpu_routing_failure)
      {
        if (!failure) failure = std::current_exception();
      }
#pragma omp atomic write
      failed = true;
    }
  }
  if (failure) std::rethrow_exception(failure);
}

}  // namespace gpu_routing
