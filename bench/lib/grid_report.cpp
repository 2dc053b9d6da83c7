#include "bench/lib/grid_report.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <tuple>

#include "bench/lib/report.h"
#include "bench/lib/svg_plot.h"
#include "qgemm/format.h"
#include "util/error.h"

namespace qgemm::bench {
namespace {

using nlohmann::json;

constexpr const char* kBuckets[] = {"1", "2-64", "65-512", "513-4096", "4097+"};

// The dense targets (docs/performance.md, "Targets over the grid"): geomean and worst ratio to
// cuBLAS BF16 per weight class and M bucket.
struct Target {
  const char* weight_class;
  const char* bucket;
  double geomean, worst;
};
constexpr Target kTargets[] = {
    {"<=4-bit", "1", 0.45, 0.75},      {"<=4-bit", "2-64", 0.65, 0.90},
    {"<=4-bit", "65-512", 1.00, 1.15}, {"<=4-bit", "513-4096", 1.05, 1.15},
    {"5-8-bit", "1", 0.65, 0.85},      {"5-8-bit", "2-64", 0.80, 1.00},
    {"5-8-bit", "65-512", 1.00, 1.15}, {"5-8-bit", "513-4096", 1.05, 1.15},
};

constexpr double kCliffRatio = 1.10;

struct Row {
  std::string problem, weight, act, out, format;
  int64_t m = 0, n = 0, k = 0;
  double us = 0, ratio = 0, pct_bw = NAN, pct_peak = NAN;
  int bits = 0;
};

double number_or_nan(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : NAN;
}

struct Summary {
  int count = 0;
  double log_sum = 0, worst = 0;
  void add(double ratio) {
    ++count;
    log_sum += std::log(ratio);
    worst = std::max(worst, ratio);
  }
  double geomean() const { return count ? std::exp(log_sum / count) : NAN; }
};

// Median and least of the finite values (NaN, NaN without any).
std::pair<double, double> median_least(std::vector<double> v) {
  v.erase(std::remove_if(v.begin(), v.end(), [](double x) { return !std::isfinite(x); }), v.end());
  if (v.empty()) return {NAN, NAN};
  std::sort(v.begin(), v.end());
  const size_t h = v.size() / 2;
  const double median = v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
  return {median, v.front()};
}

int bucket_index(const std::string& b) {
  for (int i = 0; i < int(std::size(kBuckets)); ++i)
    if (b == kBuckets[i]) return i;
  return int(std::size(kBuckets));
}

std::string pad(std::string s, size_t width) {
  if (s.size() < width) s.append(width - s.size(), ' ');
  return s;
}

// Green (fast) through white (1.0) to red (slow), on a log scale clamped at 0.25x and 2x.
std::string heat_colour(double ratio) {
  if (!std::isfinite(ratio)) return "#dddddd";
  const double t = std::clamp(std::log2(ratio), -2.0, 1.0);
  int r = 255, g = 255, b = 255;
  if (t < 0) {
    const double f = -t / 2.0;
    r = int(255 - f * 160);
    b = int(255 - f * 160);
  } else {
    g = int(255 - t * 170);
    b = int(255 - t * 170);
  }
  char buf[8];
  std::snprintf(buf, sizeof buf, "#%02x%02x%02x", r, g, b);
  return buf;
}

}  // namespace

std::string m_bucket(int64_t m) {
  if (m <= 1) return "1";
  if (m <= 64) return "2-64";
  if (m <= 512) return "65-512";
  if (m <= 4096) return "513-4096";
  return "4097+";
}

bool GridReport::pass() const {
  if (!cliffs.empty()) return false;
  for (const ClassCell& c : classes)
    if (!c.pass()) return false;
  return true;
}

Expected<GridReport> analyze_grid(const std::string& json_text, const std::string& backend) {
  json doc = json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object())
    return invalid_argument("qgemm report: the file is not a JSON object");
  if (doc.value("schema", std::string()) != "qgemm-bench/1")
    return invalid_argument(str("qgemm report: schema '", doc.value("schema", std::string("?")),
                                "' is not supported; accepted: qgemm-bench/1 (qgemm bench --out)"));
  auto results = doc.find("results");
  if (results == doc.end() || !results->is_array())
    return invalid_argument("qgemm report: the report has no 'results' array");
  GridReport report;
  report.backend = backend;
  if (auto d = doc.find("device"); d != doc.end() && d->is_object())
    report.device = d->value("name", std::string());
  std::vector<Row> rows;
  for (const json& r : *results) {
    if (!r.is_object() || r.value("backend", std::string()) != backend) continue;
    const double ratio =
        r.contains("vs") && r["vs"].is_object() ? number_or_nan(r["vs"], "cublas-bf16") : NAN;
    const double rel_err = number_or_nan(r, "rel_err"), tolerance = number_or_nan(r, "tolerance");
    const bool checked = std::isfinite(rel_err) && !(rel_err > tolerance);
    if (r.value("status", std::string()) != "ok" || !(ratio > 0) || !checked) {
      ++report.skipped;
      continue;
    }
    Row row;
    row.problem = r.value("problem", std::string());
    row.weight = r.value("weight", std::string());
    row.act = r.value("act", std::string());
    row.out = r.value("out", std::string());
    row.format = row.weight + " x " + row.act;
    row.m = r.value("m", int64_t{0});
    row.n = r.value("n", int64_t{0});
    row.k = r.value("k", int64_t{0});
    row.us = number_or_nan(r, "median_us");
    row.ratio = ratio;
    row.pct_bw = number_or_nan(r, "pct_copy_bw");
    row.pct_peak = number_or_nan(r, "pct_peak_compute");
    auto wf = WeightFormat::parse(row.weight);
    if (!wf)
      return invalid_argument(str("qgemm report: row '", row.problem, "' M=", row.m, ": weight '",
                                  row.weight, "': ", wf.status().message()));
    row.bits = wf->type.bits;
    rows.push_back(std::move(row));
  }
  report.rows = int(rows.size());

  std::map<std::pair<std::string, int>, Summary> by_format;  // (format, bucket index)
  std::map<std::pair<std::string, int>, Summary> by_class;   // (class, bucket index)
  std::map<std::string, std::pair<std::vector<double>, std::vector<double>>> shares;
  for (const Row& r : rows) {
    const int b = bucket_index(m_bucket(r.m));
    by_format[{r.format, b}].add(r.ratio);
    by_class[{r.bits <= 4 ? "<=4-bit" : "5-8-bit", b}].add(r.ratio);
    auto& s = shares[r.format];
    if (r.m <= 16) s.first.push_back(r.pct_bw);
    if (r.m >= 1024) s.second.push_back(r.pct_peak);
  }
  for (const auto& [key, s] : by_format)
    report.cells.push_back({key.first, kBuckets[key.second], s.count, s.geomean(), s.worst});
  for (const char* cls : {"<=4-bit", "5-8-bit"})
    for (int b = 0; b < int(std::size(kBuckets)); ++b) {
      ClassCell c{cls, kBuckets[b]};
      if (auto it = by_class.find({cls, b}); it != by_class.end()) {
        c.count = it->second.count;
        c.geomean = it->second.geomean();
        c.worst = it->second.worst;
      }
      for (const Target& t : kTargets)
        if (c.weight_class == t.weight_class && c.bucket == t.bucket) {
          c.target_geomean = t.geomean;
          c.target_worst = t.worst;
        }
      if (c.count > 0 || c.target_geomean > 0) report.classes.push_back(c);
    }
  for (const auto& [format, s] : shares) {
    FormatShares f{format};
    std::tie(f.bw_median, f.bw_least) = median_least(s.first);
    std::tie(f.peak_median, f.peak_least) = median_least(s.second);
    report.shares.push_back(f);
  }

  // Cliffs: per layer, each M against every larger M.
  std::map<std::tuple<std::string, std::string, std::string, int64_t, int64_t>,
           std::vector<const Row*>>
      layers;
  for (const Row& r : rows) layers[{r.problem, r.format, r.out, r.n, r.k}].push_back(&r);
  for (auto& [key, list] : layers) {
    std::sort(list.begin(), list.end(), [](const Row* a, const Row* b) { return a->m < b->m; });
    for (size_t i = 0; i < list.size(); ++i) {
      const Row* worst = nullptr;  // the larger M that ran fastest
      for (size_t j = i + 1; j < list.size(); ++j)
        if (list[j]->m > list[i]->m && (!worst || list[j]->us < worst->us)) worst = list[j];
      if (worst && list[i]->us > kCliffRatio * worst->us)
        report.cliffs.push_back({str(list[i]->problem, " (", list[i]->format, ", N=", list[i]->n,
                                     " K=", list[i]->k, ")"),
                                 list[i]->m, worst->m, list[i]->us, worst->us});
    }
  }
  return report;
}

std::string render_grid_table(const GridReport& r) {
  std::string s =
      str("backend ", r.backend, r.device.empty() ? "" : " on " + r.device, ": ", r.rows,
          " rows with a cuBLAS BF16 ratio",
          r.skipped ? str(", ", r.skipped, " skipped (did not run, or failed their check)") : "",
          "\n\n");
  s += "ratio to cuBLAS BF16, geomean / worst, by M bucket\n";
  s += pad("format", 44);
  for (const char* b : kBuckets) s += pad(str("M ", b), 16);
  s += "\n";
  std::map<std::string, std::map<std::string, const GridCell*>> table;
  for (const GridCell& c : r.cells) table[c.format][c.bucket] = &c;
  for (const auto& [format, cells] : table) {
    s += pad(format, 44);
    for (const char* b : kBuckets) {
      auto it = cells.find(b);
      s += pad(it == cells.end() ? "-"
                                 : str(fixed_text(it->second->geomean, 2), " / ",
                                       fixed_text(it->second->worst, 2)),
               16);
    }
    s += "\n";
  }
  s += "\nweight classes against the targets (geomean / worst)\n";
  for (const ClassCell& c : r.classes)
    s += str(pad(c.weight_class, 9), pad(str("M ", c.bucket), 12), pad(str(c.count, " rows"), 10),
             pad(c.count ? str(fixed_text(c.geomean, 2), " / ", fixed_text(c.worst, 2)) : "-", 14),
             c.target_geomean > 0 ? str("target ", fixed_text(c.target_geomean, 2), " / ",
                                        fixed_text(c.target_worst, 2),
                                        c.count == 0 ? "  (no rows)"
                                        : c.pass()   ? "  ok"
                                                     : "  MISSED")
                                  : "",
             "\n");
  s +=
      "\n% of copy bandwidth at M <= 16 and of the cuBLAS BF16 peak at M >= 1024 (median, least)\n";
  for (const FormatShares& f : r.shares)
    s += str(pad(f.format, 44),
             pad(str("bw ", fixed_text(f.bw_median, 1), ", ", fixed_text(f.bw_least, 1)), 20),
             "peak ", fixed_text(f.peak_median, 1), ", ", fixed_text(f.peak_least, 1), "\n");
  s += str("\ncliffs (t(M) > ", fixed_text(kCliffRatio, 2),
           " t(M') for a larger M'): ", r.cliffs.empty() ? "none" : std::to_string(r.cliffs.size()),
           "\n");
  for (const Cliff& c : r.cliffs)
    s += str("  ", c.layer, ": M=", c.m, " ", fixed_text(c.us, 2), " us > M=", c.larger_m, " ",
             fixed_text(c.larger_us, 2), " us (", fixed_text(c.us / c.larger_us, 2), "x)\n");
  s += str("\n", r.pass() ? "all targets met, no cliffs" : "targets missed or cliffs found", "\n");
  return s;
}

std::string render_grid_svg(const GridReport& r) {
  std::map<std::string, std::map<std::string, const GridCell*>> table;
  for (const GridCell& c : r.cells) table[c.format][c.bucket] = &c;
  const int label_w = 300, cell_w = 110, cell_h = 26, top = 60;
  const int width = label_w + cell_w * int(std::size(kBuckets)) + 20;
  const int height = top + cell_h * int(table.size()) + 40;
  std::string s = str("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"", width, "\" height=\"",
                      height, "\" font-family=\"sans-serif\" font-size=\"12\">\n",
                      "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n",
                      "<text x=\"10\" y=\"22\" font-size=\"15\">",
                      xml_escape(str(r.backend, " / cuBLAS BF16 time (geomean / worst)",
                                     r.device.empty() ? "" : ", " + r.device)),
                      "</text>\n");
  for (int b = 0; b < int(std::size(kBuckets)); ++b)
    s += str("<text x=\"", label_w + b * cell_w + cell_w / 2, "\" y=\"", top - 8,
             "\" text-anchor=\"middle\">M ", kBuckets[b], "</text>\n");
  int row = 0;
  for (const auto& [format, cells] : table) {
    const int y = top + row * cell_h;
    s += str("<text x=\"10\" y=\"", y + 17, "\">", xml_escape(format), "</text>\n");
    for (int b = 0; b < int(std::size(kBuckets)); ++b) {
      auto it = cells.find(kBuckets[b]);
      const double g = it == cells.end() ? NAN : it->second->geomean;
      const int x = label_w + b * cell_w;
      s += str("<rect x=\"", x, "\" y=\"", y, "\" width=\"", cell_w - 2, "\" height=\"", cell_h - 2,
               "\" fill=\"", heat_colour(g), "\"/>\n");
      if (it != cells.end())
        s += str("<text x=\"", x + cell_w / 2, "\" y=\"", y + 17, "\" text-anchor=\"middle\">",
                 fixed_text(g, 2), " / ", fixed_text(it->second->worst, 2), "</text>\n");
    }
    ++row;
  }
  s += str("<text x=\"10\" y=\"", height - 12, "\">green: faster than cuBLAS BF16, red: slower; ",
           r.cliffs.size(), " cliffs</text>\n</svg>\n");
  return s;
}

}  // namespace qgemm::bench
