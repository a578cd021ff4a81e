// The word count workload W: its text (Debian's license and copyright files,
// read once per process), its Ops classes (std, pmr_hashmap, glib's
// GHashTable), run function and entry of Workloads() (workloads.cc).

#include <dirent.h>
#include <glib.h>
#include <limits.h>
#include <stdlib.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <memory_resource>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "absl/strings/str_format.h"
#include "benchmarks/workloads_common.h"
#include "containers/pmr_hashmap.h"
#include "containers/pmr_string.h"

namespace bench {

namespace {

// ---- W's text -------------------------------------------------------------

// W's text: /usr/share/common-licenses/* then /usr/share/doc/*/copyright (each
// list in path order; links to files already read skipped), whole files until
// at least Sizes::w_bytes, split into words ([A-Za-z0-9_'] runs). Read once
// per process.
struct WTextInfo {
  std::string text;
  std::vector<std::pair<uint32_t, uint32_t>> words;  // (offset, length)
  size_t files = 0, bytes = 0, distinct = 0;
  std::string description;  // the files, sizes and counts, for the tables
};

// The regular files (after links) in the listed order, each read once.
std::vector<std::string> WFiles() {
  std::vector<std::string> lic, doc;
  auto list = [](const std::string& dir, const char* suffix,
                 std::vector<std::string>* out) {
    DIR* d = opendir(dir.c_str());
    if (d == nullptr) return;
    while (dirent* e = readdir(d)) {
      const std::string name = e->d_name;
      if (name == "." || name == "..") continue;
      out->push_back(dir + "/" + name + suffix);
    }
    closedir(d);
    std::sort(out->begin(), out->end());
  };
  list("/usr/share/common-licenses", "", &lic);
  list("/usr/share/doc", "/copyright", &doc);
  lic.insert(lic.end(), doc.begin(), doc.end());
  return lic;
}

bool WordChar(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         (c >= '0' && c <= '9') || c == '_' || c == '\'';
}

const WTextInfo& WText(const Sizes& sizes) {
  static std::map<size_t, std::unique_ptr<WTextInfo>> cache;
  std::unique_ptr<WTextInfo>& slot = cache[sizes.w_bytes];
  if (slot) return *slot;
  slot = std::make_unique<WTextInfo>();
  WTextInfo& t = *slot;
  std::set<std::string> seen;
  size_t lic_files = 0;
  for (const std::string& path : WFiles()) {
    if (t.text.size() >= sizes.w_bytes) break;
    char real[PATH_MAX];
    if (realpath(path.c_str(), real) == nullptr) continue;
    if (!seen.insert(real).second) continue;
    std::ifstream in(real, std::ios::binary);
    if (!in) continue;
    std::ostringstream buf;
    buf << in.rdbuf();
    t.text += buf.str();
    t.text += '\n';
    ++t.files;
    if (path.rfind("/usr/share/common-licenses/", 0) == 0) ++lic_files;
  }
  t.bytes = t.text.size();
  std::unordered_set<std::string_view> distinct;
  for (size_t i = 0; i < t.text.size();) {
    if (!WordChar(static_cast<unsigned char>(t.text[i]))) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < t.text.size() && WordChar(static_cast<unsigned char>(t.text[j])))
      ++j;
    t.words.emplace_back(static_cast<uint32_t>(i),
                         static_cast<uint32_t>(j - i));
    distinct.insert(std::string_view(t.text).substr(i, j - i));
    i = j;
  }
  t.distinct = distinct.size();
  t.description = absl::StrFormat(
      "%d files (%d of /usr/share/common-licenses/*, then "
      "/usr/share/doc/*/copyright in path order, links to files already read "
      "skipped, whole files until %d bytes), %.1f MiB, %d words, %d distinct",
      t.files, lic_files, sizes.w_bytes,
      static_cast<double>(t.bytes) / (1 << 20), t.words.size(), t.distinct);
  return t;
}

// ---- W: word count
// -----------------------------------------------------------

template <class Map>
class StdWordOps {
 public:
  using Key = typename Map::key_type;
  explicit StdWordOps(typename Map::allocator_type al) : al_(al) {}
  void Begin() { m_.emplace(al_); }
  void Count(const char* p, size_t n) { ++(*m_)[Key(p, n, al_)]; }
  size_t Distinct() const { return m_->size(); }
  uint64_t CountOf(const char* p, size_t n) const {
    auto it = m_->find(Key(p, n, al_));
    return it == m_->end() ? 0 : it->second;
  }
  void End() { m_.reset(); }

 private:
  typename Map::allocator_type al_;
  std::optional<Map> m_;
};

class PmrWordOps {
 public:
  explicit PmrWordOps(pmr_mem_resource* r) : r_(r) {}
  void Begin() {
    if (!pmr_hashmap_init_string(&m_, sizeof(uint64_t), alignof(uint64_t), r_))
      Fail("pmr_hashmap_init_string failed");
  }
  void Count(const char* p, size_t n) {
    uint64_t* c =
        static_cast<uint64_t*>(pmr_hashmap_emplace_str(&m_, p, n, nullptr));
    if (PMR_UNLIKELY(c == nullptr)) Fail("allocation failed");
    ++*c;
  }
  size_t Distinct() const { return pmr_hashmap_size(&m_); }
  uint64_t CountOf(const char* p, size_t n) const {
    const uint64_t* c =
        static_cast<const uint64_t*>(pmr_hashmap_find_str(&m_, p, n));
    return c == nullptr ? 0 : *c;
  }
  void End() { pmr_hashmap_destroy(&m_); }

 private:
  pmr_mem_resource* r_;
  pmr_hashmap m_;
};

// glib as a C user writes it: NUL-terminated lookups, owned keys and counts.
class GlibWordOps {
 public:
  void Begin() {
    t_ = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
  }
  void Count(const char* p, size_t n) {
    char* w = Terminated(p, n);
    guint64* c = static_cast<guint64*>(g_hash_table_lookup(t_, w));
    if (c == nullptr) {
      c = g_new0(guint64, 1);
      g_hash_table_insert(t_, g_strndup(p, n), c);
    }
    ++*c;
  }
  size_t Distinct() const { return g_hash_table_size(t_); }
  uint64_t CountOf(const char* p, size_t n) {
    const guint64* c =
        static_cast<const guint64*>(g_hash_table_lookup(t_, Terminated(p, n)));
    return c == nullptr ? 0 : *c;
  }
  void End() {
    g_hash_table_destroy(t_);
    t_ = nullptr;
  }

 private:
  char* Terminated(const char* p, size_t n) {
    if (n >= sizeof buf_) Fail("word too long for the buffer");
    memcpy(buf_, p, n);
    buf_[n] = '\0';
    return buf_;
  }
  GHashTable* t_ = nullptr;
  char buf_[4096];
};

template <class Ops, class Res>
void RunW(Ops ops, Res& res, const ChildArgs& args) {
  const WTextInfo& t = WText(args.sizes);
  if (t.words.empty()) Fail("W: no text found under /usr/share");
  const char* text = t.text.data();
  const size_t n = t.words.size();
  const auto& first = t.words[0];
  const long base = StatusKib("VmRSS");
  std::vector<double> count, destroy, total;
  uint64_t acc = 0;
  for (int r = -args.warmup; r < args.rounds; ++r) {
    const uint64_t t0 = NowNs();
    ops.Begin();
    for (const auto& w : t.words) ops.Count(text + w.first, w.second);
    const uint64_t t1 = NowNs();
    if (ops.Distinct() != t.distinct) Fail("W: wrong number of words");
    acc += ops.CountOf(text + first.first, first.second);
    ops.End();
    res.drop();
    const uint64_t t2 = NowNs();
    if (r >= 0) {
      const double d = static_cast<double>(n);
      count.push_back((t1 - t0) / d);
      destroy.push_back((t2 - t1) / d);
      total.push_back((t2 - t0) / d);
    }
  }
  Sink() += acc;
  EmitMetric("count_ns_per_op", count);
  EmitMetric("destroy_ns_per_op", destroy);
  EmitMetric("total_ns_per_op", total);
  EmitRssGrowth(base);
}

// Which container a row measures, by its adapter: the std container with
// std::allocator over malloc, the std::pmr one over a std resource, the pmr-c
// one over a pmr-c resource, absl::flat_hash_map for its own row.
inline StdWordOps<std::unordered_map<std::string, uint64_t>> WordOps(
    MallocAdapter&) {
  return StdWordOps<std::unordered_map<std::string, uint64_t>>({});
}
inline GlibWordOps WordOps(GlibMapAdapter&) { return GlibWordOps(); }
inline StdWordOps<std::pmr::unordered_map<std::pmr::string, uint64_t>> WordOps(
    StdAdapter& r) {
  return StdWordOps<std::pmr::unordered_map<std::pmr::string, uint64_t>>(
      r.resource());
}
inline PmrWordOps WordOps(PmrAdapter& r) { return PmrWordOps(r.resource()); }

}  // namespace

WorkloadInfo WorkloadW() {
  WorkloadInfo w = Container(
      "W",
      "container: word count (string -> count) over Debian's license and "
      "copyright texts",
      "pmr_hashmap", "unordered_map");
  w.metrics = {{"count_ns_per_op", "ns"},
               {"destroy_ns_per_op", "ns"},
               {"total_ns_per_op", "ns"},
               {"peak_rss_growth_kib", "KiB"}};
  w.unit_label = "ns per word (count + destroy)";
  w.extra_ref = "glib_ghashtable";
  w.params = [](const WorkloadInfo&, const Sizes& s) {
    return absl::StrFormat(
        "%s; split into words (maximal runs of ASCII letters, digits, '_' and "
        "apostrophes, case kept) before timing; every word counted in one map "
        "from empty (no reserve), then the map destroyed; ns per word. std: "
        "++m[std::string(p, n)] (std::pmr::string over the map's resource); "
        "pmr_hashmap: ++*pmr_hashmap_emplace_str(m, p, n); glib: the word "
        "copied with a NUL into a buffer, g_hash_table_lookup, and "
        "g_hash_table_insert(g_strndup(word), g_new0(guint64, 1)) when new",
        WText(s).description);
  };
  w.params_json = [](const WorkloadInfo&, const Sizes& s) {
    const WTextInfo& t = WText(s);
    return absl::StrFormat(
        "{\"files\":%d,\"bytes\":%d,\"words\":%d,\"distinct\":%d,"
        "\"threads\":1}",
        t.files, t.bytes, t.words.size(), t.distinct);
  };
  w.run = [](const WorkloadInfo& w, const AllocatorInfo& a,
             const ChildArgs& args) {
    WithResource(w, a, [&](auto& res) { RunW(WordOps(res), res, args); });
  };
  return w;
}

}  // namespace bench
