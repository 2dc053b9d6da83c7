#include "util/parallel.h"

#include <cstdlib>

namespace qgemm {

int cpu_threads() {
  static const int threads = [] {
    if (const char* env = std::getenv("QGEMM_THREADS")) {
      const int v = std::atoi(env);
      if (v > 0) return v;
    }
    const unsigned hw = std::thread::hardware_concurrency();
    return hw == 0 ? 1 : static_cast<int>(hw);
  }();
  return threads;
}

}  // namespace qgemm
