#include "base/common.hpp"

#include <cstdint>
#include <cstdio>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace gpu_routing {

void advise_huge_pages(void* memory, std::size_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  if (memory == nullptr || bytes < 2 * kHugePageBytes) return;
  const std::uintptr_t at = reinterpret_cast<std::uintptr_t>(memory);
  const std::uintptr_t first = huge_page_ceil(at);
  const std::uintptr_t last = huge_page_floor(at + bytes);
  if (last > first) madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE);
#else
  (void)memory;
  (void)bytes;
#endif
}

std::string format_bytes(std::size_t bytes) {
  const char* units[] = {"bytes", "kB", "MB", "GB", "TB", "PB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024.0 && unit < 5) {
    value /= 1024.0;
    ++unit;
  }
  char text[64];
  if (unit == 0)
    std::snprintf(text, sizeof text, "%zu bytes", bytes);
  else
    std::snprintf(text, sizeof text, "%.1f %s", value, units[unit]);
  return text;
}

std::size_t saturating_multiply(std::size_t a, std::size_t b) {
  if (a != 0 && b > std::numeric_limits<std::size_t>::max() / a)
    return std::numeric_limits<std::size_t>::max();
  return a * b;
}

std::size_t saturating_add(std::size_t a, std::size_t b) {
  if (b > std::numeric_limits<std::size_t>::max() - a)
    return std::numeric_limits<std::size_t>::max();
  return a + b;
}

void MemoryBudget::require(std::size_t needed_bytes, const std::string& what) const {
  if (needed_bytes <= limit_bytes_) return;
  throw RoutingError(ErrorKind::kOutOfMemory,
                     what + " needs " + format_bytes(needed_bytes) +
                         ", more than gpu_routing.max_memory (" + format_bytes(limit_bytes_) + ")",
                     "Raise gpu_routing.max_memory if the server has the memory, or ask for "
                     "fewer sources or a smaller graph.");
}

}  // namespace gpu_routing
