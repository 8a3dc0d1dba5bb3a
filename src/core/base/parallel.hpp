// OpenMP inside a PostgreSQL backend: worker threads must never run PostgreSQL's signal handlers
// (they touch backend globals and the latch), so the pool is started with every signal blocked
// and the workers inherit that mask; signals keep reaching the backend's main thread.
#pragma once

#include <cstddef>

namespace gpu_routing {

// Threads to use for `requested` (0 = every core).
int resolve_thread_count(int requested);

// Threads for a many-source call on `cores` when the thread count is left to the extension:
// every core but one on machines of 8 or more, whose backend writes rows while the engine
// computes (on 2 cores the writer's share is worth less than a second engine thread).
constexpr int threads_leaving_a_writer_core(int cores) {
  return cores >= 8 ? cores - 1 : cores;
}

// memcpy of `bytes` on `threads` threads, in pieces of 256 kB (one memcpy under two pieces): for
// results of megabytes crossing into memory whose pages are touched for the first time, where
// page faults bound one thread. The copies are the pool's only work (no PostgreSQL call).
void parallel_copy(void* to, const void* from, std::size_t bytes, int threads);

// Starts (or grows) the OpenMP pool to `threads` with signals blocked in the new workers.
// Call on the backend's main thread before a parallel region. Cheap when the pool exists.
void prepare_worker_threads(int threads);

// Runs fn() with every signal blocked in the calling thread, restoring the mask afterwards:
// for libraries that start helper threads (the CUDA runtime does).
template <typename Fn>
void with_signals_blocked(Fn&& fn);

class SignalBlock {
 public:
  SignalBlock();
  ~SignalBlock();
  SignalBlock(const SignalBlock&) = delete;
  SignalBlock& operator=(const SignalBlock&) = delete;

 private:
  unsigned long saved_[16];  // room for a sigset_t without including <signal.h> here
};

template <typename Fn>
void with_signals_blocked(Fn&& fn) {
  SignalBlock block;
  fn();
}

}  // namespace gpu_routing
