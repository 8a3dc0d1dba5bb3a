// gpu_routing.retained_memory: how much freed memory a session keeps for its next call.
//
// A call's big buffers are freed at its end: a New York tree as an array is 2 MB in the engine's
// row, 2 MB in its tuple, 2 MB in the tuplestore's copy, and the executor copies a group's first
// row twice more for an aggregate over the result. Given back to the kernel, each comes back as
// fresh pages the next call faults in and the kernel clears: on the 2-core development machine,
// `SELECT count(*) FROM gpu_apsp_array('graph:ny', ARRAY[1])` spent half of the backend's time
// in page faults and heap trimming (95 calls/s); keeping 64 MB, 210 calls/s. So a session that
// routes keeps up to this much: the C library's heap is trimmed only past it (mallopt), and the
// result rows' arena (result_store.cpp) keeps its populated blocks up to it, and service areas
// keep their threads' workspaces within it (ServiceAreaSearch::set_kept_worker_bytes).
#pragma once

#include <cstddef>

namespace gpu_routing::pg {

void define_retained_memory_setting();  // from _PG_init
// Called at the start of a routing call: applies the setting to the C library's heap where it
// changed. Sessions that never route are left as PostgreSQL has them.
void retain_freed_memory();
// Bytes of freed result blocks the row arena may keep (the setting as last applied).
std::size_t retained_memory_bytes();

}  // namespace gpu_routing::pg
