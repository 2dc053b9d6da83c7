#pragma once

#include <new>
#include <sstream>
#include <string>

#include "qgemm/status.h"

namespace qgemm {

/// Concatenates any streamable values into one string: str("K=", k, " is odd").
template <typename... Args>
std::string str(const Args&... args) {
  std::ostringstream os;
  (os << ... << args);
  return os.str();
}

inline Status invalid_argument(std::string message) {
  return Status(ErrorCode::kInvalidArgument, std::move(message));
}
inline Status unsupported(std::string message) {
  return Status(ErrorCode::kUnsupported, std::move(message));
}

}  // namespace qgemm

namespace qgemm {

/// fn(), or kOutOfMemory naming `where` when a host allocation inside it fails: public entry
/// points that allocate return an error instead of letting std::bad_alloc escape.
template <typename Fn>
auto out_of_memory_as_status(const char* where, Fn&& fn) -> decltype(fn()) {
  try {
    return fn();
  } catch (const std::bad_alloc&) {
    return Status(ErrorCode::kOutOfMemory, str(where, ": a host allocation failed"));
  }
}

}  // namespace qgemm

/// Returns early from the enclosing function when `expr` yields a failed Status.
#define QGEMM_RETURN_IF_ERROR(expr)                \
  do {                                             \
    ::qgemm::Status qgemm_status_ = (expr);        \
    if (!qgemm_status_.ok()) return qgemm_status_; \
  } while (0)
