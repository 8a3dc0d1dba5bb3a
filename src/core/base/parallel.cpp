#include "base/parallel.hpp"

#include <pthread.h>
#include <signal.h>

#include <cstring>

#ifdef _OPENMP
#include <omp.h>
#endif

namespace gpu_routing {

static_assert(sizeof(sigset_t) <= sizeof(unsigned long) * 16, "sigset_t does not fit SignalBlock");

SignalBlock::SignalBlock() {
  sigset_t all;
  sigfillset(&all);
  sigset_t saved;
  pthread_sigmask(SIG_SETMASK, &all, &saved);
  std::memcpy(saved_, &saved, sizeof saved);
}

SignalBlock::~SignalBlock() {
  sigset_t saved;
  std::memcpy(&saved, saved_, sizeof saved);
  pthread_sigmask(SIG_SETMASK, &saved, nullptr);
}

int resolve_thread_count(int requested) {
  if (requested > 0) return requested;
#ifdef _OPENMP
  // Once a process: omp_get_num_procs() asks the kernel for the affinity mask each time (a system
  // call in every auto estimate of every call), and a backend's mask does not change.
  static const int processors = omp_get_num_procs();
  return processors;
#else
  return 1;
#endif
}

void prepare_worker_threads(int threads) {
#ifdef _OPENMP
  // Per calling thread: OpenMP keeps a pool of workers for each thread that opens a team.
  static thread_local int started = 1;
  if (threads <= started) return;
  SignalBlock block;
#pragma omp parallel num_threads(threads)
  {
    // Empty: creates the workers while the mask is full.
  }
  started = threads;
#else
  (void)threads;
#endif
}

}  // namespace gpu_routing
