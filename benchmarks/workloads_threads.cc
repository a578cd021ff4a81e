// The allocation loops across threads: B1, B2, B8 (threads at once, each
// allocating then freeing), P (short-lived pools, an instance per thread and
// round) and F (a producer's blocks freed by a consumer thread): their run
// functions and their entries of Workloads() (workloads.cc).

#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "absl/strings/str_format.h"
#include "benchmarks/workloads_common.h"

namespace bench {

namespace {

// ---- B: N threads at once, each n x 64 B then free --------------------------
template <class Make>
void RunB(Make make, const ChildArgs& args, int threads, bool shared) {
  using A = AdapterOf<Make>;
  const size_t n = args.sizes.b_blocks;
  std::vector<std::unique_ptr<A>> inst;
  for (int t = 0; t < (shared ? 1 : threads); ++t) inst.push_back(make());
  std::vector<std::vector<void*>> ptrs(threads, std::vector<void*>(n, nullptr));
  const long base = StatusKib("VmRSS");
  struct Times {
    uint64_t a0, a1, f0, f1;
    uint64_t acc;
  };
  Phases ph;
  uint64_t acc = 0;
  for (int r = -args.warmup; r < args.rounds; ++r) {
    pthread_barrier_t barrier;
    pthread_barrier_init(&barrier, nullptr, static_cast<unsigned>(threads));
    std::vector<Times> tm(threads);
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) {
      pool.emplace_back([&, t] {
        A& a = *inst[shared ? 0 : t];
        std::vector<void*>& v = ptrs[t];
        Times& my = tm[t];
        pthread_barrier_wait(&barrier);
        my.a0 = NowNs();
        for (size_t i = 0; i < n; ++i) {
          void* p = a.alloc(kBlock);
          CheckAlloc(p);
          std::memset(p, static_cast<int>(i), kBlock);
          v[i] = p;
        }
        my.a1 = NowNs();
        my.acc = *static_cast<unsigned char*>(v[n / 2]) +
                 reinterpret_cast<uintptr_t>(v[n - 1]);
        pthread_barrier_wait(&barrier);
        my.f0 = NowNs();
        for (size_t i = 0; i < n; ++i) a.dealloc(v[i], kBlock);
        if (!shared) a.drop();
        my.f1 = NowNs();
      });
    }
    for (auto& th : pool) th.join();
    pthread_barrier_destroy(&barrier);
    uint64_t a0 = UINT64_MAX, a1 = 0, f0 = UINT64_MAX, f1 = 0;
    for (const Times& x : tm) {
      a0 = std::min(a0, x.a0);
      a1 = std::max(a1, x.a1);
      f0 = std::min(f0, x.f0);
      f1 = std::max(f1, x.f1);
      acc += x.acc;
    }
    if (r >= 0) {
      const double ops = static_cast<double>(n) * threads;
      ph.alloc.push_back((a1 - a0) / ops);
      ph.free.push_back((f1 - f0) / ops);
      ph.total.push_back(((a1 - a0) + (f1 - f0)) / ops);
    }
  }
  Sink() += acc;
  ph.Emit();
  EmitRssGrowth(base);
}

// ---- P: short-lived pools: each thread makes its own instance per round --
// The way resources are used: a pool per request, task or thread, made and
// destroyed over and over. Each round, each of `threads` new threads makes
// an instance, allocates n x 64 B (writing each), frees them and destroys
// the instance; the same loop with instances made once and kept (dropped
// each round, as in B) is timed beside it.
template <class Make>
void RunP(Make make, const ChildArgs& args, int threads) {
  using A = AdapterOf<Make>;
  const size_t n = args.sizes.b_blocks;
  std::vector<std::vector<void*>> ptrs(threads, std::vector<void*>(n, nullptr));
  std::vector<std::unique_ptr<A>> kept;
  for (int t = 0; t < threads; ++t) kept.push_back(make());
  const long base = StatusKib("VmRSS");
  std::vector<double> fresh_ns, kept_ns, faults;
  uint64_t acc = 0;
  auto work = [&](A& a, int t) {
    std::vector<void*>& v = ptrs[t];
    for (size_t i = 0; i < n; ++i) {
      void* p = a.alloc(kBlock);
      CheckAlloc(p);
      std::memset(p, static_cast<int>(i), kBlock);
      v[i] = p;
    }
    const uint64_t x = *static_cast<unsigned char*>(v[n / 2]);
    for (size_t i = 0; i < n; ++i) a.dealloc(v[i], kBlock);
    a.drop();
    return x;
  };
  // One round: wall time per block, and minor faults.
  auto round = [&](bool fresh) {
    std::vector<uint64_t> xs(threads);
    struct rusage r0, r1;
    getrusage(RUSAGE_SELF, &r0);
    const uint64_t t0 = NowNs();
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t)
      pool.emplace_back([&, t] {
        if (fresh) {
          std::unique_ptr<A> a = make();
          xs[t] = work(*a, t);
        } else {
          xs[t] = work(*kept[t], t);
        }
      });
    for (auto& th : pool) th.join();
    const uint64_t t1 = NowNs();
    getrusage(RUSAGE_SELF, &r1);
    for (uint64_t x : xs) acc += x;
    return std::make_pair(
        static_cast<double>(t1 - t0) / (static_cast<double>(n) * threads),
        static_cast<double>(r1.ru_minflt - r0.ru_minflt));
  };
  // Kept first, then those instances destroyed: what they hold is gone
  // before the instances made per round run.
  for (int r = -args.warmup; r < args.rounds; ++r) {
    const auto k = round(false);
    if (r >= 0) kept_ns.push_back(k.first);
  }
  kept.clear();
  for (int r = -args.warmup; r < args.rounds; ++r) {
    const auto f = round(true);
    if (r >= 0) {
      fresh_ns.push_back(f.first);
      faults.push_back(f.second);
    }
  }
  Sink() += acc;
  EmitMetric("total_ns_per_op", fresh_ns);
  EmitMetric("kept_ns_per_op", kept_ns);
  EmitMetric("minor_faults_per_round", faults);
  EmitRssGrowth(base);
}

// ---- F: producer -> SPSC ring (workloads_common.h) -> consumer frees -----
template <class Make>
void RunF(Make make, const ChildArgs& args) {
  using A = AdapterOf<Make>;
  const size_t n = args.sizes.f_blocks;
  auto a = make();
  const long base = StatusKib("VmRSS");
  std::vector<double> per_block;
  uint64_t acc = 0;
  for (int r = -args.warmup; r < args.rounds; ++r) {
    SpscRing ring(kFRing);
    std::atomic<int> ready{0};
    uint64_t t0 = 0, t1 = 0, consumed = 0;
    auto wait_both = [&ready] {
      ready.fetch_add(1, std::memory_order_acq_rel);
      while (ready.load(std::memory_order_acquire) < 2) sched_yield();
    };
    A& alloc = *a;
    std::thread producer([&] {
      wait_both();
      t0 = NowNs();
      for (size_t i = 0; i < n; ++i) {
        void* p = alloc.alloc(kBlock);
        CheckAlloc(p);
        Touch(p, kBlock, i);
        ring.Push(p);
      }
    });
    std::thread consumer([&] {
      wait_both();
      uint64_t sum = 0;
      for (size_t i = 0; i < n; ++i) {
        void* p = ring.Pop();
        sum += *static_cast<unsigned char*>(p);
        alloc.dealloc(p, kBlock);
      }
      t1 = NowNs();
      consumed = sum;
    });
    producer.join();
    consumer.join();
    acc += consumed;
    if (r >= 0) per_block.push_back((t1 - t0) / static_cast<double>(n));
  }
  Sink() += acc;
  EmitMetric("ns_per_block", per_block);
  EmitRssGrowth(base);
}

}  // namespace

WorkloadInfo WorkloadB(int threads) {
  static const char* const kIds[] = {"B1", "B2", "B8"};
  static const char* const kTitles[] = {
      "1 thread: allocate 64 B blocks (writing each), then free them",
      "2 threads at once: each allocates 64 B blocks (writing each), then "
      "frees them",
      "8 threads at once: each allocates 64 B blocks (writing each), then "
      "frees them"};
  const int i = threads == 1 ? 0 : threads == 2 ? 1 : 2;
  WorkloadInfo w = AllocFree(kIds[i], kTitles[i]);
  w.threads = threads;
  w.instances = true;
  w.params = [](const WorkloadInfo& w, const Sizes& s) {
    return absl::StrFormat(
        "%d thread(s) x %d x %d B each; wall time of each phase / all blocks "
        "of all threads; "
        "thread-safe resources shared, others one per thread",
        w.threads, s.b_blocks, kBlock);
  };
  w.params_json = [](const WorkloadInfo& w, const Sizes& s) {
    return absl::StrFormat(
        "{\"blocks_per_thread\":%d,\"block_bytes\":%d,\"threads\":%d}",
        s.b_blocks, kBlock, w.threads);
  };
  w.run = [](const WorkloadInfo& w, const AllocatorInfo& a,
             const ChildArgs& args) {
    WithAdapter(w, a,
                [&](auto make) { RunB(make, args, w.threads, a.thread_safe); });
  };
  return w;
}

WorkloadInfo WorkloadP() {
  WorkloadInfo w;
  w.id = "P";
  w.title =
      "short-lived pools: 2 threads, each makes its own instance per round, "
      "allocates 64 B blocks (writing each), frees them, destroys it";
  w.threads = 2;
  w.metrics = {{"total_ns_per_op", "ns"},
               {"kept_ns_per_op", "ns"},
               {"minor_faults_per_round", "faults"},
               {"peak_rss_growth_kib", "KiB"}};
  w.primary = "total_ns_per_op";
  w.unit_label = "ns per block (make + alloc + free + destroy)";
  w.params = [](const WorkloadInfo& w, const Sizes& s) {
    return absl::StrFormat(
        "%d threads, each round: make an instance, %d x %d B, free, destroy; "
        "wall time per block of the round (threads started and joined "
        "inside); kept = the same with instances made once and kept",
        w.threads, s.b_blocks, kBlock);
  };
  w.params_json = [](const WorkloadInfo& w, const Sizes& s) {
    return absl::StrFormat(
        "{\"blocks_per_thread\":%d,\"block_bytes\":%d,\"threads\":%d}",
        s.b_blocks, kBlock, w.threads);
  };
  w.notes = [](const WorkloadInfo&, const Sizes&) -> std::string {
    return "   minor_faults_per_round: page faults of a round of instances "
           "made per round (memory the process had to fault in)\n";
  };
  w.run = [](const WorkloadInfo& w, const AllocatorInfo& a,
             const ChildArgs& args) {
    WithAdapter(w, a, [&](auto make) { RunP(make, args, w.threads); });
  };
  return w;
}

WorkloadInfo WorkloadF() {
  WorkloadInfo w;
  w.id = "F";
  w.title = "cross-thread: producer allocates, SPSC ring, consumer frees";
  w.threads = 2;
  w.thread_safe_only = true;
  w.instances = true;
  w.metrics = {{"ns_per_block", "ns"}, {"peak_rss_growth_kib", "KiB"}};
  w.primary = "ns_per_block";
  w.unit_label = "ns per block (alloc + hand-over + free)";
  w.params = [](const WorkloadInfo&, const Sizes& s) {
    return absl::StrFormat(
        "%d x %d B through a lock-free SPSC ring of %d slots; ns per block, "
        "wall time "
        "(alloc + hand-over + free)",
        s.f_blocks, kBlock, kFRing);
  };
  w.params_json = [](const WorkloadInfo&, const Sizes& s) {
    return absl::StrFormat(
        "{\"blocks\":%d,\"block_bytes\":%d,\"ring_slots\":%d,\"threads\":2}",
        s.f_blocks, kBlock, kFRing);
  };
  w.notes = [](const WorkloadInfo&, const Sizes&) -> std::string {
    return "   F needs both cores: with other load on the machine, "
           "hand-over stalls dominate\n";
  };
  w.run = [](const WorkloadInfo& w, const AllocatorInfo& a,
             const ChildArgs& args) {
    WithAdapter(w, a, [&](auto make) { RunF(make, args); });
  };
  return w;
}

}  // namespace bench
