// Tables, charts and JSON of the studies (studies.h).
#include "benchmarks/studies.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "absl/strings/str_format.h"
#include "benchmarks/json.h"
#include "benchmarks/latency.h"
#include "benchmarks/report_common.h"

namespace bench {

namespace {

bool Is(const WorkloadInfo& w, const char* kind) {
  return w.study != nullptr && std::strcmp(w.study, kind) == 0;
}

int Cores() { return static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN)); }

double Med(const Cell& c, const char* metric) {
  const Stat* s = Find(c, metric);
  return s ? s->median : NAN;
}

// The median over processes of a per-process array of k values.
std::vector<double> MedianCurve(const Cell& c, const char* metric, size_t k) {
  const Stat* s = Find(c, metric);
  std::vector<double> out;
  if (s == nullptr || k == 0 || s->values.size() % k != 0) return out;
  const size_t procs = s->values.size() / k;
  for (size_t i = 0; i < k; ++i) {
    std::vector<double> v;
    for (size_t p = 0; p < procs; ++p) v.push_back(s->values[p * k + i]);
    std::sort(v.begin(), v.end());
    out.push_back(v.size() % 2 ? v[v.size() / 2]
                               : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2);
  }
  return out;
}

// The first process's series of a fragmentation run.
std::vector<double> FirstSeries(const Cell& c, const char* metric) {
  const Stat* n = Find(c, "frag_points");
  const Stat* s = Find(c, metric);
  if (n == nullptr || s == nullptr) return {};
  const size_t k =
      std::min(s->values.size(), static_cast<size_t>(n->values.front()));
  return std::vector<double>(s->values.begin(), s->values.begin() + k);
}

// v with `decimals` digits after the point, "-" when it is not finite.
std::string Fmt(double v, int decimals = 0) {
  if (!std::isfinite(v)) return "-";
  return absl::StrFormat("%.*f", decimals, v);
}

// theirs / mine as "1.23x", "-" when either is missing.
std::string Vs(double theirs, double mine) {
  if (!(theirs > 0) || !(mine > 0)) return "-";
  return absl::StrFormat("%.2fx", theirs / mine);
}

std::string NotOk(const Cell& c) {
  return std::string(StatusName(c.status)) +
         (c.detail.empty() ? "" : ": " + c.detail.substr(0, 60));
}

void PrintLatency(const RunInfo& run, size_t w, FILE* out) {
  const auto& all = Allocators();
  const auto& row = run.cells[w];
  const size_t mi = AllocIndex("mimalloc");
  double timer = NAN, resolution = NAN;
  for (const Cell& c : row) {
    if (std::isnan(timer)) timer = Med(c, "timer_cost_ns");
    if (std::isnan(resolution)) resolution = Med(c, "timer_resolution_ns");
  }
  absl::FPrintF(out,
                "   percentiles in ns of one process's samples (its %d timed "
                "rounds pooled), median over %d process(es);\n   timer rdtsc "
                "(x86) / clock_gettime, resolution %s ns, its own cost (%s "
                "ns) subtracted\n",
                run.rounds, run.passes, Fmt(resolution, 1), Fmt(timer, 1));
  absl::FPrintF(out, "   %-22s %-8s %8s %8s %8s %8s %9s %10s %12s %8s\n",
                "allocator", "call", "P50", "P90", "P99", "P99.9", "max",
                "P99 vs mi", "P99.9 vs mi", "samples");
  const double mi99 = mi < all.size() ? Med(row[mi], "p99_ns") : NAN;
  const double mi999 = mi < all.size() ? Med(row[mi], "p999_ns") : NAN;
  for (size_t a = 0; a < all.size(); ++a) {
    const Cell& c = row[a];
    if (c.status == Status::kNotRun) continue;
    const std::string name = std::string(all[a].id) + (c.reference ? "*" : "");
    if (Find(c, "p99_ns") == nullptr) {
      absl::FPrintF(out, "   %-22s %-8s -- %s\n", name, all[a].iface, NotOk(c));
      continue;
    }
    absl::FPrintF(out, "   %-22s %-8s %8s %8s %8s %8s %9s %10s %12s %8s\n",
                  name, all[a].iface, Fmt(Med(c, "p50_ns")),
                  Fmt(Med(c, "p90_ns")), Fmt(Med(c, "p99_ns")),
                  Fmt(Med(c, "p999_ns")), Fmt(Med(c, "max_ns")),
                  Vs(mi99, Med(c, "p99_ns")), Vs(mi999, Med(c, "p999_ns")),
                  Fmt(Med(c, "lat_samples")));
  }
  absl::FPrintF(out,
                "   vs mi = mimalloc's percentile / this one (>1: a shorter "
                "tail than mimalloc's)\n");
}

void PrintPaired(const RunInfo& run, size_t w, FILE* out) {
  const auto& all = Allocators();
  const auto& row = run.cells[w];
  const size_t sp = AllocIndex("pmr_sync_pool");
  absl::FPrintF(out,
                "   ratio = the row's time / mimalloc's, both in one process "
                "(mimalloc its malloc), in pairs of rounds (row first, then "
                "mimalloc first; geometric mean);\n   median of %d pairs (%d "
                "process(es) x %d); spread = min-max of the pairs' ratios; "
                "<1: faster than mimalloc\n",
                kPairedRounds * run.rounds * run.passes, run.passes,
                kPairedRounds * run.rounds);
  const bool phases = Workloads()[w].metrics.size() > 3;
  absl::FPrintF(out, "   %-22s %-8s %9s %12s %8s %16s %14s%s\n", "allocator",
                "call", "row ns", "mimalloc ns", "ratio", "spread (ratio)",
                "vs sync_pool", phases ? "   alloc ratio  free ratio" : "");
  const double sync = sp < all.size() ? Med(row[sp], "ratio") : NAN;
  for (size_t a = 0; a < all.size(); ++a) {
    const Cell& c = row[a];
    if (c.status == Status::kNotRun || c.status == Status::kNotApplicable)
      continue;
    const std::string name = std::string(all[a].id) + (c.reference ? "*" : "");
    const Stat* r = Find(c, "ratio");
    if (r == nullptr) {
      absl::FPrintF(out, "   %-22s %-8s -- %s\n", name, all[a].iface, NotOk(c));
      continue;
    }
    absl::FPrintF(
        out, "   %-22s %-8s %9s %12s %8s %16s %14s%s\n", name, all[a].iface,
        Fmt(Med(c, "row_ns"), 1), Fmt(Med(c, "mimalloc_ns"), 1),
        Fmt(r->median, 3), "[" + Fmt(r->min, 2) + ", " + Fmt(r->max, 2) + "]",
        a == sp ? std::string("-") : Fmt(r->median / sync, 3),
        phases ? absl::StrFormat("   %11s %11s", Fmt(Med(c, "alloc_ratio"), 3),
                                 Fmt(Med(c, "free_ratio"), 3))
               : std::string());
  }
  absl::FPrintF(out,
                "   vs sync_pool = this ratio / pmr_sync_pool's (the same "
                "engine: how far apart the two resources are)%s\n",
                phases ? "; alloc, free ratio: each phase's own, median of "
                         "the pairs"
                       : "");
}

void PrintScaling(const RunInfo& run, size_t w, FILE* out) {
  const WorkloadInfo& wl = Workloads()[w];
  const auto& all = Allocators();
  const bool f = std::strcmp(wl.study_of, "F") == 0;
  absl::FPrintF(
      out,
      "   million blocks per second (all threads, wall time), median "
      "of %d rounds;\n   %d cores online: past %d threads the machine is "
      "OVERSUBSCRIBED (threads share cores)\n",
      run.rounds * run.passes, Cores(), Cores());
  std::string head = absl::StrFormat("   %-22s %-8s %-10s", "allocator", "call",
                                     f ? "" : "instances");
  for (const MetricInfo& m : wl.metrics)
    head += absl::StrFormat(
        " %9s", f ? absl::StrFormat("%d thr", 2 * std::atoi(m.id + 6))
                  : absl::StrFormat("%s thr", m.id + 6));
  head += absl::StrFormat(" %8s", f ? "4t/2t" : "2t/1t");
  absl::FPrintF(out, "%s\n", head);
  for (size_t a = 0; a < all.size(); ++a) {
    const Cell& c = run.cells[w][a];
    if (c.status == Status::kNotRun) continue;
    const std::string name = std::string(all[a].id) + (c.reference ? "*" : "");
    if (c.status != Status::kOk) {
      absl::FPrintF(out, "   %-22s %-8s -- %s\n", name, all[a].iface, NotOk(c));
      continue;
    }
    std::string line = absl::StrFormat("   %-22s %-8s %-10s", name,
                                       all[a].iface, Sharing(wl, all[a]));
    for (const MetricInfo& m : wl.metrics)
      line += absl::StrFormat(" %9s", Fmt(Med(c, m.id), 1));
    const double one = Med(c, wl.metrics[0].id), two = Med(c, wl.metrics[1].id);
    line += absl::StrFormat(" %8s", Vs(two, one));
    absl::FPrintF(out, "%s\n", line);
  }
}

void PrintFragmentation(const RunInfo& run, size_t w, FILE* out) {
  const auto& all = Allocators();
  const auto& row = run.cells[w];
  const size_t gi = AllocIndex("glibc_malloc"), mi = AllocIndex("mimalloc");
  absl::FPrintF(
      out,
      "   peak RSS = VmHWM - VmRSS before the run; live = bytes asked "
      "for and not yet freed; median over %d process(es); vs X = "
      "X's ratio / this ratio (>1: leaner)\n",
      run.passes);
  absl::FPrintF(out, "   %-22s %-8s %13s %14s %9s %9s %12s\n", "allocator",
                "call", "peak RSS MiB", "peak live MiB", "RSS/live", "vs glibc",
                "vs mimalloc");
  const double g = gi < all.size() ? Med(row[gi], "rss_per_live") : NAN;
  const double m = mi < all.size() ? Med(row[mi], "rss_per_live") : NAN;
  for (size_t a = 0; a < all.size(); ++a) {
    const Cell& c = row[a];
    if (c.status == Status::kNotRun) continue;
    const std::string name = std::string(all[a].id) + (c.reference ? "*" : "");
    if (Find(c, "rss_per_live") == nullptr) {
      absl::FPrintF(out, "   %-22s %-8s -- %s\n", name, all[a].iface, NotOk(c));
      continue;
    }
    const double r = Med(c, "rss_per_live");
    absl::FPrintF(out, "   %-22s %-8s %13s %14s %9s %9s %12s\n", name,
                  all[a].iface, Fmt(Med(c, "peak_rss_kib") / 1024, 1),
                  Fmt(Med(c, "peak_live_kib") / 1024, 1), Fmt(r, 2), Vs(g, r),
                  Vs(m, r));
  }
}

LineSeries Styled(size_t a) {
  LineSeries s;
  const AllocatorInfo& ai = Allocators()[a];
  s.name = ai.id;
  s.colour = SeriesColour(a);
  s.dashed = ai.family != Family::kPmr;
  s.width = ai.family == Family::kPmr ? 2.2 : 1.4;
  return s;
}

double QuantileX(double q) { return -std::log10(1 - q); }
double Log2(double x) { return std::log2(x); }

SvgBlock LatencyChart(const RunInfo& run, size_t w) {
  const WorkloadInfo& wl = Workloads()[w];
  const auto& q = LatencyCurveQuantiles();
  LineChart c;
  c.title = std::string(wl.id) + ": " + wl.title;
  c.subtitle = absl::StrFormat(
      "latency percentiles per operation, median of %d process(es); both "
      "axes log scale; the timer's own cost subtracted",
      run.passes);
  c.x_label = "percentile (log scale of 1 / (1 - p))";
  c.y_label = "ns per operation (log scale)";
  c.y_log = true;
  c.x_map = QuantileX;
  c.x_ticks = {{QuantileX(0.5), "P50"},
               {QuantileX(0.9), "P90"},
               {QuantileX(0.99), "P99"},
               {QuantileX(0.999), "P99.9"},
               {QuantileX(0.9999), "P99.99"}};
  // Up to P99.99: beyond it (P99.999, max) the few samples left are the
  // machine's preemptions, milliseconds that would squash the scale; the
  // table has the max, the JSON every quantile.
  const std::vector<double> xs(q.begin(), q.end() - 2);
  // Below the timer's resolution (~10 ns) the curves say nothing.
  double resolution = 0;
  for (const Cell& cell : run.cells[w])
    if (!(resolution > 0)) resolution = Med(cell, "timer_resolution_ns");
  c.y_floor = resolution > 0 ? resolution : 1;
  for (size_t a = 0; a < Allocators().size(); ++a) {
    std::vector<double> ys =
        MedianCurve(run.cells[w][a], "lat_curve_ns", q.size());
    if (ys.empty()) continue;
    ys.resize(xs.size());
    LineSeries s = Styled(a);
    s.x = xs;
    s.y = ys;
    s.note = "P99 " + Fmt(Med(run.cells[w][a], "p99_ns")) + " ns";
    c.series.push_back(s);
  }
  c.notes = {
      "Solid: pmr-c resources; dashed: the others. A point at P99.9 is the "
      "time 1 sampled operation in 1,000 took or exceeded.",
      "The curve stops at P99.99 (beyond: preemptions of the shared "
      "machine, ms); max per allocator: see the table. Floor: the timer's "
      "resolution."};
  c.footer = ChartFooter(run);
  return DrawLineChart(c);
}

SvgBlock ScalingChart(const RunInfo& run, size_t w) {
  const WorkloadInfo& wl = Workloads()[w];
  const bool f = std::strcmp(wl.study_of, "F") == 0;
  LineChart c;
  c.title = std::string(wl.id) + ": " + wl.title;
  c.subtitle = absl::StrFormat(
      "%s; median of %d rounds; %d cores online",
      f ? "million blocks handed over and freed per second, all pairs"
        : "million blocks allocated + freed per second, all threads",
      run.rounds * run.passes, Cores());
  c.x_label = f ? "threads (producer + consumer pairs x 2)" : "threads";
  c.y_label = "million blocks per second";
  c.x_map = Log2;
  c.y_from_zero = true;
  for (int t : {1, 2, 4, 8, 16})
    if (!f || t >= 2) c.x_ticks.emplace_back(Log2(t), std::to_string(t));
  c.shade = true;
  c.shade_from = Log2(Cores()) + 0.5;  // between the core count and 2x
  c.shade_label = absl::StrFormat(
      "oversubscribed: more threads than the %d cores", Cores());
  for (size_t a = 0; a < Allocators().size(); ++a) {
    const Cell& cell = run.cells[w][a];
    if (cell.status != Status::kOk) continue;
    LineSeries s = Styled(a);
    s.markers = true;
    for (const MetricInfo& m : wl.metrics) {
      const double v = Med(cell, m.id);
      if (std::isnan(v)) continue;
      const int n = std::atoi(m.id + 6);
      s.x.push_back(f ? 2.0 * n : n);
      s.y.push_back(v);
    }
    if (s.y.size() >= 2)
      s.note =
          absl::StrFormat("%s %.2fx", f ? "4t/2t" : "2t/1t", s.y[1] / s.y[0]);
    if (!s.y.empty()) c.series.push_back(s);
  }
  c.notes = {
      "Solid: pmr-c resources; dashed: the others. Thread-safe resources are "
      "shared by all threads, the others have one instance per thread.",
      "On a machine with more cores the shaded band moves right; the JSON "
      "records the core count (studies.cores)."};
  c.footer = ChartFooter(run);
  return DrawLineChart(c);
}

SvgBlock PairedChart(const RunInfo& run, size_t w) {
  const WorkloadInfo& wl = Workloads()[w];
  LineChart c;
  c.title = std::string(wl.id) + ": " + wl.title;
  c.subtitle = absl::StrFormat(
      "%s, pair of rounds by pair (%d process(es) x %d pairs, in run "
      "order); below 1: faster than mimalloc",
      wl.unit_label, run.passes, kPairedRounds * run.rounds);
  c.x_label = "pair of rounds";
  c.y_label = "ratio to mimalloc";
  c.y_from_zero = true;
  LineSeries one;
  for (size_t a = 0; a < Allocators().size(); ++a) {
    const Cell& cell = run.cells[w][a];
    const Stat* r = Find(cell, "ratio");
    if (cell.status != Status::kOk || r == nullptr) continue;
    LineSeries s = Styled(a);
    s.markers = true;
    for (size_t i = 0; i < r->values.size(); ++i) {
      s.x.push_back(static_cast<double>(i + 1));
      s.y.push_back(r->values[i]);
    }
    s.note = "median " + Fmt(r->median, 2);
    if (one.x.empty() && !s.x.empty()) one.x = {1, s.x.back()};
    c.series.push_back(s);
  }
  if (!one.x.empty()) {
    one.name = "mimalloc (= 1)";
    one.colour = "#000000";
    one.width = 1.2;
    one.y = {1, 1};
    c.series.insert(c.series.begin(), one);
  }
  c.notes = {
      "Each point compares runs of the same loop a fraction of a second "
      "apart in one process: a change of the machine's speed falls on both.",
      "The main table of the workload measures each allocator in processes "
      "of its own (its ratios also carry the machine's drift between "
      "them)."};
  c.footer = ChartFooter(run);
  return DrawLineChart(c);
}

SvgBlock FragmentationChart(const RunInfo& run, size_t w) {
  const WorkloadInfo& wl = Workloads()[w];
  LineChart c;
  c.title = std::string(wl.id) + ": " + wl.title;
  c.subtitle =
      "resident memory above the start (one process per allocator) against "
      "the live bytes asked for (black)";
  c.x_label = "allocator calls (millions)";
  c.y_label = "MiB";
  c.y_from_zero = true;
  LineSeries live;
  for (size_t a = 0; a < Allocators().size(); ++a) {
    const Cell& cell = run.cells[w][a];
    std::vector<double> x = FirstSeries(cell, "frag_calls");
    std::vector<double> y = FirstSeries(cell, "frag_rss_kib");
    if (x.empty() || x.size() != y.size()) continue;
    for (double& v : x) v /= 1e6;
    for (double& v : y) v /= 1024;
    if (live.x.empty() || Allocators()[a].family == Family::kMalloc) {
      if (live.x.empty() ||
          std::strcmp(Allocators()[a].id, "glibc_malloc") == 0) {
        live.x = x;
        live.y = FirstSeries(cell, "frag_live_kib");
        for (double& v : live.y) v /= 1024;
      }
    }
    LineSeries s = Styled(a);
    s.x = x;
    s.y = y;
    s.note = "peak/live " + Fmt(Med(cell, "rss_per_live"), 2) + "x";
    c.series.push_back(s);
  }
  if (!live.x.empty()) {
    live.name = "live bytes asked for";
    live.colour = "#000000";
    live.width = 2.6;
    c.series.insert(c.series.begin(), live);
  }
  c.notes = {
      "Solid: pmr-c resources; dashed: the others. x = calls of the "
      "allocator (allocations + frees + reallocs), so every allocator sees "
      "the same program at the same x.",
      "peak/live = peak RSS growth (VmHWM) / peak live bytes, median over "
      "processes; the curve is the first process's, sampled up to 512 "
      "times."};
  c.footer = ChartFooter(run);
  return DrawLineChart(c);
}

std::string Array(const std::vector<double>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + JsonNumber(v[i]);
  return s + "]";
}

}  // namespace

void PrintStudyTable(const RunInfo& run, size_t w, FILE* out) {
  const WorkloadInfo& wl = Workloads()[w];
  absl::FPrintF(out, "\n== %s: %s\n", wl.id, wl.title);
  std::string line = "  ";  // the parameters, wrapped at 150 columns
  const std::string params = WorkloadParams(wl, run.sizes);
  for (size_t i = 0, j; i < params.size(); i = j + 1) {
    j = std::min(params.find(' ', i), params.size());
    const std::string word = params.substr(i, j - i);
    if (line.size() + 1 + word.size() > 150) {
      absl::FPrintF(out, "%s\n", line);
      line = "    ";
    }
    line += " " + word;
  }
  absl::FPrintF(out, "%s\n", line);
  if (Is(wl, "latency"))
    PrintLatency(run, w, out);
  else if (Is(wl, "scaling"))
    PrintScaling(run, w, out);
  else if (Is(wl, "paired"))
    PrintPaired(run, w, out);
  else
    PrintFragmentation(run, w, out);
  bool any_reference = false;
  for (const Cell& c : run.cells[w]) any_reference |= c.reference;
  if (any_reference)
    absl::FPrintF(
        out,
        "   * not selected by --filter; run as a reference for the ratios\n");
}

SvgBlock StudyChart(const RunInfo& run, size_t w) {
  const WorkloadInfo& wl = Workloads()[w];
  if (Is(wl, "latency")) return LatencyChart(run, w);
  if (Is(wl, "scaling")) return ScalingChart(run, w);
  if (Is(wl, "paired")) return PairedChart(run, w);
  return FragmentationChart(run, w);
}

std::string StudiesJson(const RunInfo& run) {
  const auto& wls = Workloads();
  const auto& all = Allocators();
  std::string s;
  bool first = true;
  for (size_t w = 0; w < wls.size(); ++w) {
    if (!run.selected_workload[w] || wls[w].study == nullptr) continue;
    for (size_t a = 0; a < all.size(); ++a) {
      const Cell& c = run.cells[w][a];
      std::string rec;
      if (Is(wls[w], "latency")) {
        const auto& q = LatencyCurveQuantiles();
        const std::vector<double> y = MedianCurve(c, "lat_curve_ns", q.size());
        if (y.empty()) continue;
        rec = absl::StrFormat(
            "\"kind\": \"latency_percentiles\", \"quantiles\": %s, "
            "\"ns\": %s, \"timer_cost_ns\": %s",
            Array(q), Array(y), JsonNumber(Med(c, "timer_cost_ns")));
      } else if (Is(wls[w], "fragmentation")) {
        const std::vector<double> x = FirstSeries(c, "frag_calls");
        if (x.empty()) continue;
        rec = absl::StrFormat(
            "\"kind\": \"rss_over_run\", \"calls\": %s, \"rss_kib\": %s, "
            "\"live_kib\": %s",
            Array(x), Array(FirstSeries(c, "frag_rss_kib")),
            Array(FirstSeries(c, "frag_live_kib")));
      } else {
        continue;  // scaling, paired: every point is a result record already
      }
      s += absl::StrFormat("%s\n  {\"workload\": %s, \"allocator\": %s, %s}",
                           first ? "" : ",", JsonString(wls[w].id),
                           JsonString(all[a].id), rec);
      first = false;
    }
  }
  bool any = false;
  for (size_t w = 0; w < wls.size(); ++w)
    any |= run.selected_workload[w] && wls[w].study != nullptr;
  if (!any) return "";
  return absl::StrFormat(
      ",\n\"studies\": {\"cores\": %d, \"latency_percentiles\": \"per "
      "process over its timed rounds pooled, median over processes\", "
      "\"series\": [%s\n]}",
      Cores(), s);
}

}  // namespace bench
