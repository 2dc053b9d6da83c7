#pragma once

#include <string>

namespace qgemm {

/// Every QGEMM_* environment variable the library reads, in one place (the README lists them).
/// Switches are read once per process, at the first call of settings(); directories are read
/// on each call of their function, so a process may point them elsewhere as it goes.
struct Settings {
  bool quiet = false;                   ///< QGEMM_QUIET=1: no fallback notes on stderr
  int threads = 0;                      ///< QGEMM_THREADS: CPU threads (0: every core)
  std::string target_arch;              ///< QGEMM_TARGET_ARCH: run an older target's kernels
  bool disable_disk_cache = false;      ///< QGEMM_DISABLE_DISK_CACHE=1: kernels in memory only
  bool no_programmatic_launch = false;  ///< QGEMM_NO_PDL=1: plain launches everywhere
  // Split-K experiments (plan/mma_launch.h).
  int split_waves = 0;               ///< QGEMM_SPLIT_WAVES: CTAs per SM split-K aims at (0: tile's)
  int split_min_stages = 4;          ///< QGEMM_SPLIT_MIN_STAGES: stages each split keeps
  bool split_partial_waves = false;  ///< QGEMM_SPLIT_PARTIAL_WAVES=1: splits may start a wave
  bool split_cluster = true;         ///< QGEMM_SPLIT_CLUSTER=0: sum splits in global memory
  bool no_tail_split = false;        ///< QGEMM_NO_TAIL_SPLIT=1: one launch however waves end
  // 8-bit activation tiles (families/dense_act8.h).
  int act8_block_n = 0;  ///< QGEMM_ACT8_BLOCK_N above 128 tokens: 128, 160, 192; 0 cost model
};

/// The process's settings (read from the environment at the first call).
const Settings& settings();

/// QGEMM_CACHE_DIR, else $XDG_CACHE_HOME/qgemm, else ~/.cache/qgemm.
std::string cache_dir();
/// QGEMM_TUNING_DIR, else cache_dir()/tuning.
std::string tuning_dir();
/// QGEMM_DUMP_DIR, else "" (no dumps).
std::string dump_dir();

}  // namespace qgemm
