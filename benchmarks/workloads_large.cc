// Big buffers: L1, L2 (a set of buffers of 1-32 MiB, each replaced at random
// by a zero-filled one of a new size; 1 and 2 threads) and BP (a pipeline:
// one thread allocates blocks of 64 KiB-4 MiB and writes their pages, a
// second one frees them): their run functions and their entries of
// Workloads() (workloads.cc).
//
// Here the allocator's choice is what it does with a freed big block: give
// it back to the OS (the next one is faulted in again, page by page), keep
// it for reuse, or split it. So besides the time, both report the minor page
// faults of the timed rounds (getrusage) and the peak RSS.

#include <pthread.h>
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

long MinorFaults() {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_minflt;
}

// ---- L: a set of big buffers, each replaced at random -----------------------
struct LInput {
  std::vector<uint32_t> init_size;  // the set's buffers before the first round
  std::vector<uint8_t> idx;         // replacement s frees buffer idx[s]
  std::vector<uint32_t> size;       // and allocates size[s] bytes in its place
};

LInput MakeLInput(const Sizes& s, uint64_t seed) {
  Rng rng(seed);
  const auto lo = static_cast<uint32_t>(s.l_min_bytes),
             hi = static_cast<uint32_t>(s.l_max_bytes);
  LInput in;
  in.init_size.resize(s.l_buffers);
  for (auto& n : in.init_size) n = rng.Between(lo, hi);
  in.idx.resize(s.l_replacements);
  in.size.resize(s.l_replacements);
  for (size_t k = 0; k < s.l_replacements; ++k) {
    in.idx[k] =
        static_cast<uint8_t>(rng.Below(static_cast<uint32_t>(s.l_buffers)));
    in.size[k] = rng.Between(lo, hi);
  }
  return in;
}

// A buffer of n bytes from a, zero-filled as `new char[n]()` does. The
// pointer is hidden first, so the compiler cannot turn malloc + memset into
// calloc (which skips the zeroing of fresh pages, and so their faults).
template <class A>
char* ZeroedBuffer(A& a, size_t n) {
  char* p = Opaque(static_cast<char*>(a.alloc(n)));
  CheckAlloc(p);
  std::memset(p, 0, n);
  return p;
}

// Each thread has its own set (its own sequence, same shape); every round
// runs the same replacements from where the last one left the set. The sets
// are allocated before the warm-up and freed after the last round, untimed.
template <class Make>
void RunL(Make make, const ChildArgs& args, int threads, bool shared) {
  using A = AdapterOf<Make>;
  const Sizes& sz = args.sizes;
  std::vector<LInput> in;
  for (int t = 0; t < threads; ++t) in.push_back(MakeLInput(sz, 0x1A46E + t));
  std::vector<std::unique_ptr<A>> inst;
  for (int t = 0; t < (shared ? 1 : threads); ++t) inst.push_back(make());
  std::vector<std::vector<char*>> ptr(threads,
                                      std::vector<char*>(sz.l_buffers));
  std::vector<std::vector<uint32_t>> cur(threads);
  const long base = StatusKib("VmRSS");
  for (int t = 0; t < threads; ++t) {
    cur[t] = in[t].init_size;
    for (size_t k = 0; k < sz.l_buffers; ++k)
      ptr[t][k] = ZeroedBuffer(*inst[shared ? 0 : t], cur[t][k]);
  }
  std::vector<double> ms, faults;
  uint64_t acc = 0;
  for (int r = -args.warmup; r < args.rounds; ++r) {
    pthread_barrier_t barrier;
    pthread_barrier_init(&barrier, nullptr, static_cast<unsigned>(threads));
    std::vector<uint64_t> t0(threads), t1(threads), sum(threads);
    const long f0 = MinorFaults();
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) {
      pool.emplace_back([&, t] {
        A& a = *inst[shared ? 0 : t];
        const LInput& my = in[t];
        std::vector<char*>& p = ptr[t];
        std::vector<uint32_t>& c = cur[t];
        uint64_t x = 0;
        pthread_barrier_wait(&barrier);
        t0[t] = NowNs();
        for (size_t s = 0; s < my.idx.size(); ++s) {
          const size_t k = my.idx[s];
          a.dealloc(p[k], c[k]);
          p[k] = ZeroedBuffer(a, my.size[s]);
          c[k] = my.size[s];
          x += static_cast<unsigned char>(p[k][c[k] / 2]) +
               (reinterpret_cast<uintptr_t>(p[k]) >> 12);
        }
        t1[t] = NowNs();
        sum[t] = x;
      });
    }
    for (auto& th : pool) th.join();
    const long f1 = MinorFaults();
    pthread_barrier_destroy(&barrier);
    for (uint64_t x : sum) acc += x;
    if (r >= 0) {
      const uint64_t start = *std::min_element(t0.begin(), t0.end()),
                     end = *std::max_element(t1.begin(), t1.end());
      const double ops = static_cast<double>(sz.l_replacements) * threads;
      ms.push_back((end - start) / ops / 1e6);
      faults.push_back((f1 - f0) / ops);
    }
  }
  for (int t = 0; t < threads; ++t)
    for (size_t k = 0; k < sz.l_buffers; ++k)
      inst[shared ? 0 : t]->dealloc(ptr[t][k], cur[t][k]);
  for (auto& a : inst) a->drop();
  Sink() += acc;
  EmitMetric("ms_per_replacement", ms);
  EmitMetric("minor_faults_per_op", faults);
  EmitRssGrowth(base);
}

// ---- BP: producer allocates and writes, SPSC ring, consumer frees -----------
template <class Make>
void RunBP(Make make, const ChildArgs& args) {
  using A = AdapterOf<Make>;
  const size_t n = args.sizes.bp_blocks;
  std::vector<uint32_t> size(n);
  Rng rng(0xB10C);
  for (auto& s : size)
    s = rng.Between(static_cast<uint32_t>(args.sizes.bp_min_bytes),
                    static_cast<uint32_t>(args.sizes.bp_max_bytes));
  auto a = make();
  const long base = StatusKib("VmRSS");
  std::vector<double> us, faults;
  uint64_t acc = 0;
  for (int r = -args.warmup; r < args.rounds; ++r) {
    SpscRing ring(kBPRing);
    std::atomic<int> ready{0};
    uint64_t t0 = 0, t1 = 0, consumed = 0;
    auto wait_both = [&ready] {
      ready.fetch_add(1, std::memory_order_acq_rel);
      while (ready.load(std::memory_order_acquire) < 2) sched_yield();
    };
    A& alloc = *a;
    const long f0 = MinorFaults();
    std::thread producer([&] {
      wait_both();
      t0 = NowNs();
      for (size_t i = 0; i < n; ++i) {
        char* p = static_cast<char*>(alloc.alloc(size[i]));
        CheckAlloc(p);
        // Every page written once (its first 8 bytes), and the last 8 bytes:
        // each page faults in if the allocator hands out fresh memory.
        const uint64_t v = i;
        for (size_t off = 0; off + 8 <= size[i]; off += kPage)
          std::memcpy(p + off, &v, 8);
        std::memcpy(p + size[i] - 8, &v, 8);
        ring.Push(p);
      }
    });
    std::thread consumer([&] {
      wait_both();
      uint64_t sum = 0;
      for (size_t i = 0; i < n; ++i) {
        char* p = static_cast<char*>(ring.Pop());
        sum += static_cast<unsigned char>(p[0]) +
               static_cast<unsigned char>(p[size[i] - 1]);
        alloc.dealloc(p, size[i]);
      }
      t1 = NowNs();
      consumed = sum;
    });
    producer.join();
    consumer.join();
    const long f1 = MinorFaults();
    acc += consumed;
    if (r >= 0) {
      us.push_back((t1 - t0) / static_cast<double>(n) / 1e3);
      faults.push_back((f1 - f0) / static_cast<double>(n));
    }
  }
  a->drop();
  Sink() += acc;
  EmitMetric("us_per_block", us);
  EmitMetric("minor_faults_per_op", faults);
  EmitRssGrowth(base);
}

constexpr double kMiB = 1 << 20;

std::string FaultsNote(const char* op) {
  return absl::StrFormat(
      "   faults = minor page faults of the timed rounds per %s (getrusage, "
      "the whole process):\n   each a %d KiB page the allocator had "
      "to take from the OS again (or for the first time)\n",
      op, kPage / 1024);
}

}  // namespace

WorkloadInfo WorkloadL(int threads) {
  WorkloadInfo w;
  w.id = threads == 1 ? "L1" : "L2";
  w.title = threads == 1
                ? "big buffers: a set of 1-32 MiB buffers, each replaced at "
                  "random by a zero-filled one of a new size"
                : "big buffers, 2 threads at once: each its own set of 1-32 "
                  "MiB buffers, replaced at random (zero-filled)";
  w.threads = threads;
  w.instances = threads > 1;
  w.no_bump = true;
  w.metrics = {{"ms_per_replacement", "ms"},
               {"minor_faults_per_op", "faults"},
               {"peak_rss_growth_kib", "KiB"}};
  w.primary = "ms_per_replacement";
  w.unit_label = "ms per replacement (free + alloc + zero-fill)";
  w.params = [](const WorkloadInfo& w, const Sizes& s) {
    return absl::StrFormat(
        "%d thread(s), each with a set of %d buffers of %.2f..%.2f MiB "
        "(uniform, seeded); a round: %d replacements per thread (free a "
        "random buffer, allocate one of a new size, memset it to 0); wall "
        "time / all replacements of all threads%s",
        w.threads, s.l_buffers, s.l_min_bytes / kMiB, s.l_max_bytes / kMiB,
        s.l_replacements,
        w.threads > 1 ? "; thread-safe resources shared, others one per thread"
                      : "");
  };
  w.params_json = [](const WorkloadInfo& w, const Sizes& s) {
    return absl::StrFormat(
        "{\"buffers_per_thread\":%d,\"replacements_per_thread\":%d,"
        "\"min_bytes\":%d,\"max_bytes\":%d,\"zero_fill\":\"memset\","
        "\"threads\":%d}",
        s.l_buffers, s.l_replacements, s.l_min_bytes, s.l_max_bytes, w.threads);
  };
  w.notes = [](const WorkloadInfo&, const Sizes& s) -> std::string {
    return FaultsNote("replacement") +
           absl::StrFormat(
               "   RSS+ includes the live set: %d buffers of %.1f MiB on "
               "average per thread\n",
               s.l_buffers, (s.l_min_bytes + s.l_max_bytes) / 2 / kMiB);
  };
  w.run = [](const WorkloadInfo& w, const AllocatorInfo& a,
             const ChildArgs& args) {
    WithAdapter(w, a,
                [&](auto make) { RunL(make, args, w.threads, a.thread_safe); });
  };
  return w;
}

WorkloadInfo WorkloadBP() {
  WorkloadInfo w;
  w.id = "BP";
  w.title =
      "buffer pipeline: a producer allocates 64 KiB-4 MiB blocks and writes "
      "their pages, an SPSC ring, a consumer frees them";
  w.threads = 2;
  w.thread_safe_only = true;
  w.instances = true;
  w.no_bump = true;
  w.metrics = {{"us_per_block", "us"},
               {"minor_faults_per_op", "faults"},
               {"peak_rss_growth_kib", "KiB"}};
  w.primary = "us_per_block";
  w.unit_label = "us per block (alloc + page writes + hand-over + free)";
  w.params = [](const WorkloadInfo&, const Sizes& s) {
    return absl::StrFormat(
        "%d blocks of %.2f..%.2f MiB (uniform, seeded), each written at the "
        "start of every %d KiB page and in its last 8 bytes, through a "
        "lock-free SPSC ring of %d slots to a thread that frees them; wall "
        "time per block",
        s.bp_blocks, s.bp_min_bytes / kMiB, s.bp_max_bytes / kMiB, kPage / 1024,
        kBPRing);
  };
  w.params_json = [](const WorkloadInfo&, const Sizes& s) {
    return absl::StrFormat(
        "{\"blocks\":%d,\"min_bytes\":%d,\"max_bytes\":%d,\"write_stride\":%d,"
        "\"ring_slots\":%d,\"threads\":2}",
        s.bp_blocks, s.bp_min_bytes, s.bp_max_bytes, kPage, kBPRing);
  };
  w.notes = [](const WorkloadInfo&, const Sizes&) -> std::string {
    return FaultsNote("block");
  };
  w.run = [](const WorkloadInfo& w, const AllocatorInfo& a,
             const ChildArgs& args) {
    WithAdapter(w, a, [&](auto make) { RunBP(make, args); });
  };
  return w;
}

}  // namespace bench
