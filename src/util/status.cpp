#include "qgemm/status.h"
#include "util/error.h"

namespace qgemm {

const char* error_code_name(ErrorCode code) {
  switch (code) {
    case ErrorCode::kOk:
      return "ok";
    case ErrorCode::kInvalidArgument:
      return "invalid argument";
    case ErrorCode::kUnsupported:
      return "unsupported";
    case ErrorCode::kNotFound:
      return "not found";
    case ErrorCode::kCompileError:
      return "compile error";
    case ErrorCode::kCudaError:
      return "CUDA error";
    case ErrorCode::kIoError:
      return "I/O error";
    case ErrorCode::kInternal:
      return "internal error";
  }
  return "error";
}

std::string Status::to_string() const {
  if (ok()) return "ok";
  return str(error_code_name(code_), ": ", message_);
}

}  // namespace qgemm
