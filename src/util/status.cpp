#include "qgemm/status.h"

#include <iterator>

#include "util/error.h"

namespace qgemm {
namespace {

// Indexed by ErrorCode, whose values count up from kOk = 0.
constexpr const char* kErrorCodeNames[] = {
    "ok",         "invalid argument", "unsupported",   "not found",      "compile error",
    "CUDA error", "I/O error",        "out of memory", "internal error",
};
static_assert(std::size(kErrorCodeNames) == static_cast<size_t>(ErrorCode::kInternal) + 1,
              "one name per ErrorCode");

}  // namespace

const char* error_code_name(ErrorCode code) {
  const auto index = static_cast<size_t>(code);
  return index < std::size(kErrorCodeNames) ? kErrorCodeNames[index] : "error";
}

std::string Status::to_string() const {
  if (ok()) return "ok";
  return str(error_code_name(code_), ": ", message_);
}

}  // namespace qgemm
