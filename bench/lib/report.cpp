#include "bench/lib/report.h"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "bench/lib/svg_plot.h"
#include "qgemm/device.h"
#include "qgemm/version.h"
#include "util/error.h"

namespace qgemm::bench {

std::string fixed_text(double v, int digits) {
  if (!std::isfinite(v)) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

namespace {

using nlohmann::json;

// JSON has no NaN: unmeasured numbers are null.
json number(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

std::string scientific(double v) {
  if (!std::isfinite(v)) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2e", v);
  return buf;
}

}  // namespace

std::string render_table(const BenchReport& r) {
  std::string s;
  if (r.gpu) {
    s += str("device  ", r.device.name, " (", r.device.arch(), ", ", r.device.multiprocessors,
             " SMs, L2 ", r.device.l2_bytes >> 20, " MiB)\n");
    s += str("peaks   copy ", fixed_text(r.peaks.copy_gbps, 0), " GB/s   cuBLAS bf16 ",
             fixed_text(r.peaks.bf16_tflops, 0), " TFLOPS   cuBLAS fp8 ",
             fixed_text(r.peaks.fp8_tflops, 0), " TFLOPS\n");
  } else {
    s +=
        str("device  no GPU (", no_gpu_reason(),
            "):\n        GPU backends are skipped; the cpu backend is timed with the host clock\n");
  }
  s +=
      str("method  median of ", r.recipe.repetitions, " CUDA-graph replays after ", r.recipe.warmup,
          " warm-ups, weights rotated over >= ", r.rotate_bytes >> 20,
          " MiB;\n        a problem's backends all replay graphs of the same number of launches\n");
  std::string problem;
  char line[512];
  for (const ResultRow& row : r.rows) {
    if (row.problem != problem) {
      problem = row.problem;
      s += str("\n", problem, "\n");
      std::snprintf(line, sizeof line, "  %6s %-12s %10s %21s %8s %8s %6s %9s %9s %9s  %s\n", "M",
                    "backend", "median us", "[min - max]", "TFLOPS", "GB/s", "%BW", "x cublas",
                    "rel err", "first ms", "note");
      s += line;
    }
    if (row.status != "ok") {
      std::snprintf(line, sizeof line, "  %6lld %-12s %10s %21s %8s %8s %6s %9s %9s %9s  %s: %s\n",
                    (long long)row.m, row.backend.c_str(), "-", "", "", "", "", "", "", "",
                    row.status.c_str(), row.note.c_str());
      s += line;
      continue;
    }
    const auto vs = row.vs.find("cublas-bf16") != row.vs.end()   ? row.vs.at("cublas-bf16")
                    : row.vs.find("cublas-fp8") != row.vs.end()  ? row.vs.at("cublas-fp8")
                    : row.vs.find("cublas-int8") != row.vs.end() ? row.vs.at("cublas-int8")
                                                                 : NAN;
    const bool bad = !(row.rel_err <= row.tolerance) || row.unwritten > 0;
    std::snprintf(line, sizeof line,
                  "  %6lld %-12s %10s [%8s - %8s] %8s %8s %6s %9s %9s %9s  %s%s\n",
                  (long long)row.m, row.backend.c_str(), fixed_text(row.time.median_us, 2).c_str(),
                  fixed_text(row.time.min_us, 2).c_str(), fixed_text(row.time.max_us, 2).c_str(),
                  fixed_text(row.tflops, 1).c_str(), fixed_text(row.gbps, 0).c_str(),
                  fixed_text(row.pct_copy_bw, 1).c_str(), fixed_text(vs, 3).c_str(),
                  scientific(row.rel_err).c_str(), fixed_text(row.first_call_ms, 1).c_str(),
                  bad && std::isfinite(row.tolerance) ? "CHECK FAILED " : "",
                  (row.l2_resident ? "weights fit in L2 " + row.note : row.note).c_str());
    s += line;
  }
  return s;
}

std::string render_json(const BenchReport& r) {
  json j;
  j["schema"] = "qgemm-bench/1";
  j["recipe"] = r.recipe.name;
  j["recipe_file"] = r.recipe.source;
  j["command"] = r.command;
  j["date"] = r.date;
  // A report saved while the run went on holds the first problems_done problems only.
  j["complete"] = r.problems_done == r.recipe.problems.size();
  j["library_version"] = version();
  if (r.gpu) {
    j["device"] = {{"name", r.device.name},
                   {"arch", r.device.arch()},
                   {"multiprocessors", r.device.multiprocessors},
                   {"l2_bytes", r.device.l2_bytes},
                   {"memory_bytes", r.device.memory_bytes},
                   {"sm_clock_mhz", r.device.clock_khz / 1000},
                   {"memory_clock_mhz", r.device.memory_clock_khz / 1000},
                   {"driver_version", r.driver_version}};
  } else {
    j["device"] = nullptr;
  }
  j["peaks"] = {{"copy_gbps", number(r.peaks.copy_gbps)},
                {"cublas_bf16_tflops", number(r.peaks.bf16_tflops)},
                {"cublas_fp8_tflops", number(r.peaks.fp8_tflops)},
                {"cublas_fp8_vector_scales", r.peaks.fp8_vector_scales}};
  j["method"] = {
      {"repetitions", r.recipe.repetitions},
      {"warmup", r.recipe.warmup},
      {"seed", r.recipe.seed},
      {"rotate_bytes", r.rotate_bytes},
      {"timing",
       "CUDA-graph replays timed with device events; median, min, max per launch; every backend "
       "of a problem replays the same number of launches per graph"}};
  json rows = json::array();
  for (const ResultRow& row : r.rows) {
    json vs = json::object();
    for (const auto& [name, ratio] : row.vs) vs[name] = number(ratio);
    rows.push_back({{"problem", row.problem},
                    {"backend", row.backend},
                    {"m", row.m},
                    {"n", row.n},
                    {"k", row.k},
                    {"experts", row.experts},
                    {"top_k", row.top_k},
                    {"weight", row.weight},
                    {"act", row.act},
                    {"out", row.out},
                    {"status", row.status},
                    {"note", row.note},
                    {"plan", row.plan.empty() ? json(nullptr) : json(row.plan)},
                    {"median_us", number(row.time.median_us)},
                    {"min_us", number(row.time.min_us)},
                    {"max_us", number(row.time.max_us)},
                    {"mean_us", number(row.time.mean_us)},
                    {"samples", row.time.samples},
                    {"first_call_ms", number(row.first_call_ms)},
                    {"copies", row.copies},
                    {"launches", row.launches},
                    {"l2_resident", row.l2_resident},
                    {"bytes", row.bytes},
                    {"flops", row.flops},
                    {"tflops", number(row.tflops)},
                    {"gbps", number(row.gbps)},
                    {"pct_copy_bw", number(row.pct_copy_bw)},
                    {"pct_peak_compute", number(row.pct_peak)},
                    {"vs", vs},
                    {"rel_err", number(row.rel_err)},
                    {"tolerance", number(row.tolerance)},
                    {"unwritten", row.unwritten},
                    {"device_bytes", row.device_bytes}});
  }
  j["results"] = rows;
  return j.dump(2) + "\n";
}

Status write_text(const std::string& text, const std::string& path) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return Status(ErrorCode::kIoError, str("cannot write ", path));
  out << text;
  out.close();
  if (!out) return Status(ErrorCode::kIoError, str("short write to ", path));
  return Status();
}

std::string render_plot(const BenchReport& r) {
  // One panel per problem: TFLOPS against M for each backend, with the compute ceiling and the
  // bandwidth roofline (copy bandwidth x flops / bytes of the problem's quantized format).
  std::vector<std::string> panels;
  std::vector<std::string> order;
  std::map<std::string, std::map<std::string, PlotSeries>> series;
  std::map<std::string, std::vector<const ResultRow*>> rows_of;
  for (const ResultRow& row : r.rows) {
    if (rows_of.find(row.problem) == rows_of.end()) order.push_back(row.problem);
    rows_of[row.problem].push_back(&row);
    if (row.status != "ok") continue;
    PlotSeries& s = series[row.problem][row.backend];
    s.label = row.backend;
    s.x.push_back(double(row.m));
    s.y.push_back(row.tflops);
  }
  for (const std::string& problem : order) {
    PlotSpec spec;
    spec.title = problem;
    spec.x_label = "M (tokens)";
    spec.y_label = "TFLOPS";
    for (auto& [backend, s] : series[problem]) spec.series.push_back(s);
    if (r.gpu) {
      PlotLine compute{"cuBLAS bf16 peak", {}, {}, true};
      PlotLine memory{"bandwidth roofline", {}, {}, true};
      std::map<int64_t, double> intensity;  // flops per byte of the quantized format, by M
      for (const ResultRow* row : rows_of[problem])
        if ((row->backend == "jit" || row->backend == "jit-pdl" || row->backend == "jit-q16" ||
             row->backend == "jit-act-order" || row->backend == "qdq") &&
            row->status == "ok")
          intensity[row->m] = row->flops / row->bytes;
      for (const auto& [m, flops_per_byte] : intensity) {
        compute.x.push_back(double(m));
        compute.y.push_back(r.peaks.bf16_tflops);
        memory.x.push_back(double(m));
        memory.y.push_back(r.peaks.copy_gbps * flops_per_byte / 1000.0);
      }
      if (!compute.x.empty()) {
        spec.ceilings.push_back(compute);
        spec.ceilings.push_back(memory);
      }
    }
    panels.push_back(render_svg(spec));
  }
  return compose_svg_panels(panels);
}

}  // namespace qgemm::bench
