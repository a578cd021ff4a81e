// The SVG bar charts (report.h, WriteSvg and WriteSvgDir).
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "benchmarks/charts.h"
#include "benchmarks/report_common.h"
#include "benchmarks/studies.h"

namespace bench {

namespace {

const char* FamilyColour(Family f) {
  switch (f) {
    case Family::kMalloc:
      return "#8c8c8c";
    case Family::kStd:
      return "#4a78c2";
    case Family::kSeed:
      return "#e08a2c";
    case Family::kPmr:
      return "#2e9d57";
    case Family::kThirdParty:
      return "#8e5bb5";
    case Family::kReference:
      return "#b0b0b0";
  }
  return "#000";
}

// Splits text into lines of at most width characters, at spaces.
std::vector<std::string> Wrap(const std::string& text, size_t width) {
  std::vector<std::string> lines;
  std::string line;
  size_t i = 0;
  while (i < text.size()) {
    size_t j = text.find(' ', i);
    if (j == std::string::npos) j = text.size();
    const std::string word = text.substr(i, j - i);
    if (!line.empty() && line.size() + 1 + word.size() > width) {
      lines.push_back(line);
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
    i = j + 1;
  }
  if (!line.empty() || lines.empty()) lines.push_back(line);
  return lines;
}

// Time charts also show each row's memory (RSS+, log scale) when it differs
// by an order of magnitude or more between rows.
constexpr double kMemorySpread = 10;

SvgBlock ChartFor(const RunInfo& run, size_t w) {
  const WorkloadInfo& wl = Workloads()[w];
  if (wl.study) return StudyChart(run, w);  // line charts: studies.cc
  const auto& all = Allocators();
  struct Bar {
    std::string name, note;
    Family family;
    double med = 0, lo = 0, hi = 0;
    double mem_mib = -1;  // RSS+, time charts only
    bool ok = false;
  };
  std::vector<Bar> bars;
  const double div = wl.memory ? 1024.0 : 1.0;  // D in MiB
  double top = 0, mem_min = 0, mem_max = 0;
  for (size_t a = 0; a < all.size(); ++a) {
    const Cell& c = run.cells[w][a];
    if (c.status == Status::kNotRun || c.status == Status::kNotApplicable)
      continue;
    Bar b;
    b.name = all[a].id;
    b.family = all[a].family;
    if (const Stat* s = Find(c, wl.primary)) {
      b.ok = true;
      b.med = s->median / div;
      b.lo = s->min / div;
      b.hi = s->max / div;
      top = std::max(top, b.hi);
      if (!wl.memory) {
        const double kib = MemoryOf(run, w, a);
        if (kib >= 0) {
          b.mem_mib = kib / 1024.0;
          const double m = std::max(b.mem_mib, 0.1);  // 0.1 MiB: the floor
          mem_min = mem_min == 0 ? m : std::min(mem_min, m);
          mem_max = std::max(mem_max, m);
        }
      }
    } else {
      b.note = StatusName(c.status);
    }
    bars.push_back(b);
  }
  const bool show_memory = mem_min > 0 && mem_max >= kMemorySpread * mem_min;
  const double payload =
      static_cast<double>(run.sizes.a_blocks * kBlock) / (1 << 20);
  if (wl.memory) top = std::max(top, payload);
  if (top <= 0) top = 1;
  const int left = 200, width = 560, row_h = 22;
  const int mem_left = left + width + 90, mem_width = 200;
  std::string desc = WorkloadParams(wl, run.sizes);
  if (wl.container)
    desc += absl::StrFormat(
        ". Rows: glibc_malloc and the drop-ins = %s (std::allocator); std_* = "
        "%s over that "
        "resource; pmr_* = %s over that resource",
        ContainerOf(wl, *FindAllocator("glibc_malloc")),
        ContainerOf(wl, *FindAllocator("std_new_delete")),
        ContainerOf(wl, *FindAllocator("pmr_malloc")));
  const std::vector<std::string> desc_lines = Wrap(desc, 150);
  const int top_px = 64 + 13 * static_cast<int>(desc_lines.size() - 1) + 12 +
                     (show_memory ? 14 : 0);
  const int rows_px = static_cast<int>(bars.size()) * row_h;
  SvgBlock chart;
  chart.width = (show_memory ? mem_left + mem_width + 70 : left + width + 150);
  chart.height = top_px + rows_px + 72;
  std::string s =
      absl::StrFormat("<rect width=\"%d\" height=\"%d\" fill=\"white\"/>\n",
                      chart.width, chart.height);
  s += absl::StrFormat(
      "<text x=\"10\" y=\"20\" font-size=\"15\" font-weight=\"bold\">%s: "
      "%s</text>\n",
      XmlText(wl.id), XmlText(wl.title));
  s += absl::StrFormat(
      "<text x=\"10\" y=\"38\" fill=\"#444\">%s, median of %d %s (whisker: "
      "min-max); %s</text>\n",
      XmlText(wl.unit_label), wl.memory ? run.d_runs : run.rounds * run.passes,
      wl.memory ? "fresh processes" : "rounds",
      wl.memory ? "lower is leaner" : "lower is faster");
  int text_y = 54;
  for (const std::string& line : desc_lines) {
    s += absl::StrFormat(
        "<text x=\"10\" y=\"%d\" fill=\"#666\" font-size=\"10\">%s</text>\n",
        text_y, XmlText(line));
    text_y += 13;
  }
  auto x_of = [&](double v) {
    return left + static_cast<int>(std::lround(v / top * width));
  };
  for (int g = 0; g <= 4; ++g) {  // grid
    const double v = top * g / 4;
    const int x = x_of(v);
    s += absl::StrFormat(
        "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#ddd\"/>\n", x,
        top_px - 4, x, top_px + rows_px);
    s += absl::StrFormat(
        "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" fill=\"#666\" "
        "font-size=\"10\">%s</text>\n",
        x, top_px + rows_px + 12, Num(v));
  }
  // Memory panel: log10 scale from mem_min to mem_max.
  const double decades =
      show_memory ? std::max(1.0, std::log10(mem_max / mem_min)) : 1;
  auto mem_x = [&](double mib) {
    const double v = std::max(mib, mem_min);
    return mem_left +
           static_cast<int>(std::lround(std::log10(v / mem_min) / decades *
                                        (mem_width - 1))) +
           1;
  };
  if (show_memory)
    s += absl::StrFormat(
        "<text x=\"%d\" y=\"%d\" fill=\"#444\">RSS+ MiB (peak resident above "
        "the workload's arrays), log scale</text>\n",
        mem_left, top_px - 10);
  for (size_t i = 0; i < bars.size(); ++i) {
    const Bar& b = bars[i];
    const int y = top_px + static_cast<int>(i) * row_h;
    s += absl::StrFormat(
        "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%s</text>\n", left - 8,
        y + 14, XmlText(b.name));
    if (!b.ok) {
      s += absl::StrFormat("<text x=\"%d\" y=\"%d\" fill=\"#a00\">%s</text>\n",
                           left + 4, y + 14, XmlText(b.note));
      continue;
    }
    s += absl::StrFormat(
        "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" "
        "fill=\"%s\"><title>%s: %s (min %s, max %s)</title>"
        "</rect>\n",
        left, y + 3, std::max(1, x_of(b.med) - left), row_h - 6,
        FamilyColour(b.family), XmlText(b.name), Num(b.med), Num(b.lo),
        Num(b.hi));
    s += absl::StrFormat(
        "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#222\"/>\n",
        x_of(b.lo), y + row_h / 2, x_of(b.hi), y + row_h / 2);
    s += absl::StrFormat("<text x=\"%d\" y=\"%d\">%s</text>\n",
                         std::max(x_of(b.hi), x_of(b.med)) + 6, y + 14,
                         Num(b.med));
    if (show_memory && b.mem_mib >= 0) {
      const int x = mem_x(b.mem_mib);
      s += absl::StrFormat(
          "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\" "
          "fill-opacity=\"0.45\"/>\n<text x=\"%d\" y=\"%d\" "
          "font-size=\"10\">%s</text>\n",
          mem_left, y + 6, std::max(1, x - mem_left), row_h - 12,
          FamilyColour(b.family), x + 4, y + 14, Mib(b.mem_mib * 1024));
    }
  }
  if (wl.memory) {
    const int x = x_of(payload);
    s += absl::StrFormat(
        "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#c00\" "
        "stroke-dasharray=\"4 3\"/>\n"
        "<text x=\"%d\" y=\"%d\" fill=\"#c00\" font-size=\"10\" "
        "text-anchor=\"middle\">payload %s MiB</text>\n",
        x, top_px - 4, x, top_px + rows_px, x, top_px + rows_px + 24,
        Num(payload));
  }
  int lx = 10;
  const int ly = chart.height - 30;
  for (Family f : {Family::kMalloc, Family::kStd, Family::kSeed, Family::kPmr,
                   Family::kThirdParty, Family::kReference}) {
    bool takes_part = false;  // the legend shows the families of the rows
    for (const AllocatorInfo& a : all)
      takes_part = takes_part || (a.family == f && Applicable(wl, a, nullptr));
    if (!takes_part) continue;
    s += absl::StrFormat(
        "<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"12\" fill=\"%s\"/>"
        "<text x=\"%d\" y=\"%d\">%s</text>\n",
        lx, ly - 10, FamilyColour(f), lx + 16, ly, XmlText(FamilyName(f)));
    lx += 130;
  }
  s += absl::StrFormat(
      "<text x=\"10\" y=\"%d\" fill=\"#666\" font-size=\"10\">%s</text>\n",
      chart.height - 10, XmlText(ChartFooter(run)));
  chart.body = std::move(s);
  return chart;
}

std::string SvgOpen(int width, int height) {
  return absl::StrFormat(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
      "viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"12\">\n",
      width, height, width, height);
}

}  // namespace

bool WriteSvg(const RunInfo& run, const std::string& path, std::string* err) {
  std::vector<SvgBlock> charts;
  int width = 0, height = 0;
  const auto& wls = Workloads();
  for (size_t w = 0; w < wls.size(); ++w) {
    if (!run.selected_workload[w]) continue;
    charts.push_back(ChartFor(run, w));
    width = std::max(width, charts.back().width);
    height += charts.back().height;
  }
  std::string svg = SvgOpen(width, height);
  svg += absl::StrFormat("<rect width=\"%d\" height=\"%d\" fill=\"white\"/>\n",
                         width, height);
  int y = 0;
  for (const SvgBlock& c : charts) {
    svg += absl::StrFormat("<g transform=\"translate(0,%d)\">\n%s</g>\n", y,
                           c.body);
    y += c.height;
  }
  svg += "</svg>\n";
  return WriteFile(path, svg, err);
}

bool WriteSvgDir(const RunInfo& run, const std::string& dir, std::string* err) {
  if (mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
    *err = dir + ": " + std::strerror(errno);
    return false;
  }
  std::string index =
      "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>pmr-c "
      "allocator comparison</title></head>"
      "<body style=\"font-family:sans-serif\">\n<h1>pmr-c allocator "
      "comparison</h1>\n<p>" +
      XmlText(run.machine) +
      absl::StrFormat(" &mdash; %s &mdash; mode %s, scale %g</p>\n",
                      XmlText(run.date), XmlText(run.mode), run.scale);
  const auto& wls = Workloads();
  for (size_t w = 0; w < wls.size(); ++w) {
    if (!run.selected_workload[w]) continue;
    const std::string name = std::string(wls[w].id) + ".svg";
    const SvgBlock c = ChartFor(run, w);
    if (!WriteFile(dir + "/" + name,
                   SvgOpen(c.width, c.height) + c.body + "</svg>\n", err))
      return false;
    index += "<p><img src=\"" + name + "\" alt=\"" + XmlText(wls[w].title) +
             "\"></p>\n";
  }
  index += "</body></html>\n";
  return WriteFile(dir + "/index.html", index, err);
}

}  // namespace bench
