// bench::parse_recipe on arbitrary bytes: it must never throw, every error must be an invalid
// argument naming the source, and a recipe it accepts must hold what recipe.h promises.
#include <algorithm>
#include <set>
#include <string>

#include "bench/lib/recipe.h"
#include "fuzz/fuzz_check.h"
#include "qgemm/format.h"

namespace {

constexpr const char* kSource = "fuzz.yaml";

bool listed(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

void check_problem(const qgemm::bench::BenchProblem& p) {
  using qgemm::fuzz::check;
  check(!p.name.empty() && !p.m.empty() && p.n >= 1 && p.k >= 1 && p.line >= 1);
  check(std::all_of(p.m.begin(), p.m.end(), [](int64_t m) { return m >= 1; }));
  check(p.experts >= 0);
  check(p.experts == 0 ? p.top_k == 0 : p.top_k >= 1 && p.top_k <= p.experts);
  auto weight = qgemm::WeightFormat::parse(p.weight);
  check(weight.ok() && weight->check_shape(p.n, p.k).ok());
  auto act = qgemm::ActFormat::parse(p.act);
  check(act.ok() && act->check_shape(p.k).ok());
  check(listed(qgemm::bench::bench_out_types(), p.out));
  check(!p.backends.empty());
  for (const std::string& b : p.backends) check(listed(qgemm::bench::bench_backends(), b));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using qgemm::fuzz::check;
  const std::string text(qgemm::fuzz::as_text(data, size));
  auto recipe = qgemm::bench::parse_recipe(text, kSource);
  if (!recipe) {
    check(recipe.status().code() == qgemm::ErrorCode::kInvalidArgument);
    check(recipe.status().message().rfind(kSource, 0) == 0);
    return 0;
  }
  check(!recipe->name.empty() && recipe->source == kSource);
  check(recipe->repetitions >= 1 && recipe->repetitions % 2 == 1 && recipe->warmup >= 0);
  check(recipe->rotate_bytes >= 0 && !recipe->problems.empty());
  std::set<std::string> names;
  for (const auto& p : recipe->problems) {
    check_problem(p);
    check(names.insert(p.name).second);  // results are keyed by problem name
  }
  return 0;
}
