#pragma once

#include <charconv>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace qgemm::spec {

/// Splits "int4/g128/fp16" into {"int4", "g128", "fp16"}.
inline std::vector<std::string_view> split(std::string_view s, char sep = '/') {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    size_t end = s.find(sep, start);
    parts.push_back(s.substr(start, end == std::string_view::npos ? end : end - start));
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return parts;
}

/// A positive decimal integer (no sign, no leading zero), or nothing.
inline std::optional<int> positive_int(std::string_view s) {
  if (s.empty() || s.size() > 7 || s[0] == '0') return std::nullopt;
  int v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size() || v <= 0) return std::nullopt;
  return v;
}

}  // namespace qgemm::spec
