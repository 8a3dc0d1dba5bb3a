#include "base/parallel.hpp"

#include "base/parallel_for.hpp"

#include <pthread.h>
#include <signal.h>

#include <algorithm>
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

void parallel_copy(void* to, const void* from, std::size_t bytes, int threads) {
  constexpr std::size_t kPiece = std::size_t{256} << 10;
  if (bytes < 2 * kPiece || threads <= 1) {
    std::memcpy(to, from, bytes);
    return;
  }
  const auto pieces = static_cast<int>((bytes + kPiece - 1) / kPiece);
  parallel_for_each(pieces, threads, [&](int k, int) {
    const std::size_t at = static_cast<std::size_t>(k) * kPiece;
    std::memcpy(static_cast<char*>(to) + at, static_cast<const char*>(from) + at,
                std::min(kPiece, bytes - at));
  });
}

}  // namespace gpu_routing
