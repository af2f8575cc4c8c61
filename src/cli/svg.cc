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

std::string RenderSvg(const Plot& plot) {
  const double W = std::max(320, plot.width_px), H = std::max(240, plot.height_px);
  // Legend column: wide enough for the longest label (about 0.6 em per character), between
  // kLegendMinWidth and a third of the picture.
  size_t longest = 0;
  for (const PlotSeries& s : plot.series) longest = std::max(longest, s.name.size());
  const double legend_w =
      longest == 0 ? 24.0
                   : std::clamp(50.0 + 0.6 * kFontPx * static_cast<double>(longest), kLegendMinWidth,
                                W / 3);
  const double plot_x0 = kMarginLeft, plot_x1 = W - legend_w;
  const double plot_y0 = kMarginTop, plot_y1 = H - kMarginBottom;

  // Data ranges.
  double xmin = std::numeric_limits<double>::infinity(), xmax = -xmin;
  double ymin = std::numeric_limits<double>::infinity(), ymax = -ymin;
  auto take_x = [&](double x) {
    if (!Finite(x) || (plot.log_x && x <= 0)) return false;
    xmin = std::min(xmin, x);
    xmax = std::max(xmax, x);
    return true;
  };
  auto take_y = [&](double y) {
    if (!Finite(y)) return;
    ymin = std::min(ymin, y);
    ymax = std::max(ymax, y);
  };
  for (const PlotSeries& s : plot.series) {
    if (s.kind == PlotSeries::Kind::kHLine) {
      if (!s.y.empty()) take_y(s.y[0]);
      continue;
    }
    for (size_t i = 0; i < s.x.size() && i < s.y.size(); ++i) {
      if (!take_x(s.x[i])) continue;
      take_y(s.y[i]);
      if (s.kind == PlotSeries::Kind::kBand && i < s.y_hi.size()) take_y(s.y_hi[i]);
    }
  }
  if (!(xmin <= xmax)) {
    xmin = plot.log_x ? 1 : 0;
    xmax = plot.log_x ? 10 : 1;
  }
  if (!(ymin <= ymax)) {
    ymin = 0;
    ymax = 1;
  }
  if (plot.y_from_zero) ymin = std::min(ymin, 0.0);

  std::vector<double> xt = plot.log_x ? LogTicks(xmin, xmax) : LinearTicks(xmin, xmax, 8);
  const std::vector<double> yt = LinearTicks(ymin, ymax, 6);
  Axis ax{xt.front(), xt.back(), plot_x0, plot_x1, plot.log_x};
  if (plot.log_x) {
    // A log axis spans exactly the data (a budget of 4,000 calls should not stretch to 10,000),
    // with the ticks that fall inside; a range inside one tick interval keeps the ticks' span.
    std::vector<double> inside;
    for (double t : xt)
      if (t >= xmin * (1 - 1e-9) && t <= xmax * (1 + 1e-9)) inside.push_back(t);
    if (inside.size() >= 2 && xmax > xmin) {
      xt = inside;
      ax.lo = std::log10(xmin);
      ax.hi = std::log10(xmax);
    } else {
      ax.lo = std::log10(xt.front());
      ax.hi = std::log10(xt.back());
    }
  }
  Axis ay{yt.front(), yt.back(), plot_y1, plot_y0, false};
  if (ax.hi == ax.lo) ax.hi = ax.lo + 1;
  if (ay.hi == ay.lo) ay.hi = ay.lo + 1;

  // The canvas: the requested picture, widened when the longest legend label (capped column)
  // would run past its right edge and heightened when the legend rows would run past its bottom,
  // so that no label is clipped (the plot area keeps its size).
  size_t named = 0;
  for (const PlotSeries& s : plot.series) named += !s.name.empty();
  const double canvas_w = std::ceil(std::max(
      W, plot_x1 + kLegendTextOffsetPx + 0.6 * kFontPx * static_cast<double>(longest) + 8));
  const double canvas_h =
      std::ceil(std::max(H, plot_y0 + 10 + kLegendRowPx * static_cast<double>(named) + 8));
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
  out += fmt::format(
      "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-size=\"{}\" font-weight=\"bold\">{}</text>\n",
      Num((plot_x0 + plot_x1) / 2), Num(kMarginTop - 18), kTitlePx, XmlEscape(plot.title));

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
  const double x_step = xt.size() > 1 ? xt[1] - xt[0] : 1;
  for (double t : xt) {
    out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n",
                       Num(ax.Map(t)), Num(plot_y1 + 18),
                       XmlEscape(FormatTick(t, plot.log_x ? t : x_step)));
  }
  const double y_step = yt.size() > 1 ? yt[1] - yt[0] : 1;
  for (double t : yt) {
    out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\n",
                       Num(plot_x0 - 8), Num(ay.Map(t) + 4.5), XmlEscape(FormatTick(t, y_step)));
  }
  out += "</g>\n";
  // Axis labels.
  out += fmt::format("<text class=\"xlabel\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n",
                     Num((plot_x0 + plot_x1) / 2), Num(H - 18),
                     XmlEscape(plot.x_label + (plot.log_x ? " (log scale)" : "")));
  out += fmt::format(
      "<text class=\"ylabel\" x=\"{0}\" y=\"{1}\" text-anchor=\"middle\" "
      "transform=\"rotate(-90 {0} {1})\">{2}</text>\n",
      Num(22), Num((plot_y0 + plot_y1) / 2), XmlEscape(plot.y_label));

  // Series, clipped to the plot area. Bands first so that lines stay on top.
  out += "<g clip-path=\"url(#plotarea)\">\n";
  auto draw = [&](const PlotSeries& s) {
    using K = PlotSeries::Kind;
    std::vector<std::pair<double, double>> pts;
    const size_t n = std::min(s.x.size(), s.y.size());
    switch (s.kind) {
      case K::kBand: {
        std::vector<std::pair<double, double>> lo, hi;
        for (size_t i = 0; i < n && i < s.y_hi.size(); ++i) {
          if (!ax.Valid(s.x[i]) || !Finite(s.y[i]) || !Finite(s.y_hi[i])) continue;
          lo.emplace_back(ax.Map(s.x[i]), ay.Map(s.y[i]));
          hi.emplace_back(ax.Map(s.x[i]), ay.Map(s.y_hi[i]));
        }
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
          if (ax.Valid(s.x[i]) && Finite(s.y[i])) pts.emplace_back(ax.Map(s.x[i]), ay.Map(s.y[i]));
        out += Polyline(pts, StrokeAttrs(s));
        return;
      case K::kStep: {
        double prev_y = 0;
        bool have = false;
        for (size_t i = 0; i < n; ++i) {
          if (!ax.Valid(s.x[i]) || !Finite(s.y[i])) continue;
          const double px = ax.Map(s.x[i]), py = ay.Map(s.y[i]);
          if (have) pts.emplace_back(px, prev_y);
          pts.emplace_back(px, py);
          prev_y = py;
          have = true;
        }
        out += Polyline(pts, StrokeAttrs(s));
        return;
      }
      case K::kScatter: {
        out += fmt::format("<g fill=\"{}\" fill-opacity=\"{}\" stroke=\"none\">\n",
                           XmlEscape(s.color), Num(s.opacity));
        for (size_t i = 0; i < n; ++i)
          if (ax.Valid(s.x[i]) && Finite(s.y[i]))
            out += fmt::format("<circle cx=\"{}\" cy=\"{}\" r=\"{}\"/>\n", Num(ax.Map(s.x[i])),
                               Num(ay.Map(s.y[i])), Num(s.width_px));
        out += "</g>\n";
        return;
      }
      case K::kHLine: {
        if (s.y.empty() || !Finite(s.y[0])) return;
        const double py = ay.Map(s.y[0]);
        out += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" {}/>\n", Num(plot_x0),
                           Num(py), Num(plot_x1), Num(py), StrokeAttrs(s));
        return;
      }
    }
  };
  for (const PlotSeries& s : plot.series)
    if (s.kind == PlotSeries::Kind::kBand) draw(s);
  for (const PlotSeries& s : plot.series)
    if (s.kind == PlotSeries::Kind::kScatter) draw(s);
  for (const PlotSeries& s : plot.series)
    if (s.kind != PlotSeries::Kind::kBand && s.kind != PlotSeries::Kind::kScatter) draw(s);
  out += "</g>\n";
  // Frame.
  out += fmt::format(
      "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#333333\"/>\n",
      Num(plot_x0), Num(plot_y0), Num(plot_x1 - plot_x0), Num(plot_y1 - plot_y0));

  // Legend.
  out += "<g class=\"legend\">\n";
  double ly = plot_y0 + 10;
  const double lx = plot_x1 + 16;
  for (const PlotSeries& s : plot.series) {
    if (s.name.empty()) continue;
    using K = PlotSeries::Kind;
    if (s.kind == K::kBand) {
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
    out += fmt::format("<text x=\"{}\" y=\"{}\">{}</text>\n", Num(plot_x1 + kLegendTextOffsetPx), Num(ly + 4.5),
                       XmlEscape(s.name));
    ly += kLegendRowPx;
  }
  out += "</g>\n</svg>\n";
  return out;
}

Status WriteSvg(const Plot& plot, const std::string& path) {
  return WriteFileAtomic(path, RenderSvg(plot));
}

}  // namespace l2s::cli
