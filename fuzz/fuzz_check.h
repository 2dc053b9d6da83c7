#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace qgemm::fuzz {

/// The input as text; the parsers under test take any bytes, NUL and invalid UTF-8 included.
inline std::string_view as_text(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

/// A broken property is a crash, so libFuzzer stops and saves the input that broke it.
inline void check(bool property) {
  if (!property) __builtin_trap();
}

}  // namespace qgemm::fuzz
