// The text report (report.h, PrintReport): the header, each workload's
// table, the summary; the Markdown page reuses them (report_markdown.cc).
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "benchmarks/report_common.h"
#include "benchmarks/studies.h"
#include "benchmarks/system.h"

namespace bench {

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
  // Page faults (P, L1, L2, BP): a column after RSS+.
  const char* faults_id = nullptr;
  for (const MetricInfo& m : wl.metrics)
    if (std::strcmp(m.unit, "faults") == 0) faults_id = m.id;
  const bool threads = wl.instances;
  absl::FPrintF(out, "\n== %s: %s\n%s\n", wl.id, wl.title,
                Wrap("   ", WorkloadParams(wl, run.sizes), "   "));
  if (wl.memory)
    absl::FPrintF(out,
                  "   median of %d fresh processes; spread = min-max; vs X = "
                  "X's peak / this peak (>1: leaner)\n",
                  run.d_runs);
  else if (wl.system && run.mode.rfind("quick", 0) == 0)
    absl::FPrintF(out,
                  "   one run per allocator (--quick); vs X = X's time / this "
                  "time (>1: faster)\n");
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
  if (faults_id != nullptr && !wl.memory)
    head += absl::StrFormat(" %9s", "faults");
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
      const Stat* rss = Find(c, wl.rss_metric);
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
      if (faults_id != nullptr) {
        const Stat* f = Find(c, faults_id);
        row += absl::StrFormat(" %9s", f ? Num(f->median) : "-");
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
  if (!wl.memory && !wl.system)
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
  absl::FPrintF(out, "   %-10s %-22s %10s %9s %-22s %-24s %9s  %s\n", "wl",
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
      absl::FPrintF(out, "   %-10s (%s)\n", wl.id,
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
    absl::FPrintF(out, "   %-10s %-22s %10s %9s %-22s %-24s %9s  %s\n", wl.id,
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
    // A path in Bazel's output tree is long: its file name here, the whole
    // path in the JSON.
    std::string from = ps.malloc_from;
    if (from.size() > 100 && from.rfind('/') != std::string::npos)
      from = ".../" + from.substr(from.rfind('/') + 1);
    if (ps.status == Status::kOk)
      absl::FPrintF(out, "   %-10s active: %s; malloc resolves to %s\n",
                    peer.name,
                    ps.version.empty() ? "version unknown" : ps.version, from);
    else
      absl::FPrintF(out, "%s\n",
                    Wrap(absl::StrFormat("   %-10s ", peer.name),
                         StatusName(ps.status) +
                             (ps.detail.empty() ? "" : " -- " + ps.detail),
                         "     "));
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

void PrintReport(const RunInfo& run, FILE* out) {
  PrintHeader(run, out);
  const auto& wls = Workloads();
  for (size_t w = 0; w < wls.size(); ++w)
    if (run.selected_workload[w])
      (wls[w].study ? PrintStudyTable : PrintTable)(run, w, out);
  PrintSystemTable(run, out);
  PrintSummary(run, out);
  absl::FPrintF(out, "\nwall time %.1f s\n", run.wall_seconds);
}

}  // namespace bench
