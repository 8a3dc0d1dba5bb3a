// Plain C++17 foundation shared by the core, the CUDA engines and the PostgreSQL layer:
// error type with a SQL-state class, cancellation, memory budgeting and timing.
#pragma once

#ifdef POSTGRES_H
#error "src/core is plain C++: include it before postgres.h, never after"
#endif

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>
#include <utility>

namespace gpu_routing {

using VertexIndex = std::int32_t;  // dense vertex index, 0 .. vertex_count - 1
using ArcIndex = std::int32_t;     // index of a directed arc inside a CSR graph

constexpr double kInfinity = std::numeric_limits<double>::infinity();
constexpr VertexIndex kNoVertex = -1;
constexpr ArcIndex kNoArc = -1;

// What kind of failure an error is; the PostgreSQL layer maps each to a SQLSTATE.
enum class ErrorKind {
  kInvalidParameter,  // 22023 invalid_parameter_value
  kDataException,     // 22000 data_exception (bad values in the edges)
  kOutOfMemory,       // 53200 out_of_memory (gpu_routing.max_memory or device memory)
  kNoDevice,          // 55000 object_not_in_prerequisite_state (GPU asked for, none usable)
  kProgramLimit,      // 54000 program_limit_exceeded (more vertices/arcs than int32 indices)
  kInternal,          // XX000 internal_error
};

class RoutingError : public std::runtime_error {
 public:
  RoutingError(ErrorKind kind, const std::string& message, std::string hint = {})
      : std::runtime_error(message), kind_(kind), hint_(std::move(hint)) {}
  ErrorKind kind() const { return kind_; }
  const std::string& hint() const { return hint_; }

 private:
  ErrorKind kind_;
  std::string hint_;
};

// Thrown by long computations when the session asked to stop (cancel, statement_timeout,
// terminate). The PostgreSQL layer lets destructors run, then raises the pending interrupt.
class Cancelled : public std::exception {
 public:
  const char* what() const noexcept override { return "gpu_routing computation cancelled"; }
};

// Polled between batches of work. The poll function must be safe to call from any thread:
// the PostgreSQL layer passes one that only reads volatile interrupt flags.
// A token may also watch a flag of its owner's (RoutingCall raises one to stop work it no longer
// wants, such as a batch computed ahead when the caller has gone).
class CancelToken {
 public:
  using Poll = bool (*)();
  // A poll with its own state (the GPU service's workers each poll the requests they run).
  using ContextPoll = bool (*)(const void* context);
  CancelToken() = default;
  explicit CancelToken(Poll poll, const std::atomic<bool>* stop_flag = nullptr)
      : poll_(poll), stop_flag_(stop_flag) {}
  CancelToken(ContextPoll poll, const void* context) : context_poll_(poll), context_(context) {}
  bool requested() const {
    return (stop_flag_ != nullptr && stop_flag_->load(std::memory_order_relaxed)) ||
           (poll_ != nullptr && poll_()) || (context_poll_ != nullptr && context_poll_(context_));
  }
  void throw_if_requested() const {
    if (requested()) throw Cancelled();
  }
  Poll poll() const { return poll_; }

 private:
  Poll poll_ = nullptr;
  const std::atomic<bool>* stop_flag_ = nullptr;
  ContextPoll context_poll_ = nullptr;
  const void* context_ = nullptr;
};

// Refuses work whose buffers would exceed gpu_routing.max_memory, before allocating them.
class MemoryBudget {
 public:
  MemoryBudget() = default;
  explicit MemoryBudget(std::size_t limit_bytes) : limit_bytes_(limit_bytes) {}
  std::size_t limit_bytes() const { return limit_bytes_; }
  // Throws kOutOfMemory naming `what` and the size when needed_bytes > limit.
  void require(std::size_t needed_bytes, const std::string& what) const;

 private:
  std::size_t limit_bytes_ = std::numeric_limits<std::size_t>::max();
};

std::string format_bytes(std::size_t bytes);  // "1.5 GB", "12 MB", "300 kB"

// Saturating multiply-add helpers for size estimates that must not wrap around.
std::size_t saturating_multiply(std::size_t a, std::size_t b);
std::size_t saturating_add(std::size_t a, std::size_t b);

// Advises the 2 MB-aligned part of [memory, memory + bytes) to transparent huge pages (Linux;
// nothing elsewhere, under 4 MB, or where they are off). Call it before the memory is first
// written: a graph build's arrays of 16M edges (hundreds of MB) then fault in 2 MB at a time,
// not 4 kB, whose faults cost 0.5-1.2 s a GB on the development machine. Not for memory that
// realloc grows: mremap to an address off a 2 MB boundary splits the huge pages again (advising
// the edge query's arrays made reading 16M edges slower, 2.4-2.8 s against 2.1-2.4).
void advise_huge_pages(void* memory, std::size_t bytes);
// A transparent huge page: x86-64's and arm64's with 4 kB base pages.
constexpr std::size_t kHugePageBytes = std::size_t{2} << 20;
// The first huge page boundary at or above `address`, and the last at or below it.
constexpr std::uintptr_t huge_page_ceil(std::uintptr_t address) {
  return (address + kHugePageBytes - 1) & ~std::uintptr_t{kHugePageBytes - 1};
}
constexpr std::uintptr_t huge_page_floor(std::uintptr_t address) {
  return address & ~std::uintptr_t{kHugePageBytes - 1};
}

// A vector of n value-initialized elements whose memory was advised to huge pages before it was
// written (for the arrays of a graph's build).
template <typename T>
std::vector<T> huge_page_vector(std::size_t n) {
  std::vector<T> v;
  v.reserve(n);
  advise_huge_pages(v.data(), n * sizeof(T));
  v.resize(n);
  return v;
}

class Stopwatch {
 public:
  Stopwatch() : start_(std::chrono::steady_clock::now()) {}
  double elapsed_ms() const {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_)
        .count();
  }
  void restart() { start_ = std::chrono::steady_clock::now(); }

 private:
  std::chrono::steady_clock::time_point start_;
};

// An allocator whose vectors leave new elements uninitialized (resize() and the count
// constructor do not zero-fill them): for arrays that are written whole before anything reads
// them. `Memory` supplies the raw bytes (static allocate(bytes) and free(pointer, bytes)).
struct OrdinaryMemory {
  static void* allocate(std::size_t bytes) { return ::operator new(bytes); }
  static void free(void* memory, std::size_t) noexcept { ::operator delete(memory); }
};
// Bytes whose 2 MB-aligned part is advised to huge pages before anything writes them (buffers of
// megabytes that a call fills once, such as its rows: 4 kB faults were a third of writing New
// York's trees as arrays on the development machine).
struct HugePageAdvisedMemory {
  static void* allocate(std::size_t bytes) {
    void* memory = ::operator new(bytes);
    advise_huge_pages(memory, bytes);
    return memory;
  }
  static void free(void* memory, std::size_t) noexcept { ::operator delete(memory); }
};
template <typename T, typename Memory = OrdinaryMemory>
struct UninitializedAllocator {
  using value_type = T;
  template <typename U>
  struct rebind {
    using other = UninitializedAllocator<U, Memory>;
  };
  UninitializedAllocator() = default;
  template <typename U>
  UninitializedAllocator(const UninitializedAllocator<U, Memory>&) noexcept {}
  T* allocate(std::size_t count) { return static_cast<T*>(Memory::allocate(count * sizeof(T))); }
  void deallocate(T* p, std::size_t count) noexcept { Memory::free(p, count * sizeof(T)); }
  template <typename U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <typename U, typename... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
  bool operator==(const UninitializedAllocator&) const { return true; }
  bool operator!=(const UninitializedAllocator&) const { return false; }
};

}  // namespace gpu_routing
