#include "bench/lib/recipe.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <span>
#include <sstream>
#include <string_view>

#include "bench/lib/yaml_reader.h"
#include "qgemm/format.h"
#include "util/error.h"

namespace qgemm::bench {
namespace {

constexpr std::string_view kRecipeKeys[] = {"name",     "description", "repetitions",
                                            "warmup",   "seed",        "rotate_mb",
                                            "backends", "shapes",      "problems"};
constexpr std::string_view kProblemKeys[] = {"name",    "m",     "n",       "k",       "shapes",
                                             "experts", "top_k", "weight",  "weights", "act",
                                             "acts",    "out",   "backends"};
constexpr std::string_view kShapeKeys[] = {"name", "n", "k"};

constexpr int64_t kMiB = int64_t{1} << 20;
constexpr int64_t kMaxRotateMb = int64_t{1} << 20;  // 1 TiB: far beyond any GPU, no overflow
constexpr int64_t kMaxCount = 1'000'000;            // repetitions, warmup
constexpr int64_t kMaxDim = std::numeric_limits<int32_t>::max();

/// One (n, k) of a named shape set.
struct Shape {
  std::string name;
  int64_t n = 0, k = 0;
};
using ShapeSets = std::map<std::string, std::vector<Shape>, std::less<>>;

std::string default_name(const BenchProblem& p, const std::string& shape_name) {
  std::string s = str(p.weight, " x ", p.act, " N=", p.n, " K=", p.k);
  if (p.experts > 0) s += str(" E=", p.experts, " top_k=", p.top_k);
  if (p.out != "bf16") s += str(" out=", p.out);
  if (!shape_name.empty()) s += str(" (", shape_name, ")");
  return s;
}

/// Reads one recipe; every error names the source and a 1-based line.
class Parser : public YamlReader {
 public:
  using YamlReader::YamlReader;

  Status parse(const YAML::Node& root, Recipe* recipe) const;

 private:
  Status read_backends(const YamlField& f, std::vector<std::string>* out) const;
  Status read_shape_sets(const YamlField& f, ShapeSets* out) const;
  Status read_problem_shapes(const YamlFields& fields, const YAML::Node& node,
                             const ShapeSets& sets, std::vector<Shape>* out) const;
  Status read_problem_formats(const YamlFields& fields, const YAML::Node& node,
                              const std::vector<Shape>& shapes, std::vector<std::string>* weights,
                              std::vector<std::string>* acts) const;
  Status read_problem(const YAML::Node& node, const Recipe& recipe, const ShapeSets& sets,
                      std::vector<BenchProblem>* out) const;
};

// "problem is missing key 'k', e.g. <example>" at the problem's line.
std::string missing_key(std::string_view key, std::string_view example) {
  return str("problem is missing key '", key, "', e.g. ", example);
}

Status Parser::read_backends(const YamlField& f, std::vector<std::string>* out) const {
  QGEMM_RETURN_IF_ERROR(read_string_list(f, out));
  const auto& known = bench_backends();
  for (size_t i = 0; i < out->size(); ++i) {
    if (std::find(known.begin(), known.end(), (*out)[i]) == known.end())
      return error(f.value[i],
                   str("backend '", (*out)[i], "' is not known; accepted: ", join_words(known)));
  }
  return Status();
}

Status Parser::read_shape_sets(const YamlField& f, ShapeSets* out) const {
  if (!f.value.IsMap() || f.value.size() == 0)
    return error(f.value, str("key 'shapes' must map set names to lists of shapes, e.g. ",
                              "'shapes: {llama70b: [{name: qkv, n: 10240, k: 8192}]}', got ",
                              describe_node(f.value)));
  for (auto it = f.value.begin(); it != f.value.end(); ++it) {
    const YAML::Node key = it->first;
    const YAML::Node list = it->second;
    if (!key.IsScalar() || key.Scalar().empty())
      return error(key, str("shape set names must be strings, got ", describe_node(key)));
    const std::string set_name = key.Scalar();
    if (out->count(set_name)) return error(key, str("shape set '", set_name, "' appears twice"));
    if (!list.IsSequence() || list.size() == 0)
      return error(list, str("shape set '", set_name, "' must be a non-empty list of shapes ",
                             "({name, n, k} or [n, k]), got ", describe_node(list)));
    std::vector<Shape>& shapes = (*out)[set_name];
    for (size_t i = 0; i < list.size(); ++i) {
      const YAML::Node item = list[i];
      const std::string what = str("shape ", i + 1, " of set '", set_name, "'");
      Shape s;
      if (item.IsSequence()) {
        if (item.size() != 2)
          return error(item, str(what, " must be [n, k], got ", item.size(), " values"));
        QGEMM_RETURN_IF_ERROR(read_int(item[0], what + " n", 1, kMaxDim, &s.n));
        QGEMM_RETURN_IF_ERROR(read_int(item[1], what + " k", 1, kMaxDim, &s.k));
      } else {
        YamlFields fields;
        QGEMM_RETURN_IF_ERROR(read_map(item, what, kShapeKeys, &fields));
        if (const YamlField* name = fields.get("name"))
          QGEMM_RETURN_IF_ERROR(read_string(*name, false, &s.name));
        const YamlField* n = fields.get("n");
        const YamlField* k = fields.get("k");
        if (!n || !k) return error(item, str(what, " is missing key '", n ? "k" : "n", "'"));
        QGEMM_RETURN_IF_ERROR(read_int(*n, 1, kMaxDim, &s.n));
        QGEMM_RETURN_IF_ERROR(read_int(*k, 1, kMaxDim, &s.k));
      }
      shapes.push_back(std::move(s));
    }
  }
  return Status();
}

// Shapes: either n and k, or named sets from the top-level `shapes:`.
Status Parser::read_problem_shapes(const YamlFields& fields, const YAML::Node& node,
                                   const ShapeSets& sets, std::vector<Shape>* out) const {
  const YamlField* n = fields.get("n");
  const YamlField* k = fields.get("k");
  if (const YamlField* f = fields.get("shapes")) {
    if (n || k) return error((n ? n : k)->key_node, "give either n and k or shapes, not both");
    std::vector<std::string> names;
    if (f->value.IsScalar()) {
      QGEMM_RETURN_IF_ERROR(read_string(*f, false, &names.emplace_back()));
    } else {
      QGEMM_RETURN_IF_ERROR(read_string_list(*f, &names));
    }
    for (size_t i = 0; i < names.size(); ++i) {
      auto set = sets.find(names[i]);
      if (set == sets.end()) {
        std::vector<std::string> known;
        for (const auto& [name, list] : sets) known.push_back(name);
        return error(f->value.IsScalar() ? f->value : f->value[i],
                     str("shape set '", names[i], "' is not defined under the top-level ",
                         "'shapes:'; defined: ", known.empty() ? "none" : join_words(known)));
      }
      out->insert(out->end(), set->second.begin(), set->second.end());
    }
  } else {
    if (!n)
      return error(node, missing_key("n", "'n: 8192' (output features), or 'shapes: <set name>'"));
    if (!k)
      return error(node, missing_key("k", "'k: 8192' (input features), or 'shapes: <set name>'"));
    Shape s;
    QGEMM_RETURN_IF_ERROR(read_int(*n, 1, kMaxDim, &s.n));
    QGEMM_RETURN_IF_ERROR(read_int(*k, 1, kMaxDim, &s.k));
    out->push_back(s);
  }
  return Status();
}

// Formats: one of weight / weights; act / acts (default bf16). Each must fit every shape.
Status Parser::read_problem_formats(const YamlFields& fields, const YAML::Node& node,
                                    const std::vector<Shape>& shapes,
                                    std::vector<std::string>* weights,
                                    std::vector<std::string>* acts) const {
  auto read_specs = [&](std::string_view one, std::string_view many, bool required,
                        std::string* key, std::vector<std::string>* specs,
                        std::vector<YAML::Node>* nodes) {
    const YamlField* a = fields.get(one);
    const YamlField* b = fields.get(many);
    *key = b ? many : one;
    if (a && b) return error(b->key_node, str("give either '", one, "' or '", many, "', not both"));
    if (!a && !b) {
      if (required)
        return error(node, missing_key(one, "'weight: int4/g128/bf16' or 'weights: [...]'"));
      specs->assign(1, "bf16");
      nodes->assign(1, node);
      return Status();
    }
    if (a) {
      specs->resize(1);
      nodes->assign(1, a->value);
      return read_string(*a, false, &specs->front());
    }
    QGEMM_RETURN_IF_ERROR(read_string_list(*b, specs));
    for (size_t i = 0; i < specs->size(); ++i) nodes->push_back(b->value[i]);
    return Status();
  };
  std::string weight_key, act_key;
  std::vector<YAML::Node> weight_nodes, act_nodes;
  QGEMM_RETURN_IF_ERROR(read_specs("weight", "weights", true, &weight_key, weights, &weight_nodes));
  QGEMM_RETURN_IF_ERROR(read_specs("act", "acts", false, &act_key, acts, &act_nodes));
  for (size_t i = 0; i < weights->size(); ++i) {
    auto w = WeightFormat::parse((*weights)[i]);
    if (!w) return error(weight_nodes[i], str("key '", weight_key, "': ", w.status().message()));
    for (const Shape& s : shapes) {
      Status fits = w->check_shape(s.n, s.k);
      if (!fits.ok())
        return error(weight_nodes[i], str("weight '", (*weights)[i], "' does not fit N=", s.n,
                                          " K=", s.k, ": ", fits.message()));
    }
  }
  for (size_t i = 0; i < acts->size(); ++i) {
    auto a = ActFormat::parse((*acts)[i]);
    if (!a) return error(act_nodes[i], str("key '", act_key, "': ", a.status().message()));
    for (const Shape& s : shapes) {
      Status fits = a->check_shape(s.k);
      if (!fits.ok())
        return error(act_nodes[i], str("activation '", (*acts)[i], "' does not fit K=", s.k, ": ",
                                       fits.message()));
    }
  }
  return Status();
}

Status Parser::read_problem(const YAML::Node& node, const Recipe& recipe, const ShapeSets& sets,
                            std::vector<BenchProblem>* out) const {
  YamlFields fields;
  QGEMM_RETURN_IF_ERROR(read_map(node, "a problem", kProblemKeys, &fields));
  BenchProblem base;
  base.line = node.Mark().line + 1;

  std::string given_name;
  if (const YamlField* f = fields.get("name"))
    QGEMM_RETURN_IF_ERROR(read_string(*f, false, &given_name));
  const YamlField* m = fields.get("m");
  if (!m) return error(node, missing_key("m", "'m: [1, 16, 64]' (token counts)"));
  QGEMM_RETURN_IF_ERROR(read_int_list(*m, 1, kMaxDim, &base.m));

  std::vector<Shape> shapes;
  QGEMM_RETURN_IF_ERROR(read_problem_shapes(fields, node, sets, &shapes));

  // Mixture of experts.
  const YamlField* top_k = fields.get("top_k");
  if (const YamlField* f = fields.get("experts")) {
    QGEMM_RETURN_IF_ERROR(read_int(*f, 0, kMaxDim, &base.experts));
  }
  if (base.experts > 0) {
    if (!top_k)
      return error(node,
                   missing_key("top_k", "'top_k: 2' (experts per token; needed with experts)"));
    int64_t v = 0;
    QGEMM_RETURN_IF_ERROR(read_int(*top_k, 1, base.experts, &v));
    base.top_k = static_cast<int>(v);
  } else if (top_k) {
    return error(top_k->key_node, "key 'top_k' is only for MoE problems: set 'experts' >= 1");
  }

  std::vector<std::string> weights, acts;
  QGEMM_RETURN_IF_ERROR(read_problem_formats(fields, node, shapes, &weights, &acts));

  if (const YamlField* f = fields.get("out")) {
    QGEMM_RETURN_IF_ERROR(read_string(*f, false, &base.out));
    const auto& known = bench_out_types();
    if (std::find(known.begin(), known.end(), base.out) == known.end())
      return error(f->value, str("output type '", base.out,
                                 "' is not supported; accepted: ", join_words(known)));
  }

  if (const YamlField* f = fields.get("backends")) {
    QGEMM_RETURN_IF_ERROR(read_backends(*f, &base.backends));
  } else if (recipe.backends.empty()) {
    return error(node, str("problem has no backends: list them under 'backends:' here or at the ",
                           "top of the recipe; accepted: ", join_words(bench_backends())));
  } else {
    base.backends = recipe.backends;
  }

  // One problem per weight x act x shape.
  const size_t count = weights.size() * acts.size() * shapes.size();
  for (const std::string& w : weights) {
    for (const std::string& a : acts) {
      for (const Shape& s : shapes) {
        BenchProblem p = base;
        p.weight = w;
        p.act = a;
        p.n = s.n;
        p.k = s.k;
        const std::string generated = default_name(p, s.name);
        if (given_name.empty()) {
          p.name = generated;
        } else {
          p.name = count == 1 ? given_name : str(given_name, ": ", generated);
        }
        out->push_back(std::move(p));
      }
    }
  }
  return Status();
}

Status Parser::parse(const YAML::Node& root, Recipe* recipe) const {
  recipe->source = source();
  if (!root.IsDefined() || root.IsNull())
    return error(root, "the recipe is empty; it needs at least 'name' and 'problems'");
  YamlFields fields;
  QGEMM_RETURN_IF_ERROR(read_map(root, "a recipe", kRecipeKeys, &fields));

  const YamlField* name = fields.get("name");
  if (!name) return error(root, "the recipe is missing key 'name', e.g. 'name: smoke'");
  QGEMM_RETURN_IF_ERROR(read_string(*name, false, &recipe->name));
  if (const YamlField* f = fields.get("description"))
    QGEMM_RETURN_IF_ERROR(read_string(*f, true, &recipe->description));

  int64_t v = 0;
  if (const YamlField* f = fields.get("repetitions")) {
    QGEMM_RETURN_IF_ERROR(read_int(*f, 1, kMaxCount, &v));
    // NOTE: an odd count makes the median one measured sample rather than an average of two.
    if (v % 2 == 0)
      return error(f->value, str("key 'repetitions' must be odd so the median is a measured ",
                                 "sample, got ", v, "; use ", v + 1));
    recipe->repetitions = static_cast<int>(v);
  }
  if (const YamlField* f = fields.get("warmup")) {
    QGEMM_RETURN_IF_ERROR(read_int(*f, 0, kMaxCount, &v));
    recipe->warmup = static_cast<int>(v);
  }
  if (const YamlField* f = fields.get("seed"))
    QGEMM_RETURN_IF_ERROR(read_uint64(*f, &recipe->seed));
  if (const YamlField* f = fields.get("rotate_mb")) {
    QGEMM_RETURN_IF_ERROR(read_int(*f, 0, kMaxRotateMb, &v));
    recipe->rotate_bytes = v * kMiB;
  }
  if (const YamlField* f = fields.get("backends"))
    QGEMM_RETURN_IF_ERROR(read_backends(*f, &recipe->backends));

  ShapeSets sets;
  if (const YamlField* f = fields.get("shapes")) QGEMM_RETURN_IF_ERROR(read_shape_sets(*f, &sets));

  const YamlField* problems = fields.get("problems");
  if (!problems) return error(root, "the recipe is missing key 'problems' (a list of problems)");
  if (!problems->value.IsSequence() || problems->value.size() == 0)
    return error(problems->value, str("key 'problems' must be a non-empty list of problems, got ",
                                      describe_node(problems->value)));
  for (size_t i = 0; i < problems->value.size(); ++i) {
    QGEMM_RETURN_IF_ERROR(read_problem(problems->value[i], *recipe, sets, &recipe->problems));
  }

  // Results are keyed by problem name, so names must be unique.
  std::map<std::string, int, std::less<>> first_line;
  for (const BenchProblem& p : recipe->problems) {
    auto [it, inserted] = first_line.emplace(p.name, p.line);
    if (!inserted)
      return error_at_line(p.line, str("problem name '", p.name, "' is used twice (first at line ",
                                       it->second, "); give the problems distinct names"));
  }
  return Status();
}

}  // namespace

const std::vector<std::string>& bench_backends() {
  static const std::vector<std::string> names = {
      "jit", "jit-pdl", "jit-q16",     "jit-act-order", "act-quant",
      "qdq", "cpu",     "cublas-bf16", "cublas-fp8",    "cublas-int8"};
  return names;
}

const std::vector<std::string>& bench_out_types() {
  static const std::vector<std::string> names = {"bf16", "fp16", "fp32"};
  return names;
}

Expected<Recipe> parse_recipe(const std::string& yaml_text, const std::string& source_name) {
  Parser parser(source_name);
  try {
    const YAML::Node root = YAML::Load(yaml_text);
    Recipe recipe;
    QGEMM_RETURN_IF_ERROR(parser.parse(root, &recipe));
    return recipe;
  } catch (const YAML::Exception& e) {
    return parser.error(e.mark, str("YAML error: ", e.msg));
  } catch (const std::exception& e) {
    return Status(ErrorCode::kInternal,
                  str(source_name, ": reading the recipe failed: ", e.what()));
  }
}

Expected<Recipe> load_recipe(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec))
    return Status(ErrorCode::kNotFound, str("recipe file '", path, "' does not exist"));
  if (std::filesystem::is_directory(path, ec))
    return Status(ErrorCode::kIoError, str("recipe path '", path, "' is a directory, not a file"));
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return Status(ErrorCode::kIoError,
                  str("cannot open recipe file '", path, "': ", std::strerror(errno)));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return Status(ErrorCode::kIoError, str("reading recipe file '", path, "' failed"));
  return parse_recipe(text.str(), path);
}

}  // namespace qgemm::bench
