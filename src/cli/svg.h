// A small SVG plot writer for `l2s compare`: line, band, scatter and horizontal-reference series
// on linear or log-10 x axes, with axis labels, nice ticks, a title and a legend to the right of
// the plot area. No dependencies; the output is plain SVG 1.1 that rsvg-convert and browsers read.
//
// Coordinates are data units; the writer maps them to pixels. Non-finite points, and points with
// x <= 0 on a log axis, are dropped (never drawn at a bogus position).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace l2s::cli {

struct PlotSeries {
  enum class Kind {
    kLine,     // polyline through (x[i], y[i])
    kStep,     // step function: holds y[i] until x[i+1] (best-so-far curves)
    kBand,     // filled area between y (lower edge) and y_hi (upper edge) over x
    kScatter,  // one circle per point
    kHLine,    // horizontal reference line at y[0] across the whole plot
  };
  Kind kind = Kind::kLine;
  std::string name;              // legend label; "" = not in the legend
  std::string color = "#1f77b4"; // any SVG colour
  std::vector<double> x, y;      // data units
  std::vector<double> y_hi;      // kBand only: upper edge, same size as x
  bool dashed = false;
  double width_px = 2.0;         // stroke width (lines) or circle radius (scatter), px
  double opacity = 1.0;          // 0..1 (bands and clouds look best around 0.2-0.4)
};

struct Plot {
  std::string title;
  std::string x_label;  // with units, e.g. "simulator calls"
  std::string y_label;  // with units, e.g. "best tokens/s per GPU"
  bool log_x = false;
  bool y_from_zero = true;  // include y = 0 in the range
  int width_px = 960, height_px = 560;
  std::vector<PlotSeries> series;
};

// The whole SVG document (starts with "<svg", ends with "</svg>\n").
std::string RenderSvg(const Plot& plot);
// Writes RenderSvg(plot) to `path`; IoError naming the path on failure.
Status WriteSvg(const Plot& plot, const std::string& path);

// --- helpers, exposed for the tests ---
// "Nice" ticks (1, 2 or 5 times a power of ten apart) covering [lo, hi] with about `target`
// intervals; the first tick is <= lo and the last >= hi. lo == hi gives a unit-wide range.
std::vector<double> LinearTicks(double lo, double hi, int target);
// Powers of ten covering [lo, hi] (lo > 0); when that gives fewer than 3 ticks, 1-2-5 steps.
std::vector<double> LogTicks(double lo, double hi);
// Tick label: thousands separators for large values, just enough decimals for `step`.
std::string FormatTick(double v, double step);
// &, <, >, " and ' escaped for SVG text and attributes.
std::string XmlEscape(std::string_view s);

}  // namespace l2s::cli
