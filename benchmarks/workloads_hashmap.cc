// The hash map workloads: H (uint64_t -> uint64_t) and H-str (string keys):
// insert, lookups that hit and miss, erase, in one timed loop (TimeMapRounds);
// their Ops classes (one per map type), run functions and entries of
// Workloads() (workloads.cc).

#include <cstdint>
#include <memory_resource>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_format.h"
#include "benchmarks/workloads_common.h"
#include "containers/pmr_hashmap.h"
#include "containers/pmr_string.h"

namespace bench {

namespace {

// std::unordered_map, std::pmr::unordered_map, absl::flat_hash_map.
template <class Map>
class StdMapOps {
 public:
  explicit StdMapOps(typename Map::allocator_type al) : al_(al) {}
  void Begin() { m_.emplace(al_); }
  bool Insert(uint64_t k, uint64_t v) { return m_->emplace(k, v).second; }
  const uint64_t* Find(uint64_t k) const {
    auto it = m_->find(k);
    return it == m_->end() ? nullptr : &it->second;
  }
  bool Erase(uint64_t k) { return m_->erase(k) != 0; }
  size_t Size() const { return m_->size(); }
  void End() { m_.reset(); }

 private:
  typename Map::allocator_type al_;
  std::optional<Map> m_;
};

class PmrMapOps {
 public:
  explicit PmrMapOps(pmr_mem_resource* r) : r_(r) {}
  void Begin() {
    if (!pmr_hashmap_init(&m_, sizeof(uint64_t), alignof(uint64_t),
                          sizeof(uint64_t), alignof(uint64_t), r_))
      Fail("pmr_hashmap_init failed");
  }
  bool Insert(uint64_t k, uint64_t v) {
    const pmr_hashmap_status st = pmr_hashmap_insert_u64(&m_, k, &v, nullptr);
    if (PMR_UNLIKELY(st < 0)) Fail("allocation failed");
    return st == PMR_HASHMAP_INSERTED;
  }
  const uint64_t* Find(uint64_t k) const {
    return static_cast<const uint64_t*>(pmr_hashmap_find_u64(&m_, k));
  }
  bool Erase(uint64_t k) { return pmr_hashmap_erase_u64(&m_, k); }
  size_t Size() const { return pmr_hashmap_size(&m_); }
  void End() { pmr_hashmap_destroy(&m_); }

 private:
  pmr_mem_resource* r_;
  pmr_hashmap m_;
};

// The timed rounds of H and H-str over a map (ops: Begin, Size, End), each
// phase n operations given by index: insert(i) (true when new), hit(i) and
// miss(i) (the value or nullptr), erase(i) (true when found); then the map
// destroyed and the resource dropped. Fails with `wrong` on a wrong answer.
template <class Ops, class Res, class Insert, class Hit, class Miss,
          class Erase>
void TimeMapRounds(Ops& ops, Res& res, const ChildArgs& args, size_t n,
                   const char* wrong, Insert insert, Hit hit, Miss miss,
                   Erase erase) {
  const long base = StatusKib("VmRSS");
  std::vector<double> ins_ns, hit_ns, miss_ns, erase_ns, total_ns;
  uint64_t acc = 0;
  for (int r = -args.warmup; r < args.rounds; ++r) {
    const uint64_t t0 = NowNs();
    ops.Begin();
    size_t inserted = 0;
    for (size_t i = 0; i < n; ++i) inserted += insert(i);
    const uint64_t t1 = NowNs();
    size_t found = 0;
    uint64_t sum = 0;
    for (size_t i = 0; i < n; ++i) {
      const uint64_t* v = hit(i);
      if (v != nullptr) {
        ++found;
        sum += *v;
      }
    }
    const uint64_t t2 = NowNs();
    size_t false_hits = 0;
    for (size_t i = 0; i < n; ++i) false_hits += miss(i) != nullptr;
    const uint64_t t3 = NowNs();
    const size_t size_before = ops.Size();
    size_t erased = 0;
    for (size_t i = 0; i < n; ++i) erased += erase(i);
    const size_t size_after = ops.Size();
    ops.End();
    res.drop();
    const uint64_t t4 = NowNs();
    if (inserted != n || found != n || false_hits != 0 || erased != n ||
        size_before != n || size_after != 0)
      Fail(wrong);
    acc += sum;
    if (r >= 0) {
      const double d = static_cast<double>(n);
      ins_ns.push_back((t1 - t0) / d);
      hit_ns.push_back((t2 - t1) / d);
      miss_ns.push_back((t3 - t2) / d);
      erase_ns.push_back((t4 - t3) / d);
      total_ns.push_back((t4 - t0) / (4 * d));
    }
  }
  Sink() += acc;
  EmitMetric("insert_ns_per_op", ins_ns);
  EmitMetric("hit_ns_per_op", hit_ns);
  EmitMetric("miss_ns_per_op", miss_ns);
  EmitMetric("erase_ns_per_op", erase_ns);
  EmitMetric("total_ns_per_op", total_ns);
  EmitRssGrowth(base);
}

template <class Ops, class Res>
void RunH(Ops ops, Res& res, const ChildArgs& args) {
  const size_t n = args.sizes.h_keys;
  Rng rng(0x4A54);
  // Present keys are even, missing ones odd: a miss can never hit.
  std::vector<uint64_t> keys(n), hit(n), miss(n), erase(n);
  for (size_t i = 0; i < n; ++i) {
    keys[i] = rng.Next() & ~uint64_t{1};
    miss[i] = rng.Next() | 1;
  }
  hit = keys;
  erase = keys;
  for (size_t i = n - 1; i > 0; --i) {
    std::swap(hit[i], hit[rng.Below(static_cast<uint32_t>(i + 1))]);
    std::swap(erase[i], erase[rng.Below(static_cast<uint32_t>(i + 1))]);
  }
  TimeMapRounds(
      ops, res, args, n, "hash map gave wrong answers",
      [&](size_t i) { return ops.Insert(keys[i], i); },
      [&](size_t i) { return ops.Find(hit[i]); },
      [&](size_t i) { return ops.Find(miss[i]); },
      [&](size_t i) { return ops.Erase(erase[i]); });
}

// ---- H-str: string keys ----------------------------------------------------

// std::unordered_map<std::string, V>, its std::pmr form, absl::flat_hash_map:
// keys as the map's key type, built before timing.
template <class Map>
class StdStrMapOps {
 public:
  using Key = typename Map::key_type;
  explicit StdStrMapOps(typename Map::allocator_type al) : al_(al) {}
  void Prepare(const std::vector<std::string>& keys,
               const std::vector<std::string>& miss) {
    for (const std::string& k : keys) keys_.emplace_back(k.data(), k.size());
    for (const std::string& k : miss) miss_.emplace_back(k.data(), k.size());
  }
  void Begin() { m_.emplace(al_); }
  bool Insert(size_t i, uint64_t v) { return m_->emplace(keys_[i], v).second; }
  const uint64_t* Find(size_t i) const { return Get(keys_[i]); }
  const uint64_t* FindMiss(size_t i) const { return Get(miss_[i]); }
  bool Erase(size_t i) { return m_->erase(keys_[i]) != 0; }
  size_t Size() const { return m_->size(); }
  void End() { m_.reset(); }

 private:
  const uint64_t* Get(const Key& k) const {
    auto it = m_->find(k);
    return it == m_->end() ? nullptr : &it->second;
  }
  typename Map::allocator_type al_;
  std::vector<Key> keys_, miss_;
  std::optional<Map> m_;
};

// pmr_hashmap with pmr_string keys, by (pointer, length).
class PmrStrMapOps {
 public:
  explicit PmrStrMapOps(pmr_mem_resource* r) : r_(r) {}
  void Prepare(const std::vector<std::string>& keys,
               const std::vector<std::string>& miss) {
    keys_ = &keys;
    miss_ = &miss;
  }
  void Begin() {
    if (!pmr_hashmap_init_string(&m_, sizeof(uint64_t), alignof(uint64_t), r_))
      Fail("pmr_hashmap_init_string failed");
  }
  bool Insert(size_t i, uint64_t v) {
    const std::string& k = (*keys_)[i];
    const pmr_hashmap_status st =
        pmr_hashmap_insert_str(&m_, k.data(), k.size(), &v, nullptr);
    if (PMR_UNLIKELY(st < 0)) Fail("allocation failed");
    return st == PMR_HASHMAP_INSERTED;
  }
  const uint64_t* Find(size_t i) const { return Get((*keys_)[i]); }
  const uint64_t* FindMiss(size_t i) const { return Get((*miss_)[i]); }
  bool Erase(size_t i) {
    const std::string& k = (*keys_)[i];
    return pmr_hashmap_erase_str(&m_, k.data(), k.size(), nullptr);
  }
  size_t Size() const { return pmr_hashmap_size(&m_); }
  void End() { pmr_hashmap_destroy(&m_); }

 private:
  const uint64_t* Get(const std::string& k) const {
    return static_cast<const uint64_t*>(
        pmr_hashmap_find_str(&m_, k.data(), k.size()));
  }
  pmr_mem_resource* r_;
  const std::vector<std::string>* keys_ = nullptr;
  const std::vector<std::string>* miss_ = nullptr;
  pmr_hashmap m_;
};

// Random strings of kSMinLen..kSMaxLen chars from an alphabet of letters and
// digits; `miss` keys start with '#', never used by the present ones.
std::string RandomKey(Rng& rng, bool miss) {
  static const char kAlpha[] =
      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  std::string k(rng.Between(kSMinLen, kSMaxLen), ' ');
  for (char& c : k) c = kAlpha[rng.Below(sizeof kAlpha - 1)];
  if (miss) k[0] = '#';
  return k;
}

template <class Ops, class Res>
void RunHStr(Ops ops, Res& res, const ChildArgs& args) {
  const size_t n = args.sizes.hs_keys;
  Rng rng(0x4853);
  std::vector<std::string> keys, miss;
  {
    std::unordered_set<std::string> seen;
    while (keys.size() < n) {
      std::string k = RandomKey(rng, false);
      if (seen.insert(k).second) keys.push_back(std::move(k));
    }
    for (size_t i = 0; i < n; ++i) miss.push_back(RandomKey(rng, true));
  }
  std::vector<uint32_t> hit(n), erase(n);
  for (size_t i = 0; i < n; ++i) hit[i] = erase[i] = static_cast<uint32_t>(i);
  for (size_t i = n - 1; i > 0; --i) {
    std::swap(hit[i], hit[rng.Below(static_cast<uint32_t>(i + 1))]);
    std::swap(erase[i], erase[rng.Below(static_cast<uint32_t>(i + 1))]);
  }
  ops.Prepare(keys, miss);
  TimeMapRounds(
      ops, res, args, n, "string hash map gave wrong answers",
      [&](size_t i) { return ops.Insert(i, i); },
      [&](size_t i) { return ops.Find(hit[i]); },
      [&](size_t i) { return ops.FindMiss(i); },
      [&](size_t i) { return ops.Erase(erase[i]); });
}

// Which container a row measures, by its adapter: the std container with
// std::allocator over malloc, the std::pmr one over a std resource, the pmr-c
// one over a pmr-c resource, absl::flat_hash_map for its own row.
inline StdMapOps<std::unordered_map<uint64_t, uint64_t>> MapOps(
    MallocAdapter&) {
  return StdMapOps<std::unordered_map<uint64_t, uint64_t>>({});
}
inline StdMapOps<absl::flat_hash_map<uint64_t, uint64_t>> MapOps(
    AbslMapAdapter&) {
  return StdMapOps<absl::flat_hash_map<uint64_t, uint64_t>>({});
}
inline StdMapOps<std::pmr::unordered_map<uint64_t, uint64_t>> MapOps(
    StdAdapter& r) {
  return StdMapOps<std::pmr::unordered_map<uint64_t, uint64_t>>(r.resource());
}
inline PmrMapOps MapOps(PmrAdapter& r) { return PmrMapOps(r.resource()); }

inline StdStrMapOps<std::unordered_map<std::string, uint64_t>> StrMapOps(
    MallocAdapter&) {
  return StdStrMapOps<std::unordered_map<std::string, uint64_t>>({});
}
inline StdStrMapOps<absl::flat_hash_map<std::string, uint64_t>> StrMapOps(
    AbslMapAdapter&) {
  return StdStrMapOps<absl::flat_hash_map<std::string, uint64_t>>({});
}
inline StdStrMapOps<std::pmr::unordered_map<std::pmr::string, uint64_t>>
StrMapOps(StdAdapter& r) {
  return StdStrMapOps<std::pmr::unordered_map<std::pmr::string, uint64_t>>(
      r.resource());
}
inline PmrStrMapOps StrMapOps(PmrAdapter& r) {
  return PmrStrMapOps(r.resource());
}

}  // namespace

// H and H-str: the metrics of TimeMapRounds, compared with absl's map too.
WorkloadInfo HashMapContainer(const char* id, const char* title) {
  WorkloadInfo w = Container(id, title, "pmr_hashmap", "unordered_map");
  w.metrics = {{"insert_ns_per_op", "ns"}, {"hit_ns_per_op", "ns"},
               {"miss_ns_per_op", "ns"},   {"erase_ns_per_op", "ns"},
               {"total_ns_per_op", "ns"},  {"peak_rss_growth_kib", "KiB"}};
  w.unit_label = "ns per operation (insert, hit, miss, erase: round / 4n)";
  w.extra_ref = "absl_flat_hash_map";
  return w;
}

// The note under H's and H-str's phase columns, for n keys.
std::string HashMapPhaseNote(size_t n) {
  return absl::StrFormat(
      "   insert, hit, miss, erase: ns per operation of each phase "
      "(erase includes destroying the empty map and reset/release);\n"
      "   total = whole round / %d operations; each column is its own "
      "median\n",
      4 * n);
}

WorkloadInfo WorkloadH() {
  WorkloadInfo w = HashMapContainer(
      "H",
      "container: hash map uint64_t -> uint64_t: insert random keys, lookups "
      "that hit and miss, erase all");
  w.params = [](const WorkloadInfo&, const Sizes& s) {
    return absl::StrFormat(
        "%d random uint64_t keys (precomputed, fixed seed) inserted into an "
        "empty map (no reserve); %d lookups "
        "that hit (shuffled order); %d that miss; %d erases (another shuffled "
        "order) and destroy (bump "
        "resources: + reset/release). Each phase timed on its own, ns per "
        "operation; total = the whole round "
        "/ %d operations. pmr_hashmap inserts, looks up and erases with the "
        "inline pmr_hashmap_insert_u64, _find_u64 and _erase_u64",
        s.h_keys, s.h_keys, s.h_keys, s.h_keys, 4 * s.h_keys);
  };
  w.params_json = [](const WorkloadInfo&, const Sizes& s) {
    return absl::StrFormat(
        "{\"keys\":%d,\"hit_lookups\":%d,\"miss_lookups\":%d,\"erases\":%d,"
        "\"key_bytes\":8,\"value_bytes\":8,"
        "\"reserve\":false,\"threads\":1}",
        s.h_keys, s.h_keys, s.h_keys, s.h_keys);
  };
  w.phase_note = [](const WorkloadInfo&, const Sizes& s) {
    return HashMapPhaseNote(s.h_keys);
  };
  w.run = [](const WorkloadInfo& w, const AllocatorInfo& a,
             const ChildArgs& args) {
    WithResource(w, a, [&](auto& res) { RunH(MapOps(res), res, args); });
  };
  return w;
}

WorkloadInfo WorkloadHStr() {
  WorkloadInfo w = HashMapContainer(
      "H-str",
      "container: hash map string -> uint64_t: insert 8-64-char keys, lookups "
      "that hit and miss, erase all");
  w.params = [](const WorkloadInfo&, const Sizes& s) {
    return absl::StrFormat(
        "%d random keys of %d..%d chars (letters and digits; precomputed, "
        "fixed seed) inserted into an empty map (no reserve); %d lookups that "
        "hit (shuffled order); %d that miss (keys of the same lengths that "
        "are never present); %d erases (another shuffled order) and destroy. "
        "Each phase timed on its own, ns per operation; total = the whole "
        "round / %d operations. std maps: std::unordered_map<std::string, "
        "uint64_t>, std::pmr::unordered_map<std::pmr::string, uint64_t>, "
        "absl::flat_hash_map<std::string, uint64_t>, keys of the map's key "
        "type built before timing; pmr_hashmap (pmr_string keys) takes them "
        "as (pointer, length): pmr_hashmap_insert_str, _find_str, _erase_str",
        s.hs_keys, kSMinLen, kSMaxLen, s.hs_keys, s.hs_keys, s.hs_keys,
        4 * s.hs_keys);
  };
  w.params_json = [](const WorkloadInfo&, const Sizes& s) {
    return absl::StrFormat(
        "{\"keys\":%d,\"hit_lookups\":%d,\"miss_lookups\":%d,\"erases\":%d,"
        "\"min_length\":%d,\"max_length\":%d,\"value_bytes\":8,"
        "\"reserve\":false,\"threads\":1}",
        s.hs_keys, s.hs_keys, s.hs_keys, s.hs_keys, kSMinLen, kSMaxLen);
  };
  w.phase_note = [](const WorkloadInfo&, const Sizes& s) {
    return HashMapPhaseNote(s.hs_keys);
  };
  w.run = [](const WorkloadInfo& w, const AllocatorInfo& a,
             const ChildArgs& args) {
    WithResource(w, a, [&](auto& res) { RunHStr(StrMapOps(res), res, args); });
  };
  return w;
}

}  // namespace bench
