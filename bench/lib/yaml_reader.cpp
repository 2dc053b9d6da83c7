#include "bench/lib/yaml_reader.h"
#include "util/error.h"

#include <algorithm>
#include <charconv>
#include <limits>
#include <optional>

namespace qgemm::bench {
namespace {

// Levenshtein distance, for "did you mean" hints on misspelt keys.
size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

// A whole-string decimal number of type T, or nothing.
template <typename int_t>
std::optional<int_t> parse_number(const YAML::Node& node) {
  if (!node.IsScalar()) return std::nullopt;
  const std::string& s = node.Scalar();
  int_t v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

}  // namespace

const YamlField* YamlFields::get(std::string_view key) const {
  for (const YamlField& f : fields) {
    if (f.key == key) return &f;
  }
  return nullptr;
}

std::string join_words(std::span<const std::string_view> words) {
  std::string s;
  for (std::string_view w : words) s += str(s.empty() ? "" : ", ", w);
  return s;
}

std::string join_words(const std::vector<std::string>& words) {
  const std::vector<std::string_view> views(words.begin(), words.end());
  return join_words(views);
}

std::string describe_node(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Scalar:
      return str("'", node.Scalar(), "'");
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Map:
      return "a map";
    default:
      return "nothing";
  }
}

Status YamlReader::error_at_line(int line, const std::string& message) const {
  if (line < 1) return invalid_argument(str(source_, ": ", message));
  return invalid_argument(str(source_, ":", line, ": ", message));
}

Status YamlReader::error(const YAML::Mark& mark, const std::string& message) const {
  return error_at_line(mark.line + 1, message);
}

Status YamlReader::error(const YAML::Node& at, const std::string& message) const {
  return error(at.Mark(), message);
}

Status YamlReader::read_map(const YAML::Node& node, std::string_view what,
                            std::span<const std::string_view> accepted, YamlFields* out) const {
  if (!node.IsMap())
    return error(node, str(what, " must be a map of keys (", join_words(accepted), "), got ",
                           describe_node(node)));
  out->map = node;
  for (auto it = node.begin(); it != node.end(); ++it) {
    const YAML::Node key = it->first;
    if (!key.IsScalar())
      return error(key, str("keys of ", what, " must be plain words, got ", describe_node(key)));
    const std::string name = key.Scalar();
    if (std::find(accepted.begin(), accepted.end(), name) == accepted.end()) {
      std::string hint;
      for (std::string_view a : accepted) {
        if (edit_distance(name, a) <= 2) {
          hint = str("; did you mean '", a, "'?");
          break;
        }
      }
      return error(key,
                   str("key '", name, "' is not known; accepted: ", join_words(accepted), hint));
    }
    if (const YamlField* first = out->get(name))
      return error(key, str("key '", name, "' appears twice (first at line ",
                            first->key_node.Mark().line + 1, ")"));
    out->fields.push_back({name, key, it->second});
  }
  return Status();
}

Status YamlReader::read_string(const YamlField& f, bool allow_empty, std::string* out) const {
  if (!f.value.IsScalar() || (!allow_empty && f.value.Scalar().empty()))
    return error(f.value, str("key '", f.key, "' must be a string, got ", describe_node(f.value)));
  *out = f.value.Scalar();
  return Status();
}

Status YamlReader::read_int(const YAML::Node& node, const std::string& what, int64_t min,
                            int64_t max, int64_t* out) const {
  const std::string range = max == std::numeric_limits<int64_t>::max()
                                ? str(">= ", min)
                                : str("in [", min, ", ", max, "]");
  const std::optional<int64_t> v = parse_number<int64_t>(node);
  if (!v)
    return error(node, str(what, " must be an integer ", range, ", got ", describe_node(node)));
  if (*v < min || *v > max) return error(node, str(what, " must be ", range, ", got ", *v));
  *out = *v;
  return Status();
}

Status YamlReader::read_int(const YamlField& f, int64_t min, int64_t max, int64_t* out) const {
  return read_int(f.value, str("key '", f.key, "'"), min, max, out);
}

Status YamlReader::read_uint64(const YamlField& f, uint64_t* out) const {
  const std::optional<uint64_t> v = parse_number<uint64_t>(f.value);
  if (!v)
    return error(f.value, str("key '", f.key, "' must be an unsigned 64-bit integer, got ",
                              describe_node(f.value)));
  *out = *v;
  return Status();
}

Status YamlReader::read_int_list(const YamlField& f, int64_t min, int64_t max,
                                 std::vector<int64_t>* out) const {
  out->clear();
  if (f.value.IsScalar()) {
    QGEMM_RETURN_IF_ERROR(read_int(f, min, max, &out->emplace_back()));
    return Status();
  }
  if (!f.value.IsSequence() || f.value.size() == 0)
    return error(f.value, str("key '", f.key, "' must be an integer or a non-empty list of ",
                              "integers, e.g. [1, 16, 64], got ", describe_node(f.value)));
  for (size_t i = 0; i < f.value.size(); ++i) {
    const YAML::Node item = f.value[i];
    int64_t v = 0;
    QGEMM_RETURN_IF_ERROR(read_int(item, str("key '", f.key, "' entry ", i + 1), min, max, &v));
    if (std::find(out->begin(), out->end(), v) != out->end())
      return error(item, str("key '", f.key, "' lists ", v, " twice"));
    out->push_back(v);
  }
  return Status();
}

Status YamlReader::read_string_list(const YamlField& f, std::vector<std::string>* out) const {
  out->clear();
  if (!f.value.IsSequence() || f.value.size() == 0)
    return error(f.value, str("key '", f.key, "' must be a non-empty list, e.g. [a, b], got ",
                              describe_node(f.value)));
  for (size_t i = 0; i < f.value.size(); ++i) {
    const YAML::Node item = f.value[i];
    if (!item.IsScalar() || item.Scalar().empty())
      return error(item, str("key '", f.key, "' entry ", i + 1, " must be a string, got ",
                             describe_node(item)));
    if (std::find(out->begin(), out->end(), item.Scalar()) != out->end())
      return error(item, str("key '", f.key, "' lists '", item.Scalar(), "' twice"));
    out->push_back(item.Scalar());
  }
  return Status();
}

}  // namespace qgemm::bench
