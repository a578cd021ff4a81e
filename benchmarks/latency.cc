// The latency study: A, C, E and G again (ids A-lat, C-lat, E-lat, G-lat),
// with one operation in N timed on its own by a cheap timer (latency.h), so
// the report shows the distribution (P50, P90, P99, P99.9, max) and not only
// the mean. An operation: A, C = one allocation with the block's write, or
// one free; E = one step (free a random live block, allocate a random size
// and write it); G = one whole request (its ~50 blocks, the string, their
// frees or the drop). Each child pools the samples of its timed rounds; the
// parent reports the median over processes (studies.cc).

#include "benchmarks/latency.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "absl/strings/str_format.h"
#include "benchmarks/workloads_common.h"

namespace bench {

namespace {
// The timer without fences: back-to-back reads show its own step.
uint64_t RawTick() {
#if defined(__x86_64__) || defined(__i386__)
  return __rdtsc();
#else
  return Tick();
#endif
}
}  // namespace

TickCalibration CalibrateTicks() {
  TickCalibration c;
#if defined(__x86_64__) || defined(__i386__)
  c.timer = "rdtsc";
  // Ticks per ns: both clocks over ~10 ms of spinning.
  const uint64_t n0 = NowNs(), k0 = Tick();
  uint64_t n1 = n0;
  while (n1 - n0 < 10000000) n1 = NowNs();
  const uint64_t k1 = Tick();
  c.ns_per_tick = static_cast<double>(n1 - n0) / static_cast<double>(k1 - k0);
#else
  c.timer = "clock_gettime";
#endif
  std::vector<uint64_t> d(2001);
  for (auto& x : d) {
    const uint64_t a = Tick();
    x = Tick() - a;
  }
  std::nth_element(d.begin(), d.begin() + d.size() / 2, d.end());
  c.overhead_ticks = static_cast<double>(d[d.size() / 2]);
  // Resolution: the smallest step between reads that differ (AMD's TSC
  // moves in steps of ~10 ns, a virtual machine's clock may be coarser).
  uint64_t step = UINT64_MAX, prev = RawTick();
  for (int i = 0, steps = 0; i < 1000000 && steps < 100; ++i) {
    const uint64_t t = RawTick();
    if (t != prev) {
      step = std::min(step, t - prev);
      prev = t;
      ++steps;
    }
  }
  c.resolution_ns = step == UINT64_MAX ? 0 : step * c.ns_per_tick;
  return c;
}

const std::vector<double>& LatencyCurveQuantiles() {
  static const std::vector<double> kQ = {0.5,    0.75,   0.9,     0.95,  0.98,
                                         0.99,   0.995,  0.998,   0.999, 0.9995,
                                         0.9998, 0.9999, 0.99999, 1.0};
  return kQ;
}

void LatencySamples::Emit(const TickCalibration& cal) {
  std::vector<uint32_t>& v = ticks_;
  std::sort(v.begin(), v.end());
  auto at = [&](double q) {
    if (v.empty()) return 0.0;
    // Nearest rank: the smallest sample with at least q of them at or below.
    size_t k =
        static_cast<size_t>(std::ceil(q * static_cast<double>(v.size())));
    k = std::min(v.size(), std::max<size_t>(k, 1)) - 1;
    const double ticks = std::max(0.0, v[k] - cal.overhead_ticks);
    return ticks * cal.ns_per_tick;
  };
  EmitMetric("p50_ns", {at(0.5)});
  EmitMetric("p90_ns", {at(0.9)});
  EmitMetric("p99_ns", {at(0.99)});
  EmitMetric("p999_ns", {at(0.999)});
  EmitMetric("max_ns", {at(1.0)});
  std::vector<double> curve;
  for (double q : LatencyCurveQuantiles()) curve.push_back(at(q));
  EmitMetric("lat_curve_ns", curve);
  EmitMetric("lat_samples", {static_cast<double>(v.size())});
  EmitMetric("timer_cost_ns", {cal.overhead_ticks * cal.ns_per_tick});
  EmitMetric("timer_resolution_ns", {cal.resolution_ns});
}

namespace {

// One operation in 17 (A, C, E) and one request in 5 (G) is timed: odd
// strides, so the sample does not lock onto the power-of-two periods of an
// allocator (a pool carves 4 KiB of 64 B blocks at a time: with a stride of
// 16, one sampled allocation in 4 was a carve's first block).
constexpr size_t kStride = 17;
constexpr size_t kGStride = 5;

// ---- A-lat: A's blocks; allocations (with their memset) and frees ----------
template <class Make>
void RunALat(Make make, const ChildArgs& args) {
  const size_t n = args.sizes.a_blocks;
  const TickCalibration cal = CalibrateTicks();
  auto a = make();
  std::vector<void*> ptrs(n, nullptr);
  LatencySamples samples(2 * (n / kStride + 1) * args.rounds);
  uint64_t acc = 0;
  for (int r = -args.warmup; r < args.rounds; ++r) {
    for (size_t i = 0; i < n; ++i) {
      const bool timed = r >= 0 && i % kStride == 0;
      const uint64_t t0 = timed ? Tick() : 0;
      void* p = a->alloc(kBlock);
      CheckAlloc(p);
      std::memset(p, static_cast<int>(i), kBlock);
      if (timed) samples.Add(t0, Tick());
      ptrs[i] = p;
    }
    acc += *static_cast<unsigned char*>(ptrs[n / 2]);
    for (size_t i = 0; i < n; ++i) {
      const bool timed = r >= 0 && i % kStride == kStride / 2;
      const uint64_t t0 = timed ? Tick() : 0;
      a->dealloc(ptrs[i], kBlock);
      if (timed) samples.Add(t0, Tick());
    }
    a->drop();
  }
  Sink() += acc;
  samples.Emit(cal);
}

// ---- C-lat: C's mixed sizes, freed shuffled ---------------------------------
template <class Make>
void RunCLat(Make make, const ChildArgs& args) {
  const size_t n = args.sizes.c_allocs;
  const CInput in = MakeCInput(n);
  const std::vector<uint16_t>& size = in.size;
  const std::vector<uint32_t>& order = in.order;
  const TickCalibration cal = CalibrateTicks();
  auto a = make();
  std::vector<void*> ptrs(n, nullptr);
  LatencySamples samples(2 * (n / kStride + 1) * args.rounds);
  uint64_t acc = 0;
  for (int r = -args.warmup; r < args.rounds; ++r) {
    for (size_t i = 0; i < n; ++i) {
      const bool timed = r >= 0 && i % kStride == 0;
      const uint64_t t0 = timed ? Tick() : 0;
      void* p = a->alloc(size[i]);
      CheckAlloc(p);
      Touch(p, size[i], i);
      if (timed) samples.Add(t0, Tick());
      ptrs[i] = p;
    }
    acc += *static_cast<unsigned char*>(ptrs[n / 2]);
    for (size_t j = 0; j < n; ++j) {
      const uint32_t k = order[j];
      const bool timed = r >= 0 && j % kStride == kStride / 2;
      const uint64_t t0 = timed ? Tick() : 0;
      a->dealloc(ptrs[k], size[k]);
      if (timed) samples.Add(t0, Tick());
    }
    a->drop();
  }
  Sink() += acc;
  samples.Emit(cal);
}

// ---- E-lat: E's churn, one step = free + allocate ---------------------------
template <class Make>
void RunELat(Make make, const ChildArgs& args) {
  const size_t live = args.sizes.e_live, steps = args.sizes.e_steps;
  const EInput in = MakeEInput(live, steps);
  const std::vector<uint16_t>& init_size = in.init_size;
  const std::vector<uint32_t>& idx = in.idx;
  const std::vector<uint16_t>& size = in.size;
  const TickCalibration cal = CalibrateTicks();
  auto a = make();
  std::vector<void*> ptr(live, nullptr);
  std::vector<uint16_t> cur(live);
  LatencySamples samples((steps / kStride + 1) * args.rounds);
  uint64_t acc = 0;
  for (int r = -args.warmup; r < args.rounds; ++r) {
    for (size_t k = 0; k < live; ++k) {
      ptr[k] = a->alloc(init_size[k]);
      CheckAlloc(ptr[k]);
      Touch(ptr[k], init_size[k], k);
      cur[k] = init_size[k];
    }
    for (size_t s = 0; s < steps; ++s) {
      const uint32_t k = idx[s];
      const bool timed = r >= 0 && s % kStride == 0;
      const uint64_t t0 = timed ? Tick() : 0;
      a->dealloc(ptr[k], cur[k]);
      void* p = a->alloc(size[s]);
      CheckAlloc(p);
      Touch(p, size[s], s);
      if (timed) samples.Add(t0, Tick());
      ptr[k] = p;
      cur[k] = size[s];
    }
    for (size_t k = 0; k < live; ++k) {
      acc += *static_cast<unsigned char*>(ptr[k]);
      a->dealloc(ptr[k], cur[k]);
    }
    a->drop();
  }
  Sink() += acc;
  samples.Emit(cal);
}

// ---- G-lat: G's requests, one request timed in kGStride ---------------------
template <class Make>
void RunGLat(Make make, const ChildArgs& args) {
  const size_t requests = args.sizes.g_requests;
  const GInput in = MakeGInput(requests);
  const TickCalibration cal = CalibrateTicks();
  auto a = make();
  const bool bulk = a->bump();
  void* blocks[kGMaxAllocs];
  LatencySamples samples((requests / kGStride + 1) * args.rounds);
  uint64_t acc = 0;
  for (int round = -args.warmup; round < args.rounds; ++round) {
    size_t off = 0;
    for (size_t r = 0; r < requests; ++r) {
      const bool timed = round >= 0 && r % kGStride == 0;
      const uint64_t t0 = timed ? Tick() : 0;
      const size_t c = in.count[r];
      acc += GRequest(*a, bulk, c, &in.size[off], &in.piece[off], blocks);
      if (timed) samples.Add(t0, Tick());
      off += c;
    }
  }
  Sink() += acc;
  samples.Emit(cal);
}

const std::vector<MetricInfo> kLatencyMetrics = {{"p50_ns", "ns"},
                                                 {"p90_ns", "ns"},
                                                 {"p99_ns", "ns"},
                                                 {"p999_ns", "ns"},
                                                 {"max_ns", "ns"}};

WorkloadInfo Latency(const char* id, const char* of, const char* title) {
  WorkloadInfo w;
  w.id = id;
  w.title = title;
  w.study = "latency";
  w.study_of = of;
  w.metrics = kLatencyMetrics;
  w.primary = "p99_ns";
  w.unit_label = "ns per operation (percentiles)";
  return w;
}

}  // namespace

WorkloadInfo WorkloadALat() {
  WorkloadInfo w = Latency(
      "A-lat", "A",
      "latency of A: one 64 B allocation (with its memset) or free in 17");
  w.params = [](const WorkloadInfo&, const Sizes& s) {
    return absl::StrFormat(
        "A's loop (%d x %d B allocated and written, then freed); every 17th "
        "allocation and every 17th free timed alone",
        s.a_blocks, kBlock);
  };
  w.params_json = [](const WorkloadInfo&, const Sizes& s) {
    return absl::StrFormat(
        "{\"blocks\":%d,\"block_bytes\":%d,\"sampled_one_in\":%d,"
        "\"operation\":\"alloc+memset or free\",\"threads\":1}",
        s.a_blocks, kBlock, kStride);
  };
  w.run = [](const WorkloadInfo& w, const AllocatorInfo& a,
             const ChildArgs& args) {
    WithAdapter(w, a, [&](auto make) { RunALat(make, args); });
  };
  return w;
}

WorkloadInfo WorkloadCLat() {
  WorkloadInfo w =
      Latency("C-lat", "C",
              "latency of C: one mixed-size allocation or shuffled free in 17");
  w.params = [](const WorkloadInfo&, const Sizes& s) {
    return absl::StrFormat(
        "C's loop (%d allocations of 64/128/256/512 B, freed shuffled); "
        "every 17th allocation (with its write) and free timed alone",
        s.c_allocs);
  };
  w.params_json = [](const WorkloadInfo&, const Sizes& s) {
    return absl::StrFormat(
        "{\"allocations\":%d,\"sampled_one_in\":%d,"
        "\"operation\":\"alloc+write or free\",\"threads\":1}",
        s.c_allocs, kStride);
  };
  w.run = [](const WorkloadInfo& w, const AllocatorInfo& a,
             const ChildArgs& args) {
    WithAdapter(w, a, [&](auto make) { RunCLat(make, args); });
  };
  return w;
}

WorkloadInfo WorkloadELat() {
  WorkloadInfo w = Latency("E-lat", "E",
                           "latency of E: one churn step (free + alloc) in 17");
  w.params = [](const WorkloadInfo&, const Sizes& s) {
    return absl::StrFormat(
        "E's churn (%d live blocks of %d..%d B, %d steps); every 17th step "
        "(free a random block, allocate a random size, write it) timed alone",
        s.e_live, kEMin, kEMax, s.e_steps);
  };
  w.params_json = [](const WorkloadInfo&, const Sizes& s) {
    return absl::StrFormat(
        "{\"live_blocks\":%d,\"steps\":%d,\"sampled_one_in\":%d,"
        "\"operation\":\"free+alloc step\",\"threads\":1}",
        s.e_live, s.e_steps, kStride);
  };
  w.run = [](const WorkloadInfo& w, const AllocatorInfo& a,
             const ChildArgs& args) {
    WithAdapter(w, a, [&](auto make) { RunELat(make, args); });
  };
  return w;
}

WorkloadInfo WorkloadGLat() {
  WorkloadInfo w = Latency("G-lat", "G",
                           "latency of G: one whole request in 5 (~50 blocks, "
                           "a growing string, frees or drop)");
  w.mono_first_chunk = kGMonoChunk;
  w.params = [](const WorkloadInfo&, const Sizes& s) {
    return absl::StrFormat(
        "G's requests (%d, each %d..%d blocks + a growing string, freed or "
        "dropped); every 5th request timed whole",
        s.g_requests, kGMinAllocs, kGMaxAllocs);
  };
  w.params_json = [](const WorkloadInfo&, const Sizes& s) {
    return absl::StrFormat(
        "{\"requests\":%d,\"sampled_one_in\":%d,\"operation\":\"request\","
        "\"threads\":1}",
        s.g_requests, kGStride);
  };
  w.run = [](const WorkloadInfo& w, const AllocatorInfo& a,
             const ChildArgs& args) {
    WithAdapter(w, a, [&](auto make) { RunGLat(make, args); });
  };
  return w;
}

}  // namespace bench
