// The paired study: A, C and E with a pmr-c pool and mimalloc taking turns
// in one process (A-pair, C-pair, E-pair).
//
// The main tables measure each allocator in processes of its own, so two
// rows never run at the same moment; on a shared machine whose speed drifts
// over seconds, their ratio carries that drift (benchmarks/README.md,
// "Paired rounds"). Here every process runs under mimalloc as its malloc
// (LD_PRELOAD) and takes turns between the row's resource (through
// pmr_allocate / pmr_deallocate, as in the main table) and malloc (through
// malloc / free, as mimalloc's row of the main table); each figure compares
// runs of the same loop a fraction of a second apart (RunPaired). Rows: the
// pmr-c resources that pool (registry.cc: the bump resources would keep
// every block, the malloc resource would be mimalloc itself).
#include <cmath>
#include <vector>

#include "absl/strings/str_format.h"
#include "benchmarks/workloads_common.h"

namespace bench {

namespace {

const std::vector<MetricInfo> kPairedMetrics = {
    {"ratio", "x"}, {"row_ns", "ns"}, {"mimalloc_ns", "ns"}};
// A and C also compare their two phases on their own.
const std::vector<MetricInfo> kPhaseRatios = {{"alloc_ratio", "x"},
                                              {"free_ratio", "x"}};

// One timed run of a loop: time per operation, and of its phases (A, C;
// 0 when the loop has none).
struct Times {
  double total, alloc, free;
};

// Runs round(adapter) for the row's adapter and for malloc in turn; round
// returns its Times. A turn runs the loop twice and times the second run:
// while the other allocator ran, this one may have given memory back to
// the OS on a timer of its own, and the untimed run faults it in again, so
// the timed one is the steady state that the main table's back-to-back
// rounds measure. A pair is two rounds, the row first, then mimalloc first
// (row, mimalloc, mimalloc, row): whichever ran last has an edge (its code
// and data still in the caches), and over the pair each has it once. A
// pair's figure is the geometric mean of its two rounds' ratios. Emits
// each pair's ratio and times (the mean of its two rounds).
template <class Make, class Round>
void RunPaired(Make make, const ChildArgs& args, Round round) {
  auto row = make();
  MallocAdapter ref;
  auto turn = [&round](auto& a) {
    round(a);
    return round(a);
  };
  std::vector<double> ratio, row_ns, ref_ns, alloc_ratio, free_ratio;
  for (int p = -args.warmup; p < kPairedRounds * args.rounds; ++p) {
    Times mine[2], theirs[2];
    mine[0] = turn(*row);
    theirs[0] = turn(ref);
    theirs[1] = turn(ref);
    mine[1] = turn(*row);
    if (p < 0) continue;
    auto gmean = [&](double Times::*m) {
      return std::sqrt(mine[0].*m / theirs[0].*m * (mine[1].*m / theirs[1].*m));
    };
    ratio.push_back(gmean(&Times::total));
    row_ns.push_back((mine[0].total + mine[1].total) / 2);
    ref_ns.push_back((theirs[0].total + theirs[1].total) / 2);
    if (theirs[0].alloc > 0) {
      alloc_ratio.push_back(gmean(&Times::alloc));
      free_ratio.push_back(gmean(&Times::free));
    }
  }
  EmitMetric("ratio", ratio);
  EmitMetric("row_ns", row_ns);
  EmitMetric("mimalloc_ns", ref_ns);
  if (!alloc_ratio.empty()) {
    EmitMetric("alloc_ratio", alloc_ratio);
    EmitMetric("free_ratio", free_ratio);
  }
}

// A and C's Times from their timestamps, per block.
Times Phased(const uint64_t t[3], size_t n) {
  const double d = static_cast<double>(n);
  return {(t[2] - t[0]) / d, (t[1] - t[0]) / d, (t[2] - t[1]) / d};
}

template <class Make>
void PairA(Make make, const ChildArgs& args) {
  std::vector<void*> ptrs(args.sizes.a_blocks, nullptr);
  uint64_t acc = 0;
  RunPaired(make, args, [&](auto& a) {
    uint64_t t[3];
    ARound(a, ptrs, &acc, t);
    return Phased(t, ptrs.size());
  });
  Sink() += acc;
}

template <class Make>
void PairC(Make make, const ChildArgs& args) {
  const CInput in = MakeCInput(args.sizes.c_allocs);
  std::vector<void*> ptrs(in.size.size(), nullptr);
  uint64_t acc = 0;
  RunPaired(make, args, [&](auto& a) {
    uint64_t t[3];
    CRound(a, in, ptrs, &acc, t);
    return Phased(t, ptrs.size());
  });
  Sink() += acc;
}

template <class Make>
void PairE(Make make, const ChildArgs& args) {
  const EInput in = MakeEInput(args.sizes.e_live, args.sizes.e_steps);
  std::vector<void*> ptr(in.init_size.size(), nullptr);
  std::vector<uint16_t> cur(in.init_size.size());
  uint64_t acc = 0;
  RunPaired(make, args, [&](auto& a) {
    uint64_t t[2];
    ERound(a, in, ptr, cur, &acc, t);
    return Times{(t[1] - t[0]) / static_cast<double>(in.idx.size()), 0, 0};
  });
  Sink() += acc;
}

WorkloadInfo Paired(const char* id, const char* of, const char* title,
                    const char* unit_label, bool phases) {
  WorkloadInfo w;
  w.id = id;
  w.title = title;
  w.study = "paired";
  w.study_of = of;
  w.metrics = kPairedMetrics;
  if (phases)
    w.metrics.insert(w.metrics.end(), kPhaseRatios.begin(), kPhaseRatios.end());
  w.primary = "ratio";
  w.unit_label = unit_label;
  return w;
}

}  // namespace

WorkloadInfo WorkloadAPair() {
  WorkloadInfo w =
      Paired("A-pair", "A", "A with each pmr-c pool and mimalloc in turn",
             "time per block (alloc + free) / mimalloc's", true);
  w.params = [](const WorkloadInfo&, const Sizes& s) {
    return absl::StrFormat(
        "A's loop (%d x %d B allocated and written, then freed), a round of "
        "the row, then one of malloc (mimalloc, LD_PRELOAD), in one process",
        s.a_blocks, kBlock);
  };
  w.params_json = [](const WorkloadInfo&, const Sizes& s) {
    return absl::StrFormat(
        "{\"blocks\":%d,\"block_bytes\":%d,\"versus\":\"mimalloc\","
        "\"threads\":1}",
        s.a_blocks, kBlock);
  };
  w.run = [](const WorkloadInfo& w, const AllocatorInfo& a,
             const ChildArgs& args) {
    WithAdapter(w, a, [&](auto make) { PairA(make, args); });
  };
  return w;
}

WorkloadInfo WorkloadCPair() {
  WorkloadInfo w =
      Paired("C-pair", "C", "C with each pmr-c pool and mimalloc in turn",
             "time per block (alloc + free) / mimalloc's", true);
  w.params = [](const WorkloadInfo&, const Sizes& s) {
    return absl::StrFormat(
        "C's loop (%d allocations of 64/128/256/512 B, freed shuffled), a "
        "round of the row, then one of malloc (mimalloc, LD_PRELOAD), in one "
        "process",
        s.c_allocs);
  };
  w.params_json = [](const WorkloadInfo&, const Sizes& s) {
    return absl::StrFormat(
        "{\"allocations\":%d,\"sizes\":[64,128,256,512],\"ratio\":[4,3,2,1],"
        "\"versus\":\"mimalloc\",\"threads\":1}",
        s.c_allocs);
  };
  w.run = [](const WorkloadInfo& w, const AllocatorInfo& a,
             const ChildArgs& args) {
    WithAdapter(w, a, [&](auto make) { PairC(make, args); });
  };
  return w;
}

WorkloadInfo WorkloadEPair() {
  WorkloadInfo w =
      Paired("E-pair", "E", "E with each pmr-c pool and mimalloc in turn",
             "time per step (free + alloc) / mimalloc's", false);
  w.params = [](const WorkloadInfo&, const Sizes& s) {
    return absl::StrFormat(
        "E's churn (%d live blocks of %d..%d B, %d steps), a round of the "
        "row, then one of malloc (mimalloc, LD_PRELOAD), in one process",
        s.e_live, kEMin, kEMax, s.e_steps);
  };
  w.params_json = [](const WorkloadInfo&, const Sizes& s) {
    return absl::StrFormat(
        "{\"live_blocks\":%d,\"steps\":%d,\"min_bytes\":%d,\"max_bytes\":%d,"
        "\"versus\":\"mimalloc\",\"threads\":1}",
        s.e_live, s.e_steps, kEMin, kEMax);
  };
  w.run = [](const WorkloadInfo& w, const AllocatorInfo& a,
             const ChildArgs& args) {
    WithAdapter(w, a, [&](auto make) { PairE(make, args); });
  };
  return w;
}

}  // namespace bench
