#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "jit/kernel_spec.h"
#include "qgemm/status.h"
#include "util/settings.h"

namespace qgemm {

/// Compiled kernels by key: an in-process map in front of an on-disk directory.
///
/// Disk entries are written to a temporary name and renamed into place, carry a checksum of
/// their payload and the key they belong to; a truncated or corrupt entry is rebuilt. Threads and
/// processes that build the same key at once each write a complete entry, and the last rename
/// leaves one valid file. An unwritable directory degrades to memory-only with one warning.
///
/// Debug switches (environment): QGEMM_CACHE_DIR (the directory of instance()),
/// QGEMM_DISABLE_DISK_CACHE=1 (instance() keeps kernels in memory only) and QGEMM_DUMP_DIR=<dir>
/// (every kernel a cache compiles is also written there as .cu, .ptx, .cubin and .log).
class KernelCache {
 public:
  /// The process-wide cache (directory from QGEMM_CACHE_DIR, see cache_dir()).
  static KernelCache& instance();

  /// A cache on `directory`; dumps go to $QGEMM_DUMP_DIR when it is set.
  explicit KernelCache(std::string directory, bool use_disk = true);

  /// The kernel for `spec`: from memory, else from disk, else compiled (and stored).
  Expected<std::shared_ptr<const CompiledKernel>> get(const KernelSpec& spec);

  /// Compiles (or loads) many specs on a thread pool; a progress bar on a terminal when there are
  /// at least `progress_threshold` of them. Results are in the order of `specs`.
  std::vector<Expected<std::shared_ptr<const CompiledKernel>>> get_all(
      const std::vector<KernelSpec>& specs, size_t progress_threshold = 4);

  /// Entries on disk: file names and sizes.
  struct DiskEntry {
    std::string path;
    int64_t bytes;
  };
  std::vector<DiskEntry> list() const;
  /// Removes every entry on disk and in memory; returns how many files were removed.
  int clear();

  const std::string& directory() const { return directory_; }
  /// False when constructed without disk or after the directory proved unwritable.
  bool disk_enabled() const;
  /// Where compiled kernels are dumped ("" = nowhere); set it before the first get().
  void set_dump_dir(std::string dir) { dump_dir_ = std::move(dir); }
  const std::string& dump_dir() const { return dump_dir_; }
  /// Drops the in-process map (tests use it to force a disk read).
  void forget_memory();

  /// Reads and checks one disk entry; an error when missing, truncated or corrupt.
  static Expected<CompiledKernel> read_entry(const std::string& path, const std::string& key);
  /// Checks and decodes `data`, the bytes of one disk entry, as read_entry does after reading
  /// the file (the fuzzers call it on arbitrary bytes); `source` names the entry in errors.
  static Expected<CompiledKernel> parse_entry(std::string_view data, const std::string& key,
                                              const std::string& source);
  /// The bytes of the disk entry for `kernel`, which parse_entry reads back.
  static std::string serialize_entry(const CompiledKernel& kernel);
  std::string entry_path(const std::string& key) const;

 private:
  Status write_entry(const CompiledKernel& kernel);
  Expected<std::shared_ptr<const CompiledKernel>> build(const KernelSpec& spec,
                                                        const std::string& key);
  void dump(const KernelSpec& spec, const std::string& key, const CompiledKernel* compiled,
            const std::string& log);
  void warn_once(const std::string& message);

  struct State;
  std::string directory_;
  bool use_disk_;
  std::string dump_dir_;
  std::shared_ptr<State> state_;
};


}  // namespace qgemm
