#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "qgemm/status.h"

namespace qgemm::bench {

/// One benchmark problem: a weight x activation format pair on a fixed (N, K), swept over M.
///
/// A `problems:` entry that lists `weights:`, `acts:` or `shapes:` expands into one BenchProblem
/// per combination, so every BenchProblem holds exactly one format pair and one shape.
struct BenchProblem {
  /// `name:`; by default "<weight> x <act> N=<n> K=<k>", plus " E=<experts> top_k=<top_k>" for
  /// MoE, " out=<out>" when the output is not bf16 and " (<shape name>)" for named shapes.
  std::string name;
  std::vector<int64_t> m;    ///< `m:` token counts to sweep, each >= 1, in recipe order
  int64_t n = 0;             ///< output features, >= 1
  int64_t k = 0;             ///< input features (the reduction), >= 1
  int64_t experts = 0;       ///< 0 = dense; MoE with this many experts when >= 1
  int top_k = 0;             ///< experts per token, 1..experts for MoE; 0 for dense
  std::string weight;        ///< weight spec as written (accepted by qgemm::WeightFormat::parse)
  std::string act = "bf16";  ///< activation spec as written (accepted by qgemm::ActFormat::parse)
  std::string out = "bf16";  ///< output type: bf16, fp16 or fp32
  /// Backends to time, in order; each one of bench_backends(). Defaults to the recipe's list.
  std::vector<std::string> backends;
  int line = 0;  ///< 1-based line of the `problems:` entry this problem came from
};

/// A parsed benchmark recipe (`qgemm bench RECIPE.yaml`).
struct Recipe {
  std::string name;          ///< `name:`, required
  std::string description;   ///< `description:`, optional
  int repetitions = 21;      ///< timed replays per measurement; odd so the median is a sample
  int warmup = 3;            ///< untimed replays before timing, >= 0
  uint64_t seed = 1;         ///< seed for the random weights and activations
  int64_t rotate_bytes = 0;  ///< `rotate_mb:` in MiB, as bytes; 0 = the runner decides
  std::vector<std::string> backends;   ///< recipe-level default backend list (may be empty)
  std::vector<BenchProblem> problems;  ///< after expansion; never empty
  std::string source;                  ///< the source_name the recipe was parsed from
};

/// Backend names a recipe may list, in listing order.
const std::vector<std::string>& bench_backends();

/// Output types a recipe may name in `out:`, in listing order.
const std::vector<std::string>& bench_out_types();

/// Parses and validates a recipe. Every error is kInvalidArgument with a message of the form
/// "<source_name>:<line>: <what is wrong>; <what is accepted>". Never throws.
///
/// Top-level keys: name, description, repetitions, warmup, seed, rotate_mb, backends, shapes,
/// problems. Problem keys: name, m, n, k, shapes, experts, top_k, weight, weights, act, acts, out,
/// backends. `shapes:` at the top maps a set name to a list of shapes, each `{name?, n, k}` or
/// `[n, k]`; a problem's `shapes: <set>` (or a list of set names) replaces its n and k.
Expected<Recipe> parse_recipe(const std::string& yaml_text, const std::string& source_name);

/// Reads the file at `path` and parses it with `path` as the source name. A missing file is
/// kNotFound, an unreadable one kIoError; both messages name the path.
Expected<Recipe> load_recipe(const std::string& path);

}  // namespace qgemm::bench
