// Line charts in SVG for the studies (studies.cc): percentile plots, thread
// scaling curves, memory over a run. Plain SVG 1.1, no script, so the files
// render in a browser, on GitHub and through rsvg-convert.
#ifndef PMR_BENCHMARKS_CHARTS_H_
#define PMR_BENCHMARKS_CHARTS_H_

#include <string>
#include <utility>
#include <vector>

namespace bench {

struct LineSeries {
  std::string name;    // legend text
  std::string note;    // legend text after the name (a figure), may be ""
  std::string colour;  // "#rrggbb"
  bool dashed = false;
  double width = 1.5;  // stroke width
  bool markers = false;
  std::vector<double> x, y;  // same length; non-finite or <= 0 on a log
                             // axis: the point is skipped
};

struct LineChart {
  std::string title, subtitle;  // subtitle: one line under the title
  std::string x_label, y_label;
  bool x_log = false, y_log = false;  // base 10 (ticks 1, 2, 5 x 10^k)
  // Explicit x ticks (value, label); empty: chosen from the data.
  std::vector<std::pair<double, std::string>> x_ticks;
  // Plot x values through this map first (e.g. quantile -> -log10(1 - q));
  // the ticks' values are in the mapped space too.
  double (*x_map)(double) = nullptr;
  bool y_from_zero = false;  // linear y: start at 0
  double y_floor = 0;        // log y: start no lower than this (> 0)
  // A shaded band from this x (mapped) to the right edge, with a label.
  bool shade = false;
  double shade_from = 0;
  std::string shade_label;
  std::vector<LineSeries> series;
  std::vector<std::string> notes;  // lines under the plot
  std::string footer;              // machine, date, mode
};

struct SvgBlock {
  std::string body;  // SVG elements drawn from (0, 0)
  int width = 0, height = 0;
};

SvgBlock DrawLineChart(const LineChart& c);

// A colour per allocator row (stable across charts): index into a palette
// of distinguishable colours.
const char* SeriesColour(size_t i);

// s escaped for XML text and attribute values (& < > "): every SVG the
// report writes (these charts, report_svg.cc's bars) escapes with it.
std::string XmlText(const std::string& s);

}  // namespace bench

#endif  // PMR_BENCHMARKS_CHARTS_H_
