#pragma once

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

/// Returns early from the enclosing function when `expr` yields a failed Status.
#define QGEMM_RETURN_IF_ERROR(expr)                \
  do {                                             \
    ::qgemm::Status qgemm_status_ = (expr);        \
    if (!qgemm_status_.ok()) return qgemm_status_; \
  } while (0)
