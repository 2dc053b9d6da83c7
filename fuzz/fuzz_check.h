#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "qgemm/format.h"

namespace qgemm::fuzz {

/// The input as text; the parsers under test take any bytes, NUL and invalid UTF-8 included.
inline std::string_view as_text(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

/// Calls fn on each line of the input (split at '\n'): a spec fuzzer's input is a list of
/// specs, so one seed file holds many and a mutation can move tokens between them.
template <typename Fn>
void for_each_line(const uint8_t* data, size_t size, Fn&& fn) {
  std::string_view text = as_text(data, size);
  for (;;) {
    const size_t end = text.find('\n');
    fn(text.substr(0, end));
    if (end == std::string_view::npos) return;
    text.remove_prefix(end + 1);
  }
}

/// A broken property is a crash, so libFuzzer stops and saves the input that broke it.
inline void check(bool property) {
  if (!property) __builtin_trap();
}

/// A format spec parser's properties: `spec` is an error, or a valid format whose canonical spec
/// parses back to the same format and prints unchanged. Returns the format, if any, for checks
/// of its own.
template <typename Format>
std::optional<Format> check_spec_round_trip(std::string_view spec) {
  auto format = Format::parse(spec);
  if (!format) return std::nullopt;
  check(format->validate().ok());
  const std::string canonical = format->to_string();
  auto again = Format::parse(canonical);
  check(again.ok() && *again == *format && again->to_string() == canonical);
  return *format;
}

}  // namespace qgemm::fuzz
