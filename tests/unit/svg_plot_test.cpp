#include "bench/lib/svg_plot.h"
#include "util/error.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace qgemm::bench {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t pos = text.find(what); pos != std::string::npos; pos = text.find(what, pos + 1)) ++n;
  return n;
}

// Checks the subset of XML render_svg writes: tags nest and close, attribute quotes pair up, and
// every '&' starts an entity.
::testing::AssertionResult well_formed(const std::string& xml) {
  std::vector<std::string> open;
  for (size_t pos = 0; (pos = xml.find('<', pos)) != std::string::npos;) {
    const size_t end = xml.find('>', pos);
    if (end == std::string::npos) return ::testing::AssertionFailure() << "unclosed < at " << pos;
    const std::string tag = xml.substr(pos + 1, end - pos - 1);
    if (tag.empty() || count(tag, "\"") % 2 != 0 || tag.find('<') != std::string::npos)
      return ::testing::AssertionFailure() << "malformed tag <" << tag << ">";
    const std::string name =
        tag.substr(tag[0] == '/', tag.find_first_of(" /", 1) - (tag[0] == '/'));
    if (tag[0] == '/') {
      if (open.empty() || open.back() != name)
        return ::testing::AssertionFailure()
               << "</" << name << "> closes <" << (open.empty() ? "nothing" : open.back()) << ">";
      open.pop_back();
    } else if (tag.back() != '/') {
      open.push_back(name);
    }
    pos = end + 1;
  }
  if (!open.empty()) return ::testing::AssertionFailure() << "<" << open.back() << "> not closed";
  for (size_t pos = 0; (pos = xml.find('&', pos)) != std::string::npos; ++pos) {
    const std::string rest = xml.substr(pos, 6);
    if (rest.rfind("&amp;", 0) && rest.rfind("&lt;", 0) && rest.rfind("&gt;", 0) &&
        rest.rfind("&quot;", 0) && rest.rfind("&apos;", 0))
      return ::testing::AssertionFailure() << "bare & at " << pos;
  }
  return ::testing::AssertionSuccess();
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

// The d attribute of the i-th series line.
std::string series_path(const std::string& svg, int i) {
  const std::string key = "class=\"series-line\" d=\"";
  size_t pos = 0;
  for (int j = 0; j <= i; ++j) {
    pos = svg.find(key, pos);
    if (pos == std::string::npos) return "";
    pos += key.size();
  }
  return svg.substr(pos, svg.find('"', pos) - pos);
}

PlotSpec roofline() {
  PlotSpec spec;
  spec.title = "int4/g128/bf16 x bf16, N = K = 8192";
  spec.x_label = "M (tokens)";
  spec.y_label = "time per GEMM (us)";
  spec.series.push_back(
      {"jit", {1, 16, 64, 256, 1024, 4096}, {17.1, 17.7, 25.3, 56.4, 199.7, 844.7}});
  spec.series.push_back(
      {"cublas-bf16", {1, 16, 64, 256, 1024, 4096}, {36, 36.3, 38.9, 50.8, 172.4, 686.9}});
  spec.ceilings.push_back({"bandwidth floor", {1, 4096}, {8.2, 8.2}});
  spec.ceilings.push_back({"compute floor", {1, 4096}, {0.1, 350}, false});
  return spec;
}

TEST(SvgPlotTest, RooflinePlotIsWellFormedAndLabelled) {
  const std::string svg = render_svg(roofline());
  ASSERT_EQ(svg.rfind("<svg", 0), 0u) << svg.substr(0, 40);
  EXPECT_EQ(svg.substr(svg.size() - 7), "</svg>\n");
  EXPECT_TRUE(well_formed(svg));
  for (const char* text :
       {"int4/g128/bf16 x bf16, N = K = 8192", "M (tokens)", "time per GEMM (us)", "jit",
        "cublas-bf16", "bandwidth floor", "compute floor"}) {
    EXPECT_NE(svg.find(text), std::string::npos) << text;
  }
  EXPECT_EQ(count(svg, "class=\"series-line\""), 2u);
  EXPECT_EQ(count(svg, "class=\"ceiling\""), 2u);
  EXPECT_NE(svg.find("stroke-dasharray"), std::string::npos);
  // 12 data markers and one legend marker per series.
  EXPECT_EQ(count(svg, "class=\"marker\""), 14u);
  EXPECT_EQ(lower(svg).find("nan"), std::string::npos);
  EXPECT_EQ(lower(svg).find("inf"), std::string::npos);
  // Powers of two along M.
  for (const char* tick : {">1</text>", ">2</text>", ">64</text>", ">4096</text>"}) {
    EXPECT_NE(svg.find(tick), std::string::npos) << tick;
  }
}

TEST(SvgPlotTest, SeriesGetDistinctColoursAndMarkers) {
  PlotSpec spec;
  for (int i = 0; i < 12; ++i)
    spec.series.push_back({"s" + std::to_string(i), {1, 2}, {1.0 + i, 2.0 + i}});
  const std::string svg = render_svg(spec);
  EXPECT_TRUE(well_formed(svg));
  EXPECT_EQ(count(svg, "class=\"series-line\""), 12u);
  std::set<std::string> colours;
  for (size_t pos = 0; (pos = svg.find("class=\"series-line\"", pos)) != std::string::npos; ++pos) {
    const size_t c = svg.find("stroke=\"", pos) + 8;
    colours.insert(svg.substr(c, svg.find('"', c) - c));
  }
  EXPECT_EQ(colours.size(), 10u);
  // Series 0 and 10 share a colour but not a marker shape.
  EXPECT_GT(count(svg, "<circle"), 0u);
  EXPECT_GT(count(svg, "<rect class=\"marker\""), 0u);
  EXPECT_GT(count(svg, "<polygon class=\"marker\""), 0u);
}

TEST(SvgPlotTest, WideLogRangeTicksAtPowersOfTen) {
  PlotSpec spec;
  spec.series.push_back({"wide", {1, 2}, {0.001, 1e6}});
  const std::string svg = render_svg(spec);
  EXPECT_TRUE(well_formed(svg));
  for (const char* tick : {">0.001</text>", ">1</text>", ">1000</text>", ">1000000</text>"}) {
    EXPECT_NE(svg.find(tick), std::string::npos) << tick;
  }
}

TEST(SvgPlotTest, EmptyPlotsStillRender) {
  const std::string nothing = render_svg(PlotSpec{});
  EXPECT_EQ(nothing.rfind("<svg", 0), 0u);
  EXPECT_TRUE(well_formed(nothing));
  EXPECT_EQ(count(nothing, "class=\"series-line\""), 0u);

  PlotSpec spec;
  spec.title = "empty";
  spec.series.push_back({"no points", {}, {}});
  spec.series.push_back({"all skipped", {1, 2}, {0, kNaN}});
  const std::string svg = render_svg(spec);
  EXPECT_TRUE(well_formed(svg));
  EXPECT_EQ(count(svg, "class=\"series-line\""), 0u);
  EXPECT_NE(svg.find("no points (no data)"), std::string::npos);
  EXPECT_NE(svg.find("all skipped (no data)"), std::string::npos);
  EXPECT_EQ(lower(svg).find("nan"), std::string::npos);
}

TEST(SvgPlotTest, SinglePointIsOneMarker) {
  PlotSpec spec;
  spec.series.push_back({"one", {64}, {25.3}});
  const std::string svg = render_svg(spec);
  EXPECT_TRUE(well_formed(svg));
  const std::string d = series_path(svg, 0);
  EXPECT_EQ(d.rfind("M", 0), 0u) << d;
  EXPECT_EQ(count(d, "L"), 0u) << d;
  EXPECT_EQ(count(svg, "class=\"marker\""), 2u);  // the point and its legend entry
}

TEST(SvgPlotTest, SkipsNonPositiveAndNaNOnLogAxesAndBreaksTheLine) {
  PlotSpec spec;
  spec.series.push_back({"gappy", {1, 2, 4, 8, 16, 32, -1}, {1, 2, 0, kNaN, 8, 16, 4}});
  const std::string svg = render_svg(spec);
  EXPECT_TRUE(well_formed(svg));
  const std::string d = series_path(svg, 0);
  EXPECT_EQ(count(d, "M"), 2u) << d;
  EXPECT_EQ(count(d, "L"), 2u) << d;
  EXPECT_EQ(count(svg, "class=\"marker\""), 5u);
  EXPECT_EQ(lower(svg).find("nan"), std::string::npos);
}

TEST(SvgPlotTest, LinearAxesKeepZeroAndNegativeValues) {
  PlotSpec spec;
  spec.log_x = false;
  spec.log_y = false;
  spec.series.push_back({"linear", {0, 1, 2}, {-1, 0, 1}});
  spec.series.push_back({"flat", {5}, {3}});
  const std::string svg = render_svg(spec);
  EXPECT_TRUE(well_formed(svg));
  EXPECT_EQ(count(series_path(svg, 0), "L"), 2u);
  EXPECT_EQ(count(svg, "class=\"marker\""), 6u);
  EXPECT_NE(svg.find(">-1</text>"), std::string::npos);
}

TEST(SvgPlotTest, EscapesText) {
  PlotSpec spec;
  spec.title = "a<b & \"c\"";
  spec.series.push_back({"x > y", {1}, {1}});
  const std::string svg = render_svg(spec);
  EXPECT_TRUE(well_formed(svg));
  EXPECT_NE(svg.find("a&lt;b &amp; &quot;c&quot;"), std::string::npos);
  EXPECT_NE(svg.find("x &gt; y"), std::string::npos);
}

TEST(SvgPlotTest, WritesFileAndReportsBadPath) {
  const std::string path = ::testing::TempDir() + "/qgemm_svg_plot_test.svg";
  ASSERT_TRUE(write_svg(roofline(), path).ok());
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), render_svg(roofline()));
  std::remove(path.c_str());

  const Status bad = write_svg(roofline(), "/nonexistent/dir/plot.svg");
  EXPECT_EQ(bad.code(), ErrorCode::kIoError);
  EXPECT_NE(bad.message().find("/nonexistent/dir/plot.svg"), std::string::npos);
}

}  // namespace
}  // namespace qgemm::bench
