// gpu_routing.retained_memory (see retained_memory.hpp).
#include "retained_memory.hpp"

#include <malloc.h>

#include <algorithm>

#include "cpu/service_area.hpp"
#include "service.hpp"
#include "service/service_client.hpp"

#include "postgres_headers.hpp"

namespace gpu_routing::pg {

namespace {

constexpr int kDefaultKb = 64 * 1024;
constexpr int kMostKb = 1024 * 1024;
// glibc refuses an mmap threshold above 32 MB on 64-bit (HEAP_MAX_SIZE / 2); its own defaults are
// 128 kB for both thresholds.
constexpr std::size_t kMostMmapThreshold = std::size_t{32} << 20;
constexpr std::size_t kLibcDefaultThreshold = std::size_t{128} << 10;

int g_retained_kb = kDefaultKb;
// What retain_freed_memory() last gave the C library; -1 before the first routing call, where
// glibc's own dynamic thresholds are left alone.
long g_applied_kb = -1;

}  // namespace

void define_retained_memory_setting() {
  DefineCustomIntVariable(
      "gpu_routing.retained_memory",
      "Freed memory a routing session keeps for its next call instead of giving it back.",
      "Large results (a tree as an array, a cost matrix's rows) are freed at a call's end; "
      "memory given back to the kernel comes back to the next call as fresh pages, whose "
      "faults cost as much as computing a New York tree. Up to this much is kept (the C "
      "library's heap and the result rows' blocks, each; service areas' workspaces within "
      "it); 0 gives everything back at once.",
      &g_retained_kb, kDefaultKb, 0, kMostKb, PGC_USERSET, GUC_UNIT_KB, nullptr, nullptr, nullptr);
}

void retain_freed_memory() {
  if (g_applied_kb == g_retained_kb) return;
  if (g_applied_kb < 0 && g_retained_kb == 0) return;  // nothing to change yet
  const std::size_t bytes = static_cast<std::size_t>(g_retained_kb) * 1024;
  if (bytes == 0) {
    mallopt(M_MMAP_THRESHOLD, static_cast<int>(kLibcDefaultThreshold));
    mallopt(M_TRIM_THRESHOLD, static_cast<int>(kLibcDefaultThreshold));
  } else {
    // Setting the trim threshold turns off glibc's dynamic thresholds, which would otherwise
    // raise the mmap threshold past a freed block's size: allocations up to it come from the
    // heap, whose freed top is kept up to the trim threshold.
    mallopt(M_MMAP_THRESHOLD,
            static_cast<int>(std::min(kMostMmapThreshold, std::max(kLibcDefaultThreshold, bytes))));
    mallopt(M_TRIM_THRESHOLD, static_cast<int>(bytes));
    // A lowered setting gives back what the heap keeps over it now.
    if (g_applied_kb > g_retained_kb) malloc_trim(bytes);
  }
  // Service areas' workers (a Dijkstra workspace and a row each) kept within the same allowance.
  ServiceAreaSearch::set_kept_worker_bytes(bytes);
  // The GPU service's exchange segment: kept whole up to the same allowance (64 MB at least); a
  // segment kept from an earlier call over a lowered allowance goes now, not after the next call
  // through the service.
  service::ServiceClient::set_kept_exchange_bytes(bytes);
  trim_service_exchange();
  g_applied_kb = g_retained_kb;
}

std::size_t retained_memory_bytes() {
  return g_applied_kb > 0 ? static_cast<std::size_t>(g_applied_kb) * 1024 : 0;
}

}  // namespace gpu_routing::pg
