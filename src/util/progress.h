#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <mutex>
#include <string>

namespace qgemm {

/// A one-line progress bar on stderr, drawn only when stderr is a terminal and `enabled`.
/// Thread-safe: workers call advance().
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
  bool finished_ = false;
  std::mutex mutex_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace qgemm
