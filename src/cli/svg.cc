#include "cli/svg.h"

#include "cli/output.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>

namespace l2s::cli {

namespace {

// Layout of the picture, px.
constexpr double kMarginLeft = 90;    // y tick labels and the rotated y label
constexpr double kMarginTop = 48;     // title
constexpr double kMarginBottom = 64;  // x tick labels and the x label
constexpr double kLegendMinWidth = 150;  // legend column right of the plot
constexpr double kFontPx = 13;
constexpr double kLegendTextOffsetPx = 16 + 36;  // plot edge -> legend sample -> its label
constexpr double kTitlePx = 16;
constexpr double kLegendRowPx = 20;
constexpr double kCharEm = 0.6;         // estimated advance of one character, em
constexpr double kLegendPadPx = 8;      // inside legend: padding in the box
constexpr double kLegendInsetPx = 8;    // inside legend: box to frame

bool Finite(double v) { return std::isfinite(v); }

// Axis mapping data -> px along one dimension.
struct Axis {
  double lo = 0, hi = 1;      // data range (log10 of it when log)
  double px0 = 0, px1 = 1;    // pixel positions of lo and hi
  bool log = false;
  double Map(double v) const {
    const double t = log ? std::log10(v) : v;
    return px0 + (t - lo) / (hi - lo) * (px1 - px0);
  }
  bool Valid(double v) const { return Finite(v) && (!log || v > 0); }
};

std::string Num(double v) { return fmt::format("{:.2f}", v); }

std::string StrokeAttrs(const PlotSeries& s) {
  std::string a = fmt::format(R"(stroke="{}" stroke-width="{}" fill="none")", XmlEscape(s.color),
                              Num(s.width_px));
  if (s.dashed) a += R"( stroke-dasharray="7,5")";
  if (s.opacity < 1) a += fmt::format(R"( stroke-opacity="{}")", Num(s.opacity));
  return a;
}

std::string Polyline(const std::vector<std::pair<double, double>>& pts, const std::string& attrs) {
  if (pts.size() < 2) return "";
  std::string out = "<polyline points=\"";
  for (const auto& [x, y] : pts) out += fmt::format("{},{} ", Num(x), Num(y));
  out.pop_back();
  out += "\" " + attrs + " stroke-linejoin=\"round\"/>\n";
  return out;
}

}  // namespace

std::string XmlEscape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default: out += c;
    }
  }
  return out;
}

std::vector<double> LinearTicks(double lo, double hi, int target) {
  if (!Finite(lo) || !Finite(hi)) return {0, 1};
  if (hi < lo) std::swap(lo, hi);
  if (hi == lo) {
    lo -= 0.5;
    hi += 0.5;
  }
  target = std::max(1, target);
  const double raw = (hi - lo) / target;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = mag;
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    step = m * mag;
    if (step >= raw) break;
  }
  const double first = std::floor(lo / step + 1e-9) * step;
  const double last = std::ceil(hi / step - 1e-9) * step;
  std::vector<double> ticks;
  for (int i = 0; first + i * step <= last + step * 1e-6 && i < 1000; ++i) {
    double t = first + i * step;
    if (std::fabs(t) < step * 1e-9) t = 0;  // no "-0"
    ticks.push_back(t);
  }
  return ticks;
}

std::vector<double> LogTicks(double lo, double hi) {
  if (!(lo > 0) || !Finite(hi)) return {1, 10};
  if (hi < lo) std::swap(lo, hi);
  const int e0 = static_cast<int>(std::floor(std::log10(lo) + 1e-9));
  const int e1 = std::max(e0 + 1, static_cast<int>(std::ceil(std::log10(hi) - 1e-9)));
  std::vector<double> ticks;
  if (e1 - e0 >= 2) {
    for (int e = e0; e <= e1; ++e) ticks.push_back(std::pow(10.0, e));
    return ticks;
  }
  // One decade only: 1-2-5 steps inside it.
  for (int e = e0; e <= e1; ++e)
    for (double m : {1.0, 2.0, 5.0}) {
      const double t = m * std::pow(10.0, e);
      if (t > std::pow(10.0, e1) * 1.000001) break;
      ticks.push_back(t);
    }
  return ticks;
}

std::string FormatTick(double v, double step) {
  if (!Finite(v)) return "?";
  step = std::fabs(step);
  int decimals = 0;
  if (step > 0 && step < 1) decimals = static_cast<int>(std::ceil(-std::log10(step) - 1e-9));
  decimals = std::clamp(decimals, 0, 6);
  if (decimals > 0 || std::fabs(v) < 1000) {
    std::string s = fmt::format("{:.{}f}", v, decimals);
    if (s == "-0" || s.rfind("-0.", 0) == 0) {
      bool zero = s.find_first_not_of("-0.") == std::string::npos;
      if (zero) s.erase(0, 1);
    }
    return s;
  }
  // Integer with thousands separators.
  const long long n = std::llround(std::fabs(v));
  std::string digits = std::to_string(n), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return (v < 0 ? "-" : "") + out;
}

double TextWidthPx(std::string_view s, double font_px) {
  size_t chars = 0;
  for (unsigned char c : s) chars += (c & 0xC0) != 0x80;  // UTF-8: count lead bytes only
  return kCharEm * font_px * static_cast<double>(chars);
}

namespace {

// One axis' ticks and mapped range from the data range [lo, hi] (log: lo > 0).
struct AxisTicks {
  std::vector<double> ticks;
  double lo = 0, hi = 1;  // mapped range (log10 of it when log)
};

AxisTicks MakeAxis(double lo, double hi, bool log, double pad, int target) {
  AxisTicks a;
  if (log) {
    if (pad > 0) {
      const double decades = std::max(std::log10(hi / lo), 0.3);
      lo /= std::pow(10.0, pad * decades);
      hi *= std::pow(10.0, pad * decades);
    }
    a.ticks = LogTicks(lo, hi);
    // A log axis spans exactly the (padded) data (a budget of 4,000 calls should not stretch to
    // 10,000), with the ticks that fall inside; a range inside one tick interval keeps the ticks'
    // span.
    auto in_range = [&](double t) { return t >= lo * (1 - 1e-9) && t <= hi * (1 + 1e-9); };
    std::vector<double> inside;
    for (double t : a.ticks)
      if (in_range(t)) inside.push_back(t);
    if (inside.size() < 3) {
      // Fewer than three powers of ten inside: label 1-2-5 steps inside the range instead.
      std::vector<double> fine;
      for (int e = static_cast<int>(std::floor(std::log10(lo))) - 1;
           e <= static_cast<int>(std::ceil(std::log10(hi))); ++e)
        for (double m : {1.0, 2.0, 5.0}) {
          const double t = m * std::pow(10.0, e);
          if (in_range(t)) fine.push_back(t);
        }
      if (fine.size() >= 2 && fine.size() <= 12) inside = fine;
    }
    if (inside.size() < 4) {
      // Still fewer than four (less than a decade): every 1..9 step inside, when not crowded.
      std::vector<double> fine;
      for (int e = static_cast<int>(std::floor(std::log10(lo))) - 1;
           e <= static_cast<int>(std::ceil(std::log10(hi))); ++e)
        for (int m = 1; m <= 9; ++m) {
          const double t = m * std::pow(10.0, e);
          if (in_range(t)) fine.push_back(t);
        }
      if (fine.size() > inside.size() && fine.size() <= 9) inside = fine;
    }
    if (inside.size() >= 2 && hi > lo) {
      a.ticks = inside;
      a.lo = std::log10(lo);
      a.hi = std::log10(hi);
    } else {
      a.lo = std::log10(a.ticks.front());
      a.hi = std::log10(a.ticks.back());
    }
  } else {
    if (pad > 0 && hi > lo) {
      const double d = pad * (hi - lo);
      // Data that is not negative keeps an axis that is not: the margin below stops at 0.
      lo = lo >= 0 ? std::max(0.0, lo - d) : lo - d;
      hi += d;
    }
    a.ticks = LinearTicks(lo, hi, target);
    a.lo = a.ticks.front();
    a.hi = a.ticks.back();
  }
  if (a.hi == a.lo) a.hi = a.lo + 1;
  return a;
}

}  // namespace

std::string RenderSvg(const Plot& plot, SvgLayout* layout) {
  using K = PlotSeries::Kind;
  const double W = std::max(320, plot.width_px), H = std::max(240, plot.height_px);
  const bool inside = plot.legend == Plot::Legend::kInside;
  // Legend entries and the longest label.
  size_t longest = 0, named = 0;
  double longest_w = 0;
  for (const PlotSeries& s : plot.series) {
    longest = std::max(longest, s.name.size());
    longest_w = std::max(longest_w, TextWidthPx(s.name, kFontPx));
    named += !s.name.empty();
  }

  // Data ranges.
  double xmin = std::numeric_limits<double>::infinity(), xmax = -xmin;
  double ymin = std::numeric_limits<double>::infinity(), ymax = -ymin;
  auto valid_x = [&](double x) { return Finite(x) && (!plot.log_x || x > 0); };
  auto valid_y = [&](double y) { return Finite(y) && (!plot.log_y || y > 0); };
  auto take_x = [&](double x) {
    if (!valid_x(x)) return false;
    xmin = std::min(xmin, x);
    xmax = std::max(xmax, x);
    return true;
  };
  auto take_y = [&](double y) {
    if (!valid_y(y)) return;
    ymin = std::min(ymin, y);
    ymax = std::max(ymax, y);
  };
  for (const PlotSeries& s : plot.series) {
    if (s.kind == K::kHLine) {
      if (!s.y.empty()) take_y(s.y[0]);
      continue;
    }
    if (s.kind == K::kXSpan) {  // its finite edges stay in view (where the SLO begins)
      for (double x : s.x) take_x(x);
      continue;
    }
    for (size_t i = 0; i < s.x.size() && i < s.y.size(); ++i) {
      if (!take_x(s.x[i])) continue;
      take_y(s.y[i]);
      if (s.kind == K::kBand && i < s.y_hi.size()) take_y(s.y_hi[i]);
    }
  }
  if (!(xmin <= xmax)) {
    xmin = plot.log_x ? 1 : 0;
    xmax = plot.log_x ? 10 : 1;
  }
  if (!(ymin <= ymax)) {
    ymin = plot.log_y ? 1 : 0;
    ymax = plot.log_y ? 10 : 1;
  }
  if (plot.y_from_zero && !plot.log_y) ymin = std::min(ymin, 0.0);

  const AxisTicks xa = MakeAxis(xmin, xmax, plot.log_x, plot.pad, 8);
  const AxisTicks ya = MakeAxis(ymin, ymax, plot.log_y, plot.pad, 6);
  const std::vector<double>& xt = xa.ticks;
  const std::vector<double>& yt = ya.ticks;
  const double x_step = xt.size() > 1 ? xt[1] - xt[0] : 1;
  const double y_step = yt.size() > 1 ? yt[1] - yt[0] : 1;
  auto x_tick_text = [&](double t) { return FormatTick(t, plot.log_x ? t : x_step); };
  auto y_tick_text = [&](double t) { return FormatTick(t, plot.log_y ? t : y_step); };

  // The plot area. Left: room for the widest y tick label right of the rotated y label (which
  // ends at x = 26).
  double widest_ytick = 0;
  for (double t : yt) widest_ytick = std::max(widest_ytick, TextWidthPx(y_tick_text(t), kFontPx));
  const double plot_x0 = std::max(kMarginLeft, 38 + widest_ytick);
  double plot_x1 = 0, right_margin = 0;
  double plot_y0 = kMarginTop, plot_y1 = H - kMarginBottom;
  // Legend box (inside): sample, gap, label, padding on both sides.
  const double box_w = kLegendPadPx + 28 + 8 + longest_w + kLegendPadPx;
  const double box_h = 2 * kLegendPadPx + kLegendRowPx * static_cast<double>(named) - 4;
  if (inside) {
    // Right: room for half the last x tick label.
    right_margin = std::max(24.0, TextWidthPx(x_tick_text(xt.back()), kFontPx) / 2 + 8);
    plot_x1 = W - right_margin;
    if (named > 0) {
      plot_x1 = std::max(plot_x1, plot_x0 + box_w + 2 * kLegendInsetPx);
      plot_y1 = std::max(plot_y1, plot_y0 + box_h + 2 * kLegendInsetPx);
    }
  } else {
    // Legend column: wide enough for the longest label (about 0.6 em per character), between
    // kLegendMinWidth and a third of the picture.
    const double legend_w =
        longest == 0 ? 24.0
                     : std::clamp(50.0 + kCharEm * kFontPx * static_cast<double>(longest),
                                  kLegendMinWidth, W / 3);
    plot_x1 = W - legend_w;
  }
  const Axis ax{xa.lo, xa.hi, plot_x0, plot_x1, plot.log_x};
  const Axis ay{ya.lo, ya.hi, plot_y1, plot_y0, plot.log_y};
  auto ok_x = [&](double x) { return valid_x(x); };
  auto ok_y = [&](double y) { return valid_y(y); };

  // The canvas: the requested picture, widened (and heightened) so that no text is clipped: the
  // legend column's labels, the legend box, the title and the x label.
  const std::string x_label = plot.x_label + (plot.log_x ? " (log scale)" : "");
  const std::string y_label = plot.y_label + (plot.log_y ? " (log scale)" : "");
  double canvas_w = inside ? std::max(W, plot_x1 + right_margin)
                           : std::max(W, plot_x1 + kLegendTextOffsetPx + longest_w + 8);
  double canvas_h = inside ? std::max(H, plot_y1 + kMarginBottom)
                           : std::max(H, plot_y0 + 10 + kLegendRowPx * static_cast<double>(named) + 8);
  // A centred text over the plot area: moved right when it would start left of the picture, and
  // the canvas widened when it would end past it.
  auto centred = [&](double w) {
    const double cx = std::max((plot_x0 + plot_x1) / 2, w / 2 + 4);
    canvas_w = std::max(canvas_w, cx + w / 2 + 4);
    return cx;
  };
  const double title_x = centred(TextWidthPx(plot.title, kTitlePx));
  const double xlabel_x = centred(TextWidthPx(x_label, kFontPx));
  const double ylabel_w = TextWidthPx(y_label, kFontPx);
  canvas_h = std::max(canvas_h, ylabel_w + 8);
  const double ylabel_y = std::clamp((plot_y0 + plot_y1) / 2, ylabel_w / 2 + 4, canvas_h - ylabel_w / 2 - 4);
  canvas_w = std::ceil(canvas_w);
  canvas_h = std::ceil(canvas_h);

  SvgLayout lay;
  lay.width = canvas_w;
  lay.height = canvas_h;
  lay.frame = {plot_x0, plot_y0, plot_x1, plot_y1};
  // A text element, its estimated extent recorded (baseline y; 0.8 em above, 0.25 em below).
  auto text = [&](double x, double y, const char* anchor, const std::string& s, double font,
                  const std::string& attrs) {
    const double w = TextWidthPx(s, font);
    const double x0 = std::string_view(anchor) == "end"      ? x - w
                      : std::string_view(anchor) == "middle" ? x - w / 2
                                                             : x;
    lay.texts.push_back({s, {x0, y - 0.8 * font, x0 + w, y + 0.25 * font}});
    return fmt::format("<text x=\"{}\" y=\"{}\"{}{}>{}</text>\n", Num(x), Num(y),
                       std::string_view(anchor) == "start"
                           ? std::string()
                           : fmt::format(" text-anchor=\"{}\"", anchor),
                       attrs, XmlEscape(s));
  };

  std::string out;
  out += fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"{0}\" height=\"{1}\" "
      "viewBox=\"0 0 {0} {1}\" font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\" "
      "font-size=\"{2}\">\n",
      canvas_w, canvas_h, kFontPx);
  out += fmt::format("<rect x=\"0\" y=\"0\" width=\"{}\" height=\"{}\" fill=\"white\"/>\n",
                     canvas_w, canvas_h);
  out += "<defs><clipPath id=\"plotarea\">";
  out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"/>", Num(plot_x0),
                     Num(plot_y0), Num(plot_x1 - plot_x0), Num(plot_y1 - plot_y0));
  out += "</clipPath></defs>\n";
  // Title.
  out += text(title_x, kMarginTop - 18, "middle", plot.title, kTitlePx,
              fmt::format(" font-size=\"{}\" font-weight=\"bold\"", kTitlePx));

  // Shaded x-spans (under everything else), with their notes at the bottom of the region.
  struct Note {
    std::string text;
    double x0;  // the region's left edge, px
  };
  std::vector<Note> notes;  // written after the legend, where they do not meet it
  std::string spans;
  for (const PlotSeries& s : plot.series) {
    if (s.kind != K::kXSpan || s.x.size() < 2) continue;
    const double a = s.x[0], b = s.x[1];
    const double x0 = a == -std::numeric_limits<double>::infinity() ? plot_x0
                      : ok_x(a)                                     ? ax.Map(a)
                                                                    : plot_x0;
    const double x1 = b == std::numeric_limits<double>::infinity() ? plot_x1
                      : ok_x(b)                                    ? ax.Map(b)
                                                                   : plot_x0;
    const double l = std::clamp(std::min(x0, x1), plot_x0, plot_x1);
    const double r = std::clamp(std::max(x0, x1), plot_x0, plot_x1);
    if (r - l < 0.5) continue;
    spans += fmt::format(
        "<rect class=\"span\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\" "
        "fill-opacity=\"{}\"/>\n",
        Num(l), Num(plot_y0), Num(r - l), Num(plot_y1 - plot_y0), XmlEscape(s.color),
        Num(s.opacity));
    if (!s.note.empty() && TextWidthPx(s.note, kFontPx) + 12 <= r - l)
      notes.push_back({s.note, l});
  }
  out += spans;

  // Grid and tick labels.
  out += "<g class=\"grid\" stroke=\"#dddddd\" stroke-width=\"1\">\n";
  for (double t : xt) {
    const double px = ax.Map(t);
    out += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\"/>\n", Num(px),
                       Num(plot_y0), Num(plot_y1));
  }
  for (double t : yt) {
    const double py = ay.Map(t);
    out += fmt::format("<line x1=\"{1}\" y1=\"{0}\" x2=\"{2}\" y2=\"{0}\"/>\n", Num(py),
                       Num(plot_x0), Num(plot_x1));
  }
  out += "</g>\n<g class=\"ticks\" fill=\"#333333\">\n";
  for (double t : xt) {
    out += text(ax.Map(t), plot_y1 + 18, "middle", x_tick_text(t), kFontPx, "");
    lay.x_ticks.push_back(t);
    lay.x_tick_px.push_back(ax.Map(t));
  }
  for (double t : yt) {
    out += text(plot_x0 - 8, ay.Map(t) + 4.5, "end", y_tick_text(t), kFontPx, "");
    lay.y_ticks.push_back(t);
    lay.y_tick_px.push_back(ay.Map(t));
  }
  out += "</g>\n";
  // Axis labels (the y label rotated: its extent is vertical, centred on ylabel_y).
  out += text(xlabel_x, plot_y1 + 46, "middle", x_label, kFontPx, " class=\"xlabel\"");
  out += fmt::format(
      "<text class=\"ylabel\" x=\"{0}\" y=\"{1}\" text-anchor=\"middle\" "
      "transform=\"rotate(-90 {0} {1})\">{2}</text>\n",
      Num(22), Num(ylabel_y), XmlEscape(y_label));
  lay.texts.push_back({y_label, {22 - 0.8 * kFontPx, ylabel_y - ylabel_w / 2,
                                 22 + 0.25 * kFontPx, ylabel_y + ylabel_w / 2}});

  // Series, clipped to the plot area. Bands first so that lines stay on top.
  std::vector<std::pair<double, double>> drawn;  // every data vertex, px (the legend avoids them)
  // A line's vertices and points every 6 px along its segments (a line crossing a corner counts
  // though it has no vertex there).
  auto sample = [&](const std::vector<std::pair<double, double>>& pts) {
    for (size_t i = 0; i < pts.size(); ++i) {
      drawn.push_back(pts[i]);
      if (i + 1 == pts.size()) break;
      const double dx = pts[i + 1].first - pts[i].first, dy = pts[i + 1].second - pts[i].second;
      const int n = static_cast<int>(std::min(1000.0, std::hypot(dx, dy) / 6));
      for (int k = 1; k < n; ++k)
        drawn.emplace_back(pts[i].first + dx * k / n, pts[i].second + dy * k / n);
    }
  };
  out += "<g clip-path=\"url(#plotarea)\">\n";
  auto draw = [&](const PlotSeries& s) {
    std::vector<std::pair<double, double>> pts;
    const size_t n = std::min(s.x.size(), s.y.size());
    switch (s.kind) {
      case K::kBand: {
        std::vector<std::pair<double, double>> lo, hi;
        for (size_t i = 0; i < n && i < s.y_hi.size(); ++i) {
          if (!ok_x(s.x[i]) || !ok_y(s.y[i]) || !ok_y(s.y_hi[i])) continue;
          lo.emplace_back(ax.Map(s.x[i]), ay.Map(s.y[i]));
          hi.emplace_back(ax.Map(s.x[i]), ay.Map(s.y_hi[i]));
        }
        drawn.insert(drawn.end(), lo.begin(), lo.end());
        drawn.insert(drawn.end(), hi.begin(), hi.end());
        if (lo.size() < 2) return;
        std::string poly = "<polygon points=\"";
        for (const auto& [x, y] : hi) poly += fmt::format("{},{} ", Num(x), Num(y));
        for (auto it = lo.rbegin(); it != lo.rend(); ++it)
          poly += fmt::format("{},{} ", Num(it->first), Num(it->second));
        poly.pop_back();
        // A thin edge in the series colour keeps overlapping bands apart.
        out += poly + fmt::format(
                          "\" fill=\"{0}\" fill-opacity=\"{1}\" stroke=\"{0}\" "
                          "stroke-opacity=\"{2}\" stroke-width=\"0.8\"/>\n",
                          XmlEscape(s.color), Num(s.opacity), Num(std::min(1.0, s.opacity * 2.5)));
        return;
      }
      case K::kLine:
        for (size_t i = 0; i < n; ++i)
          if (ok_x(s.x[i]) && ok_y(s.y[i])) pts.emplace_back(ax.Map(s.x[i]), ay.Map(s.y[i]));
        sample(pts);
        out += Polyline(pts, StrokeAttrs(s));
        return;
      case K::kStep: {
        double prev_y = 0;
        bool have = false;
        for (size_t i = 0; i < n; ++i) {
          if (!ok_x(s.x[i]) || !ok_y(s.y[i])) continue;
          const double px = ax.Map(s.x[i]), py = ay.Map(s.y[i]);
          if (have) pts.emplace_back(px, prev_y);
          pts.emplace_back(px, py);
          prev_y = py;
          have = true;
        }
        sample(pts);
        out += Polyline(pts, StrokeAttrs(s));
        return;
      }
      case K::kScatter: {
        out += fmt::format("<g fill=\"{}\" fill-opacity=\"{}\" stroke=\"none\">\n",
                           XmlEscape(s.color), Num(s.opacity));
        for (size_t i = 0; i < n; ++i)
          if (ok_x(s.x[i]) && ok_y(s.y[i])) {
            drawn.emplace_back(ax.Map(s.x[i]), ay.Map(s.y[i]));
            out += fmt::format("<circle cx=\"{}\" cy=\"{}\" r=\"{}\"/>\n", Num(ax.Map(s.x[i])),
                               Num(ay.Map(s.y[i])), Num(s.width_px));
          }
        out += "</g>\n";
        return;
      }
      case K::kHLine: {
        if (s.y.empty() || !ok_y(s.y[0])) return;
        const double py = ay.Map(s.y[0]);
        out += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" {}/>\n", Num(plot_x0),
                           Num(py), Num(plot_x1), Num(py), StrokeAttrs(s));
        return;
      }
      case K::kXSpan:
        return;  // drawn above, under the grid
    }
  };
  for (const PlotSeries& s : plot.series)
    if (s.kind == K::kBand) draw(s);
  for (const PlotSeries& s : plot.series)
    if (s.kind == K::kScatter) draw(s);
  for (const PlotSeries& s : plot.series)
    if (s.kind != K::kBand && s.kind != K::kScatter) draw(s);
  out += "</g>\n";
  // Frame.
  out += fmt::format(
      "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#333333\"/>\n",
      Num(plot_x0), Num(plot_y0), Num(plot_x1 - plot_x0), Num(plot_y1 - plot_y0));

  // Legend: a column right of the plot, or a box inside the frame in the corner that covers the
  // fewest drawn points - vertices, dots and samples along lines (ties: top-right, top-left,
  // bottom-left, bottom-right).
  double lx = plot_x1 + 16, ly = plot_y0 + 10, text_x = plot_x1 + kLegendTextOffsetPx;
  out += "<g class=\"legend\">\n";
  if (named > 0) {
    if (inside) {
      struct Corner {
        const char* name;
        double x0, y0;
      };
      const double l = plot_x0 + kLegendInsetPx, r = plot_x1 - kLegendInsetPx - box_w;
      const double t = plot_y0 + kLegendInsetPx, b = plot_y1 - kLegendInsetPx - box_h;
      const Corner corners[] = {
          {"top-right", r, t}, {"top-left", l, t}, {"bottom-left", l, b}, {"bottom-right", r, b}};
      size_t best = 0, best_count = std::numeric_limits<size_t>::max();
      for (size_t c = 0; c < std::size(corners); ++c) {
        const SvgBox box{corners[c].x0 - 4, corners[c].y0 - 4, corners[c].x0 + box_w + 4,
                         corners[c].y0 + box_h + 4};
        size_t count = 0;
        for (const auto& [x, y] : drawn)
          count += x >= box.x0 && x <= box.x1 && y >= box.y0 && y <= box.y1;
        if (count < best_count) {
          best = c;
          best_count = count;
        }
      }
      lay.legend = {corners[best].x0, corners[best].y0, corners[best].x0 + box_w,
                    corners[best].y0 + box_h};
      lay.legend_corner = corners[best].name;
      out += fmt::format(
          "<rect class=\"legend-box\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"white\" "
          "fill-opacity=\"0.9\" stroke=\"#999999\"/>\n",
          Num(lay.legend.x0), Num(lay.legend.y0), Num(box_w), Num(box_h));
      lx = lay.legend.x0 + kLegendPadPx;
      ly = lay.legend.y0 + kLegendPadPx + kLegendRowPx / 2 - 2;
      text_x = lx + 28 + 8;
    } else {
      lay.legend = {plot_x1, plot_y0, canvas_w, plot_y0 + 10 + kLegendRowPx * named};
    }
  }
  for (const PlotSeries& s : plot.series) {
    if (s.name.empty()) continue;
    if (s.kind == K::kBand || s.kind == K::kXSpan) {
      out += fmt::format(
          "<rect x=\"{}\" y=\"{}\" width=\"28\" height=\"12\" fill=\"{}\" fill-opacity=\"{}\"/>\n",
          Num(lx), Num(ly - 6), XmlEscape(s.color), Num(std::max(s.opacity, 0.25)));
    } else if (s.kind == K::kScatter) {
      out += fmt::format("<circle cx=\"{}\" cy=\"{}\" r=\"{}\" fill=\"{}\" fill-opacity=\"{}\"/>\n",
                         Num(lx + 14), Num(ly), Num(std::max(3.0, s.width_px)),
                         XmlEscape(s.color), Num(std::max(s.opacity, 0.6)));
    } else {
      PlotSeries legend_line = s;
      legend_line.opacity = 1;
      out += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" {}/>\n", Num(lx), Num(ly),
                         Num(lx + 28), Num(ly), StrokeAttrs(legend_line));
    }
    out += text(text_x, ly + 4.5, "start", s.name, kFontPx, "");
    ly += kLegendRowPx;
  }
  out += "</g>\n";
  // The spans' notes: at the bottom of their region, else at its top, else (both meet the
  // legend box) left out - the legend names the region.
  for (const Note& n : notes) {
    const double w = TextWidthPx(n.text, kFontPx);
    for (double y : {plot_y1 - 8, plot_y0 + 8 + 0.8 * kFontPx}) {
      const SvgBox b{n.x0 + 6, y - 0.8 * kFontPx, n.x0 + 6 + w, y + 0.25 * kFontPx};
      const SvgBox& g = lay.legend;
      if (inside && named > 0 && b.x0 < g.x1 && b.x1 > g.x0 && b.y0 < g.y1 && b.y1 > g.y0)
        continue;
      out += text(n.x0 + 6, y, "start", n.text, kFontPx, " class=\"note\" fill=\"#555555\"");
      break;
    }
  }
  out += "</svg>\n";
  if (layout != nullptr) *layout = std::move(lay);
  return out;
}

Status WriteSvg(const Plot& plot, const std::string& path) {
  return WriteFileAtomic(path, RenderSvg(plot));
}

}  // namespace l2s::cli
