#include "util/parallel.h"

#include <cstdlib>
#include "util/settings.h"

namespace qgemm {

int cpu_threads() {
  static const int threads = [] {
    if (settings().threads > 0) return settings().threads;
    const unsigned hw = std::thread::hardware_concurrency();
    return hw == 0 ? 1 : static_cast<int>(hw);
  }();
  return threads;
}

}  // namespace qgemm
