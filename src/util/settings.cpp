#include "util/settings.h"

#include <cstdlib>

namespace qgemm {
namespace {

const char* env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? v : nullptr;
}

// A switch is on when set to anything but "0".
bool flag(const char* name) {
  const char* v = env(name);
  return v != nullptr && std::string(v) != "0";
}

int positive(const char* name, int fallback) {
  const char* v = env(name);
  const int n = v ? std::atoi(v) : 0;
  return n > 0 ? n : fallback;
}

}  // namespace

const Settings& settings() {
  static const Settings s = [] {
    Settings s;
    s.quiet = flag("QGEMM_QUIET");
    s.threads = positive("QGEMM_THREADS", 0);
    if (const char* arch = env("QGEMM_TARGET_ARCH")) s.target_arch = arch;
    s.disable_disk_cache = flag("QGEMM_DISABLE_DISK_CACHE");
    s.no_programmatic_launch = flag("QGEMM_NO_PDL");
    s.split_waves = positive("QGEMM_SPLIT_WAVES", 0);
    s.split_min_stages = positive("QGEMM_SPLIT_MIN_STAGES", 4);
    s.split_partial_waves = flag("QGEMM_SPLIT_PARTIAL_WAVES");
    const char* cluster = env("QGEMM_SPLIT_CLUSTER");
    s.split_cluster = cluster == nullptr || std::string(cluster) != "0";
    const int act8_block_n = positive("QGEMM_ACT8_BLOCK_N", 0);
    if (act8_block_n == 128 || act8_block_n == 160 || act8_block_n == 192)
      s.act8_block_n = act8_block_n;
    s.no_tail_split = flag("QGEMM_NO_TAIL_SPLIT");
    return s;
  }();
  return s;
}

std::string cache_dir() {
  if (const char* dir = env("QGEMM_CACHE_DIR")) return dir;
  if (const char* xdg = env("XDG_CACHE_HOME")) return std::string(xdg) + "/qgemm";
  if (const char* home = env("HOME")) return std::string(home) + "/.cache/qgemm";
  return "/tmp/qgemm-cache";
}

std::string tuning_dir() {
  if (const char* dir = env("QGEMM_TUNING_DIR")) return dir;
  return cache_dir() + "/tuning";
}

std::string dump_dir() {
  const char* dir = env("QGEMM_DUMP_DIR");
  return dir != nullptr ? dir : "";
}

}  // namespace qgemm
