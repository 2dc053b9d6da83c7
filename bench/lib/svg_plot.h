#pragma once

#include <string>
#include <vector>

#include "qgemm/status.h"

namespace qgemm::bench {

/// One measured curve: points joined in the order given, each marked. x and y pair up by index;
/// extra entries of the longer vector are ignored.
struct PlotSeries {
  std::string label;
  std::vector<double> x, y;
};

/// A reference line such as a bandwidth or compute roofline ceiling; drawn without markers.
struct PlotLine {
  std::string label;
  std::vector<double> x, y;
  bool dashed = true;
};

/// What to draw. Axis ranges cover every drawable point of the series and ceilings.
struct PlotSpec {
  std::string title, x_label, y_label;
  bool log_x = true;  ///< log axes tick at powers of two, or of ten when that gives too many
  bool log_y = true;
  std::vector<PlotSeries> series;
  std::vector<PlotLine> ceilings;
};

/// `text` with the characters XML gives a meaning to (& < > " ') written as entities.
std::string xml_escape(const std::string& text);

/// Renders a complete standalone SVG document: axes with ticks, grid and labels, a title, one
/// <path> and markers per non-empty series in distinct colours and marker shapes, dashed ceilings
/// and a legend. Points that are NaN or infinite, or <= 0 on a log axis, are skipped and break the
/// line there. Text is XML-escaped.
std::string render_svg(const PlotSpec& spec);

/// Writes render_svg(spec) to `path`; kIoError naming the path when it cannot.
Status write_svg(const PlotSpec& spec, const std::string& path);

}  // namespace qgemm::bench

namespace qgemm::bench {

/// Stacks complete SVG documents (as render_svg makes them) vertically into one document.
std::string compose_svg_panels(const std::vector<std::string>& panels);

}  // namespace qgemm::bench
