// What the extension's binding files share: library errors as Python exceptions, NumPy arrays
// in and out, 16-bit value conversion and spec parsing.
#pragma once

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "qgemm/qgemm.h"

namespace nb = nanobind;

namespace qgemm {

// ---- errors ----------------------------------------------------------------------------------

struct UnsupportedError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
struct OutOfMemoryError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
struct LibraryError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Invalid arguments become ValueError, unsupported requests qgemm.UnsupportedError (a
/// NotImplementedError), memory shortage qgemm.OutOfMemoryError (a MemoryError), everything
/// else qgemm.Error (a RuntimeError) with the error's kind in front of its message.
[[noreturn]] inline void raise(const Status& s) {
  switch (s.code()) {
    case ErrorCode::kInvalidArgument:
      throw std::invalid_argument(s.message());
    case ErrorCode::kUnsupported:
      throw UnsupportedError(s.message());
    case ErrorCode::kOutOfMemory:
      throw OutOfMemoryError(s.message());
    default:
      throw LibraryError(s.to_string());
  }
}

inline void check(const Status& s) {
  if (!s.ok()) raise(s);
}

template <typename T>
T unwrap(Expected<T> e) {
  if (!e) raise(e.status());
  return std::move(*e);
}

// ---- arrays ----------------------------------------------------------------------------------

using HostFloats = nb::ndarray<const float, nb::c_contig, nb::device::cpu>;

/// A NumPy array that owns `values` (moved to the heap), of the given shape.
template <typename T>
nb::ndarray<nb::numpy, T> to_numpy(std::vector<T> values, std::vector<size_t> shape) {
  auto* owned = new std::vector<T>(std::move(values));
  nb::capsule owner(owned, [](void* p) noexcept { delete static_cast<std::vector<T>*>(p); });
  return nb::ndarray<nb::numpy, T>(owned->data(), shape.size(), shape.data(), owner);
}

template <typename T>
std::vector<T> to_vector(const nb::ndarray<const T, nb::c_contig, nb::device::cpu>& a) {
  return std::vector<T>(a.data(), a.data() + a.size());
}

inline HostValues host_values(const HostFloats& a) {
  return {a.data(), DType::fp32(), static_cast<int64_t>(a.size())};
}

/// Values stored as `type` (fp32, or 16-bit codes) as fp32.
inline std::vector<float> decode_values(const std::vector<uint8_t>& bytes, DType type,
                                        size_t count) {
  std::vector<float> out(count);
  if (type == DType::fp32()) {
    std::memcpy(out.data(), bytes.data(), count * 4);
  } else {
    for (size_t i = 0; i < count; ++i) {
      uint16_t code;
      std::memcpy(&code, bytes.data() + 2 * i, 2);
      out[i] = static_cast<float>(decode(type, code));
    }
  }
  return out;
}

/// fp32 values as `type` (fp32, or 16-bit codes rounded to nearest even).
inline std::vector<uint8_t> encode_values(const float* values, size_t count, DType type) {
  std::vector<uint8_t> out(count * (type == DType::fp32() ? 4 : 2));
  if (type == DType::fp32()) {
    std::memcpy(out.data(), values, count * 4);
  } else {
    for (size_t i = 0; i < count; ++i) {
      const auto code = static_cast<uint16_t>(encode(type, values[i]));
      std::memcpy(out.data() + 2 * i, &code, 2);
    }
  }
  return out;
}

template <typename T>
T parse_spec(const std::string& spec) {
  return unwrap(T::parse(spec));
}

/// Binds qgemm.MoE (moe_binding.cpp).
void bind_moe(nb::module_& m);

}  // namespace qgemm
