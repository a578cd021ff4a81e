// The container workloads of one vector or many strings: V (push_back into a
// vector of uint64_t), S (strings built by appends) and S-char (the same
// strings one char at a time): their Ops classes (one per container type),
// run functions and entries of Workloads() (workloads.cc).

#include <cstdint>
#include <memory_resource>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "benchmarks/workloads_common.h"
#include "containers/pmr_string.h"
#include "containers/pmr_vector.h"

namespace bench {

namespace {

template <class Vec>  // std::vector<uint64_t> or std::pmr::vector<uint64_t>
class StdVecOps {
 public:
  explicit StdVecOps(typename Vec::allocator_type al) : al_(al) {}
  void Begin() { v_.emplace(al_); }
  void Push(uint64_t x) { v_->push_back(x); }
  uint64_t Check() const { return (*v_)[v_->size() / 2] + v_->size(); }
  void End() { v_.reset(); }

 private:
  typename Vec::allocator_type al_;
  std::optional<Vec> v_;
};

class PmrVecOps {
 public:
  explicit PmrVecOps(pmr_mem_resource* r) : r_(r) {}
  void Begin() {
    if (!PMR_VECTOR_INIT_T(&v_, uint64_t, r_)) Fail("pmr_vector_init failed");
  }
  void Push(uint64_t x) {
    if (PMR_UNLIKELY(!pmr_vector_push_back(&v_, &x))) Fail("allocation failed");
  }
  uint64_t Check() const {
    const size_t n = pmr_vector_size(&v_);
    return PMR_VECTOR_GET_T(&v_, uint64_t, n / 2) + n;
  }
  void End() { pmr_vector_destroy(&v_); }

 private:
  pmr_mem_resource* r_;
  pmr_vector v_;
};

template <class Ops, class Res>
void RunV(Ops ops, Res& res, const ChildArgs& args) {
  const size_t n = args.sizes.v_elems;
  const long base = StatusKib("VmRSS");
  std::vector<double> push, destroy, total;
  uint64_t acc = 0;
  for (int r = -args.warmup; r < args.rounds; ++r) {
    const uint64_t salt = static_cast<uint64_t>(r) << 40;
    const uint64_t t0 = NowNs();
    ops.Begin();
    for (size_t i = 0; i < n; ++i) ops.Push(i ^ salt);
    const uint64_t t1 = NowNs();
    acc += ops.Check();
    ops.End();
    res.drop();
    const uint64_t t2 = NowNs();
    if (r >= 0) {
      push.push_back((t1 - t0) / static_cast<double>(n));
      destroy.push_back((t2 - t1) / static_cast<double>(n));
      total.push_back((t2 - t0) / static_cast<double>(n));
    }
  }
  Sink() += acc;
  EmitMetric("push_ns_per_op", push);
  EmitMetric("destroy_ns_per_op", destroy);
  EmitMetric("total_ns_per_op", total);
  EmitRssGrowth(base);
}

// std::string or std::pmr::string, kept in slots reserved (and touched)
// before timing.
template <class Str>
class StdStrOps {
 public:
  explicit StdStrOps(typename Str::allocator_type al) : al_(al) {}
  void Prepare(size_t n) {
    v_.reserve(n);
    v_.resize(n, Str(al_));  // touch the slots, so the baseline RSS holds them
    v_.clear();
  }
  Str& New(size_t) { return v_.emplace_back(al_); }
  void Append(Str& s, const char* p, size_t len) { s.append(p, len); }
  void Push(Str& s, char c) { s.push_back(c); }
  uint64_t Check(size_t i) const {
    return v_[i].size() + static_cast<unsigned char>(v_[i][v_[i].size() / 2]);
  }
  void DestroyAll() { v_.clear(); }

 private:
  typename Str::allocator_type al_;
  std::vector<Str> v_;
};

class PmrStrOps {
 public:
  explicit PmrStrOps(pmr_mem_resource* r) : r_(r) {}
  void Prepare(size_t n) { v_.assign(n, pmr_string{}); }
  pmr_string& New(size_t i) {
    pmr_string_init(&v_[i], r_);
    return v_[i];
  }
  void Append(pmr_string& s, const char* p, size_t len) {
    if (PMR_UNLIKELY(!pmr_string_append_bytes(&s, p, len)))
      Fail("allocation failed");
  }
  void Push(pmr_string& s, char c) {
    if (PMR_UNLIKELY(!pmr_string_push_back(&s, c))) Fail("allocation failed");
  }
  uint64_t Check(size_t i) const {
    const size_t len = pmr_string_length(&v_[i]);
    return len + static_cast<unsigned char>(pmr_string_c_str(&v_[i])[len / 2]);
  }
  void DestroyAll() {
    for (pmr_string& s : v_) pmr_string_destroy(&s);
  }

 private:
  pmr_mem_resource* r_;
  std::vector<pmr_string> v_;
};

template <class Ops, class Res>
void RunS(Ops ops, Res& res, const ChildArgs& args) {
  const size_t n = args.sizes.s_strings;
  Rng rng(0x5757);
  std::vector<uint8_t>
      piece;  // the lengths of the appends, string after string
  std::vector<uint32_t> first(n + 1);
  piece.reserve(n * (kSMinLen + kSMaxLen) / 2 / ((1 + kSPieceMax) / 2) + 64);
  for (size_t i = 0; i < n; ++i) {
    first[i] = static_cast<uint32_t>(piece.size());
    size_t left = rng.Between(kSMinLen, kSMaxLen);
    while (left > 0) {
      const size_t p = std::min<size_t>(left, rng.Between(1, kSPieceMax));
      piece.push_back(static_cast<uint8_t>(p));
      left -= p;
    }
  }
  first[n] = static_cast<uint32_t>(piece.size());
  static const char kText[] =
      "Content-Type: application/json; charset=utf-8 Accept-Encoding: gzip, br";
  static_assert(sizeof kText > 32 + kSPieceMax, "text too short");
  ops.Prepare(n);
  const long base = StatusKib("VmRSS");
  std::vector<double> build, destroy, total;
  uint64_t acc = 0;
  for (int r = -args.warmup; r < args.rounds; ++r) {
    const uint64_t t0 = NowNs();
    for (size_t i = 0; i < n; ++i) {
      auto& s = ops.New(i);
      for (uint32_t j = first[i]; j < first[i + 1]; ++j)
        ops.Append(s, kText + ((i + j) & 31), piece[j]);
    }
    const uint64_t t1 = NowNs();
    acc += ops.Check(n / 2) + ops.Check(n - 1);
    ops.DestroyAll();
    res.drop();
    const uint64_t t2 = NowNs();
    if (r >= 0) {
      const double d = static_cast<double>(n);
      build.push_back((t1 - t0) / d);
      destroy.push_back((t2 - t1) / d);
      total.push_back((t2 - t0) / d);
    }
  }
  Sink() += acc;
  EmitMetric("build_ns_per_op", build);
  EmitMetric("destroy_ns_per_op", destroy);
  EmitMetric("total_ns_per_op", total);
  EmitRssGrowth(base);
}

// ---- S-char: strings one char at a time
// ---------------------------------------

template <class Ops, class Res>
void RunSChar(Ops ops, Res& res, const ChildArgs& args) {
  const size_t n = args.sizes.s_strings;
  Rng rng(0x5757);
  std::vector<uint8_t> len(n);
  for (size_t i = 0; i < n; ++i)
    len[i] = static_cast<uint8_t>(rng.Between(kSMinLen, kSMaxLen));
  static const char kText[] =
      "Content-Type: application/json; charset=utf-8 Accept-Encoding: gzip, "
      "br, deflate User-Agent: curl/7.88.1 Accept: */*";
  static_assert(sizeof kText > 32 + kSMaxLen, "text too short");
  ops.Prepare(n);
  const long base = StatusKib("VmRSS");
  std::vector<double> build, destroy, total;
  uint64_t acc = 0;
  for (int r = -args.warmup; r < args.rounds; ++r) {
    const uint64_t t0 = NowNs();
    for (size_t i = 0; i < n; ++i) {
      auto& s = ops.New(i);
      const char* src = kText + (i & 31);
      for (size_t j = 0; j < len[i]; ++j) ops.Push(s, src[j]);
    }
    const uint64_t t1 = NowNs();
    acc += ops.Check(n / 2) + ops.Check(n - 1);
    ops.DestroyAll();
    res.drop();
    const uint64_t t2 = NowNs();
    if (r >= 0) {
      const double d = static_cast<double>(n);
      build.push_back((t1 - t0) / d);
      destroy.push_back((t2 - t1) / d);
      total.push_back((t2 - t0) / d);
    }
  }
  Sink() += acc;
  EmitMetric("build_ns_per_op", build);
  EmitMetric("destroy_ns_per_op", destroy);
  EmitMetric("total_ns_per_op", total);
  EmitRssGrowth(base);
}

// Which container a row measures, by its adapter: the std container with
// std::allocator over malloc, the std::pmr one over a std resource, the pmr-c
// one over a pmr-c resource, absl::flat_hash_map for its own row.
inline StdVecOps<std::vector<uint64_t>> VecOps(MallocAdapter&) {
  return StdVecOps<std::vector<uint64_t>>({});
}
inline StdVecOps<std::pmr::vector<uint64_t>> VecOps(StdAdapter& r) {
  return StdVecOps<std::pmr::vector<uint64_t>>(r.resource());
}
inline PmrVecOps VecOps(PmrAdapter& r) { return PmrVecOps(r.resource()); }

inline StdStrOps<std::string> StrOps(MallocAdapter&) {
  return StdStrOps<std::string>({});
}
inline StdStrOps<std::pmr::string> StrOps(StdAdapter& r) {
  return StdStrOps<std::pmr::string>(r.resource());
}
inline PmrStrOps StrOps(PmrAdapter& r) { return PmrStrOps(r.resource()); }

}  // namespace

WorkloadInfo WorkloadV() {
  WorkloadInfo w = Container(
      "V",
      "container: vector of uint64_t, push_back from empty (no reserve), then "
      "destroy",
      "pmr_vector", "vector");
  w.metrics = {{"push_ns_per_op", "ns"},
               {"destroy_ns_per_op", "ns"},
               {"total_ns_per_op", "ns"},
               {"peak_rss_growth_kib", "KiB"}};
  w.unit_label = "ns per element (push_back + destroy)";
  w.params = [](const WorkloadInfo&, const Sizes& s) {
    return absl::StrFormat(
        "%d x uint64_t appended one by one to an empty vector (no reserve; "
        "every type here doubles its "
        "capacity), then the vector destroyed (bump resources: + "
        "reset/release); ns per element. "
        "pmr_vector: pmr_vector_push_back (inline while there is capacity), "
        "grows in place through "
        "pmr_try_resize where the resource allows it (monotonic: while its "
        "chunk has room)",
        s.v_elems);
  };
  w.params_json = [](const WorkloadInfo&, const Sizes& s) {
    return absl::StrFormat(
        "{\"elements\":%d,\"element_bytes\":8,\"reserve\":false,\"threads\":1}",
        s.v_elems);
  };
  w.notes = [](const WorkloadInfo&, const Sizes&) -> std::string {
    return "   V is mostly page faults: a vector this large gets fresh "
           "pages in every round (glibc "
           "mmaps blocks over 32 MiB and munmaps them on free)\n   "
           "unless its allocator keeps them "
           "(tcmalloc; pmr_monotonic's reset keeps its chunks); "
           "pmr_monotonic_release vs std_monotonic "
           "is like for like\n";
  };
  w.run = [](const WorkloadInfo& w, const AllocatorInfo& a,
             const ChildArgs& args) {
    WithResource(w, a, [&](auto& res) { RunV(VecOps(res), res, args); });
  };
  return w;
}

WorkloadInfo WorkloadS() {
  WorkloadInfo w = Container(
      "S",
      "container: strings of 8-64 chars built by appends, all kept alive, "
      "then all destroyed",
      "pmr_string", "string");
  w.metrics = {{"build_ns_per_op", "ns"},
               {"destroy_ns_per_op", "ns"},
               {"total_ns_per_op", "ns"},
               {"peak_rss_growth_kib", "KiB"}};
  w.unit_label = "ns per string (build + destroy)";
  w.params = [](const WorkloadInfo&, const Sizes& s) {
    return absl::StrFormat(
        "%d strings of %d..%d chars (uniform), each built from empty by "
        "appending %d..%d-byte pieces (the last "
        "cut to the length); std::string keeps 15 chars inline, pmr_string 23, "
        "so most strings allocate and "
        "many grow twice. All are kept alive (slots reserved before timing), "
        "then all destroyed (bump "
        "resources: + reset/release); ns per string",
        s.s_strings, kSMinLen, kSMaxLen, 1, kSPieceMax);
  };
  w.params_json = [](const WorkloadInfo&, const Sizes& s) {
    return absl::StrFormat(
        "{\"strings\":%d,\"min_length\":%d,\"max_length\":%d,\"piece_min\":1,"
        "\"piece_max\":%d,"
        "\"kept_alive\":true,\"threads\":1}",
        s.s_strings, kSMinLen, kSMaxLen, kSPieceMax);
  };
  w.run = [](const WorkloadInfo& w, const AllocatorInfo& a,
             const ChildArgs& args) {
    WithResource(w, a, [&](auto& res) { RunS(StrOps(res), res, args); });
  };
  return w;
}

WorkloadInfo WorkloadSChar() {
  WorkloadInfo w = Container(
      "S-char",
      "container: strings of 8-64 chars built one char at a time, all kept "
      "alive, then all destroyed",
      "pmr_string", "string");
  w.metrics = {{"build_ns_per_op", "ns"},
               {"destroy_ns_per_op", "ns"},
               {"total_ns_per_op", "ns"},
               {"peak_rss_growth_kib", "KiB"}};
  w.unit_label = "ns per string (build + destroy)";
  w.params = [](const WorkloadInfo&, const Sizes& s) {
    return absl::StrFormat(
        "%d strings of %d..%d chars (uniform, as in S), each built from empty "
        "one char at a time (std::string::push_back, pmr_string_push_back); "
        "all kept alive, then all destroyed (bump resources: + "
        "reset/release); ns per string",
        s.s_strings, kSMinLen, kSMaxLen);
  };
  w.params_json = [](const WorkloadInfo&, const Sizes& s) {
    return absl::StrFormat(
        "{\"strings\":%d,\"min_length\":%d,\"max_length\":%d,"
        "\"piece_min\":1,\"piece_max\":1,\"kept_alive\":true,"
        "\"threads\":1}",
        s.s_strings, kSMinLen, kSMaxLen);
  };
  w.run = [](const WorkloadInfo& w, const AllocatorInfo& a,
             const ChildArgs& args) {
    WithResource(w, a, [&](auto& res) { RunSChar(StrOps(res), res, args); });
  };
  return w;
}

}  // namespace bench
