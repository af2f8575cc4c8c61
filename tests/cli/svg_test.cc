// The SVG plot writer (src/cli/svg.h): ticks, labels, escaping, the data -> pixel mapping and the
// well-formedness of the document.
#include "cli/svg.h"
#include "cli/pareto_report.h"

#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <random>
#include <regex>
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


TEST(RenderSvg, APaddedAxisOfDataNotNegativeStopsAtZero) {
  // x in [1, 16], y in [0, 4,600], pad 0.04: x spans 1 - 0.6 = 0.4 .. 16.6 -> 8 ticks' raw step
  // 16.2 / 8 = 2.03 -> 5, ticks 0..20, so the last point sits inside the frame, not on it; y spans
  // 0 (not -184) .. 4,784 -> raw step 797 -> 1,000, ticks 0..5,000: no negative tick.
  Plot p;
  p.pad = 0.04;
  PlotSeries s;
  s.kind = PlotSeries::Kind::kScatter;
  s.x = {1, 16};
  s.y = {0, 4600};
  p.series.push_back(s);
  SvgLayout l;
  RenderSvg(p, &l);
  ASSERT_FALSE(l.x_ticks.empty());
  ASSERT_FALSE(l.y_ticks.empty());
  EXPECT_EQ(l.x_ticks.front(), 0);
  EXPECT_EQ(l.x_ticks.back(), 20);
  EXPECT_EQ(l.y_ticks.front(), 0);
  EXPECT_EQ(l.y_ticks.back(), 5000);
  // Data reaching below zero keeps its margin there: y in [-100, 4,600] spans -288 .. 4,788
  // (raw step 846 -> 1,000).
  p.series[0].y = {-100, 4600};
  RenderSvg(p, &l);
  EXPECT_EQ(l.y_ticks.front(), -1000);
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

// --- issue 46 item 4: log axes, the legend inside the frame, shaded SLO regions, no clipped text.

// Every non-rotated <text> of `svg`, parsed back: its estimated extent (0.6 em per character, the
// anchor, 0.8 em above and 0.25 em below the baseline) must lie inside the viewBox. Independent
// of SvgLayout: it reads the document as a renderer would.
void ExpectTextsInside(const std::string& svg) {
  const std::regex view(R"re(viewBox="0 0 ([0-9.]+) ([0-9.]+)")re");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(svg, m, view));
  const double w = std::stod(m[1]), h = std::stod(m[2]);
  const std::regex text(R"re(<text([^>]*)>([^<]*)</text>)re");
  const std::regex num_attr(R"re(\b(x|y|font-size)="([-0-9.]+)")re");
  const std::regex anchor(R"re(text-anchor="(\w+)")re");
  int n = 0;
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), text); it != std::sregex_iterator();
       ++it) {
    const std::string attrs = (*it)[1], content = (*it)[2];
    if (attrs.find("rotate") != std::string::npos) continue;
    double x = 0, y = 0, font = 13;
    for (auto a = std::sregex_iterator(attrs.begin(), attrs.end(), num_attr);
         a != std::sregex_iterator(); ++a) {
      const std::string k = (*a)[1];
      const double v = std::stod((*a)[2]);
      if (k == "x") x = v;
      else if (k == "y") y = v;
      else font = v;
    }
    std::smatch am;
    const std::string anc = std::regex_search(attrs, am, anchor) ? am[1].str() : "start";
    // Entities count as one character.
    const double chars = static_cast<double>(std::regex_replace(content, std::regex("&[a-z]+;"), "_").size());
    const double tw = 0.6 * font * chars;
    const double x0 = anc == "middle" ? x - tw / 2 : anc == "end" ? x - tw : x;
    EXPECT_GE(x0, 0) << content;
    EXPECT_LE(x0 + tw, w) << content;
    EXPECT_GE(y - 0.8 * font, 0) << content;
    EXPECT_LE(y + 0.25 * font, h) << content;
    ++n;
  }
  EXPECT_GT(n, 3);
}

void ExpectLayoutInside(const SvgLayout& lay) {
  const SvgBox canvas{0, 0, lay.width, lay.height};
  for (const auto& [t, box] : lay.texts) EXPECT_TRUE(box.Inside(canvas)) << t;
}

TEST(ExpectTextsInside, CatchesAClippedText) {
  // The checker itself can fail: a 10-character label (78 px) anchored at x = 950 of a 960 px
  // picture runs past its right edge.
  const std::string clipped =
      "<svg viewBox=\"0 0 960 560\"><text x=\"10\" y=\"20\">ok</text><text x=\"10\" "
      "y=\"40\">ok</text><text x=\"10\" y=\"60\">ok</text><text x=\"10\" y=\"80\">ok</text>"
      "<text x=\"950\" y=\"100\">0123456789</text></svg>";
  EXPECT_NONFATAL_FAILURE(ExpectTextsInside(clipped), "0123456789");
}

TEST(RenderSvg, LogTicksSitAtTheirDecades) {
  // x: data 1..1000 on a log axis: three decades, ticks 1, 10, 100, 1000 at 0, 1/3, 2/3 and 1 of
  // the plot's width. The plot spans x 90 (the left margin) .. 960 - 27.5 = 932.5 (inside legend:
  // the right margin is half the last tick label "1,000", 5 x 7.8 / 2 = 19.5, + 8), so 10 is at
  // 90 + 842.5 / 3 = 370.83 and 100 at 90 + 2 x 842.5 / 3 = 651.67.
  // y: data 10..1000, log: ticks 10, 100, 1000 at the bottom (496), middle (272) and top (48).
  Plot p;
  p.log_x = p.log_y = true;
  p.legend = Plot::Legend::kInside;
  PlotSeries s;
  s.kind = PlotSeries::Kind::kScatter;
  s.x = {1, 1000};
  s.y = {10, 1000};
  p.series.push_back(s);
  SvgLayout lay;
  const std::string svg = RenderSvg(p, &lay);
  ASSERT_EQ(lay.x_ticks, (std::vector<double>{1, 10, 100, 1000}));
  EXPECT_NEAR(lay.frame.x0, 90, 1e-9);
  EXPECT_NEAR(lay.frame.x1, 932.5, 1e-9);
  EXPECT_NEAR(lay.x_tick_px[0], 90, 1e-9);
  EXPECT_NEAR(lay.x_tick_px[1], 370.8333, 1e-3);
  EXPECT_NEAR(lay.x_tick_px[2], 651.6667, 1e-3);
  EXPECT_NEAR(lay.x_tick_px[3], 932.5, 1e-9);
  ASSERT_EQ(lay.y_ticks, (std::vector<double>{10, 100, 1000}));
  EXPECT_NEAR(lay.y_tick_px[0], 496, 1e-9);
  EXPECT_NEAR(lay.y_tick_px[1], 272, 1e-9);
  EXPECT_NEAR(lay.y_tick_px[2], 48, 1e-9);
  // The dots land on those positions: (1, 10) bottom-left, (1000, 1000) top-right.
  EXPECT_NE(svg.find("<circle cx=\"90.00\" cy=\"496.00\""), std::string::npos);
  EXPECT_NE(svg.find("<circle cx=\"932.50\" cy=\"48.00\""), std::string::npos);
  // Fewer than three decades inside the range: 1-2-5 steps. 45..520: 50, 100, 200, 500.
  p.series[0].x = {45, 520};
  RenderSvg(p, &lay);
  EXPECT_EQ(lay.x_ticks, (std::vector<double>{50, 100, 200, 500}));
  // And the y label says the scale.
  p.y_label = "tokens/s";
  EXPECT_NE(RenderSvg(p).find("tokens/s (log scale)"), std::string::npos);
}

TEST(RenderSvg, LegendInsideTheFrameInTheEmptiestCorner) {
  Plot p;
  p.legend = Plot::Legend::kInside;
  p.title = "legend";
  PlotSeries a;
  a.kind = PlotSeries::Kind::kScatter;
  a.name = "a";
  // Points crowding the top-right and the top-left of a 0..10 x 0..10 plot: the legend goes to
  // the bottom-left, the first empty corner in the order top-right, top-left, bottom-left.
  a.x = {9, 9.5, 10, 0, 0.5, 1};
  a.y = {9, 9.5, 10, 9, 9.5, 10};
  p.series.push_back(a);
  SvgLayout lay;
  RenderSvg(p, &lay);
  EXPECT_EQ(lay.legend_corner, "bottom-left");
  EXPECT_TRUE(lay.legend.Inside(lay.frame));
  // Box: 8 + 28 + 8 + 0.6 x 13 x 1 + 8 = 59.8 wide, 8 + 20 - 4 + 8 = 32 high, 8 px inside the
  // frame's bottom-left corner (90, 496): x 98 .. 157.8, y 456 .. 488.
  EXPECT_NEAR(lay.legend.x0, 98, 1e-9);
  EXPECT_NEAR(lay.legend.x1, 157.8, 1e-9);
  EXPECT_NEAR(lay.legend.y0, 456, 1e-9);
  EXPECT_NEAR(lay.legend.y1, 488, 1e-9);
  // Nothing in the top-right: the legend goes there.
  p.series[0].x = {0, 1, 2};
  p.series[0].y = {0, 1, 2};
  RenderSvg(p, &lay);
  EXPECT_EQ(lay.legend_corner, "top-right");
  EXPECT_TRUE(lay.legend.Inside(lay.frame));
  // 31 legend rows ("a" and 30 long ones) do not fit the 448 px plot height: the plot area grows
  // to hold the box (16 + 31 x 20 - 4 = 632 px, + 2 x 8 inset: the frame ends at 48 + 648 = 696)
  // and the canvas with it (696 + 64 = 760).
  for (int i = 0; i < 30; ++i) {
    PlotSeries more = p.series[0];
    more.name = "series number " + std::to_string(i) + " with a long legend label";
    p.series.push_back(more);
  }
  const std::string svg = RenderSvg(p, &lay);
  EXPECT_NEAR(lay.frame.y1, 696, 1e-9);
  EXPECT_EQ(lay.height, 760);
  EXPECT_TRUE(lay.legend.Inside(lay.frame));
  ExpectLayoutInside(lay);
  ExpectTextsInside(svg);
}

TEST(RenderSvg, NoTextOutsideThePicture) {
  // A title longer than the picture (150 characters of 0.6 x 16 px = 1,440 px): centred at
  // max((90 + 932.5) / 2, 720 + 4) = 724, the canvas widens to 724 + 720 + 4 = 1,448 px.
  Plot p;
  p.legend = Plot::Legend::kInside;
  p.title = std::string(150, 't');
  p.x_label = "x";
  p.y_label = "y";
  PlotSeries s;
  s.name = "s";
  s.x = {0, 10};
  s.y = {0, 10};
  p.series.push_back(s);
  SvgLayout lay;
  std::string svg = RenderSvg(p, &lay);
  EXPECT_EQ(lay.width, 1448);
  EXPECT_NE(svg.find("width=\"1448\""), std::string::npos);
  ExpectLayoutInside(lay);
  ExpectTextsInside(svg);
  // Wide y tick labels ("1,000,000" = 9 x 7.8 = 70.2 px) push the plot right of the rotated y
  // label: the plot starts at 38 + 70.2 = 108.2.
  p.title = "t";
  p.series[0].y = {0, 1e6};
  svg = RenderSvg(p, &lay);
  EXPECT_NEAR(lay.frame.x0, 108.2, 1e-9);
  ExpectLayoutInside(lay);
  ExpectTextsInside(svg);
  // The legend column (kRight) with a long label, log axes, a note: all inside too.
  p.legend = Plot::Legend::kRight;
  p.log_x = p.log_y = true;
  p.series[0].x = {3, 3000};
  p.series[0].y = {0.02, 2e5};
  p.series[0].name = std::string(70, 'n');
  PlotSeries span;
  span.kind = PlotSeries::Kind::kXSpan;
  span.x = {-std::numeric_limits<double>::infinity(), 300};
  span.name = "slo";
  span.note = "violated";
  p.series.push_back(span);
  svg = RenderSvg(p, &lay);
  ExpectLayoutInside(lay);
  ExpectTextsInside(svg);
}

TEST(RenderSvg, XSpanShadesToItsBoundaryWithItsNote) {
  // Log x 1..1000 over 90 .. 932.5 (as above): a span (-inf, 10] is the rectangle from the frame's
  // left edge to 10's position, 370.83 - 90 = 280.83 px wide, over the plot's height 448; its note
  // fits (8 x 7.8 + 12 < 280) and sits at the bottom of the region, x 96, y 496 - 8 = 488.
  Plot p;
  p.log_x = true;
  p.legend = Plot::Legend::kInside;
  PlotSeries s;
  s.kind = PlotSeries::Kind::kScatter;
  s.name = "front";
  s.x = {1, 1000};
  s.y = {1, 1};
  p.series.push_back(s);
  PlotSeries span;
  span.kind = PlotSeries::Kind::kXSpan;
  span.x = {-std::numeric_limits<double>::infinity(), 10};
  span.color = "#d62728";
  span.opacity = 0.12;
  span.name = "violates the SLO";
  span.note = "violated";
  p.series.push_back(span);
  SvgLayout lay;
  const std::string svg = RenderSvg(p, &lay);
  EXPECT_NE(svg.find("<rect class=\"span\" x=\"90.00\" y=\"48.00\" width=\"280.83\" "
                     "height=\"448.00\" fill=\"#d62728\" fill-opacity=\"0.12\"/>"),
            std::string::npos)
      << svg;
  EXPECT_NE(svg.find("<text x=\"96.00\" y=\"488.00\" class=\"note\""), std::string::npos);
  // Both legend entries, the span's as a shaded swatch.
  EXPECT_NE(svg.find(">violates the SLO<"), std::string::npos);
  EXPECT_NE(svg.find(">front<"), std::string::npos);
  EXPECT_EQ(Count(svg, "fill=\"#d62728\""), 2);
}

TEST(AddSloRegion, ShadesBelowTheSlosInteractivity) {
  // TPOT 20 ms = 1000 / 20 = 50 tokens/s per user: below that the SLO is violated.
  Plot p;
  AddSloRegion(20, &p);
  ASSERT_EQ(p.series.size(), 1u);
  EXPECT_EQ(p.series[0].kind, PlotSeries::Kind::kXSpan);
  EXPECT_EQ(p.series[0].x[1], 50);
  EXPECT_TRUE(std::isinf(p.series[0].x[0]) && p.series[0].x[0] < 0);
  EXPECT_EQ(p.series[0].name, "violates the SLO: TPOT > 20 ms (< 50 tok/s/user)");
  Plot none;
  AddSloRegion(0, &none);  // no SLO: nothing
  EXPECT_TRUE(none.series.empty());
}

}  // namespace
}  // namespace l2s::cli
