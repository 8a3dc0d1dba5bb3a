#include <cstdio>
#include <cstring>

#include "guard.hpp"

#include "postgres_headers.hpp"

namespace gpu_routing::pg {

void record_failure(Failure* failure, ErrorKind kind, const char* message, const char* hint) {
  failure->cancelled = false;
  failure->kind = kind;
  snprintf(failure->message, sizeof failure->message, "%s", message != nullptr ? message : "");
  snprintf(failure->hint, sizeof failure->hint, "%s", hint != nullptr ? hint : "");
}

bool cancel_requested() {
  return InterruptPending && (QueryCancelPending || ProcDiePending);
}

static int sqlstate_of(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kInvalidParameter:
      return ERRCODE_INVALID_PARAMETER_VALUE;
    case ErrorKind::kDataException:
      return ERRCODE_DATA_EXCEPTION;
    case ErrorKind::kOutOfMemory:
      return ERRCODE_OUT_OF_MEMORY;
    case ErrorKind::kNoDevice:
      return ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE;
    case ErrorKind::kProgramLimit:
      return ERRCODE_PROGRAM_LIMIT_EXCEEDED;
    case ErrorKind::kInternal:
    default:
      return ERRCODE_INTERNAL_ERROR;
  }
}

void raise_failure(const Failure* failure) {
  if (failure->cancelled) {
    CHECK_FOR_INTERRUPTS();
    // The flags said cancel but nothing was raised (interrupts held off): still stop the call.
    ereport(ERROR, (errcode(ERRCODE_QUERY_CANCELED), errmsg("gpu_routing call cancelled")));
  }
  if (failure->hint[0] != '\0')
    ereport(ERROR, (errcode(sqlstate_of(failure->kind)), errmsg("%s", failure->message),
                    errhint("%s", failure->hint)));
  ereport(ERROR, (errcode(sqlstate_of(failure->kind)), errmsg("%s", failure->message)));
  pg_unreachable();
}

}  // namespace gpu_routing::pg
