// The SVG plot writer (src/cli/svg.h): ticks, labels, escaping, the data -> pixel mapping and the
// well-formedness of the document.
#include "cli/svg.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <random>
#include <string>

namespace l2s::cli {
namespace {

int Count(const std::string& s, const std::string& needle) {
  int n = 0;
  for (size_t p = s.find(needle); p != std::string::npos; p = s.find(needle, p + 1)) ++n;
  return n;
}

TEST(LinearTicks, HandDerived) {
  // [0, 97] in ~5 intervals: raw step 19.4, magnitude 10; 1x10 < 19.4 <= 2x10, so step 20, from
  // floor(0/20)*20 = 0 to ceil(97/20)*20 = 100.
  EXPECT_EQ(LinearTicks(0, 97, 5), (std::vector<double>{0, 20, 40, 60, 80, 100}));
  // A single value widens to [2.5, 3.5]: raw 0.25, magnitude 0.1, step 0.5 (0.2 < 0.25).
  const std::vector<double> t = LinearTicks(3, 3, 4);
  ASSERT_EQ(t.size(), 3u);
  EXPECT_DOUBLE_EQ(t[0], 2.5);
  EXPECT_DOUBLE_EQ(t[1], 3.0);
  EXPECT_DOUBLE_EQ(t[2], 3.5);
  // Negative range: [-7, 12] over ~4: raw 4.75, magnitude 1, step 5; -10 .. 15.
  EXPECT_EQ(LinearTicks(-7, 12, 4), (std::vector<double>{-10, -5, 0, 5, 10, 15}));
}

TEST(LinearTicks, CoverTheRangeWithNiceEvenSteps) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(-1e4, 1e4);
  for (int i = 0; i < 2000; ++i) {
    double lo = u(rng), hi = u(rng);
    if (lo > hi) std::swap(lo, hi);
    const std::vector<double> t = LinearTicks(lo, hi, 6);
    ASSERT_GE(t.size(), 2u);
    EXPECT_LE(t.front(), lo + 1e-9);
    EXPECT_GE(t.back(), hi - 1e-9);
    EXPECT_LE(t.size(), 16u);  // about 6 intervals: a 1-2-5 step is at most 2.5x finer
    const double step = t[1] - t[0];
    const double mant = step / std::pow(10.0, std::floor(std::log10(step) + 1e-12));
    EXPECT_TRUE(std::fabs(mant - 1) < 1e-6 || std::fabs(mant - 2) < 1e-6 ||
                std::fabs(mant - 5) < 1e-6 || std::fabs(mant - 10) < 1e-6)
        << step;
    for (size_t k = 1; k < t.size(); ++k) EXPECT_NEAR(t[k] - t[k - 1], step, step * 1e-6);
  }
}

TEST(LogTicks, DecadesOrOneTwoFive) {
  EXPECT_EQ(LogTicks(1, 4000), (std::vector<double>{1, 10, 100, 1000, 10000}));
  EXPECT_EQ(LogTicks(2, 8), (std::vector<double>{1, 2, 5, 10}));
  EXPECT_EQ(LogTicks(30, 500), (std::vector<double>{10, 100, 1000}));
}

TEST(FormatTick, SeparatorsAndDecimals) {
  EXPECT_EQ(FormatTick(12000, 2000), "12,000");
  EXPECT_EQ(FormatTick(1000000, 1e6), "1,000,000");
  EXPECT_EQ(FormatTick(250, 50), "250");
  EXPECT_EQ(FormatTick(0.5, 0.1), "0.5");
  EXPECT_EQ(FormatTick(2.5, 0.5), "2.5");
  EXPECT_EQ(FormatTick(0.05, 0.01), "0.05");
  EXPECT_EQ(FormatTick(-0.0, 0.1), "0.0");
  EXPECT_EQ(FormatTick(-1500, 500), "-1,500");
}

TEST(XmlEscape, AllFive) {
  EXPECT_EQ(XmlEscape("a<b&\"c\">'d'"), "a&lt;b&amp;&quot;c&quot;&gt;&apos;d&apos;");
  EXPECT_EQ(XmlEscape("plain"), "plain");
}

TEST(RenderSvg, MapsDataToThePlotArea) {
  // Default 960 x 560 picture with no legend (24 px column): plot area x in [90, 960-24 = 936],
  // y in [48, 560-64 = 496].
  // Data x in [0, 10] -> ticks 0..10 (raw step 1.25 -> 2), y from zero in [0, 10] -> 0..10, so
  // (0, 0) is the bottom-left corner (90, 496) and (10, 10) the top-right corner (936, 48).
  Plot p;
  p.title = "t";
  PlotSeries s;
  s.x = {0, 10};
  s.y = {0, 10};
  p.series.push_back(s);
  const std::string svg = RenderSvg(p);
  EXPECT_NE(svg.find("90.00,496.00 936.00,48.00"), std::string::npos) << svg;
  // A legend label of 20 characters makes the legend column 50 + 0.6 x 13 x 20 = 206 px wide:
  // the plot area then ends at 960 - 206 = 754. 60 characters would need 518 px: capped at a
  // third of the picture, 320 px, so the plot ends at 640.
  p.series[0].name = std::string(20, 'a');
  EXPECT_NE(RenderSvg(p).find("90.00,496.00 754.00,48.00"), std::string::npos);
  p.series[0].name = std::string(60, 'a');
  EXPECT_NE(RenderSvg(p).find("90.00,496.00 640.00,48.00"), std::string::npos);
  // ... and the label, from 640 + 16 + 36 = 692 px for 0.6 x 13 x 60 = 468 px, would end at
  // 1,160 px, past the 960 px picture (issue 46: a clipped legend): the canvas widens to
  // 1,160 + 8 = 1,168 px, the plot area unchanged.
  EXPECT_NE(RenderSvg(p).find("width=\"1168\" height=\"560\" viewBox=\"0 0 1168 560\""),
            std::string::npos)
      << RenderSvg(p).substr(0, 300);
  // 30 legend rows of 20 px from y = 48 + 10 run to 658 px: the canvas grows to 666 px.
  p.series[0].name = "a";
  for (int i = 0; i < 29; ++i) {
    PlotSeries more = p.series[0];
    more.name = "s" + std::to_string(i);
    p.series.push_back(more);
  }
  EXPECT_NE(RenderSvg(p).find("height=\"666\""), std::string::npos) << RenderSvg(p).substr(0, 300);
}

TEST(RenderSvg, WellFormedWithLabelsLegendAndEscaping) {
  Plot p;
  p.title = "best <so far> & more";
  p.x_label = "simulator calls";
  p.y_label = "best tokens/s per GPU";
  p.log_x = true;
  PlotSeries band;
  band.kind = PlotSeries::Kind::kBand;
  band.x = {1, 10, 100};
  band.y = {0, 1, 2};
  band.y_hi = {1, 2, 3};
  PlotSeries line;
  line.name = "rl (mean)";
  line.x = {1, 10, 100};
  line.y = {0.5, 1.5, 2.5};
  PlotSeries step = line;
  step.kind = PlotSeries::Kind::kStep;
  step.name = "step";
  PlotSeries dots;
  dots.kind = PlotSeries::Kind::kScatter;
  dots.name = "cloud";
  dots.x = {2, 3};
  dots.y = {1, 2};
  PlotSeries ref;
  ref.kind = PlotSeries::Kind::kHLine;
  ref.name = "oracle";
  ref.y = {3.2};
  ref.dashed = true;
  p.series = {band, line, step, dots, ref};
  const std::string svg = RenderSvg(p);
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_NE(svg.find("</svg>"), std::string::npos);
  EXPECT_EQ(Count(svg, "<g"), Count(svg, "</g>"));
  EXPECT_EQ(Count(svg, "<text"), Count(svg, "</text>"));
  EXPECT_NE(svg.find("best &lt;so far&gt; &amp; more"), std::string::npos);
  EXPECT_NE(svg.find("simulator calls (log scale)"), std::string::npos);
  EXPECT_NE(svg.find("best tokens/s per GPU"), std::string::npos);
  for (const char* name : {"rl (mean)", "step", "cloud", "oracle"})
    EXPECT_NE(svg.find(std::string(">") + name + "<"), std::string::npos) << name;
  EXPECT_EQ(Count(svg, "<polygon"), 1);   // the band
  EXPECT_EQ(Count(svg, "<polyline"), 2);  // line and step
  EXPECT_EQ(Count(svg, "stroke-dasharray"), 2);  // the reference line and its legend sample
  // Scatter: 2 dots plus 1 legend marker.
  EXPECT_EQ(Count(svg, "<circle"), 3);
}

TEST(RenderSvg, DropsNonFiniteAndNonPositiveLogPoints) {
  Plot p;
  p.log_x = true;
  PlotSeries s;
  s.kind = PlotSeries::Kind::kScatter;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  s.x = {0, -1, 1, 10, nan, 5};
  s.y = {1, 1, 1, 2, 1, std::numeric_limits<double>::infinity()};
  p.series.push_back(s);
  const std::string svg = RenderSvg(p);
  EXPECT_EQ(Count(svg, "<circle"), 2);  // (1, 1) and (10, 2) only; no legend (no name)
  EXPECT_EQ(svg.find("nan"), std::string::npos);
  EXPECT_EQ(svg.find("inf"), std::string::npos);
}

TEST(RenderSvg, EmptyPlotStillRenders) {
  Plot p;
  p.x_label = "x";
  p.y_label = "y";
  const std::string svg = RenderSvg(p);
  EXPECT_NE(svg.find("</svg>"), std::string::npos);
  EXPECT_EQ(svg.find("nan"), std::string::npos);
}

TEST(WriteSvg, WritesAndReportsIoErrors) {
  Plot p;
  const std::string path =
      (std::filesystem::temp_directory_path() / "l2s_svg_test.svg").string();
  ASSERT_TRUE(WriteSvg(p, path).ok());
  EXPECT_GT(std::filesystem::file_size(path), 100u);
  std::filesystem::remove(path);
  const Status bad = WriteSvg(p, "/nonexistent-dir/x.svg");
  EXPECT_EQ(bad.code(), Status::Code::kIoError);
  EXPECT_NE(bad.message().find("/nonexistent-dir/x.svg"), std::string::npos);
}

}  // namespace
}  // namespace l2s::cli
