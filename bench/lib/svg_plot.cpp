#include "bench/lib/svg_plot.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>

#include "util/error.h"

namespace qgemm::bench {

std::string xml_escape(const std::string& text) {
  std::string s;
  for (char c : text) {
    switch (c) {
      case '&':
        s += "&amp;";
        break;
      case '<':
        s += "&lt;";
        break;
      case '>':
        s += "&gt;";
        break;
      case '"':
        s += "&quot;";
        break;
      case '\'':
        s += "&apos;";
        break;
      default:
        s += c;
    }
  }
  return s;
}

namespace {

// Canvas layout in pixels: the plot area, with room for tick labels left/below and the legend
// on the right.
constexpr double kWidth = 900, kMinHeight = 540;
constexpr double kLeft = 80, kTop = 50, kPlotWidth = 560, kPlotHeight = 420;
constexpr double kLegendX = kLeft + kPlotWidth + 24, kLegendRow = 20;
constexpr double kMarkerRadius = 3.5;
// NOTE: beyond this many doublings, power-of-two ticks crowd the axis; ticks go decimal.
constexpr int kMaxPow2Ticks = 13;
constexpr int kMaxDecadeTicks = 11;

// Tableau 10: distinct hues that stay apart in print and for most colour-blind readers.
constexpr const char* kColours[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                                    "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};
constexpr int kNumColours = sizeof(kColours) / sizeof(kColours[0]);
constexpr const char* kCeilingColours[] = {"#333333", "#8a8a8a", "#a05a2c", "#2c5aa0"};
constexpr const char* kDashes[] = {"7 4", "2 3", "9 3 2 3", "4 4"};
constexpr int kNumMarkers = 5;

// A coordinate with two decimals; callers pass finite values only.
std::string px(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.2f", v);
  return buf;
}

std::string tick_label(double v) {
  char buf[32];
  if (std::abs(v) < 1e9 && v == std::round(v)) {
    std::snprintf(buf, sizeof(buf), "%.0f", v == 0 ? 0.0 : v);
  } else {
    std::snprintf(buf, sizeof(buf), "%.4g", v);
  }
  return buf;
}

// Whether a value can be placed on a linear or log axis.
bool drawable(bool log, double v) { return std::isfinite(v) && (!log || v > 0); }

/// One axis: maps data values to [0, 1] and knows where its ticks go.
struct Axis {
  bool log = true;
  double lo = 1, hi = 10;  // for log axes, log10 of the ends
  std::vector<double> ticks;

  bool accepts(double v) const { return drawable(log, v); }
  double unit(double v) const { return ((log ? std::log10(v) : v) - lo) / (hi - lo); }
};

Axis make_log_axis(double vmin, double vmax) {
  Axis a;
  a.log = true;
  int e2_lo = static_cast<int>(std::floor(std::log2(vmin)));
  int e2_hi = static_cast<int>(std::ceil(std::log2(vmax)));
  if (e2_lo == e2_hi) --e2_lo, ++e2_hi;
  if (e2_hi - e2_lo < kMaxPow2Ticks) {
    for (int e = e2_lo; e <= e2_hi; ++e) a.ticks.push_back(std::ldexp(1.0, e));
    a.lo = e2_lo * std::log10(2.0);
    a.hi = e2_hi * std::log10(2.0);
    return a;
  }
  int e10_lo = static_cast<int>(std::floor(std::log10(vmin)));
  int e10_hi = static_cast<int>(std::ceil(std::log10(vmax)));
  const int step = std::max(1, (e10_hi - e10_lo + kMaxDecadeTicks - 2) / (kMaxDecadeTicks - 1));
  e10_hi = e10_lo + (e10_hi - e10_lo + step - 1) / step * step;
  for (int e = e10_lo; e <= e10_hi; e += step) a.ticks.push_back(std::pow(10.0, e));
  a.lo = e10_lo;
  a.hi = e10_hi;
  return a;
}

Axis make_linear_axis(double vmin, double vmax) {
  Axis a;
  a.log = false;
  if (vmin == vmax) {
    const double pad = vmin != 0 ? std::abs(vmin) * 0.1 : 1.0;
    vmin -= pad;
    vmax += pad;
  }
  // A 1-2-5 step giving about five intervals.
  const double raw = (vmax - vmin) / 5;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  const double norm = raw / mag;
  const double step = (norm < 1.5 ? 1 : norm < 3 ? 2 : norm < 7 ? 5 : 10) * mag;
  const double first = std::floor(vmin / step);
  const double last = std::ceil(vmax / step);
  for (double i = first; i <= last; ++i) a.ticks.push_back(i * step);
  a.lo = first * step;
  a.hi = last * step;
  return a;
}

Axis make_axis(bool log, const std::vector<double>& values) {
  double vmin = INFINITY, vmax = -INFINITY;
  for (double v : values) {
    if (!drawable(log, v)) continue;
    vmin = std::min(vmin, v);
    vmax = std::max(vmax, v);
  }
  if (vmin > vmax) return log ? make_log_axis(1, 10) : make_linear_axis(0, 1);
  return log ? make_log_axis(vmin, vmax) : make_linear_axis(vmin, vmax);
}

std::string marker(int shape, double x, double y, const char* colour) {
  const double r = kMarkerRadius;
  const std::string fill = str(" fill=\"", colour, "\"/>\n");
  auto poly = [&](std::initializer_list<std::pair<double, double>> pts) {
    std::string s = "<polygon class=\"marker\" points=\"";
    for (auto [dx, dy] : pts) s += str(px(x + dx * r), ",", px(y + dy * r), " ");
    return s + "\"" + fill;
  };
  switch (shape % kNumMarkers) {
    case 0:
      return str("<circle class=\"marker\" cx=\"", px(x), "\" cy=\"", px(y), "\" r=\"", px(r), "\"",
                 fill);
    case 1:
      return str("<rect class=\"marker\" x=\"", px(x - r), "\" y=\"", px(y - r), "\" width=\"",
                 px(2 * r), "\" height=\"", px(2 * r), "\"", fill);
    case 2:
      return poly({{0, -1.3}, {1.2, 0.9}, {-1.2, 0.9}});
    case 3:
      return poly({{0, -1.4}, {1.2, 0}, {0, 1.4}, {-1.2, 0}});
    default:
      return poly({{0, 1.3}, {1.2, -0.9}, {-1.2, -0.9}});
  }
}

/// Draws a curve as one <path>, starting a new subpath after each skipped point.
class Canvas {
 public:
  Canvas(const Axis& x, const Axis& y) : x_(x), y_(y) {}

  double sx(double v) const { return kLeft + x_.unit(v) * kPlotWidth; }
  double sy(double v) const { return kTop + kPlotHeight - y_.unit(v) * kPlotHeight; }

  /// The drawable points of (xs, ys) in pixels, with a gap marker (NaN) where points were skipped.
  std::vector<std::pair<double, double>> points(const std::vector<double>& xs,
                                                const std::vector<double>& ys) const {
    std::vector<std::pair<double, double>> pts;
    for (size_t i = 0; i < std::min(xs.size(), ys.size()); ++i) {
      if (x_.accepts(xs[i]) && y_.accepts(ys[i])) {
        pts.emplace_back(sx(xs[i]), sy(ys[i]));
      } else if (!pts.empty() && !std::isnan(pts.back().first)) {
        pts.emplace_back(NAN, NAN);
      }
    }
    if (!pts.empty() && std::isnan(pts.back().first)) pts.pop_back();
    return pts;
  }

  static std::string path_data(const std::vector<std::pair<double, double>>& pts) {
    std::string d;
    bool pen_down = false;
    for (auto [x, y] : pts) {
      if (std::isnan(x)) {
        pen_down = false;
        continue;
      }
      d += str(d.empty() ? "" : " ", pen_down ? "L" : "M", px(x), " ", px(y));
      pen_down = true;
    }
    return d;
  }

 private:
  const Axis& x_;
  const Axis& y_;
};

void draw_axes(const PlotSpec& spec, const Axis& xa, const Axis& ya, const Canvas& c,
               std::string* svg) {
  const double bottom = kTop + kPlotHeight, right = kLeft + kPlotWidth;
  std::string& s = *svg;
  s += "<g class=\"grid\" stroke=\"#e0e0e0\" stroke-width=\"1\">\n";
  for (double t : xa.ticks) {
    s += str("<line x1=\"", px(c.sx(t)), "\" y1=\"", px(kTop), "\" x2=\"", px(c.sx(t)), "\" y2=\"",
             px(bottom), "\"/>\n");
  }
  for (double t : ya.ticks) {
    s += str("<line x1=\"", px(kLeft), "\" y1=\"", px(c.sy(t)), "\" x2=\"", px(right), "\" y2=\"",
             px(c.sy(t)), "\"/>\n");
  }
  s += "</g>\n<g class=\"axes\" stroke=\"#000000\" stroke-width=\"1\">\n";
  s += str("<rect x=\"", px(kLeft), "\" y=\"", px(kTop), "\" width=\"", px(kPlotWidth),
           "\" height=\"", px(kPlotHeight), "\" fill=\"none\"/>\n");
  for (double t : xa.ticks) {
    s += str("<line x1=\"", px(c.sx(t)), "\" y1=\"", px(bottom), "\" x2=\"", px(c.sx(t)),
             "\" y2=\"", px(bottom + 5), "\"/>\n");
  }
  for (double t : ya.ticks) {
    s += str("<line x1=\"", px(kLeft - 5), "\" y1=\"", px(c.sy(t)), "\" x2=\"", px(kLeft),
             "\" y2=\"", px(c.sy(t)), "\"/>\n");
  }
  s += "</g>\n<g class=\"tick-labels\" fill=\"#000000\">\n";
  for (double t : xa.ticks) {
    s += str("<text x=\"", px(c.sx(t)), "\" y=\"", px(bottom + 18), "\" text-anchor=\"middle\">",
             tick_label(t), "</text>\n");
  }
  for (double t : ya.ticks) {
    s += str("<text x=\"", px(kLeft - 8), "\" y=\"", px(c.sy(t) + 4), "\" text-anchor=\"end\">",
             tick_label(t), "</text>\n");
  }
  s += "</g>\n";
  s += str("<text class=\"title\" x=\"", px(kLeft + kPlotWidth / 2), "\" y=\"", px(kTop - 20),
           "\" text-anchor=\"middle\" font-size=\"16\" font-weight=\"bold\">",
           xml_escape(spec.title), "</text>\n");
  s += str("<text class=\"x-label\" x=\"", px(kLeft + kPlotWidth / 2), "\" y=\"", px(bottom + 42),
           "\" text-anchor=\"middle\">", xml_escape(spec.x_label), "</text>\n");
  const double ly = kTop + kPlotHeight / 2, lx = kLeft - 58;
  s += str("<text class=\"y-label\" x=\"", px(lx), "\" y=\"", px(ly), "\" transform=\"rotate(-90 ",
           px(lx), " ", px(ly), ")\" text-anchor=\"middle\">", xml_escape(spec.y_label),
           "</text>\n");
}

}  // namespace

std::string render_svg(const PlotSpec& spec) {
  std::vector<double> xs, ys;
  for (const PlotSeries& p : spec.series) {
    const size_t n = std::min(p.x.size(), p.y.size());
    xs.insert(xs.end(), p.x.begin(), p.x.begin() + n);
    ys.insert(ys.end(), p.y.begin(), p.y.begin() + n);
  }
  for (const PlotLine& l : spec.ceilings) {
    const size_t n = std::min(l.x.size(), l.y.size());
    xs.insert(xs.end(), l.x.begin(), l.x.begin() + n);
    ys.insert(ys.end(), l.y.begin(), l.y.begin() + n);
  }
  // NOTE: a point is drawable only if both coordinates are; drop the others from both ranges.
  std::vector<double> keep_x, keep_y;
  for (size_t i = 0; i < xs.size(); ++i) {
    if (drawable(spec.log_x, xs[i]) && drawable(spec.log_y, ys[i])) {
      keep_x.push_back(xs[i]);
      keep_y.push_back(ys[i]);
    }
  }
  const Axis xa = make_axis(spec.log_x, keep_x);
  const Axis ya = make_axis(spec.log_y, keep_y);
  const Canvas canvas(xa, ya);

  const size_t entries = spec.series.size() + spec.ceilings.size();
  const double height = std::max(kMinHeight, kTop + 20 + kLegendRow * static_cast<double>(entries));
  std::string s = str("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"", px(kWidth),
                      "\" height=\"", px(height), "\" viewBox=\"0 0 ", px(kWidth), " ", px(height),
                      "\" font-family=\"sans-serif\" font-size=\"12\">\n");
  s += str("<title>", xml_escape(spec.title), "</title>\n");
  s += "<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n";
  draw_axes(spec, xa, ya, canvas, &s);

  std::string legend = "<g class=\"legend\">\n";
  double row_y = kTop + 10;
  auto legend_row = [&](const std::string& label, const std::string& line_style,
                        const std::string& mark) {
    legend += str("<line x1=\"", px(kLegendX), "\" y1=\"", px(row_y), "\" x2=\"", px(kLegendX + 28),
                  "\" y2=\"", px(row_y), "\" ", line_style, "/>\n", mark);
    legend += str("<text x=\"", px(kLegendX + 36), "\" y=\"", px(row_y + 4), "\">",
                  xml_escape(label), "</text>\n");
    row_y += kLegendRow;
  };

  for (size_t i = 0; i < spec.ceilings.size(); ++i) {
    const PlotLine& l = spec.ceilings[i];
    const std::string style =
        str("stroke=\"", kCeilingColours[i % 4], "\" stroke-width=\"1.5\"",
            l.dashed ? str(" stroke-dasharray=\"", kDashes[i % 4], "\"") : std::string());
    const std::string d = Canvas::path_data(canvas.points(l.x, l.y));
    if (!d.empty()) s += str("<path class=\"ceiling\" d=\"", d, "\" fill=\"none\" ", style, "/>\n");
    legend_row(d.empty() ? l.label + " (no data)" : l.label, style, "");
  }
  for (size_t i = 0; i < spec.series.size(); ++i) {
    const PlotSeries& p = spec.series[i];
    const char* colour = kColours[i % kNumColours];
    const int shape = static_cast<int>(i + i / kNumColours);
    const auto pts = canvas.points(p.x, p.y);
    const std::string d = Canvas::path_data(pts);
    const std::string style = str("stroke=\"", colour, "\" stroke-width=\"2\"");
    if (!d.empty()) {
      s += str("<g class=\"series\">\n<path class=\"series-line\" d=\"", d, "\" fill=\"none\" ",
               style, "/>\n");
      for (auto [x, y] : pts) {
        if (!std::isnan(x)) s += marker(shape, x, y, colour);
      }
      s += "</g>\n";
    }
    legend_row(d.empty() ? p.label + " (no data)" : p.label, style,
               marker(shape, kLegendX + 14, row_y, colour));
  }
  s += legend + "</g>\n</svg>\n";
  return s;
}

Status write_svg(const PlotSpec& spec, const std::string& path) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out)
    return Status(ErrorCode::kIoError,
                  str("cannot open '", path, "' for writing: ", std::strerror(errno)));
  out << render_svg(spec);
  out.close();
  if (!out) return Status(ErrorCode::kIoError, str("writing '", path, "' failed"));
  return Status();
}

}  // namespace qgemm::bench

namespace qgemm::bench {
namespace {

// The value of a numeric attribute of the root <svg> element, or `fallback`.
double root_attribute(const std::string& svg, const std::string& name, double fallback) {
  const size_t root = svg.find("<svg");
  const size_t end = svg.find('>', root);
  const size_t at = svg.find(" " + name + "=\"", root);
  if (root == std::string::npos || at == std::string::npos || at > end) return fallback;
  return std::strtod(svg.c_str() + at + name.size() + 3, nullptr);
}

}  // namespace

std::string compose_svg_panels(const std::vector<std::string>& panels) {
  double width = 0, height = 0;
  std::string body;
  for (const std::string& panel : panels) {
    const double w = root_attribute(panel, "width", 900), h = root_attribute(panel, "height", 540);
    // Nested <svg> elements keep their own viewport: place each one below the previous.
    std::string placed = panel;
    const size_t root = placed.find("<svg");
    if (root != std::string::npos) placed.insert(root + 4, str(" x=\"0\" y=\"", px(height), "\""));
    body += placed;
    width = std::max(width, w);
    height += h;
  }
  return str("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"", px(width), "\" height=\"",
             px(std::max(height, 1.0)), "\" viewBox=\"0 0 ", px(width), " ",
             px(std::max(height, 1.0)), "\">\n", body, "</svg>\n");
}

}  // namespace qgemm::bench
