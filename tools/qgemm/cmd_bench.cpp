#include <cmath>
#include <cstdio>
#include <memory>
#include <sstream>
#include <string>

#include "bench/lib/recipe.h"
#include "bench/lib/report.h"
#include "bench/lib/runner.h"
#include "commands.h"

namespace qgemm::cli {
namespace {

struct BenchOptions {
  std::string recipe;
  std::string out_json;
  std::string plot;
  std::string backends;
  bool no_peaks = false;
};

int run_bench(const BenchOptions& o, const std::string& command) {
  auto recipe = bench::load_recipe(o.recipe);
  if (!recipe) {
    std::fprintf(stderr, "qgemm bench: %s\n", recipe.status().message().c_str());
    return 2;
  }
  bench::RunOptions ro;
  ro.command = command;
  ro.measure_peaks = !o.no_peaks;
  if (!o.backends.empty()) {
    std::stringstream ss(o.backends);
    std::string name;
    while (std::getline(ss, name, ',')) {
      bool known = false;
      for (const auto& b : bench::bench_backends()) known = known || b == name;
      if (!known) {
        std::string accepted;
        for (const auto& b : bench::bench_backends())
          accepted += (accepted.empty() ? "" : ", ") + b;
        std::fprintf(stderr, "qgemm bench: --backend %s is not known; accepted: %s\n", name.c_str(),
                     accepted.c_str());
        return 2;
      }
      ro.backends.push_back(name);
    }
  }
  if (!o.out_json.empty())
    ro.after_problem = [&o](const bench::BenchReport& partial) {
      if (partial.problems_done < partial.recipe.problems.size())
        (void)bench::write_text(bench::render_json(partial), o.out_json);
    };
  auto report = bench::run_recipe(*recipe, ro);
  if (!report) {
    std::fprintf(stderr, "qgemm bench: %s\n", report.status().message().c_str());
    return 1;
  }
  std::printf("%s", bench::render_table(*report).c_str());
  int rc = 0;
  // Writes one rendering of the report to `path`; `lead` goes before the line that says so.
  auto write = [&rc](const std::string& text, const std::string& path, const char* lead) {
    Status s = bench::write_text(text, path);
    if (!s.ok()) {
      std::fprintf(stderr, "qgemm bench: %s\n", s.message().c_str());
      rc = 1;
    } else {
      std::printf("%swrote %s\n", lead, path.c_str());
    }
  };
  if (!o.out_json.empty()) write(bench::render_json(*report), o.out_json, "\n");
  if (!o.plot.empty()) write(bench::render_plot(*report), o.plot, "");
  // A failed correctness check or an error fails the run; skipped rows do not.
  for (const auto& row : report->rows) {
    if (row.status == "error" || row.unwritten > 0 ||
        (row.status == "ok" && std::isfinite(row.tolerance) && !(row.rel_err <= row.tolerance)))
      rc = 1;
  }
  return rc;
}

}  // namespace

void add_bench_command(CLI::App& app, const std::string& command_line) {
  auto* cmd =
      app.add_subcommand("bench", "Time backends on a YAML recipe against cuBLAS, honestly");
  auto o = std::make_shared<BenchOptions>();
  cmd->add_option("recipe", o->recipe, "Recipe file, e.g. bench/recipes/smoke.yaml")->required();
  cmd->add_option("--out", o->out_json,
                  "Write the JSON report here (also after each problem while the run goes on, "
                  "marked \"complete\": false, so a run stopped early keeps what it finished)");
  cmd->add_option("--plot", o->plot, "Write an SVG plot (TFLOPS against M) here");
  cmd->add_option("--backend", o->backends,
                  "Comma-separated backends to run instead of the recipe's: jit, jit-pdl, jit-q16, "
                  "jit-act-order, act-quant, qdq, cpu, "
                  "cublas-bf16, cublas-fp8, cublas-int8");
  cmd->add_flag("--no-peaks", o->no_peaks, "Skip measuring copy bandwidth and cuBLAS peaks");
  cmd->callback([o, command_line] {
    const int rc = run_bench(*o, command_line);
    if (rc != 0) throw CLI::RuntimeError(rc);
  });
}

}  // namespace qgemm::cli
