// The scaling study: B's loop (each thread allocates its blocks, writing
// each, then frees them) at 1, 2, 4, 8 and 16 threads (B-scale), and F's
// producer -> ring -> consumer at 1, 2, 4 and 8 pairs (F-scale), in one
// child per allocator, reporting throughput (million blocks allocated and
// freed per second, wall time of all threads) per thread count. Thread-safe
// resources are shared by all threads, the others get one instance per
// thread, as in B. On a machine with fewer cores than threads the curve
// shows oversubscription; the report and the JSON carry the core count.

#include <pthread.h>
#include <sched.h>
#include <unistd.h>

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

constexpr int kBThreads[] = {1, 2, 4, 8, 16};
constexpr int kFPairs[] = {1, 2, 4, 8};
// Blocks per thread: a fifth of B's, so 16 threads hold what 3 of B do.
size_t ScaleBlocks(const Sizes& s) {
  return std::max<size_t>(s.b_blocks / 5, 1000);
}
size_t ScaleFBlocks(const Sizes& s) {
  return std::max<size_t>(s.f_blocks / 4, 1000);
}

// ---- B-scale ----------------------------------------------------------------
template <class Make>
void RunBScale(Make make, const ChildArgs& args, bool shared) {
  using A = AdapterOf<Make>;
  const size_t n = ScaleBlocks(args.sizes);
  const int max_threads = kBThreads[std::size(kBThreads) - 1];
  std::vector<std::unique_ptr<A>> inst;
  for (int t = 0; t < (shared ? 1 : max_threads); ++t) inst.push_back(make());
  std::vector<std::vector<void*>> ptrs(max_threads,
                                       std::vector<void*>(n, nullptr));
  uint64_t acc = 0;
  for (int threads : kBThreads) {
    std::vector<double> mops;
    for (int r = -args.warmup; r < args.rounds; ++r) {
      pthread_barrier_t barrier;
      pthread_barrier_init(&barrier, nullptr, static_cast<unsigned>(threads));
      std::vector<uint64_t> t0(threads), t1(threads), x(threads);
      std::vector<std::thread> pool;
      for (int t = 0; t < threads; ++t) {
        pool.emplace_back([&, t] {
          A& a = *inst[shared ? 0 : t];
          std::vector<void*>& v = ptrs[t];
          pthread_barrier_wait(&barrier);
          t0[t] = NowNs();
          for (size_t i = 0; i < n; ++i) {
            void* p = a.alloc(kBlock);
            CheckAlloc(p);
            std::memset(p, static_cast<int>(i), kBlock);
            v[i] = p;
          }
          x[t] = *static_cast<unsigned char*>(v[n / 2]);
          for (size_t i = 0; i < n; ++i) a.dealloc(v[i], kBlock);
          if (!shared) a.drop();
          t1[t] = NowNs();
        });
      }
      for (auto& th : pool) th.join();
      pthread_barrier_destroy(&barrier);
      const uint64_t b = *std::min_element(t0.begin(), t0.end());
      const uint64_t e = *std::max_element(t1.begin(), t1.end());
      for (uint64_t v : x) acc += v;
      if (r >= 0)
        mops.push_back(static_cast<double>(n) * threads * 1e3 /
                       static_cast<double>(e - b));
    }
    EmitMetric(absl::StrFormat("mops_t%d", threads).c_str(), mops);
  }
  Sink() += acc;
}

// ---- F-scale: producer/consumer pairs, each through its own ring ------------
class Ring {
 public:
  explicit Ring(size_t slots) : mask_(slots - 1), slot_(slots) {}
  void Push(void* p) {
    const size_t t = tail_.load(std::memory_order_relaxed);
    while (t - head_.load(std::memory_order_acquire) >= slot_.size()) Wait();
    slot_[t & mask_] = p;
    tail_.store(t + 1, std::memory_order_release);
  }
  void* Pop() {
    const size_t h = head_.load(std::memory_order_relaxed);
    while (h == tail_.load(std::memory_order_acquire)) Wait();
    void* p = slot_[h & mask_];
    head_.store(h + 1, std::memory_order_release);
    return p;
  }

 private:
  static void Wait() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
    sched_yield();  // oversubscribed: let the other side run
  }
  const size_t mask_;
  std::vector<void*> slot_;
  alignas(kCacheLine) std::atomic<size_t> head_{0};
  alignas(kCacheLine) std::atomic<size_t> tail_{0};
};

template <class Make>
void RunFScale(Make make, const ChildArgs& args) {
  using A = AdapterOf<Make>;
  const size_t n = ScaleFBlocks(args.sizes);
  auto inst = make();  // thread-safe only: one instance for every thread
  A& alloc = *inst;
  std::atomic<uint64_t> acc{0};
  for (int pairs : kFPairs) {
    std::vector<double> mops;
    for (int r = -args.warmup; r < args.rounds; ++r) {
      std::vector<std::unique_ptr<Ring>> rings;
      for (int p = 0; p < pairs; ++p)
        rings.push_back(std::make_unique<Ring>(kFRing));
      pthread_barrier_t barrier;
      pthread_barrier_init(&barrier, nullptr,
                           static_cast<unsigned>(2 * pairs + 1));
      std::vector<std::thread> pool;
      for (int p = 0; p < pairs; ++p) {
        Ring& ring = *rings[p];
        pool.emplace_back([&] {
          pthread_barrier_wait(&barrier);
          for (size_t i = 0; i < n; ++i) {
            void* b = alloc.alloc(kBlock);
            CheckAlloc(b);
            std::memcpy(b, &i, sizeof i);
            ring.Push(b);
          }
        });
        pool.emplace_back([&] {
          pthread_barrier_wait(&barrier);
          uint64_t sum = 0;
          for (size_t i = 0; i < n; ++i) {
            void* b = ring.Pop();
            uint64_t v;
            std::memcpy(&v, b, sizeof v);
            sum += v;
            alloc.dealloc(b, kBlock);
          }
          acc.fetch_add(sum, std::memory_order_relaxed);
        });
      }
      pthread_barrier_wait(&barrier);
      const uint64_t t0 = NowNs();
      for (auto& th : pool) th.join();
      const uint64_t t1 = NowNs();
      pthread_barrier_destroy(&barrier);
      if (r >= 0)
        mops.push_back(static_cast<double>(n) * pairs * 1e3 /
                       static_cast<double>(t1 - t0));
    }
    EmitMetric(absl::StrFormat("mops_p%d", pairs).c_str(), mops);
  }
  alloc.drop();
  Sink() += acc.load();
}

}  // namespace

WorkloadInfo WorkloadBScale() {
  WorkloadInfo w;
  w.id = "B-scale";
  w.title =
      "thread scaling of B: 1, 2, 4, 8, 16 threads, throughput (higher is "
      "better)";
  w.study = "scaling";
  w.study_of = "B";
  w.instances = true;
  w.metrics = {{"mops_t1", "Mops/s"},
               {"mops_t2", "Mops/s"},
               {"mops_t4", "Mops/s"},
               {"mops_t8", "Mops/s"},
               {"mops_t16", "Mops/s"}};
  w.primary = "mops_t2";
  w.unit_label = "million blocks allocated + freed per second";
  w.params = [](const WorkloadInfo&, const Sizes& s) {
    return absl::StrFormat(
        "each thread %d x %d B allocated (each written), then freed; all "
        "threads start at a barrier; throughput = blocks of all threads / "
        "wall time; %d cores online",
        ScaleBlocks(s), kBlock, sysconf(_SC_NPROCESSORS_ONLN));
  };
  w.params_json = [](const WorkloadInfo&, const Sizes& s) {
    return absl::StrFormat(
        "{\"blocks_per_thread\":%d,\"block_bytes\":%d,"
        "\"threads\":[1,2,4,8,16],\"cores\":%d}",
        ScaleBlocks(s), kBlock, sysconf(_SC_NPROCESSORS_ONLN));
  };
  w.run = [](const WorkloadInfo& w, const AllocatorInfo& a,
             const ChildArgs& args) {
    WithAdapter(w, a, [&](auto make) { RunBScale(make, args, a.thread_safe); });
  };
  return w;
}

WorkloadInfo WorkloadFScale() {
  WorkloadInfo w;
  w.id = "F-scale";
  w.title =
      "thread scaling of F: 1, 2, 4, 8 producer/consumer pairs, throughput "
      "(higher is better)";
  w.study = "scaling";
  w.study_of = "F";
  w.thread_safe_only = true;
  w.metrics = {{"mops_p1", "Mops/s"},
               {"mops_p2", "Mops/s"},
               {"mops_p4", "Mops/s"},
               {"mops_p8", "Mops/s"}};
  w.primary = "mops_p1";
  w.unit_label = "million blocks handed over and freed per second";
  w.params = [](const WorkloadInfo&, const Sizes& s) {
    return absl::StrFormat(
        "each pair: a producer allocates %d x %d B and hands them through its "
        "own SPSC ring (%d slots) to a consumer that frees them; one shared "
        "instance; throughput = blocks of all pairs / wall time; %d cores",
        ScaleFBlocks(s), kBlock, kFRing, sysconf(_SC_NPROCESSORS_ONLN));
  };
  w.params_json = [](const WorkloadInfo&, const Sizes& s) {
    return absl::StrFormat(
        "{\"blocks_per_pair\":%d,\"block_bytes\":%d,\"pairs\":[1,2,4,8],"
        "\"threads\":[2,4,8,16],\"cores\":%d}",
        ScaleFBlocks(s), kBlock, sysconf(_SC_NPROCESSORS_ONLN));
  };
  w.run = [](const WorkloadInfo& w, const AllocatorInfo& a,
             const ChildArgs& args) {
    WithAdapter(w, a, [&](auto make) { RunFScale(make, args); });
  };
  return w;
}

}  // namespace bench
