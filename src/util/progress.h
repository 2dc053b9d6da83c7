#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <mutex>
#include <string>

namespace qgemm {

/// Progress of long work on stderr when `enabled`: a one-line bar on a terminal, else (a log
/// file, CI) a plain line at most every 10 seconds once the work has run 2 seconds, and a last
/// one when it ends. Thread-safe: workers call advance().
class Progress {
 public:
  Progress(std::string label, size_t total, bool enabled);
  ~Progress() { finish(); }
  void advance(size_t n = 1);
  /// Updates the label's detail text (e.g. the current problem).
  void set_detail(const std::string& detail);
  void finish();

 private:
  void draw();
  std::string label_;
  std::string detail_;
  size_t total_;
  std::atomic<size_t> done_{0};
  bool enabled_;
  bool terminal_;
  /// A log gets its first line once the work has taken kFirstLogSeconds (work that ends sooner
  /// prints nothing), then one every kLogSeconds, and a last one when it ends.
  static constexpr double kFirstLogSeconds = 2;
  static constexpr double kLogSeconds = 10;
  double next_line_ = kFirstLogSeconds;  ///< seconds after start_ of the next plain line
  bool logged_ = false;                  ///< a plain line was printed
  bool finished_ = false;
  std::mutex mutex_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace qgemm
