// The C/C++ boundary. C++ work runs inside guarded(), which catches every exception and copies
// its message into a plain struct; the caller, back in frames with no C++ objects alive, raises
// the PostgreSQL error. A PostgreSQL longjmp never crosses C++ frames and a C++ exception never
// crosses PostgreSQL's.
#pragma once

#include "base/common.hpp"

namespace gpu_routing::pg {

struct Failure {
  bool cancelled = false;
  ErrorKind kind = ErrorKind::kInternal;
  char message[1024] = {0};
  char hint[512] = {0};
};

void record_failure(Failure* failure, ErrorKind kind, const char* message, const char* hint);

// Runs body(); returns false and fills *failure if it threw. Never throws itself.
template <typename Body>
bool guarded(Failure* failure, Body&& body) noexcept {
  try {
    body();
    return true;
  } catch (const RoutingError& e) {
    record_failure(failure, e.kind(), e.what(), e.hint().c_str());
  } catch (const Cancelled&) {
    failure->cancelled = true;
  } catch (const std::bad_alloc&) {
    record_failure(failure, ErrorKind::kOutOfMemory, "out of memory in gpu_routing",
                   "The server could not give the memory gpu_routing.max_memory allows: ask "
                   "for fewer sources or targets, or lower gpu_routing.max_memory below the "
                   "free memory so that such calls are refused before they allocate.");
  } catch (const std::exception& e) {
    record_failure(failure, ErrorKind::kInternal, e.what(), "");
  } catch (...) {
    record_failure(failure, ErrorKind::kInternal, "unknown C++ exception in gpu_routing", "");
  }
  return false;
}

// Raises the PostgreSQL error for a failure (a pending cancel is raised as PostgreSQL's own
// cancel error). Does not return. Defined in errors.cpp, which includes PostgreSQL.
[[noreturn]] void raise_failure(const Failure* failure);

// Poll function for CancelToken: true once the backend has a cancel or terminate pending. Only
// reads volatile flags, so any thread may call it.
bool cancel_requested();

}  // namespace gpu_routing::pg
