#pragma once

#include <charconv>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "qgemm/format.h"
#include "util/error.h"

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

/// The alias of the canonical spec `canonical`, or "" when it has none.
inline std::string alias_name(const std::vector<FormatAlias>& aliases, std::string_view canonical) {
  for (const FormatAlias& a : aliases)
    if (a.spec == canonical) return a.name;
  return "";
}

/// A spec that does not parse: which `kind` of spec ("weight", "activation"), the part at fault
/// and why, then `help` on how specs are written.
inline Status bad_part(std::string_view kind, std::string_view spec, std::string_view part,
                       std::string_view why, std::string_view help) {
  return invalid_argument(str(kind, " spec '", spec, "': ", why, " '", part, "'; ", help));
}

/// A spec split into its parts, the first of which names the element type.
struct SplitSpec {
  std::string_view text;  ///< the spec; an alias replaced by the spec it stands for
  std::vector<std::string_view> parts;
  DType type;  ///< of the first part
};

/// What every format's parse does first: an alias of `aliases` stands for its spec, the spec
/// must not be empty and its first part must be a type. `kind` ("weight", "activation") and
/// `help` go into the errors.
inline Expected<SplitSpec> split_spec(std::string_view spec,
                                      const std::vector<FormatAlias>& aliases,
                                      std::string_view kind, std::string_view help) {
  for (const FormatAlias& a : aliases) {
    if (a.name == spec) {
      spec = a.spec;
      break;
    }
  }
  if (spec.empty()) return invalid_argument(str("empty ", kind, " spec; ", help));
  std::vector<std::string_view> parts = split(spec);
  auto type = parse_dtype(parts[0]);
  if (!type) return bad_part(kind, spec, parts[0], str("unknown ", kind, " type"), help);
  return SplitSpec{spec, std::move(parts), *type};
}

/// A spec whose parts parse but do not make a valid format, as `validate` says why.
inline Status invalid_format(std::string_view kind, std::string_view spec, const Status& validate) {
  return invalid_argument(str(kind, " spec '", spec, "': ", validate.message()));
}

}  // namespace qgemm::spec
