#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "bench/lib/grid_report.h"
#include "bench/lib/report.h"
#include "commands.h"

namespace qgemm::cli {
namespace {

struct ReportOptions {
  std::string results;
  std::string backend = "jit";
  std::string svg;
  bool strict = false;
};

int run_report(const ReportOptions& o) {
  std::ifstream in(o.results, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "qgemm report: cannot read %s\n", o.results.c_str());
    return 2;
  }
  std::stringstream text;
  text << in.rdbuf();
  auto report = bench::analyze_grid(text.str(), o.backend);
  if (!report) {
    std::fprintf(stderr, "%s\n", report.status().message().c_str());
    return 2;
  }
  if (report->rows == 0) {
    std::fprintf(stderr, "qgemm report: %s has no '%s' rows that ran with a cuBLAS BF16 ratio\n",
                 o.results.c_str(), o.backend.c_str());
    return 2;
  }
  std::fputs(bench::render_grid_table(*report).c_str(), stdout);
  if (!o.svg.empty()) {
    if (Status s = bench::write_text(bench::render_grid_svg(*report), o.svg); !s.ok()) {
      std::fprintf(stderr, "qgemm report: %s\n", s.message().c_str());
      return 1;
    }
    std::printf("wrote %s\n", o.svg.c_str());
  }
  return o.strict && !report->pass() ? 1 : 0;
}

}  // namespace

void add_report_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "report",
      "Summarize a bench report over a grid: ratio to cuBLAS BF16 by format and M "
      "bucket, bandwidth and peak shares, cliffs");
  auto o = std::make_shared<ReportOptions>();
  cmd->add_option("results", o->results, "JSON report of qgemm bench --out")->required();
  cmd->add_option("--backend", o->backend, "The backend to summarize (default jit)");
  cmd->add_option("--svg", o->svg, "Write a heat map (formats x M buckets) here");
  cmd->add_flag("--strict", o->strict, "Exit 1 when a target is missed or a cliff is found");
  cmd->callback([o] {
    const int rc = run_report(*o);
    if (rc != 0) throw CLI::RuntimeError(rc);
  });
}

}  // namespace qgemm::cli
