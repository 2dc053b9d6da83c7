#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "qgemm/status.h"

namespace qgemm::bench {

/// A key of a YAML map with its value; the key node carries the line for error messages.
struct YamlField {
  std::string key;
  YAML::Node key_node;
  YAML::Node value;
};

/// The entries of one YAML map, in file order, already checked against the accepted keys.
struct YamlFields {
  YAML::Node map;
  std::vector<YamlField> fields;

  /// The field named `key`, or nullptr when the map does not have it.
  const YamlField* get(std::string_view key) const;
};

/// "a, b, c".
std::string join_words(std::span<const std::string_view> words);
std::string join_words(const std::vector<std::string>& words);

/// How a node looks in "expected X, got Y" messages: 'text', a list, a map or nothing.
std::string describe_node(const YAML::Node& node);

/// Typed reads from a parsed YAML document. Every failure is kInvalidArgument with a message
/// "<source>:<line>: <what>", the line 1-based, naming the key, the value found and what is
/// accepted.
class YamlReader {
 public:
  explicit YamlReader(std::string source) : source_(std::move(source)) {}

  const std::string& source() const { return source_; }

  /// An error at a 1-based line; lines < 1 (position unknown) print the source alone.
  Status error_at_line(int line, const std::string& message) const;
  /// An error at a yaml-cpp position (0-based line).
  Status error(const YAML::Mark& mark, const std::string& message) const;
  /// An error at a node's position.
  Status error(const YAML::Node& at, const std::string& message) const;

  /// Collects a map's entries; rejects non-maps, non-scalar keys, keys not in `accepted` (with a
  /// "did you mean" hint for near misses) and repeated keys. `what` names the map ("a problem").
  Status read_map(const YAML::Node& node, std::string_view what,
                  std::span<const std::string_view> accepted, YamlFields* out) const;
  /// A scalar as text; empty text only with allow_empty.
  Status read_string(const YamlField& f, bool allow_empty, std::string* out) const;
  /// A decimal integer in [min, max]; `what` names the value in messages ("key 'n'").
  Status read_int(const YAML::Node& node, const std::string& what, int64_t min, int64_t max,
                  int64_t* out) const;
  /// A field's value as a decimal integer in [min, max].
  Status read_int(const YamlField& f, int64_t min, int64_t max, int64_t* out) const;
  /// A field's value as an unsigned 64-bit decimal integer.
  Status read_uint64(const YamlField& f, uint64_t* out) const;
  /// One integer, or a non-empty list of distinct integers, each in [min, max].
  Status read_int_list(const YamlField& f, int64_t min, int64_t max,
                       std::vector<int64_t>* out) const;
  /// A non-empty list of distinct non-empty strings.
  Status read_string_list(const YamlField& f, std::vector<std::string>* out) const;

 private:
  std::string source_;
};

}  // namespace qgemm::bench
