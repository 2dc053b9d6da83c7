#include "util/log.h"

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <set>
#include "util/settings.h"

namespace qgemm {

void log_once(const std::string& message) {
  static std::mutex mutex;
  static std::set<std::string> seen;
  if (settings().quiet) return;
  std::lock_guard<std::mutex> lock(mutex);
  if (seen.insert(message).second) std::fprintf(stderr, "%s\n", message.c_str());
}

}  // namespace qgemm
