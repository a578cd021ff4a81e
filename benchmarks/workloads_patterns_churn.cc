// Malloc test patterns where threads come and go: TC (generations of 2
// short-lived threads, each freeing blocks the previous generation left) and
// LS (a server simulation: 2 tables of blocks, each worked on by a thread
// that, after a number of steps, hands it to a new thread and exits). Their
// run functions and entries of Workloads() (workloads.cc).

#include <algorithm>
#include <cstdint>
#include <functional>
#include <thread>
#include <vector>

#include "absl/strings/str_format.h"
#include "benchmarks/workloads_patterns.h"

namespace bench {

namespace {

// ---- TC: thread churn -------------------------------------------------------
constexpr uint32_t kTcMin = 16, kTcMax = 4096;  // block sizes, log-uniform
constexpr size_t kTcLocal = 32;      // a thread's own short-lived blocks
constexpr size_t kTcSlots = 1024;    // blocks handed between generations
constexpr uint32_t kTcHandPct = 25;  // share of allocations left in a slot

// Op i of thread j of generation g: allocate size[k] and keep it in the
// thread's own ring (freeing the block there), or (slot[k] != kOwn) free
// what a thread of the previous generation left in slot[k] and leave the
// new block there. Thread j of generation g owns the slots s with
// s % 2 == (g + j) % 2, so the thread that frees a slot's block ran on the
// other side in the generation before.
constexpr uint16_t kOwn = 0xFFFF;
struct TCInput {
  std::vector<uint16_t> size;  // [(g * 2 + j) * ops + i]
  std::vector<uint16_t> slot;
};

TCInput MakeTCInput(size_t gens, size_t ops) {
  TCInput in;
  Rng rng(0x7C);
  const size_t n = gens * 2 * ops;
  in.size.resize(n);
  in.slot.resize(n);
  for (size_t k = 0; k < n; ++k) {
    const size_t g = k / (2 * ops), j = (k / ops) % 2;
    in.size[k] = static_cast<uint16_t>(LogUniform(rng, kTcMin, kTcMax));
    in.slot[k] = kOwn;
    if (rng.Below(100) < kTcHandPct)
      in.slot[k] =
          static_cast<uint16_t>(2 * rng.Below(kTcSlots / 2) + (g + j) % 2);
  }
  return in;
}

template <class Make>
void RunTC(Make make, const ChildArgs& args) {
  using A = AdapterOf<Make>;
  const size_t gens = args.sizes.tc_gens, ops = args.sizes.tc_blocks;
  const TCInput in = MakeTCInput(gens, ops);
  auto inst = make();
  A& a = *inst;
  std::vector<Sized> slots(kTcSlots, Sized{nullptr, 0});
  const long base = StatusKib("VmRSS");
  std::vector<double> per_block;
  uint64_t acc = 0;
  for (int r = -args.warmup; r < args.rounds; ++r) {
    uint64_t sum[2] = {0, 0};
    auto body = [&](size_t g, int j) {
      const size_t off = (g * 2 + j) * ops;
      Sized own[kTcLocal] = {};
      uint64_t s = 0;
      for (size_t i = 0; i < ops; ++i) {
        const uint32_t sz = in.size[off + i];
        void* p = a.alloc(sz);
        CheckAlloc(p);
        Mark(p, sz, i);
        const uint16_t k = in.slot[off + i];
        Sized& put = k == kOwn ? own[i % kTcLocal] : slots[k];
        if (put.p != nullptr) {
          s += Peek(put.p);
          a.dealloc(put.p, put.n);
        }
        put = {p, sz};
      }
      for (Sized& b : own)
        if (b.p != nullptr) a.dealloc(b.p, b.n);
      sum[j] += s;
    };
    const uint64_t t0 = NowNs();
    for (size_t g = 0; g < gens; ++g) {
      std::thread th0(body, g, 0), th1(body, g, 1);
      th0.join();
      th1.join();
    }
    const uint64_t t1 = NowNs();
    for (Sized& b : slots)
      if (b.p != nullptr) {
        a.dealloc(b.p, b.n);
        b = {nullptr, 0};
      }
    acc += sum[0] + sum[1];
    if (r >= 0)
      per_block.push_back((t1 - t0) / static_cast<double>(gens * 2 * ops));
  }
  Sink() += acc;
  EmitMetric("ns_per_block", per_block);
  EmitRssGrowth(base);
}

// ---- LS: server simulation
// ----------------------------------------------------
constexpr uint32_t kLsMin = 8, kLsMax = 1000;  // block sizes, uniform
constexpr size_t kLsSlots = 2000;              // a table's blocks
constexpr size_t kLsEpoch = 10000;  // steps before the table changes thread

struct LSInput {
  std::vector<uint16_t> init;  // the table's blocks before the first step
  std::vector<uint16_t> idx;   // step s frees slot idx[s]
  std::vector<uint16_t> size;  // and allocates size[s] there
};

LSInput MakeLSInput(size_t steps, uint64_t seed) {
  LSInput in;
  Rng rng(seed);
  in.init.resize(kLsSlots);
  for (auto& s : in.init)
    s = static_cast<uint16_t>(rng.Between(kLsMin, kLsMax));
  in.idx.resize(steps);
  in.size.resize(steps);
  for (size_t s = 0; s < steps; ++s) {
    in.idx[s] = static_cast<uint16_t>(rng.Below(kLsSlots));
    in.size[s] = static_cast<uint16_t>(rng.Between(kLsMin, kLsMax));
  }
  return in;
}

template <class Make>
void RunLS(Make make, const ChildArgs& args) {
  using A = AdapterOf<Make>;
  const size_t steps = args.sizes.ls_steps;
  const size_t epochs = std::max<size_t>(2, steps / kLsEpoch);
  const LSInput in[2] = {MakeLSInput(steps, 0x1501),
                         MakeLSInput(steps, 0x1502)};
  auto inst = make();
  A& a = *inst;
  std::vector<Sized> table[2] = {std::vector<Sized>(kLsSlots),
                                 std::vector<Sized>(kLsSlots)};
  std::vector<std::thread> lane[2] = {std::vector<std::thread>(epochs),
                                      std::vector<std::thread>(epochs)};
  const long base = StatusKib("VmRSS");
  std::vector<double> per_step;
  uint64_t acc = 0;
  uint64_t sum[2] = {0, 0};
  // Epoch e of table t: its share of the steps, then the next epoch's
  // thread started (the table handed over) before this one exits.
  struct Epoch {
    static void Run(A& a, const LSInput& in, std::vector<Sized>& tab,
                    std::vector<std::thread>& lane, size_t e, size_t epochs,
                    uint64_t* sum) {
      const size_t steps = in.idx.size();
      const size_t from = steps * e / epochs, to = steps * (e + 1) / epochs;
      uint64_t s = 0;
      for (size_t i = from; i < to; ++i) {
        Sized& b = tab[in.idx[i]];
        s += Peek(b.p);
        a.dealloc(b.p, b.n);
        const uint32_t sz = in.size[i];
        void* p = a.alloc(sz);
        CheckAlloc(p);
        Mark(p, sz, i);
        b = {p, sz};
      }
      *sum += s;
      if (e + 1 < epochs)
        lane[e + 1] =
            std::thread(Run, std::ref(a), std::cref(in), std::ref(tab),
                        std::ref(lane), e + 1, epochs, sum);
    }
  };
  for (int r = -args.warmup; r < args.rounds; ++r) {
    for (int t = 0; t < 2; ++t)
      for (size_t k = 0; k < kLsSlots; ++k) {
        void* p = a.alloc(in[t].init[k]);
        CheckAlloc(p);
        Mark(p, in[t].init[k], k);
        table[t][k] = {p, in[t].init[k]};
      }
    const uint64_t t0 = NowNs();
    for (int t = 0; t < 2; ++t)
      lane[t][0] = std::thread(Epoch::Run, std::ref(a), std::cref(in[t]),
                               std::ref(table[t]), std::ref(lane[t]), 0, epochs,
                               &sum[t]);
    for (int t = 0; t < 2; ++t)
      for (size_t e = 0; e < epochs; ++e) lane[t][e].join();
    const uint64_t t1 = NowNs();
    for (int t = 0; t < 2; ++t)
      for (Sized& b : table[t]) a.dealloc(b.p, b.n);
    if (r >= 0)
      per_step.push_back((t1 - t0) / (2.0 * static_cast<double>(steps)));
  }
  acc += sum[0] + sum[1];
  Sink() += acc;
  EmitMetric("ns_per_step", per_step);
  EmitRssGrowth(base);
}

}  // namespace

WorkloadInfo WorkloadTC() {
  WorkloadInfo w = Pattern(
      "TC",
      "thread churn: generations of 2 short-lived threads allocate mixed "
      "sizes, free their own, and free what the generation before left",
      2, "ns_per_block", "ns per block (threads started and joined), wall");
  w.params = [](const WorkloadInfo&, const Sizes& s) {
    return absl::StrFormat(
        "%d generations of 2 threads (started, joined), each thread %d "
        "blocks of %d-%d B (uniform in log size): %d%% left in one of %d "
        "slots (freeing the block a thread of the previous generation left "
        "there), the rest kept in a ring of %d of its own; one shared "
        "instance; wall ns per block",
        s.tc_gens, s.tc_blocks, kTcMin, kTcMax, kTcHandPct, kTcSlots, kTcLocal);
  };
  w.params_json = [](const WorkloadInfo&, const Sizes& s) {
    return absl::StrFormat(
        "{\"threads\":2,\"generations\":%d,\"blocks_per_thread\":%d,"
        "\"min_bytes\":%d,\"max_bytes\":%d,\"handed_pct\":%d,\"slots\":%d,"
        "\"own_ring\":%d}",
        s.tc_gens, s.tc_blocks, kTcMin, kTcMax, kTcHandPct, kTcSlots, kTcLocal);
  };
  w.run = [](const WorkloadInfo& w, const AllocatorInfo& a,
             const ChildArgs& args) {
    WithAdapter(w, a, [&](auto make) { RunTC(make, args); });
  };
  return w;
}

WorkloadInfo WorkloadLS() {
  WorkloadInfo w = Pattern(
      "LS",
      "server simulation: 2 tables of blocks, random slots replaced; each "
      "table passes to a new thread after a number of steps",
      2, "ns_per_step", "ns per step (free + allocate), wall");
  w.params = [](const WorkloadInfo&, const Sizes& s) {
    return absl::StrFormat(
        "2 tables of %d blocks of %d-%d B (uniform), filled by the main "
        "thread; %d steps per table (free a random slot's block, allocate a "
        "random size there), in %d epochs: each epoch's thread starts the "
        "next one with the table and exits; one shared instance; malloc "
        "rows free unsized; wall ns per step",
        kLsSlots, kLsMin, kLsMax, s.ls_steps,
        std::max<size_t>(2, s.ls_steps / kLsEpoch));
  };
  w.params_json = [](const WorkloadInfo&, const Sizes& s) {
    return absl::StrFormat(
        "{\"threads\":2,\"slots\":%d,\"min_bytes\":%d,\"max_bytes\":%d,"
        "\"steps_per_table\":%d,\"epochs\":%d}",
        kLsSlots, kLsMin, kLsMax, s.ls_steps,
        std::max<size_t>(2, s.ls_steps / kLsEpoch));
  };
  w.run = [](const WorkloadInfo& w, const AllocatorInfo& a,
             const ChildArgs& args) {
    WithAdapter(w, a, [&](auto make) { RunLS(make, args); });
  };
  return w;
}

}  // namespace bench
