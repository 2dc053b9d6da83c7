#include "util/memory.h"

#include <unistd.h>

#include <cstdio>
#include <limits>

#include "util/error.h"

namespace qgemm {

Expected<int64_t> byte_count(const std::string& what, std::initializer_list<int64_t> dims,
                             int64_t element_bytes) {
  int64_t total = element_bytes;
  std::string shape;
  for (int64_t d : dims) shape += (shape.empty() ? "" : " x ") + std::to_string(d);
  for (int64_t d : dims) {
    if (d < 0) return invalid_argument(str(what, ": size ", shape, " has a negative dimension"));
    if (d > 0 && total > std::numeric_limits<int64_t>::max() / d)
      return invalid_argument(str(what, ": size ", shape, " of ", element_bytes,
                                  "-byte elements does not fit in 64 bits"));
    total *= d;
  }
  return total;
}

int64_t host_memory_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? int64_t(pages) * int64_t(page) : 0;
}

Status check_host_memory(const std::string& what, int64_t bytes) {
  const int64_t have = host_memory_bytes();
  if (have > 0 && bytes > have)
    return Status(ErrorCode::kOutOfMemory,
                  str(what, " needs ", human_bytes(bytes), " of host memory; this machine has ",
                      human_bytes(have)));
  return Status();
}

std::string human_bytes(int64_t bytes) {
  const char* units[] = {"bytes", "KB", "MB", "GB", "TB", "PB", "EB"};
  double v = double(bytes);
  int u = 0;
  while (v >= 1024 && u < 6) v /= 1024, ++u;
  char text[32];
  std::snprintf(text, sizeof text, u == 0 ? "%.0f %s" : "%.1f %s", v, units[u]);
  return text;
}

}  // namespace qgemm
