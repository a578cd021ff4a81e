// Malloc test patterns on one thread: BN (bignum arithmetic: small numbers
// made and dropped), T (tight loops: a block allocated and freed at once, or
// in small batches) and ES (a logic minimiser's churn: a live set of many
// sizes that grows and shrinks, blocks resized). Their run functions and
// entries of Workloads() (workloads.cc).

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "absl/strings/str_format.h"
#include "benchmarks/workloads_patterns.h"

namespace bench {

namespace {

// ---- BN: bignum arithmetic --------------------------------------------------
constexpr size_t kBnRegs = 32;        // live numbers
constexpr uint32_t kBnMaxLimbs = 25;  // 8-byte limbs: 8-200 B a number
enum BnOp : uint8_t { kAdd, kMul, kMod };

// Step s: reg[dst[s]] = op(reg[a[s]], reg[b[s]]) with res[s] limbs, with a
// scratch number of tmp[s] limbs (0: none) made and dropped on the way.
// Sizes follow the numbers: a sum is one limb longer at most, a product as
// long as both (capped), a remainder shorter than the divisor.
struct BNInput {
  std::vector<uint8_t> init;  // the registers' limbs before the first step
  std::vector<uint8_t> a, b, dst, res, tmp;
  size_t blocks = 0;  // allocations of all steps
};

BNInput MakeBNInput(size_t steps) {
  BNInput in;
  Rng rng(0xB9);
  uint8_t limbs[kBnRegs];
  for (uint8_t& l : limbs) {
    l = static_cast<uint8_t>(rng.Between(1, 4));
    in.init.push_back(l);
  }
  for (auto* v : {&in.a, &in.b, &in.dst, &in.res, &in.tmp}) v->resize(steps);
  for (size_t s = 0; s < steps; ++s) {
    const uint32_t a = rng.Below(kBnRegs), b = rng.Below(kBnRegs);
    const uint32_t la = limbs[a], lb = limbs[b], pick = rng.Below(100);
    const BnOp op = pick < 40 ? kAdd : pick < 75 ? kMul : kMod;
    uint32_t res, tmp = 0;
    if (op == kAdd) {
      res = std::min(kBnMaxLimbs, std::max(la, lb) + (rng.Below(4) == 0));
    } else if (op == kMul) {
      res = std::min(kBnMaxLimbs, la + lb);
      if (rng.Below(2) == 0) tmp = res;
    } else {
      res = 1 + rng.Below(std::min(la, lb));
      tmp = la;
    }
    const uint32_t dst = rng.Below(kBnRegs);
    in.a[s] = static_cast<uint8_t>(a);
    in.b[s] = static_cast<uint8_t>(b);
    in.dst[s] = static_cast<uint8_t>(dst);
    in.res[s] = static_cast<uint8_t>(res);
    in.tmp[s] = static_cast<uint8_t>(tmp);
    limbs[dst] = static_cast<uint8_t>(res);
    in.blocks += 1 + (tmp != 0);
  }
  return in;
}

template <class Make>
void RunBN(Make make, const ChildArgs& args) {
  const BNInput in = MakeBNInput(args.sizes.bn_steps);
  const size_t steps = in.a.size();
  auto a = make();
  const long base = StatusKib("VmRSS");
  std::vector<double> per_block;
  uint64_t acc = 0;
  struct Num {
    uint64_t* d;
    uint32_t n;
  };
  auto make_num = [&](uint32_t n, uint64_t seed) {
    auto* d = static_cast<uint64_t*>(a->alloc(n * 8));
    CheckAlloc(d);
    for (uint32_t i = 0; i < n; ++i) d[i] = seed + i;
    return Num{d, n};
  };
  for (int r = -args.warmup; r < args.rounds; ++r) {
    Num reg[kBnRegs];
    for (size_t k = 0; k < kBnRegs; ++k) reg[k] = make_num(in.init[k], k);
    const uint64_t t0 = NowNs();
    for (size_t s = 0; s < steps; ++s) {
      const Num x = reg[in.a[s]], y = reg[in.b[s]];
      const uint32_t n = in.res[s];
      auto* d = static_cast<uint64_t*>(a->alloc(n * 8));
      CheckAlloc(d);
      uint64_t carry = 0;
      for (uint32_t i = 0; i < n; ++i) {
        const uint64_t u = i < x.n ? x.d[i] : 0, v = i < y.n ? y.d[i] : 0;
        d[i] = u + v + carry;
        carry = d[i] < u;
      }
      if (const uint32_t t = in.tmp[s]) {
        auto* q = static_cast<uint64_t*>(a->alloc(t * 8));
        CheckAlloc(q);
        for (uint32_t i = 0; i < t; ++i) q[i] = i < n ? d[i] : carry;
        acc += q[t - 1];
        a->dealloc(q, t * 8);
      }
      Num& old = reg[in.dst[s]];
      a->dealloc(old.d, old.n * 8);
      old = {d, n};
    }
    const uint64_t t1 = NowNs();
    for (Num& x : reg) {
      acc += x.d[0];
      a->dealloc(x.d, x.n * 8);
    }
    a->drop();
    if (r >= 0) per_block.push_back((t1 - t0) / static_cast<double>(in.blocks));
  }
  Sink() += acc;
  EmitMetric("ns_per_block", per_block);
  EmitRssGrowth(base);
}

// ---- T: tight loops
// ----------------------------------------------------------
constexpr uint32_t kTSizes[4] = {16, 32, 64, 128};
constexpr size_t kTRun = 256;   // one by one: blocks of a size before the next
constexpr size_t kTBatch = 16;  // batches: blocks allocated, then freed

template <class Make>
void RunT(Make make, const ChildArgs& args) {
  const size_t n = args.sizes.t_ops / kTBatch * kTBatch;
  auto a = make();
  const long base = StatusKib("VmRSS");
  std::vector<double> pair, batch, total;
  uint64_t acc = 0;
  for (int r = -args.warmup; r < args.rounds; ++r) {
    const uint64_t t0 = NowNs();
    for (size_t i = 0; i < n; ++i) {
      const uint32_t sz = kTSizes[(i / kTRun) & 3];
      void* p = a->alloc(sz);
      CheckAlloc(p);
      Mark(p, 8, i);
      Escape(p);
      a->dealloc(p, sz);
    }
    const uint64_t t1 = NowNs();
    void* held[kTBatch];
    for (size_t i = 0; i < n; i += kTBatch) {
      const uint32_t sz = kTSizes[(i / kTBatch) & 3];
      for (size_t j = 0; j < kTBatch; ++j) {
        void* p = a->alloc(sz);
        CheckAlloc(p);
        Mark(p, 8, i + j);
        held[j] = p;
      }
      acc += Peek(held[(i / kTBatch) % kTBatch]);
      for (size_t j = 0; j < kTBatch; ++j) a->dealloc(held[j], sz);
    }
    const uint64_t t2 = NowNs();
    a->drop();
    if (r >= 0) {
      pair.push_back((t1 - t0) / static_cast<double>(n));
      batch.push_back((t2 - t1) / static_cast<double>(n));
      total.push_back((t2 - t0) / (2.0 * static_cast<double>(n)));
    }
  }
  Sink() += acc;
  EmitMetric("pair_ns_per_op", pair);
  EmitMetric("batch_ns_per_op", batch);
  EmitMetric("total_ns_per_op", total);
  EmitRssGrowth(base);
}

// ---- ES: a logic minimiser's churn
// -------------------------------------------
constexpr uint32_t kEsMin = 8, kEsMax = 1000;  // sizes, log-uniform
constexpr size_t kEsPhase = 40000;  // steps growing, then steps shrinking
constexpr uint32_t kEsGrowPct = 70, kEsShrinkPct = 30;  // allocations
constexpr uint32_t kEsResizePct = 10;  // steps that resize a live block
enum EsKind : uint8_t { kAlloc, kFree, kResize };

// Step s: allocate size[s]; free live block idx[s] (the last live block
// takes its place); or move live block idx[s] to a new block of size[s]
// (allocate, copy, free). The live set grows for kEsPhase steps (most steps
// allocate), then shrinks for as many, and so on.
struct ESInput {
  std::vector<uint8_t> kind;
  std::vector<uint16_t> size;
  std::vector<uint32_t> idx;
  size_t max_live = 0;
};

ESInput MakeESInput(size_t steps) {
  ESInput in;
  Rng rng(0xE5);
  in.kind.resize(steps);
  in.size.resize(steps);
  in.idx.resize(steps);
  size_t live = 0;
  for (size_t s = 0; s < steps; ++s) {
    const uint32_t alloc_pct = (s / kEsPhase) % 2 ? kEsShrinkPct : kEsGrowPct;
    const uint32_t pick = rng.Below(100);
    if (live > 0 && pick < kEsResizePct) {
      in.kind[s] = kResize;
      in.idx[s] = rng.Below(static_cast<uint32_t>(live));
      in.size[s] = static_cast<uint16_t>(LogUniform(rng, kEsMin, kEsMax));
    } else if (live == 0 || rng.Below(100) < alloc_pct) {
      in.kind[s] = kAlloc;
      in.size[s] = static_cast<uint16_t>(LogUniform(rng, kEsMin, kEsMax));
      in.max_live = std::max(in.max_live, ++live);
    } else {
      in.kind[s] = kFree;
      in.idx[s] = rng.Below(static_cast<uint32_t>(live));
      --live;
    }
  }
  return in;
}

template <class Make>
void RunES(Make make, const ChildArgs& args) {
  const ESInput in = MakeESInput(args.sizes.es_steps);
  const size_t steps = in.kind.size();
  auto a = make();
  std::vector<Sized> live(in.max_live + 1);
  const long base = StatusKib("VmRSS");
  std::vector<double> per_step;
  uint64_t acc = 0;
  for (int r = -args.warmup; r < args.rounds; ++r) {
    size_t count = 0;
    const uint64_t t0 = NowNs();
    for (size_t s = 0; s < steps; ++s) {
      const uint32_t sz = in.size[s];
      switch (in.kind[s]) {
        case kAlloc: {
          void* p = a->alloc(sz);
          CheckAlloc(p);
          Mark(p, sz, s);
          live[count++] = {p, sz};
          break;
        }
        case kFree: {
          Sized& b = live[in.idx[s]];
          acc += Peek(b.p);
          a->dealloc(b.p, b.n);
          b = live[--count];
          break;
        }
        default: {
          Sized& b = live[in.idx[s]];
          void* p = a->alloc(sz);
          CheckAlloc(p);
          std::memcpy(p, b.p, std::min(sz, b.n));
          Mark(p, sz, s);
          a->dealloc(b.p, b.n);
          b = {p, sz};
          break;
        }
      }
    }
    const uint64_t t1 = NowNs();
    for (size_t k = 0; k < count; ++k) a->dealloc(live[k].p, live[k].n);
    a->drop();
    if (r >= 0) per_step.push_back((t1 - t0) / static_cast<double>(steps));
  }
  Sink() += acc;
  EmitMetric("ns_per_step", per_step);
  EmitRssGrowth(base);
}

}  // namespace

WorkloadInfo WorkloadBN() {
  WorkloadInfo w =
      Pattern("BN",
              "bignum arithmetic: 32 live numbers of 8-200 B replaced by sums, "
              "products and remainders, with short-lived scratch numbers",
              1, "ns_per_block", "ns per block (alloc + arithmetic + free)");
  w.params = [](const WorkloadInfo&, const Sizes& s) {
    return absl::StrFormat(
        "1 thread, %d steps over %d numbers of 1-%d limbs of 8 B: add "
        "(40%%: one limb longer at most), multiply (35%%: both lengths, "
        "capped; half with a scratch number), remainder (25%%: shorter than "
        "the divisor, a scratch quotient); each result a new block, the "
        "number it replaces freed; ns per block",
        s.bn_steps, kBnRegs, kBnMaxLimbs);
  };
  w.params_json = [](const WorkloadInfo&, const Sizes& s) {
    return absl::StrFormat(
        "{\"threads\":1,\"steps\":%d,\"numbers\":%d,\"max_bytes\":%d}",
        s.bn_steps, kBnRegs, kBnMaxLimbs * 8);
  };
  w.run = [](const WorkloadInfo& w, const AllocatorInfo& a,
             const ChildArgs& args) {
    WithAdapter(w, a, [&](auto make) { RunBN(make, args); });
  };
  return w;
}

WorkloadInfo WorkloadT() {
  WorkloadInfo w =
      Pattern("T",
              "tight loops: a small block allocated and freed at once, then in "
              "batches of 16; 16/32/64/128 B in turn",
              1, "total_ns_per_op", "ns per block (alloc + free)");
  w.metrics = {{"pair_ns_per_op", "ns"},
               {"batch_ns_per_op", "ns"},
               {"total_ns_per_op", "ns"},
               {"peak_rss_growth_kib", "KiB"}};
  w.params = [](const WorkloadInfo&, const Sizes& s) {
    return absl::StrFormat(
        "1 thread; pair: %d blocks, each allocated, its first word written "
        "and freed, %d of a size before the next; batch: %d blocks, %d "
        "allocated (each written) then freed in order, a batch of one size, "
        "the next of the next; sizes %d/%d/%d/%d B; ns per block",
        s.t_ops / kTBatch * kTBatch, kTRun, s.t_ops / kTBatch * kTBatch,
        kTBatch, kTSizes[0], kTSizes[1], kTSizes[2], kTSizes[3]);
  };
  w.params_json = [](const WorkloadInfo&, const Sizes& s) {
    return absl::StrFormat(
        "{\"threads\":1,\"blocks_per_loop\":%d,\"run\":%d,\"batch\":%d,"
        "\"sizes\":[%d,%d,%d,%d]}",
        s.t_ops / kTBatch * kTBatch, kTRun, kTBatch, kTSizes[0], kTSizes[1],
        kTSizes[2], kTSizes[3]);
  };
  w.phase_note = [](const WorkloadInfo&, const Sizes&) -> std::string {
    return "   pair = allocate one, free it; batch = 16 allocated, then "
           "freed; total = both loops' time / both loops' blocks\n";
  };
  w.run = [](const WorkloadInfo& w, const AllocatorInfo& a,
             const ChildArgs& args) {
    WithAdapter(w, a, [&](auto make) { RunT(make, args); });
  };
  return w;
}

WorkloadInfo WorkloadES() {
  WorkloadInfo w =
      Pattern("ES",
              "logic-minimiser churn: blocks of 8-1,000 B allocated, freed and "
              "resized, the live set growing and shrinking in phases",
              1, "ns_per_step", "ns per step");
  w.params = [](const WorkloadInfo&, const Sizes& s) {
    return absl::StrFormat(
        "1 thread, %d steps of %d-%d B (uniform in log size): %d%% resize "
        "a random live block (allocate, copy, free); of the rest %d%% "
        "allocate, the others free a random live block, for %d steps, then "
        "%d%% allocate for as many (the live set grows and shrinks); ns per "
        "step",
        s.es_steps, kEsMin, kEsMax, kEsResizePct, kEsGrowPct, kEsPhase,
        kEsShrinkPct);
  };
  w.params_json = [](const WorkloadInfo&, const Sizes& s) {
    return absl::StrFormat(
        "{\"threads\":1,\"steps\":%d,\"min_bytes\":%d,\"max_bytes\":%d,"
        "\"phase_steps\":%d,\"resize_pct\":%d}",
        s.es_steps, kEsMin, kEsMax, kEsPhase, kEsResizePct);
  };
  w.run = [](const WorkloadInfo& w, const AllocatorInfo& a,
             const ChildArgs& args) {
    WithAdapter(w, a, [&](auto make) { RunES(make, args); });
  };
  return w;
}

}  // namespace bench
