// Per-operation latency for the latency study (latency.cc): a cheap timer
// read around one operation in N, calibrated against CLOCK_MONOTONIC and
// corrected for its own cost, and the percentiles a child reports.
#ifndef PMR_BENCHMARKS_LATENCY_H_
#define PMR_BENCHMARKS_LATENCY_H_

#include <time.h>

#include <cstdint>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

namespace bench {

// A timestamp in ticks: rdtsc fenced on both sides on x86 (so the operation
// between two reads is neither started early nor finished late), the
// monotonic clock in ns elsewhere.
inline uint64_t Tick() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_lfence();
  const uint64_t t = __rdtsc();
  _mm_lfence();
  return t;
#else
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000u +
         static_cast<uint64_t>(ts.tv_nsec);
#endif
}

// The timer's calibration, measured in the child before its rounds.
struct TickCalibration {
  double ns_per_tick = 1;
  double overhead_ticks = 0;  // median of back-to-back Tick() pairs
  double resolution_ns = 0;   // the smallest step the timer advances by
  const char* timer = "";     // "rdtsc" or "clock_gettime"
};
TickCalibration CalibrateTicks();

// The samples of one process: a reserved buffer, so sampling never allocates
// while the workload runs.
class LatencySamples {
 public:
  explicit LatencySamples(size_t capacity) { ticks_.reserve(capacity); }
  void Add(uint64_t t0, uint64_t t1) {
    if (ticks_.size() < ticks_.capacity())
      ticks_.push_back(
          static_cast<uint32_t>(t1 - t0 > UINT32_MAX ? UINT32_MAX : t1 - t0));
  }
  // Emits p50_ns, p90_ns, p99_ns, p999_ns, max_ns (one value each: this
  // process's samples, all timed rounds pooled), the curve lat_curve_ns at
  // LatencyCurveQuantiles(), the sample count and the timer's cost.
  void Emit(const TickCalibration& cal);

 private:
  std::vector<uint32_t> ticks_;
};

// The quantiles of the percentile plot (0.5 .. 0.99999 and 1 = max).
const std::vector<double>& LatencyCurveQuantiles();

}  // namespace bench

#endif  // PMR_BENCHMARKS_LATENCY_H_
