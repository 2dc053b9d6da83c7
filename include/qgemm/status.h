#pragma once

#include <string>
#include <utility>
#include <variant>

namespace qgemm {

/// What kind of failure a Status carries.
enum class ErrorCode {
  kOk = 0,
  kInvalidArgument,  ///< a value the caller passed is malformed or out of range
  kUnsupported,      ///< well-formed, but no backend (or not this one) can run it
  kNotFound,         ///< a file, device or library is missing
  kCompileError,     ///< NVRTC rejected generated kernel source
  kCudaError,        ///< a CUDA driver / cuBLASLt call failed
  kIoError,          ///< reading or writing a file failed
  kOutOfMemory,      ///< the host or the GPU has too little memory for the request
  kInternal,         ///< a bug in qgemm: please report it
};

/// Returns a short name such as "invalid argument".
const char* error_code_name(ErrorCode code);

/// Success, or an error code with a message that names the bad value and what is supported.
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(ErrorCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status success() { return Status(); }

  bool ok() const { return code_ == ErrorCode::kOk; }
  ErrorCode code() const { return code_; }
  const std::string& message() const { return message_; }
  /// "invalid argument: <message>", or "ok".
  std::string to_string() const;

 private:
  ErrorCode code_ = ErrorCode::kOk;
  std::string message_;
};

/// A value or the Status explaining why there is none.
template <typename T>
class [[nodiscard]] Expected {
 public:
  Expected(T value) : v_(std::move(value)) {}
  Expected(Status status) : v_(std::move(status)) {}

  bool ok() const { return std::holds_alternative<T>(v_); }
  explicit operator bool() const { return ok(); }

  const T& value() const& { return std::get<T>(v_); }
  T& value() & { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  const T& operator*() const& { return value(); }
  T& operator*() & { return value(); }
  const T* operator->() const { return &value(); }
  T* operator->() { return &value(); }

  /// The error; Status::success() when a value is held.
  Status status() const { return ok() ? Status() : std::get<Status>(v_); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace qgemm
