#include "benchmarks/charts.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_format.h"

namespace bench {

std::string XmlText(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

const char* SeriesColour(size_t i) {
  static const char* kPalette[] = {
      "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b",
      "#e377c2", "#7f7f7f", "#bcbd22", "#17becf", "#393b79", "#637939",
      "#8c6d31", "#843c39", "#7b4173", "#3182bd", "#e6550d", "#31a354",
      "#756bb1", "#636363", "#a55194", "#6baed6"};
  return kPalette[i % (sizeof kPalette / sizeof kPalette[0])];
}

namespace {

constexpr int kWidth = 980;
constexpr int kLeft = 80, kPlotW = 560;  // plot area
constexpr int kTop = 58, kPlotH = 340;
constexpr int kLegendX = kLeft + kPlotW + 24;
constexpr int kLegendRow = 15;

struct Axis {
  double lo = 0, hi = 1;
  bool log = false;
  double Map(double v) const {  // 0..1
    if (log)
      return (std::log10(v) - std::log10(lo)) /
             (std::log10(hi) - std::log10(lo));
    return (v - lo) / (hi - lo);
  }
  bool Valid(double v) const { return std::isfinite(v) && (!log || v > 0); }
};

std::string Num(double v) {
  if (v == 0) return "0";
  const double a = std::fabs(v);
  if (a >= 1e6) return absl::StrFormat("%gM", v / 1e6);
  if (a >= 1e4) return absl::StrFormat("%gk", v / 1e3);
  if (a >= 1) return absl::StrFormat("%g", std::round(v * 100) / 100);
  return absl::StrFormat("%.2g", v);
}

// Ticks: log = 1, 2, 5 x 10^k inside [lo, hi] (only 1 x 10^k when there are
// many decades); linear = a nice step giving 4..8 ticks.
std::vector<double> Ticks(const Axis& a) {
  std::vector<double> t;
  if (a.log) {
    const int k0 = static_cast<int>(std::floor(std::log10(a.lo)));
    const int k1 = static_cast<int>(std::ceil(std::log10(a.hi)));
    const bool sparse = k1 - k0 > 4;
    for (int k = k0; k <= k1; ++k)
      for (double m : {1.0, 2.0, 5.0}) {
        if (sparse && m != 1.0) continue;
        const double v = m * std::pow(10.0, k);
        if (v >= a.lo * 0.999 && v <= a.hi * 1.001) t.push_back(v);
      }
    return t;
  }
  const double span = a.hi - a.lo;
  double step = std::pow(10.0, std::floor(std::log10(span)));
  if (span / step < 4) step /= 2;
  if (span / step < 4) step /= 2.5;
  if (span / step > 8) step *= 2;
  for (double v = std::ceil(a.lo / step) * step; v <= a.hi + step * 1e-9;
       v += step)
    t.push_back(std::fabs(v) < step * 1e-9 ? 0 : v);
  return t;
}

Axis Fit(std::vector<double> v, bool log, bool from_zero) {
  Axis a;
  a.log = log;
  v.erase(std::remove_if(
              v.begin(), v.end(),
              [&](double x) { return !std::isfinite(x) || (log && x <= 0); }),
          v.end());
  if (v.empty()) return a.log ? Axis{1, 10, true} : a;
  a.lo = *std::min_element(v.begin(), v.end());
  a.hi = *std::max_element(v.begin(), v.end());
  if (log) {
    a.lo = std::pow(10.0, std::floor(std::log10(a.lo)));
    a.hi = std::pow(10.0, std::ceil(std::log10(a.hi) + 1e-9));
    if (a.hi <= a.lo) a.hi = a.lo * 10;
    return a;
  }
  if (from_zero) a.lo = std::min(0.0, a.lo);
  if (a.hi <= a.lo) a.hi = a.lo + 1;
  const Axis probe = a;
  const std::vector<double> t = Ticks(probe);
  if (t.size() >= 2) {
    const double step = t[1] - t[0];
    a.hi = std::ceil(a.hi / step - 1e-9) * step;
    a.lo = std::floor(a.lo / step + 1e-9) * step;
  }
  return a;
}

}  // namespace

SvgBlock DrawLineChart(const LineChart& c) {
  auto xm = [&](double v) { return c.x_map ? c.x_map(v) : v; };
  std::vector<double> xs, ys;
  for (const LineSeries& s : c.series) {
    for (double v : s.x) xs.push_back(xm(v));
    ys.insert(ys.end(), s.y.begin(), s.y.end());
  }
  for (const auto& [v, label] : c.x_ticks) xs.push_back(v);
  Axis ax = Fit(xs, c.x_log, false);
  if (!c.x_ticks.empty() && !c.x_log) {
    ax.lo = c.x_ticks.front().first;
    ax.hi = std::max(ax.hi, c.x_ticks.back().first);
  }
  Axis ay = Fit(ys, c.y_log, c.y_from_zero);
  if (c.y_log && c.y_floor > 0 && ay.lo < c.y_floor) {
    ay.lo = c.y_floor;
    if (ay.hi <= ay.lo) ay.hi = ay.lo * 10;
  }
  const int legend_h = static_cast<int>(c.series.size()) * kLegendRow + 24;
  const int plot_bottom = kTop + std::max(kPlotH, legend_h - 10);
  const int plot_h = plot_bottom - kTop;
  const int height =
      plot_bottom + 52 + 15 * static_cast<int>(c.notes.size()) + 22;
  auto px = [&](double v) { return kLeft + ax.Map(v) * kPlotW; };
  auto py = [&](double v) { return plot_bottom - ay.Map(v) * plot_h; };

  std::string s;
  s += absl::StrFormat(
      "<rect width=\"%d\" height=\"%d\" fill=\"white\"/>\n"
      "<text x=\"12\" y=\"22\" font-size=\"15\" "
      "font-weight=\"bold\">%s</text>\n"
      "<text x=\"12\" y=\"40\" font-size=\"11\" fill=\"#444\">%s</text>\n",
      kWidth, height, XmlText(c.title), XmlText(c.subtitle));
  // Shaded band (oversubscription).
  if (c.shade && c.shade_from < ax.hi) {
    const double x0 = px(std::max(c.shade_from, ax.lo));
    s += absl::StrFormat(
        "<rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\" "
        "fill=\"#f3e6e6\"/>\n<text x=\"%.1f\" y=\"%d\" font-size=\"11\" "
        "fill=\"#a33\">%s</text>\n",
        x0, kTop, kLeft + kPlotW - x0, plot_h, x0 + 6, kTop + 14,
        XmlText(c.shade_label));
  }
  // Grid and ticks.
  for (double v : Ticks(ay)) {
    const double y = py(v);
    s += absl::StrFormat(
        "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#ddd\"/>\n"
        "<text x=\"%d\" y=\"%.1f\" font-size=\"11\" text-anchor=\"end\">%s"
        "</text>\n",
        kLeft, y, kLeft + kPlotW, y, kLeft - 6, y + 4, Num(v));
  }
  std::vector<std::pair<double, std::string>> xt = c.x_ticks;
  if (xt.empty())
    for (double v : Ticks(ax)) xt.emplace_back(v, Num(v));
  for (const auto& [v, label] : xt) {
    if (v < ax.lo - 1e-9 || v > ax.hi + 1e-9) continue;
    const double x = px(v);
    s += absl::StrFormat(
        "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#ddd\"/>\n"
        "<text x=\"%.1f\" y=\"%d\" font-size=\"11\" text-anchor=\"middle\">%s"
        "</text>\n",
        x, kTop, x, plot_bottom, x, plot_bottom + 16, XmlText(label));
  }
  s += absl::StrFormat(
      "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" "
      "stroke=\"#555\"/>\n",
      kLeft, kTop, kPlotW, plot_h);
  s += absl::StrFormat(
      "<text x=\"%d\" y=\"%d\" font-size=\"12\" text-anchor=\"middle\">%s"
      "</text>\n",
      kLeft + kPlotW / 2, plot_bottom + 36, XmlText(c.x_label));
  s += absl::StrFormat(
      "<text transform=\"translate(18,%d) rotate(-90)\" font-size=\"12\" "
      "text-anchor=\"middle\">%s</text>\n",
      kTop + plot_h / 2, XmlText(c.y_label));
  // Lines, clipped to the plot.
  static int clip_id = 0;  // unique within one SVG file of many charts
  ++clip_id;
  s += absl::StrFormat(
      "<clipPath id=\"plot%d\"><rect x=\"%d\" y=\"%d\" width=\"%d\" "
      "height=\"%d\"/></clipPath>\n<g clip-path=\"url(#plot%d)\">\n",
      clip_id, kLeft, kTop - 2, kPlotW + 2, plot_h + 4, clip_id);
  for (const LineSeries& ser : c.series) {
    std::string pts;
    for (size_t i = 0; i < ser.x.size() && i < ser.y.size(); ++i) {
      const double x = xm(ser.x[i]), y = ser.y[i];
      if (!ax.Valid(x) || !ay.Valid(y)) continue;
      absl::StrAppendFormat(&pts, "%.1f,%.1f ", px(x), py(y));
      if (ser.markers)
        absl::StrAppendFormat(
            &s, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2.5\" fill=\"%s\"/>\n",
            px(x), py(y), ser.colour);
    }
    if (pts.empty()) continue;
    s += absl::StrFormat(
        "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"%.1f\"%s "
        "stroke-linejoin=\"round\" points=\"%s\"/>\n",
        ser.colour, ser.width, ser.dashed ? " stroke-dasharray=\"5,3\"" : "",
        pts);
  }
  s += "</g>\n";
  // Legend.
  int ly = kTop + 4;
  for (const LineSeries& ser : c.series) {
    s += absl::StrFormat(
        "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"%s\" "
        "stroke-width=\"%.1f\"%s/>\n<text x=\"%d\" y=\"%d\" "
        "font-size=\"11\">%s</text>\n<text x=\"%d\" y=\"%d\" "
        "font-size=\"11\" fill=\"#555\">%s</text>\n",
        kLegendX, ly, kLegendX + 24, ly, ser.colour, std::max(ser.width, 1.5),
        ser.dashed ? " stroke-dasharray=\"5,3\"" : "", kLegendX + 30, ly + 4,
        XmlText(ser.name), kLegendX + 182, ly + 4, XmlText(ser.note));
    ly += kLegendRow;
  }
  int ny = plot_bottom + 54;
  for (const std::string& n : c.notes) {
    s += absl::StrFormat(
        "<text x=\"12\" y=\"%d\" font-size=\"11\" fill=\"#333\">%s</text>\n",
        ny, XmlText(n));
    ny += 15;
  }
  s += absl::StrFormat(
      "<text x=\"12\" y=\"%d\" fill=\"#666\" font-size=\"10\">%s</text>\n",
      height - 8, XmlText(c.footer));
  return {s, kWidth, height};
}

}  // namespace bench
