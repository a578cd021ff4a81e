// The one-thread allocation loops: A (64 B blocks, then free all), C (mixed
// sizes freed shuffled), D (A once, resident memory), E (churn) and G (request
// scoped, a string grown beside the blocks): their run functions and their
// entries of Workloads() (workloads.cc).

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "absl/strings/str_format.h"
#include "benchmarks/workloads_common.h"

namespace bench {

namespace {

// ---- A: one thread, n x 64 B, each written, then free all ------------------
template <class Make>
void RunA(Make make, const ChildArgs& args) {
  auto a = make();
  std::vector<void*> ptrs(args.sizes.a_blocks, nullptr);
  const long base = StatusKib("VmRSS");
  Phases ph;
  uint64_t acc = 0;
  for (int r = -args.warmup; r < args.rounds; ++r) {
    uint64_t t[3];
    ARound(*a, ptrs, &acc, t);
    if (r >= 0) ph.Add(t[0], t[1], t[2], static_cast<double>(ptrs.size()));
  }
  Sink() += acc;
  ph.Emit();
  EmitRssGrowth(base);
}

// ---- D: workload A once, in a fresh process, measuring resident memory -----
template <class Make>
void RunD(Make make, const ChildArgs& args) {
  const size_t n = args.sizes.a_blocks;
  auto a = make();
  std::vector<void*> ptrs(n, nullptr);  // touched: part of the baseline
  const long base = StatusKib("VmRSS");
  uint64_t acc = 0;
  for (size_t i = 0; i < n; ++i) {
    void* p = a->alloc(kBlock);
    CheckAlloc(p);
    std::memset(p, static_cast<int>(i), kBlock);
    ptrs[i] = p;
  }
  const long hwm = StatusKib("VmHWM");
  acc += *static_cast<unsigned char*>(ptrs[n / 2]);
  for (size_t i = 0; i < n; ++i) a->dealloc(ptrs[i], kBlock);
  a->drop();
  const long after = StatusKib("VmRSS");
  Sink() += acc;
  EmitMetric("peak_rss_kib", {static_cast<double>(hwm - base)});
  EmitMetric("retained_after_free_kib",
             {static_cast<double>(std::max(0L, after - base))});
}

// ---- C: mixed sizes 64/128/256/512 (4:3:2:1), freed shuffled ----------------
template <class Make>
void RunC(Make make, const ChildArgs& args) {
  const CInput in = MakeCInput(args.sizes.c_allocs);
  auto a = make();
  std::vector<void*> ptrs(in.size.size(), nullptr);
  const long base = StatusKib("VmRSS");
  Phases ph;
  uint64_t acc = 0;
  for (int r = -args.warmup; r < args.rounds; ++r) {
    uint64_t t[3];
    CRound(*a, in, ptrs, &acc, t);
    if (r >= 0) ph.Add(t[0], t[1], t[2], static_cast<double>(ptrs.size()));
  }
  Sink() += acc;
  ph.Emit();
  EmitRssGrowth(base);
}

// ---- E: churn ---------------------------------------------------------------
template <class Make>
void RunE(Make make, const ChildArgs& args) {
  const EInput in = MakeEInput(args.sizes.e_live, args.sizes.e_steps);
  auto a = make();
  std::vector<void*> ptr(in.init_size.size(), nullptr);
  std::vector<uint16_t> cur(in.init_size.size());
  const long base = StatusKib("VmRSS");
  std::vector<double> per_step;
  uint64_t acc = 0;
  for (int r = -args.warmup; r < args.rounds; ++r) {
    uint64_t t[2];
    ERound(*a, in, ptr, cur, &acc, t);
    if (r >= 0)
      per_step.push_back((t[1] - t[0]) / static_cast<double>(in.idx.size()));
  }
  Sink() += acc;
  EmitMetric("ns_per_step", per_step);
  EmitRssGrowth(base);
}

// ---- G: request-scoped arena
// --------------------------------------------------
template <class Make>
void RunG(Make make, const ChildArgs& args) {
  const size_t requests = args.sizes.g_requests;
  const GInput in = MakeGInput(requests);
  auto a = make();
  const bool bulk = a->bump();
  void* blocks[kGMaxAllocs];
  const long base = StatusKib("VmRSS");
  std::vector<double> per_request;
  uint64_t acc = 0;
  for (int round = -args.warmup; round < args.rounds; ++round) {
    const uint64_t t0 = NowNs();
    size_t off = 0;
    for (size_t r = 0; r < requests; ++r) {
      const size_t c = in.count[r];
      acc += GRequest(*a, bulk, c, &in.size[off], &in.piece[off], blocks);
      off += c;
    }
    const uint64_t t1 = NowNs();
    if (round >= 0)
      per_request.push_back((t1 - t0) / static_cast<double>(requests));
  }
  Sink() += acc;
  EmitMetric("ns_per_request", per_request);
  EmitRssGrowth(base);
}

}  // namespace

CInput MakeCInput(size_t n) {
  static const uint16_t kBySlot[10] = {64,  64,  64,  64,  128,
                                       128, 128, 256, 256, 512};
  Rng rng(0xC0FFEE);
  CInput in;
  in.size.resize(n);
  for (size_t i = 0; i < n; ++i) in.size[i] = kBySlot[rng.Below(10)];
  in.order.resize(n);
  for (size_t i = 0; i < n; ++i) in.order[i] = static_cast<uint32_t>(i);
  for (size_t i = n - 1; i > 0; --i)
    std::swap(in.order[i], in.order[rng.Below(static_cast<uint32_t>(i + 1))]);
  return in;
}

EInput MakeEInput(size_t live, size_t steps) {
  Rng rng(0xE0E0);
  EInput in;
  in.init_size.resize(live);
  for (auto& s : in.init_size)
    s = static_cast<uint16_t>(rng.Between(kEMin, kEMax));
  in.idx.resize(steps);
  in.size.resize(steps);
  for (size_t s = 0; s < steps; ++s) {
    in.idx[s] = rng.Below(static_cast<uint32_t>(live));
    in.size[s] = static_cast<uint16_t>(rng.Between(kEMin, kEMax));
  }
  return in;
}

GInput MakeGInput(size_t requests) {
  Rng rng(0x6A7E);
  GInput in;
  in.count.resize(requests);
  in.size.reserve(requests * (kGMinAllocs + kGMaxAllocs) / 2 + 64);
  in.piece.reserve(in.size.capacity());
  for (size_t r = 0; r < requests; ++r) {
    in.count[r] = static_cast<uint8_t>(rng.Between(kGMinAllocs, kGMaxAllocs));
    for (size_t j = 0; j < in.count[r]; ++j) {
      in.size.push_back(static_cast<uint16_t>(rng.Between(kGMin, kGMax)));
      in.piece.push_back(static_cast<uint8_t>(rng.Between(1, kGPieceMax)));
    }
  }
  return in;
}

WorkloadInfo WorkloadA() {
  WorkloadInfo w = AllocFree(
      "A", "one thread: allocate 64 B blocks (writing each), then free all");
  w.params = [](const WorkloadInfo&, const Sizes& s) {
    return absl::StrFormat(
        "%d x %d B, alloc (incl. 64 B memset) and free timed separately; ns "
        "per block",
        s.a_blocks, kBlock);
  };
  w.params_json = [](const WorkloadInfo&, const Sizes& s) {
    return absl::StrFormat("{\"blocks\":%d,\"block_bytes\":%d,\"threads\":1}",
                           s.a_blocks, kBlock);
  };
  w.run = [](const WorkloadInfo& w, const AllocatorInfo& a,
             const ChildArgs& args) {
    WithAdapter(w, a, [&](auto make) { RunA(make, args); });
  };
  return w;
}

WorkloadInfo WorkloadC() {
  WorkloadInfo w = AllocFree(
      "C",
      "one thread: mixed sizes 64/128/256/512 B (4:3:2:1), freed in shuffled "
      "order");
  w.params = [](const WorkloadInfo&, const Sizes& s) {
    return absl::StrFormat(
        "%d allocations of 64/128/256/512 B drawn 4:3:2:1 (16 B written each), "
        "freed in a "
        "shuffled order; ns per block",
        s.c_allocs);
  };
  w.params_json = [](const WorkloadInfo&, const Sizes& s) {
    return absl::StrFormat(
        "{\"allocations\":%d,\"sizes\":[64,128,256,512],\"ratio\":[4,3,2,1],"
        "\"threads\":1}",
        s.c_allocs);
  };
  w.run = [](const WorkloadInfo& w, const AllocatorInfo& a,
             const ChildArgs& args) {
    WithAdapter(w, a, [&](auto make) { RunC(make, args); });
  };
  return w;
}

WorkloadInfo WorkloadD() {
  WorkloadInfo w;
  w.id = "D";
  w.title =
      "peak resident memory of workload A, each allocator in a fresh process";
  w.memory = true;
  w.metrics = {{"peak_rss_kib", "KiB"}, {"retained_after_free_kib", "KiB"}};
  w.primary = "peak_rss_kib";
  w.unit_label = "peak resident MiB";
  w.params = [](const WorkloadInfo&, const Sizes& s) {
    return absl::StrFormat(
        "%d x %d B = %.1f MiB payload; peak = VmHWM - VmRSS before allocating; "
        "retained = VmRSS after freeing all - VmRSS before",
        s.a_blocks, kBlock,
        static_cast<double>(s.a_blocks * kBlock) / (1 << 20));
  };
  w.params_json = [](const WorkloadInfo&, const Sizes& s) {
    return absl::StrFormat("{\"blocks\":%d,\"block_bytes\":%d,\"threads\":1}",
                           s.a_blocks, kBlock);
  };
  w.run = [](const WorkloadInfo& w, const AllocatorInfo& a,
             const ChildArgs& args) {
    WithAdapter(w, a, [&](auto make) { RunD(make, args); });
  };
  return w;
}

WorkloadInfo WorkloadE() {
  WorkloadInfo w;
  w.id = "E";
  w.title =
      "churn: random live block freed, random new size allocated, per step";
  w.metrics = {{"ns_per_step", "ns"}, {"peak_rss_growth_kib", "KiB"}};
  w.primary = "ns_per_step";
  w.unit_label = "ns per step (free + alloc)";
  w.params = [](const WorkloadInfo&, const Sizes& s) {
    return absl::StrFormat(
        "%d live blocks of %d..%d B; %d steps of (free a random live block, "
        "allocate a random "
        "size); sequence precomputed; ns per step (1 free + 1 alloc)",
        s.e_live, kEMin, kEMax, s.e_steps);
  };
  w.params_json = [](const WorkloadInfo&, const Sizes& s) {
    return absl::StrFormat(
        "{\"live_blocks\":%d,\"steps\":%d,\"min_bytes\":%d,\"max_bytes\":%d,"
        "\"threads\":1}",
        s.e_live, s.e_steps, kEMin, kEMax);
  };
  w.run = [](const WorkloadInfo& w, const AllocatorInfo& a,
             const ChildArgs& args) {
    WithAdapter(w, a, [&](auto make) { RunE(make, args); });
  };
  return w;
}

WorkloadInfo WorkloadG() {
  WorkloadInfo w;
  w.id = "G";
  w.title =
      "request-scoped arena (gateway): ~50 blocks + a growing string per "
      "request, dropped at the end";
  w.metrics = {{"ns_per_request", "ns"}, {"peak_rss_growth_kib", "KiB"}};
  w.primary = "ns_per_request";
  w.unit_label = "ns per request";
  w.mono_first_chunk = kGMonoChunk;
  w.params = [](const WorkloadInfo&, const Sizes& s) {
    return absl::StrFormat(
        "%d requests; each %d..%d blocks of %d..%d B + one string grown by "
        "1..%d chars after each block "
        "(capacity from %d B, doubling: allocate new, memcpy, deallocate old); "
        "end of request: "
        "bump resources drop all at once (reset/release), others free each "
        "block; monotonic first "
        "chunk %d KiB; ns per request",
        s.g_requests, kGMinAllocs, kGMaxAllocs, kGMin, kGMax, kGPieceMax,
        kGStringStart, kGMonoChunk / 1024);
  };
  w.params_json = [](const WorkloadInfo&, const Sizes& s) {
    return absl::StrFormat(
        "{\"requests\":%d,\"min_allocs\":%d,\"max_allocs\":%d,\"min_bytes\":%d,"
        "\"max_bytes\":%d,"
        "\"string_piece_max\":%d,\"string_start_capacity\":%d,\"monotonic_"
        "first_chunk\":%d,\"threads\":1}",
        s.g_requests, kGMinAllocs, kGMaxAllocs, kGMin, kGMax, kGPieceMax,
        kGStringStart, kGMonoChunk);
  };
  w.run = [](const WorkloadInfo& w, const AllocatorInfo& a,
             const ChildArgs& args) {
    WithAdapter(w, a, [&](auto make) { RunG(make, args); });
  };
  return w;
}

}  // namespace bench
