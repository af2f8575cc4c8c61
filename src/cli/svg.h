// A small SVG plot writer for `l2s compare`, `l2s plan --pareto` and sweeps: line, band, scatter,
// horizontal-reference and shaded x-span series on linear or log-10 axes (x and y each), with
// axis labels, nice ticks, a title and a legend either right of the plot area or boxed inside it
// (in the corner that covers the fewest data points). No dependencies; the output is plain SVG
// 1.1 that rsvg-convert and browsers read.
//
// Coordinates are data units; the writer maps them to pixels. Non-finite points, and points with
// x <= 0 (y <= 0) on a log x (y) axis, are dropped (never drawn at a bogus position).
//
// No text is clipped: the writer estimates each text's extent (TextWidthPx: 0.6 em per
// character, the average advance of DejaVu Sans) and widens or heightens the canvas, never the
// plot area's content, so that every text lies inside the picture.
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
    kXSpan,    // shaded region x[0] <= x <= x[1] over the plot's whole height (-inf/+inf: to the
               // plot's edge), e.g. an SLO's violating side; `note` is written inside it when it fits
  };
  Kind kind = Kind::kLine;
  std::string name;              // legend label; "" = not in the legend
  std::string color = "#1f77b4"; // any SVG colour
  std::vector<double> x, y;      // data units
  std::vector<double> y_hi;      // kBand only: upper edge, same size as x
  bool dashed = false;
  double width_px = 2.0;         // stroke width (lines) or circle radius (scatter), px
  double opacity = 1.0;          // 0..1 (bands and clouds look best around 0.2-0.4)
  std::string note;              // kXSpan only: text at the top of the region ("" = none)
};

struct Plot {
  std::string title;
  std::string x_label;  // with units, e.g. "simulator calls"
  std::string y_label;  // with units, e.g. "best tokens/s per GPU"
  bool log_x = false;
  bool log_y = false;
  bool y_from_zero = true;  // include y = 0 in the range (linear y only)
  // Margin around the data on each axis, as a fraction of its range (of its decades when log),
  // so that the extreme points are not drawn on the frame. 0: the axis spans the nice ticks
  // (linear) or exactly the data (log).
  double pad = 0;
  enum class Legend {
    kRight,   // a column right of the plot area
    kInside,  // a boxed legend inside the plot frame, in the corner covering the fewest points
  };
  Legend legend = Legend::kRight;
  int width_px = 960, height_px = 560;
  std::vector<PlotSeries> series;
};

// Where RenderSvg put things, px (y down), for the tests.
struct SvgBox {
  double x0 = 0, y0 = 0, x1 = 0, y1 = 0;
  bool Inside(const SvgBox& outer) const {
    return x0 >= outer.x0 && y0 >= outer.y0 && x1 <= outer.x1 && y1 <= outer.y1;
  }
};
struct SvgLayout {
  double width = 0, height = 0;  // the canvas (the viewBox)
  SvgBox frame;                  // the plot area
  SvgBox legend;                 // the legend's box (kInside) or column (kRight); all 0: none
  std::string legend_corner;     // kInside: "top-right", "top-left", "bottom-left", "bottom-right"
  std::vector<std::pair<std::string, SvgBox>> texts;  // every text and its estimated extent
  std::vector<double> x_ticks, y_ticks;          // tick values
  std::vector<double> x_tick_px, y_tick_px;      // and their pixel positions
};

// The whole SVG document (starts with "<svg", ends with "</svg>\n"); `layout` (may be null)
// receives where things went.
std::string RenderSvg(const Plot& plot, SvgLayout* layout = nullptr);
// The estimated width of `s` at `font_px`: 0.6 em per character (UTF-8 sequences count once).
double TextWidthPx(std::string_view s, double font_px);
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
