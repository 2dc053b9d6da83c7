#include "util/progress.h"

#include <unistd.h>

#include <cstdio>

namespace qgemm {

Progress::Progress(std::string label, size_t total, bool enabled)
    : label_(std::move(label)),
      total_(total),
      enabled_(enabled && total > 0),
      terminal_(::isatty(STDERR_FILENO) != 0),
      start_(std::chrono::steady_clock::now()) {
  if (enabled_) draw();
}

void Progress::advance(size_t n) {
  done_ += n;
  if (enabled_) draw();
}

void Progress::set_detail(const std::string& detail) {
  if (!enabled_) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    detail_ = detail;
  }
  draw();
}

void Progress::draw() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (finished_) return;
  constexpr int kWidth = 30;
  const size_t done = std::min(done_.load(), total_);
  const int filled = static_cast<int>(kWidth * done / total_);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  if (!terminal_) {
    // A log, not a terminal: a plain line at most every kLogSeconds.
    if (seconds < next_line_) return;
    next_line_ = seconds + kLogSeconds;
    logged_ = true;
    std::fprintf(stderr, "%s: %zu/%zu after %.0f s%s%s\n", label_.c_str(), done, total_, seconds,
                 detail_.empty() ? "" : ": ", detail_.c_str());
    std::fflush(stderr);
    return;
  }
  std::fprintf(stderr, "\r%s [%.*s%*s] %zu/%zu %.1fs %s\x1b[K", label_.c_str(), filled,
               "##############################", kWidth - filled, "", done, total_, seconds,
               detail_.c_str());
  std::fflush(stderr);
}

void Progress::finish() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!enabled_ || finished_) return;
  finished_ = true;
  if (!terminal_) {
    if (logged_) {
      const double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
      std::fprintf(stderr, "%s: %zu/%zu done after %.0f s\n", label_.c_str(),
                   std::min(done_.load(), total_), total_, seconds);
      std::fflush(stderr);
    }
    return;
  }
  std::fprintf(stderr, "\r\x1b[K");
  std::fflush(stderr);
}

}  // namespace qgemm
