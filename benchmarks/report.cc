#include "benchmarks/report.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "absl/strings/str_format.h"
#include "benchmarks/json.h"
#include "benchmarks/studies.h"

namespace bench {

const char* StatusName(Status s) {
  switch (s) {
    case Status::kNotRun:
      return "not_run";
    case Status::kOk:
      return "ok";
    case Status::kNotInstalled:
      return "not_installed";
    case Status::kNotApplicable:
      return "not_applicable";
    case Status::kSkipped:
      return "skipped";
    case Status::kPreloadFailed:
      return "preload_failed";
    case Status::kError:
      return "error";
  }
  return "?";
}

void Stat::Finish() {
  if (values.empty()) return;
  std::vector<double> v = values;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  min = v.front();
  max = v.back();
}

namespace {

// "3 processes x 3, interleaved" / "1 process".
std::string ProcessesText(const RunInfo& run) {
  if (run.passes == 1) return "1 process";
  return absl::StrFormat("%d processes x %d, interleaved", run.passes,
                         run.rounds);
}

// The unit of a workload's primary metric ("ns", "ms").
std::string PrimaryUnit(const WorkloadInfo& wl) {
  for (const MetricInfo& m : wl.metrics)
    if (std::strcmp(m.id, wl.primary) == 0) return m.unit;
  return "ns";
}

bool WriteFile(const std::string& path, const std::string& text,
               std::string* err) {
  FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) {
    *err = path + ": " + std::strerror(errno);
    return false;
  }
  const bool ok = std::fputs(text.c_str(), f) >= 0 && std::fflush(f) == 0;
  if (std::fclose(f) != 0 || !ok) {
    *err = path + ": write failed";
    return false;
  }
  return true;
}

size_t AllocIndex(const char* id) {
  const auto& all = Allocators();
  for (size_t i = 0; i < all.size(); ++i)
    if (std::strcmp(all[i].id, id) == 0) return i;
  return all.size();
}

const Stat* Find(const Cell& c, const std::string& metric) {
  if (c.status != Status::kOk) return nullptr;
  auto it = c.metrics.find(metric);
  if (it == c.metrics.end() || it->second.values.empty()) return nullptr;
  return &it->second;
}

// The text report stays readable in a 160-column terminal (the tables are
// narrower): prose such as a workload's parameters is wrapped at spaces into
// lines of at most `width` columns, each after `indent` (the first line
// after `first`, which has the same width). The JSON keeps each text whole.
std::string Wrap(const std::string& first, const std::string& text,
                 const std::string& indent, size_t width = 110) {
  std::string out = first, line;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find(' ', pos);
    if (end == std::string::npos) end = text.size();
    std::string word = text.substr(pos, end - pos);
    const size_t room = width - std::min(width - 20, indent.size());
    if (!line.empty() && line.size() + 1 + word.size() > room) {
      out += line + "\n" + indent;
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
    pos = end + 1;
  }
  return out + line;
}

// 3 significant-ish digits for times that span 0.5 ns to microseconds.
std::string Num(double v) {
  if (v < 10) return absl::StrFormat("%.2f", v);
  if (v < 1000) return absl::StrFormat("%.1f", v);
  return absl::StrFormat("%.0f", v);
}

std::string Ratio(double r) {
  return r > 0 ? absl::StrFormat("%.2fx", r) : "-";
}

// "2.10x faster" / "1.50x slower" (memory: leaner / larger) for a ratio
// ref/this.
std::string Compare(double r, bool memory) {
  if (r >= 1)
    return absl::StrFormat("%.2fx %s", r, memory ? "leaner" : "faster");
  return absl::StrFormat("%.2fx %s", 1 / r, memory ? "larger" : "slower");
}

std::string ShortStd(const char* id) {
  return std::strncmp(id, "std_", 4) == 0 ? id + 4 : id;
}

std::string Mib(double kib) { return absl::StrFormat("%.1f", kib / 1024.0); }

std::string NotOkText(const Cell& c) {
  switch (c.status) {
    case Status::kNotInstalled:
      return "not installed" + (c.detail.empty() ? "" : " (" + c.detail + ")");
    case Status::kSkipped:
      return "skipped: " + c.detail;
    case Status::kPreloadFailed:
      return "PRELOAD FAILED: " + c.detail;
    case Status::kError:
      return "ERROR: " + c.detail;
    default:
      return StatusName(c.status);
  }
}

double MemoryOf(const RunInfo& run, size_t w, size_t a) {
  const WorkloadInfo& wl = Workloads()[w];
  const Stat* s =
      Find(run.cells[w][a], wl.memory ? "peak_rss_kib" : "peak_rss_growth_kib");
  return s ? s->median : -1;
}

// The pmr-c resource to use for workload w: the fastest (D: leanest) whose
// peak memory is at most max(2 x glibc's, glibc's + 16 MiB). npos if none.
size_t Pick(const RunInfo& run, size_t w) {
  const WorkloadInfo& wl = Workloads()[w];
  const auto& all = Allocators();
  const double glibc_mem = MemoryOf(run, w, AllocIndex("glibc_malloc"));
  size_t best = all.size();
  double best_v = 0;
  for (size_t a = 0; a < all.size(); ++a) {
    if (all[a].family != Family::kPmr) continue;
    const Stat* s = Find(run.cells[w][a], wl.primary);
    if (s == nullptr) continue;
    const double mem = MemoryOf(run, w, a);
    if (!wl.memory && glibc_mem >= 0 &&
        mem > std::max(2 * glibc_mem, glibc_mem + 16 * 1024))
      continue;
    if (best == all.size() || s->median < best_v) {
      best = a;
      best_v = s->median;
    }
  }
  return best;
}

size_t FastestOf(const RunInfo& run, size_t w, bool malloc_only) {
  const WorkloadInfo& wl = Workloads()[w];
  const auto& all = Allocators();
  size_t best = all.size();
  double best_v = 0;
  for (size_t a = 0; a < all.size(); ++a) {
    if (malloc_only && all[a].family != Family::kMalloc) continue;
    if (all[a].family == Family::kReference) continue;  // a floor, not a choice
    const Stat* s = Find(run.cells[w][a], wl.primary);
    if (s == nullptr) continue;
    if (best == all.size() || s->median < best_v) {
      best = a;
      best_v = s->median;
    }
  }
  return best;
}

void PrintTable(const RunInfo& run, size_t w, FILE* out) {
  const WorkloadInfo& wl = Workloads()[w];
  const auto& all = Allocators();
  // Timing columns before the primary one (A/B/C: alloc, free; V: push,
  // destroy; H: insert, hit, miss, erase; S: build, destroy).
  std::vector<std::string> phase_ids;
  for (const MetricInfo& m : wl.metrics)
    if (std::string(m.unit) == "ns" && wl.primary != std::string(m.id))
      phase_ids.push_back(m.id);
  const bool phases = !phase_ids.empty();
  const bool threads = wl.instances;
  absl::FPrintF(out, "\n== %s: %s\n%s\n", wl.id, wl.title,
                Wrap("   ", WorkloadParams(wl, run.sizes), "   "));
  if (wl.memory)
    absl::FPrintF(out,
                  "   median of %d fresh processes; spread = min-max; vs X = "
                  "X's peak / this peak (>1: leaner)\n",
                  run.d_runs);
  else
    absl::FPrintF(out,
                  "   median of %d timed rounds (%s) after %d warm-up each; "
                  "spread = min-max of the rounds; "
                  "vs X = X's median / this median (>1: faster)\n",
                  run.rounds * run.passes, ProcessesText(run), run.warmup);

  std::string head = absl::StrFormat("   %-22s ", "allocator");
  if (wl.container)
    head += absl::StrFormat("%-23s ", "container");
  else
    head += absl::StrFormat("%-8s ", "call");
  if (threads) head += absl::StrFormat("%-10s ", "instances");
  if (wl.memory)
    head +=
        absl::StrFormat("%9s %9s %19s %9s %-18s %12s", "peak MiB", "x payload",
                        "spread (MiB)", "vs glibc", "vs std::pmr", "kept MiB");
  else if (phases) {
    for (const std::string& m : phase_ids)
      head += absl::StrFormat("%8s ", m.substr(0, m.find("_ns")));
    head += absl::StrFormat("%8s %19s %9s %-18s %8s", "total", "spread (total)",
                            "vs glibc", "vs std::pmr", "RSS+MiB");
  } else
    head += absl::StrFormat("%9s %19s %9s %-18s %8s", "median", "spread",
                            "vs glibc", "vs std::pmr", "RSS+MiB");
  absl::FPrintF(out, "%s\n", head);

  std::map<std::string, std::string> not_applicable;  // why -> which
  bool any_reference = false;
  for (size_t a = 0; a < all.size(); ++a) {
    const Cell& c = run.cells[w][a];
    const AllocatorInfo& ai = all[a];
    if (c.status == Status::kNotRun) continue;
    if (c.status == Status::kNotApplicable) {
      std::string& list = not_applicable[c.detail];
      list += (list.empty() ? "" : ", ") + std::string(ai.id);
      continue;
    }
    std::string name = std::string(ai.id) + (c.reference ? "*" : "");
    any_reference = any_reference || c.reference;
    std::string row = absl::StrFormat("   %-22s ", name);
    if (wl.container)
      row += absl::StrFormat("%-23s ", ContainerOf(wl, ai));
    else
      row += absl::StrFormat("%-8s ", ai.iface);
    if (threads) row += absl::StrFormat("%-10s ", Sharing(wl, ai));
    const Stat* p = Find(c, wl.primary);
    if (p == nullptr) {
      absl::FPrintF(out, "%s-- %s\n", row, NotOkText(c));
      continue;
    }
    const std::string vs_g =
        Ratio(RatioVs(run, w, a, wl.primary, "glibc_malloc"));
    std::string vs_s = "-";
    if (ai.std_counterpart != nullptr) {
      const double r = RatioVs(run, w, a, wl.primary, ai.std_counterpart);
      if (r > 0) vs_s = Ratio(r) + " " + ShortStd(ai.std_counterpart);
    }
    if (wl.memory) {
      const double payload_kib =
          static_cast<double>(run.sizes.a_blocks * kBlock) / 1024.0;
      const Stat* kept = Find(c, "retained_after_free_kib");
      row +=
          absl::StrFormat("%9s %9s %19s %9s %-18s %12s", Mib(p->median),
                          absl::StrFormat("%.2f", p->median / payload_kib),
                          absl::StrFormat("[%s, %s]", Mib(p->min), Mib(p->max)),
                          vs_g, vs_s, kept ? Mib(kept->median) : "-");
    } else {
      const Stat* rss = Find(c, "peak_rss_growth_kib");
      const std::string spread =
          absl::StrFormat("[%s, %s]", Num(p->min), Num(p->max));
      if (phases) {
        for (const std::string& m : phase_ids) {
          const Stat* ph = Find(c, m);
          row += absl::StrFormat("%8s ", ph ? Num(ph->median) : "-");
        }
        row += absl::StrFormat("%8s %19s %9s %-18s %8s", Num(p->median), spread,
                               vs_g, vs_s, rss ? Mib(rss->median) : "-");
      } else {
        row += absl::StrFormat("%9s %19s %9s %-18s %8s", Num(p->median), spread,
                               vs_g, vs_s, rss ? Mib(rss->median) : "-");
      }
    }
    absl::FPrintF(out, "%s\n", row);
  }
  for (const auto& [why, list] : not_applicable)
    absl::FPrintF(
        out, "%s\n",
        Wrap("   ", absl::StrFormat("not applicable (%s): %s", why, list),
             "     "));
  if (wl.memory)
    absl::FPrintF(out,
                  "   kept = still resident after freeing every block: "
                  "monotonic resources keep their chunks "
                  "until release (reset keeps them for reuse),\n   and never "
                  "free single blocks, so "
                  "free-heavy workloads grow (see RSS+ in E)\n");
  if (any_reference)
    absl::FPrintF(
        out,
        "   * not selected by --filter; run as a reference for the ratios\n");
  if (phases && wl.phase_note != nullptr) {
    absl::FPrintF(out, "%s", wl.phase_note(wl, run.sizes));
  } else if (phases) {
    std::string names;
    for (const std::string& m : phase_ids)
      names += m.substr(0, m.find("_ns")) + ", ";
    std::string sum;
    for (const std::string& m : phase_ids)
      sum += (sum.empty() ? "" : "+") + m.substr(0, m.find("_ns"));
    absl::FPrintF(
        out,
        "   %stotal: medians of their own (total = per-round %s, so not always "
        "the sum)%s\n",
        names, sum,
        wl.container ? "; destroy includes the resource's reset/release" : "");
  }
  if (wl.container) {
    const std::string type = ContainerOf(wl, *FindAllocator("glibc_malloc"));
    absl::FPrintF(out,
                  "   vs glibc = vs %s with std::allocator (the glibc_malloc "
                  "row); vs std::pmr = vs %s over the "
                  "std counterpart resource\n",
                  type, ContainerOf(wl, *FindAllocator("std_new_delete")));
  }
  if (!wl.memory)
    absl::FPrintF(out,
                  "   RSS+ = peak resident memory of the process above its own "
                  "arrays (warm-up and all "
                  "rounds)\n");
  if (wl.notes != nullptr) absl::FPrintF(out, "%s", wl.notes(wl, run.sizes));

  const size_t pick = Pick(run, w);
  if (pick < all.size()) {
    const Stat* p = Find(run.cells[w][pick], wl.primary);
    const size_t fastest = FastestOf(run, w, false);
    std::string line;
    absl::StrAppendFormat(&line, "pmr-c pick: %s (%s %s)", all[pick].id,
                          wl.memory ? Mib(p->median) : Num(p->median),
                          wl.memory ? std::string("MiB") : PrimaryUnit(wl));
    const double g = RatioVs(run, w, pick, wl.primary, "glibc_malloc");
    if (g > 0)
      absl::StrAppendFormat(&line, ", %s than glibc_malloc",
                            Compare(g, wl.memory));
    if (all[pick].std_counterpart != nullptr) {
      const double s =
          RatioVs(run, w, pick, wl.primary, all[pick].std_counterpart);
      if (s > 0)
        absl::StrAppendFormat(&line, ", %s than %s", Compare(s, wl.memory),
                              all[pick].std_counterpart);
    }
    if (wl.extra_ref != nullptr) {
      const double x = RatioVs(run, w, pick, wl.primary, wl.extra_ref);
      if (x > 0)
        absl::StrAppendFormat(&line, ", %s than %s", Compare(x, wl.memory),
                              wl.extra_ref);
    }
    if (fastest < all.size() && fastest != pick)
      absl::StrAppendFormat(&line, "; %s overall: %s",
                            wl.memory ? "leanest" : "fastest", all[fastest].id);
    // Wrapped: which names win decides its length.
    absl::FPrintF(out, "%s\n", Wrap("   -> ", line, "      ", 150));
  }
}

void PrintSummary(const RunInfo& run, FILE* out) {
  const auto& all = Allocators();
  const auto& wls = Workloads();
  bool any = false;  // the studies have no summary (studies.cc)
  for (size_t w = 0; w < wls.size(); ++w)
    any = any || (run.selected_workload[w] && !wls[w].study);
  if (!any) return;
  absl::FPrintF(out,
                "\n== Which resource for which workload (pmr-c pick = fastest "
                "pmr-c resource whose peak memory "
                "is within max(2x, +16 MiB) of glibc's; D: leanest)\n");
  absl::FPrintF(out, "   %-6s %-22s %10s %9s %-22s %-24s %9s  %s\n", "wl",
                "pmr-c pick", "median", "vs glibc", "vs best drop-in",
                "vs std::pmr counterpart", "mem vs g", "best of all");
  for (size_t w = 0; w < wls.size(); ++w) {
    if (!run.selected_workload[w] || wls[w].study) continue;  // studies.cc
    const WorkloadInfo& wl = wls[w];
    const size_t pick = Pick(run, w);
    if (pick >= all.size()) {
      bool measured = false;
      for (size_t a = 0; a < all.size(); ++a)
        measured |= all[a].family == Family::kPmr &&
                    Find(run.cells[w][a], wl.primary) != nullptr;
      absl::FPrintF(out, "   %-6s (%s)\n", wl.id,
                    measured ? "no pmr-c resource within the memory bound"
                             : "no pmr-c resource measured");
      continue;
    }
    const Stat* p = Find(run.cells[w][pick], wl.primary);
    const size_t best_malloc = FastestOf(run, w, true);
    std::string vs_drop = "-";
    if (best_malloc < all.size()) {
      vs_drop = Ratio(RatioVs(run, w, pick, wl.primary, all[best_malloc].id)) +
                " " + all[best_malloc].id;
    }
    std::string vs_std = "-";
    if (all[pick].std_counterpart != nullptr) {
      const double r =
          RatioVs(run, w, pick, wl.primary, all[pick].std_counterpart);
      if (r > 0) vs_std = Ratio(r) + " " + all[pick].std_counterpart;
    }
    std::string mem = "-";
    if (!wl.memory) {
      const double g = MemoryOf(run, w, AllocIndex("glibc_malloc")),
                   m = MemoryOf(run, w, pick);
      if (g > 0 && m > 0) mem = absl::StrFormat("%.2fx", g / m);
    }
    const size_t best = FastestOf(run, w, false);
    absl::FPrintF(out, "   %-6s %-22s %10s %9s %-22s %-24s %9s  %s\n", wl.id,
                  all[pick].id,
                  wl.memory ? Mib(p->median) + " MiB"
                            : Num(p->median) + " " + PrimaryUnit(wl),
                  Ratio(RatioVs(run, w, pick, wl.primary, "glibc_malloc")),
                  vs_drop, vs_std, mem, best < all.size() ? all[best].id : "-");
  }
  absl::FPrintF(out,
                "   ratios > 1: the pick is faster (D: leaner); mem vs g = "
                "glibc's RSS+ / the pick's RSS+\n");
  bool containers = false;
  for (size_t w = 0; w < wls.size(); ++w)
    containers = containers || (run.selected_workload[w] && wls[w].container);
  if (containers)
    absl::FPrintF(out,
                  "   V, H, S (containers): pick = the fastest pmr-c "
                  "container/resource pair; glibc = the std "
                  "container with std::allocator,\n   drop-in = the same under "
                  "LD_PRELOAD, std::pmr counterpart = "
                  "the std::pmr container over the matching resource\n");
}

}  // namespace

double RatioVs(const RunInfo& run, size_t w, size_t a,
               const std::string& metric, const char* ref) {
  const size_t r = AllocIndex(ref);
  if (r >= Allocators().size()) return 0;
  const Stat* mine = Find(run.cells[w][a], metric);
  const Stat* theirs = Find(run.cells[w][r], metric);
  if (mine == nullptr || theirs == nullptr || mine->median <= 0 ||
      theirs->median <= 0)
    return 0;
  return theirs->median / mine->median;
}

namespace {

// The run's header: mode, machine, date, notes, the drop-in mallocs found,
// the allocators' legend.
void PrintHeader(const RunInfo& run, FILE* out) {
  absl::FPrintF(out,
                "pmr-c allocator comparison  (mode %s, scale %g, %d rounds "
                "(%s) + %d warm-up each)\n",
                run.mode, run.scale, run.rounds * run.passes,
                ProcessesText(run), run.warmup);
  absl::FPrintF(out, "machine: %s\n", run.machine);
  absl::FPrintF(out, "date: %s\n", run.date);
  if (!run.sanitizer.empty())
    absl::FPrintF(out,
                  "NOTE: %s build: timings are not representative; drop-in "
                  "mallocs skipped\n",
                  run.sanitizer);
  if (run.load_before > 0.5)
    absl::FPrintF(out,
                  "NOTE: load average %.2f at start: the machine was busy, "
                  "timings are noisy\n",
                  run.load_before);
  absl::FPrintF(out,
                "drop-in mallocs (each in its own process via LD_PRELOAD, "
                "checked inside the child):\n");
  for (const auto& peer : Peers()) {
    auto it = run.peers.find(peer.name);
    if (it == run.peers.end()) continue;
    const PeerStatus& ps = it->second;
    if (ps.status == Status::kOk)
      absl::FPrintF(
          out, "   %-9s active: %s; malloc resolves to %s\n", peer.name,
          ps.version.empty() ? "version unknown" : ps.version, ps.malloc_from);
    else
      absl::FPrintF(out, "   %-9s %s%s\n", peer.name, StatusName(ps.status),
                    ps.detail.empty() ? "" : " -- " + ps.detail);
  }
  absl::FPrintF(out, "allocators:\n");
  for (const auto& a : Allocators())
    absl::FPrintF(
        out, "%s\n",
        Wrap(absl::StrFormat("   %-22s %-8s ", a.id, a.iface),
             std::string(a.what) + (a.thread_safe ? " [thread-safe]" : ""),
             std::string(36, ' ')));
  absl::FPrintF(out,
                "calls: malloc = malloc/free; virtual = "
                "std::pmr::memory_resource::allocate/deallocate; "
                "abstract = pmr_allocate/pmr_deallocate on &x.base;\n       "
                "inline = the resource's inline "
                "fast path; direct = a C++ class's inline methods. Every "
                "request asks alignment %d.\n",
                kAlign);
}

}  // namespace

void PrintReport(const RunInfo& run, FILE* out) {
  PrintHeader(run, out);
  const auto& wls = Workloads();
  for (size_t w = 0; w < wls.size(); ++w)
    if (run.selected_workload[w])
      (wls[w].study ? PrintStudyTable : PrintTable)(run, w, out);
  PrintSummary(run, out);
  absl::FPrintF(out, "\nwall time %.1f s\n", run.wall_seconds);
}

bool WriteMarkdown(const RunInfo& run, const std::string& path,
                   std::string* err) {
  char* buf = nullptr;
  size_t len = 0;
  FILE* mem = open_memstream(&buf, &len);
  if (mem == nullptr) {
    *err = std::string("open_memstream: ") + std::strerror(errno);
    return false;
  }
  absl::FPrintF(mem,
                "# Benchmark results\n\n"
                "<!-- Written by `bazel run -c opt //benchmarks:all -- "
                "--markdown=PATH`; a new run replaces it. -->\n\n"
                "The latest run of the comparison described in "
                "[README.md](README.md) (workloads, allocators, method, how "
                "to read the tables): %s, %s; mode %s, scale %g, %d timed "
                "rounds (%s) after %d warm-up each; %.1f s.\n\n",
                run.date, run.machine, run.mode, run.scale,
                run.rounds * run.passes, ProcessesText(run), run.warmup,
                run.wall_seconds);
  absl::FPrintF(mem, "## Which resource for which workload\n\n```text");
  PrintSummary(run, mem);
  absl::FPrintF(mem, "```\n\n## Every workload\n\n```text\n");
  PrintHeader(run, mem);
  const auto& wls = Workloads();
  for (size_t w = 0; w < wls.size(); ++w)
    if (run.selected_workload[w])
      (wls[w].study ? PrintStudyTable : PrintTable)(run, w, mem);
  absl::FPrintF(mem, "```\n");
  std::fclose(mem);
  std::string text(buf, len);
  std::free(buf);
  return WriteFile(path, text, err);
}

bool WriteJson(const RunInfo& run, const std::string& path, std::string* err) {
  FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) {
    *err = path + ": " + std::strerror(errno);
    return false;
  }
  const auto& all = Allocators();
  const auto& wls = Workloads();
  absl::FPrintF(f, "{\n\"schema\": \"pmr-c-benchmarks/1\",\n");
  absl::FPrintF(
      f,
      "\"run\": {\"mode\": %s, \"scale\": %s, \"rounds\": %d, "
      "\"passes\": %d, \"warmup\": %d, \"d_processes\": %d, "
      "\"filter\": %s, \"machine\": %s, \"date\": %s, \"sanitizer\": %s, "
      "\"load_average_before\": %s, "
      "\"wall_seconds\": %s},\n",
      JsonString(run.mode), JsonNumber(run.scale), run.rounds, run.passes,
      run.warmup, run.d_runs, JsonString(run.filter), JsonString(run.machine),
      JsonString(run.date), JsonString(run.sanitizer),
      JsonNumber(run.load_before), JsonNumber(run.wall_seconds));
  absl::FPrintF(f, "\"peers\": {");
  bool first = true;
  for (const auto& [name, ps] : run.peers) {
    absl::FPrintF(f,
                  "%s\n  %s: {\"status\": %s, \"lib\": %s, \"version\": %s, "
                  "\"malloc_from\": %s, \"detail\": %s}",
                  first ? "" : ",", JsonString(name),
                  JsonString(StatusName(ps.status)), JsonString(ps.lib),
                  JsonString(ps.version), JsonString(ps.malloc_from),
                  JsonString(ps.detail));
    first = false;
  }
  absl::FPrintF(f, "},\n\"workloads\": {");
  first = true;
  for (size_t w = 0; w < wls.size(); ++w) {
    if (!run.selected_workload[w]) continue;
    const WorkloadInfo& wl = wls[w];
    absl::FPrintF(f,
                  "%s\n  %s: {\"title\": %s, \"description\": %s, \"params\": "
                  "%s, \"primary_metric\": %s}",
                  first ? "" : ",", JsonString(wl.id), JsonString(wl.title),
                  JsonString(WorkloadParams(wl, run.sizes)),
                  WorkloadParamsJson(wl, run.sizes), JsonString(wl.primary));
    first = false;
  }
  absl::FPrintF(f, "},\n\"allocators\": {");
  for (size_t a = 0; a < all.size(); ++a) {
    const AllocatorInfo& ai = all[a];
    absl::FPrintF(f,
                  "%s\n  %s: {\"family\": %s, \"call\": %s, \"thread_safe\": "
                  "%s, \"bump\": %s, "
                  "\"std_counterpart\": %s, \"description\": %s}",
                  a ? "," : "", JsonString(ai.id),
                  JsonString(FamilyName(ai.family)), JsonString(ai.iface),
                  ai.thread_safe ? "true" : "false", ai.bump ? "true" : "false",
                  ai.std_counterpart ? JsonString(ai.std_counterpart) : "null",
                  JsonString(ai.what));
  }
  absl::FPrintF(f, "},\n\"results\": [");
  first = true;
  for (size_t w = 0; w < wls.size(); ++w) {
    if (!run.selected_workload[w]) continue;
    const WorkloadInfo& wl = wls[w];
    for (size_t a = 0; a < all.size(); ++a) {
      const Cell& c = run.cells[w][a];
      if (c.status == Status::kNotRun) continue;
      const AllocatorInfo& ai = all[a];
      for (const MetricInfo& m : wl.metrics) {
        const Stat* s = Find(c, m.id);
        std::string values = "[";
        if (s != nullptr)
          for (size_t i = 0; i < s->values.size(); ++i)
            values += (i ? "," : "") + JsonNumber(s->values[i]);
        values += "]";
        auto num_or_null = [&](double v) {
          return s != nullptr ? JsonNumber(v) : std::string("null");
        };
        auto ratio_or_null = [&](const char* ref) {
          if (ref == nullptr) return std::string("null");
          const double r = RatioVs(run, w, a, m.id, ref);
          return r > 0 ? JsonNumber(r) : std::string("null");
        };
        absl::FPrintF(
            f,
            "%s\n{\"workload\": %s, \"allocator\": %s, \"metric\": %s, "
            "\"unit\": %s, \"status\": %s, "
            "\"detail\": %s, \"reference_only\": %s, \"sharing\": %s, "
            "\"container\": %s, \"median\": %s, "
            "\"min\": %s, \"max\": %s, "
            "\"values\": %s, \"vs_glibc\": %s, \"std_counterpart\": %s, "
            "\"vs_std\": %s}",
            first ? "" : ",", JsonString(wl.id), JsonString(ai.id),
            JsonString(m.id), JsonString(m.unit),
            JsonString(StatusName(c.status)), JsonString(c.detail),
            c.reference ? "true" : "false", JsonString(Sharing(wl, ai)),
            JsonString(ContainerOf(wl, ai)), num_or_null(s ? s->median : 0),
            num_or_null(s ? s->min : 0), num_or_null(s ? s->max : 0), values,
            ratio_or_null("glibc_malloc"),
            ai.std_counterpart ? JsonString(ai.std_counterpart) : "null",
            ratio_or_null(ai.std_counterpart));
        first = false;
      }
    }
  }
  absl::FPrintF(f, "\n]%s\n}\n", StudiesJson(run));
  const bool ok = std::fflush(f) == 0 && !std::ferror(f);
  if (std::fclose(f) != 0 || !ok) {
    *err = path + ": write failed";
    return false;
  }
  return true;
}

namespace {

std::string Xml(const std::string& s) {
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

struct Chart {
  std::string body;  // SVG elements, drawn from (0, 0)
  int width = 0, height = 0;
};

// Time charts also show each row's memory (RSS+, log scale) when it differs
// by an order of magnitude or more between rows.
constexpr double kMemorySpread = 10;

Chart ChartFor(const RunInfo& run, size_t w) {
  const WorkloadInfo& wl = Workloads()[w];
  if (wl.study) {  // line charts: studies.cc
    SvgBlock b = StudyChart(run, w);
    return {std::move(b.body), b.width, b.height};
  }
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
  Chart chart;
  chart.width = (show_memory ? mem_left + mem_width + 70 : left + width + 150);
  chart.height = top_px + rows_px + 72;
  std::string s =
      absl::StrFormat("<rect width=\"%d\" height=\"%d\" fill=\"white\"/>\n",
                      chart.width, chart.height);
  s += absl::StrFormat(
      "<text x=\"10\" y=\"20\" font-size=\"15\" font-weight=\"bold\">%s: "
      "%s</text>\n",
      Xml(wl.id), Xml(wl.title));
  s += absl::StrFormat(
      "<text x=\"10\" y=\"38\" fill=\"#444\">%s, median of %d %s (whisker: "
      "min-max); %s</text>\n",
      Xml(wl.unit_label), wl.memory ? run.d_runs : run.rounds * run.passes,
      wl.memory ? "fresh processes" : "rounds",
      wl.memory ? "lower is leaner" : "lower is faster");
  int text_y = 54;
  for (const std::string& line : desc_lines) {
    s += absl::StrFormat(
        "<text x=\"10\" y=\"%d\" fill=\"#666\" font-size=\"10\">%s</text>\n",
        text_y, Xml(line));
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
        y + 14, Xml(b.name));
    if (!b.ok) {
      s += absl::StrFormat("<text x=\"%d\" y=\"%d\" fill=\"#a00\">%s</text>\n",
                           left + 4, y + 14, Xml(b.note));
      continue;
    }
    s += absl::StrFormat(
        "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" "
        "fill=\"%s\"><title>%s: %s (min %s, max %s)</title>"
        "</rect>\n",
        left, y + 3, std::max(1, x_of(b.med) - left), row_h - 6,
        FamilyColour(b.family), Xml(b.name), Num(b.med), Num(b.lo), Num(b.hi));
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
        lx, ly - 10, FamilyColour(f), lx + 16, ly, Xml(FamilyName(f)));
    lx += 130;
  }
  s += absl::StrFormat(
      "<text x=\"10\" y=\"%d\" fill=\"#666\" font-size=\"10\">%s</text>\n",
      chart.height - 10,
      Xml(absl::StrFormat("%s; %s; mode %s, scale %g", run.machine, run.date,
                          run.mode, run.scale)));
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
  std::vector<Chart> charts;
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
  for (const Chart& c : charts) {
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
      Xml(run.machine) +
      absl::StrFormat(" &mdash; %s &mdash; mode %s, scale %g</p>\n",
                      Xml(run.date), Xml(run.mode), run.scale);
  const auto& wls = Workloads();
  for (size_t w = 0; w < wls.size(); ++w) {
    if (!run.selected_workload[w]) continue;
    const std::string name = std::string(wls[w].id) + ".svg";
    const Chart c = ChartFor(run, w);
    if (!WriteFile(dir + "/" + name,
                   SvgOpen(c.width, c.height) + c.body + "</svg>\n", err))
      return false;
    index +=
        "<p><img src=\"" + name + "\" alt=\"" + Xml(wls[w].title) + "\"></p>\n";
  }
  index += "</body></html>\n";
  return WriteFile(dir + "/index.html", index, err);
}

}  // namespace bench
