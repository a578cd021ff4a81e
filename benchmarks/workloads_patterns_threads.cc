// Malloc test patterns on 2 threads at once: X (blocks of random sizes freed
// partly by the thread that made them, partly by the other one), FS (active
// false sharing: each thread writes the small objects it allocates) and FP
// (passive false sharing: objects made by one thread, freed by the workers,
// whose next objects take their place). Their run functions and entries of
// Workloads() (workloads.cc).

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "absl/strings/str_format.h"
#include "benchmarks/workloads_patterns.h"

namespace bench {

namespace {

// ---- X: random sizes, freed by either thread --------------------------------
constexpr uint32_t kXMin = 8, kXMax = 16000;
constexpr size_t kXBatch = 64;      // blocks allocated before frees
constexpr size_t kXQueue = 4096;    // blocks in flight to the other thread
constexpr uint32_t kXGivePct = 50;  // share of blocks the other thread frees

struct XInput {
  std::vector<uint16_t> size;  // per thread: the blocks' sizes
  std::vector<uint8_t> give;   // 1: handed to the other thread
};

XInput MakeXInput(size_t n, uint64_t seed) {
  XInput in;
  Rng rng(seed);
  in.size.resize(n);
  in.give.resize(n);
  for (size_t i = 0; i < n; ++i) {
    in.size[i] = static_cast<uint16_t>(LogUniform(rng, kXMin, kXMax));
    in.give[i] = rng.Below(100) < kXGivePct;
  }
  return in;
}

template <class Make>
void RunX(Make make, const ChildArgs& args) {
  using A = AdapterOf<Make>;
  const size_t n = args.sizes.x_blocks;
  const XInput in[2] = {MakeXInput(n, 0x5801), MakeXInput(n, 0x5802)};
  auto inst = make();
  A& a = *inst;
  const long base = StatusKib("VmRSS");
  std::vector<double> per_block;
  uint64_t acc = 0;
  for (int r = -args.warmup; r < args.rounds; ++r) {
    BlockQueue q01(kXQueue), q10(kXQueue);  // 0 -> 1, 1 -> 0
    PairBarrier start;
    std::atomic<bool> done[2] = {false, false};
    uint64_t t0[2], t1[2], sum[2] = {0, 0};
    auto body = [&](int t) {
      const XInput& my = in[t];
      BlockQueue& out = t == 0 ? q01 : q10;
      BlockQueue& inq = t == 0 ? q10 : q01;
      uint64_t s = 0;
      auto drain = [&] {
        Sized b;
        bool any = false;
        while (inq.TryPop(&b)) {
          s += Peek(b.p);
          a.dealloc(b.p, b.n);
          any = true;
        }
        return any;
      };
      Sized keep[kXBatch];
      start.Wait();
      t0[t] = NowNs();
      for (size_t i = 0; i < n; i += kXBatch) {
        const size_t end = std::min(n, i + kXBatch);
        size_t kept = 0;
        for (size_t j = i; j < end; ++j) {
          const uint32_t sz = my.size[j];
          void* p = a.alloc(sz);
          CheckAlloc(p);
          Mark(p, sz, j);
          if (my.give[j]) {
            int spins = 0;
            while (!out.TryPush({p, sz}))
              if (!drain()) Relax(&spins);
          } else {
            keep[kept++] = {p, sz};
          }
        }
        while (kept > 0) {
          --kept;
          s += Peek(keep[kept].p);
          a.dealloc(keep[kept].p, keep[kept].n);
        }
        drain();
      }
      done[t].store(true, std::memory_order_release);
      int spins = 0;
      for (;;) {
        const bool other_done = done[1 - t].load(std::memory_order_acquire);
        const bool any = drain();
        if (other_done && !any) break;
        if (!any) Relax(&spins);
      }
      t1[t] = NowNs();
      sum[t] = s;
    };
    std::thread th(body, 1);
    body(0);
    th.join();
    acc += sum[0] + sum[1];
    if (r >= 0)
      per_block.push_back((std::max(t1[0], t1[1]) - std::min(t0[0], t0[1])) /
                          (2.0 * static_cast<double>(n)));
  }
  Sink() += acc;
  EmitMetric("ns_per_block", per_block);
  EmitRssGrowth(base);
}

// ---- FS, FP: false sharing --------------------------------------------------
constexpr uint32_t kFsMin = 8, kFsMax = 64;  // object sizes, uniform
constexpr int kFsWrites = 50;       // each object's words written this often
constexpr size_t kFsRun = 500;      // FS: objects of one size, then the next
constexpr size_t kFpEpisodes = 20;  // FP: hand-overs per round

// Writes each of the object's 8-byte words kFsWrites times (volatile: every
// store happens) and returns the last word written.
inline uint64_t WriteObject(void* p, uint32_t n, uint64_t v) {
  volatile uint64_t* w = static_cast<uint64_t*>(p);
  const uint32_t words = n / 8;
  for (int k = 0; k < kFsWrites; ++k)
    for (uint32_t i = 0; i < words; ++i) w[i] = v + k;
  return w[0];
}

// n object sizes, one size for a run of `run` objects, then the next.
std::vector<uint8_t> MakeFsSizes(size_t n, size_t run, uint64_t seed) {
  Rng rng(seed);
  std::vector<uint8_t> v(n);
  uint8_t size = 0;
  for (size_t i = 0; i < n; ++i) {
    if (i % run == 0) size = static_cast<uint8_t>(rng.Between(kFsMin, kFsMax));
    v[i] = size;
  }
  return v;
}

// FS: each thread allocates an object, writes it, frees it, n times; both
// threads go through the same sizes (so they ask the same size class at
// about the same time).
template <class Make>
void RunFS(Make make, const ChildArgs& args) {
  using A = AdapterOf<Make>;
  const size_t n = args.sizes.fs_objects;
  const std::vector<uint8_t> size = MakeFsSizes(n, kFsRun, 0xF5);
  auto inst = make();
  A& a = *inst;
  const long base = StatusKib("VmRSS");
  std::vector<double> per_object;
  uint64_t acc = 0;
  for (int r = -args.warmup; r < args.rounds; ++r) {
    PairBarrier start;
    uint64_t t0[2], t1[2], sum[2];
    auto body = [&](int t) {
      const std::vector<uint8_t>& sz = size;
      uint64_t s = 0;
      start.Wait();
      t0[t] = NowNs();
      for (size_t i = 0; i < n; ++i) {
        void* p = a.alloc(sz[i]);
        CheckAlloc(p);
        s += WriteObject(p, sz[i], i);
        a.dealloc(p, sz[i]);
      }
      t1[t] = NowNs();
      sum[t] = s;
    };
    std::thread th(body, 1);
    body(0);
    th.join();
    acc += sum[0] + sum[1];
    if (r >= 0)
      per_object.push_back((std::max(t1[0], t1[1]) - std::min(t0[0], t0[1])) /
                           (2.0 * static_cast<double>(n)));
  }
  Sink() += acc;
  EmitMetric("ns_per_object", per_object);
  EmitRssGrowth(base);
}

// FP: per episode, the main thread allocates one object per worker (one
// after the other, so they are likely neighbours); each worker frees the one
// it was handed, then allocates, writes and frees its own objects of that
// size. The workers meet at the start of each episode.
template <class Make>
void RunFP(Make make, const ChildArgs& args) {
  using A = AdapterOf<Make>;
  const size_t n = args.sizes.fs_objects;
  const size_t per = std::max<size_t>(1, n / kFpEpisodes);
  const std::vector<uint8_t> size = MakeFsSizes(kFpEpisodes, 1, 0xF9);
  auto inst = make();
  A& a = *inst;
  std::vector<void*> handed(2 * kFpEpisodes);
  const long base = StatusKib("VmRSS");
  std::vector<double> per_object;
  uint64_t acc = 0;
  for (int r = -args.warmup; r < args.rounds; ++r) {
    const uint64_t t0 = NowNs();
    for (size_t e = 0; e < kFpEpisodes; ++e)
      for (int t = 0; t < 2; ++t) {
        void* p = a.alloc(size[e]);
        CheckAlloc(p);
        Mark(p, size[e], e);
        handed[2 * e + t] = p;
      }
    PairBarrier meet;
    uint64_t sum[2];
    auto body = [&](int t) {
      uint64_t s = 0;
      for (size_t e = 0; e < kFpEpisodes; ++e) {
        const uint32_t sz = size[e];
        meet.Wait();
        void* h = handed[2 * e + t];
        s += Peek(h);
        a.dealloc(h, sz);
        for (size_t i = 0; i < per; ++i) {
          void* p = a.alloc(sz);
          CheckAlloc(p);
          s += WriteObject(p, sz, i);
          a.dealloc(p, sz);
        }
      }
      sum[t] = s;
    };
    std::thread th0(body, 0), th1(body, 1);
    th0.join();
    th1.join();
    const uint64_t t1 = NowNs();
    acc += sum[0] + sum[1];
    if (r >= 0)
      per_object.push_back((t1 - t0) /
                           (2.0 * static_cast<double>(per * kFpEpisodes)));
  }
  Sink() += acc;
  EmitMetric("ns_per_object", per_object);
  EmitRssGrowth(base);
}

}  // namespace

WorkloadInfo WorkloadX() {
  WorkloadInfo w = Pattern(
      "X",
      "cross-thread: 2 threads allocate blocks of 8-16,000 B; half freed by "
      "their own thread, half by the other",
      2, "ns_per_block", "ns per block (alloc + hand-over + free), wall");
  w.params = [](const WorkloadInfo&, const Sizes& s) {
    return absl::StrFormat(
        "2 threads x %d blocks of %d-%d B (uniform in log size), in batches "
        "of %d; %d%% handed to the other thread (lock-free queue of %d), the "
        "rest freed by their own thread after the batch; one shared "
        "instance; wall ns per block",
        s.x_blocks, kXMin, kXMax, kXBatch, kXGivePct, kXQueue);
  };
  w.params_json = [](const WorkloadInfo&, const Sizes& s) {
    return absl::StrFormat(
        "{\"threads\":2,\"blocks_per_thread\":%d,\"min_bytes\":%d,"
        "\"max_bytes\":%d,\"batch\":%d,\"handed_pct\":%d,\"queue\":%d}",
        s.x_blocks, kXMin, kXMax, kXBatch, kXGivePct, kXQueue);
  };
  w.run = [](const WorkloadInfo& w, const AllocatorInfo& a,
             const ChildArgs& args) {
    WithAdapter(w, a, [&](auto make) { RunX(make, args); });
  };
  return w;
}

WorkloadInfo WorkloadFS() {
  WorkloadInfo w = Pattern(
      "FS",
      "active false sharing: 2 threads each allocate small objects, write "
      "each many times, free it",
      2, "ns_per_object", "ns per object (alloc + writes + free), wall");
  w.params = [](const WorkloadInfo&, const Sizes& s) {
    return absl::StrFormat(
        "2 threads x %d objects of %d-%d B (uniform; one size for %d "
        "objects, then the next, the same sizes in both threads); each "
        "object's 8-byte words written %d times, then freed; one shared "
        "instance; wall ns per object. An allocator that gives the two "
        "threads neighbours in one cache line makes every write a miss",
        s.fs_objects, kFsMin, kFsMax, kFsRun, kFsWrites);
  };
  w.params_json = [](const WorkloadInfo&, const Sizes& s) {
    return absl::StrFormat(
        "{\"threads\":2,\"objects_per_thread\":%d,\"min_bytes\":%d,"
        "\"max_bytes\":%d,\"size_run\":%d,\"writes\":%d}",
        s.fs_objects, kFsMin, kFsMax, kFsRun, kFsWrites);
  };
  w.run = [](const WorkloadInfo& w, const AllocatorInfo& a,
             const ChildArgs& args) {
    WithAdapter(w, a, [&](auto make) { RunFS(make, args); });
  };
  return w;
}

WorkloadInfo WorkloadFP() {
  WorkloadInfo w = Pattern(
      "FP",
      "passive false sharing: objects made by the main thread, freed by 2 "
      "workers, whose own objects then take their place",
      2, "ns_per_object", "ns per object (alloc + writes + free), wall");
  w.params = [](const WorkloadInfo&, const Sizes& s) {
    return absl::StrFormat(
        "%d episodes: the main thread allocates 2 objects of one size "
        "(%d-%d B) one after the other, hands one to each of 2 workers, "
        "which free it, then allocate, write (%d times a word) and free %d "
        "objects of that size each; wall ns per worker object, the main "
        "thread's allocations and the threads' start included",
        kFpEpisodes, kFsMin, kFsMax, kFsWrites,
        std::max<size_t>(1, s.fs_objects / kFpEpisodes));
  };
  w.params_json = [](const WorkloadInfo&, const Sizes& s) {
    return absl::StrFormat(
        "{\"threads\":2,\"episodes\":%d,\"objects_per_episode\":%d,"
        "\"min_bytes\":%d,\"max_bytes\":%d,\"writes\":%d}",
        kFpEpisodes, std::max<size_t>(1, s.fs_objects / kFpEpisodes), kFsMin,
        kFsMax, kFsWrites);
  };
  w.run = [](const WorkloadInfo& w, const AllocatorInfo& a,
             const ChildArgs& args) {
    WithAdapter(w, a, [&](auto make) { RunFP(make, args); });
  };
  return w;
}

}  // namespace bench
