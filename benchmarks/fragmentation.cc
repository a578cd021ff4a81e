// The fragmentation study: resident memory sampled over a run against the
// bytes the program has asked for and not yet freed ("live"), for
//   E-frag  a long churn: E's 10,000 live blocks, 10 phases of E's steps each,
//           the size range shifting every phase (16-64, 128-512, 16-256,
//           512-2048, 32-128 B, twice);
//   R-frag  R (Lua): live = the sizes Lua passes its allocator (the state's
//           own count when it starts);
//   Q-frag  Q (SQLite): live = the sizes SQLite asks its xMalloc/xRealloc
//           for, kept per block in a side table faulted in before the
//           baseline, so it is no part of the growth measured.
// Reported per process: peak RSS growth (VmHWM - VmRSS before the run), peak
// live bytes, their ratio, and the sampled series (x = allocator calls).

#include <fcntl.h>
#include <sqlite3.h>
#include <sys/mman.h>
#include <unistd.h>

extern "C" {
#include <lua.h>
}

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "absl/strings/str_format.h"
#include "benchmarks/workloads_common.h"

namespace bench {

namespace {

// Resident KiB of this process (/proc/self/statm), or -1.
long ResidentKib() {
  char buf[128];
  const int fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  const ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return -1;
  buf[n] = '\0';
  const char* sp = std::strchr(buf, ' ');
  if (sp == nullptr) return -1;
  return std::strtol(sp + 1, nullptr, 10) * (sysconf(_SC_PAGESIZE) / 1024);
}

// Live bytes, their peak, and RSS sampled every `every_` calls; at most
// kMaxPoints points (when full, every other point goes and the stride
// doubles).
class Probe {
 public:
  static constexpr size_t kMaxPoints = 512;
  void Start(uint64_t every) {
    every_ = next_ = std::max<uint64_t>(every, 1);
    x_.reserve(kMaxPoints);
    rss_.reserve(kMaxPoints);
    live_.reserve(kMaxPoints);
    base_ = StatusKib("VmRSS");
  }
  void Add(size_t n) {
    live_bytes_ += n;
    peak_ = std::max(peak_, live_bytes_);
  }
  void Sub(size_t n) { live_bytes_ -= std::min(n, live_bytes_); }
  void Call() {
    if (++calls_ >= next_) Sample();
  }
  void Sample() {
    if (x_.size() == kMaxPoints) {
      size_t k = 0;
      for (size_t i = 0; i < kMaxPoints; i += 2, ++k) {
        x_[k] = x_[i];
        rss_[k] = rss_[i];
        live_[k] = live_[i];
      }
      x_.resize(k);
      rss_.resize(k);
      live_.resize(k);
      every_ *= 2;
    }
    x_.push_back(static_cast<double>(calls_));
    rss_.push_back(static_cast<double>(std::max(0L, ResidentKib() - base_)));
    live_.push_back(static_cast<double>(live_bytes_) / 1024.0);
    next_ = calls_ + every_;
  }
  void Emit() {
    Sample();
    const double peak_rss =
        static_cast<double>(std::max(0L, StatusKib("VmHWM") - base_));
    const double peak_live = static_cast<double>(peak_) / 1024.0;
    EmitMetric("peak_rss_kib", {peak_rss});
    EmitMetric("peak_live_kib", {peak_live});
    EmitMetric("rss_per_live", {peak_live > 0 ? peak_rss / peak_live : 0});
    EmitMetric("frag_points", {static_cast<double>(x_.size())});
    EmitMetric("frag_calls", x_);
    EmitMetric("frag_rss_kib", rss_);
    EmitMetric("frag_live_kib", live_);
  }

 private:
  uint64_t calls_ = 0, every_ = 1, next_ = 1;
  size_t live_bytes_ = 0, peak_ = 0;
  long base_ = 0;
  std::vector<double> x_, rss_, live_;
};

Probe& TheProbe() {
  static Probe p;
  return p;
}

// ---- E-frag: phased churn
// -----------------------------------------------------
constexpr int kPhases = 10;
constexpr uint16_t kPhaseRange[5][2] = {
    {16, 64}, {128, 512}, {16, 256}, {512, 2048}, {32, 128}};

template <class Make>
void RunEFrag(Make make, const ChildArgs& args) {
  const size_t live = args.sizes.e_live, steps = args.sizes.e_steps;
  auto a = make();
  std::vector<void*> ptr(live, nullptr);
  std::vector<uint16_t> cur(live);
  Rng rng(0xF7A6);
  Probe& probe = TheProbe();
  probe.Start(2 * steps * kPhases / 400);
  uint64_t acc = 0;
  for (size_t k = 0; k < live; ++k) {
    cur[k] = static_cast<uint16_t>(
        rng.Between(kPhaseRange[0][0], kPhaseRange[0][1]));
    ptr[k] = a->alloc(cur[k]);
    CheckAlloc(ptr[k]);
    Touch(ptr[k], cur[k], k);
    probe.Add(cur[k]);
  }
  for (int ph = 0; ph < kPhases; ++ph) {
    const uint16_t lo = kPhaseRange[ph % 5][0], hi = kPhaseRange[ph % 5][1];
    for (size_t s = 0; s < steps; ++s) {
      const uint32_t k = rng.Below(static_cast<uint32_t>(live));
      const uint16_t sz = static_cast<uint16_t>(rng.Between(lo, hi));
      a->dealloc(ptr[k], cur[k]);
      probe.Sub(cur[k]);
      probe.Call();  // x counts calls: a free and an allocation per step
      void* p = a->alloc(sz);
      CheckAlloc(p);
      Touch(p, sz, s);
      probe.Add(sz);
      ptr[k] = p;
      cur[k] = sz;
      probe.Call();
    }
  }
  probe.Emit();
  for (size_t k = 0; k < live; ++k) {
    acc += *static_cast<unsigned char*>(ptr[k]);
    a->dealloc(ptr[k], cur[k]);
  }
  a->drop();
  Sink() += acc;
}

// ---- R-frag: Lua's allocator wrapped
// --------------------------------------------
struct LuaInner {
  lua_Alloc fn = nullptr;
  void* ud = nullptr;
};
LuaInner g_lua;

extern "C" void* FragLuaAlloc(void*, void* ptr, size_t osize, size_t nsize) {
  void* p = g_lua.fn(g_lua.ud, ptr, osize, nsize);
  Probe& probe = TheProbe();
  if (nsize == 0) {
    if (ptr != nullptr) probe.Sub(osize);
  } else if (p != nullptr) {
    if (ptr != nullptr) probe.Sub(osize);
    probe.Add(nsize);
  }
  probe.Call();
  return p;
}

void WrapLuaState(void* state) {
  lua_State* L = static_cast<lua_State*>(state);
  g_lua.fn = lua_getallocf(L, &g_lua.ud);
  lua_setallocf(L, FragLuaAlloc, nullptr);
  TheProbe().Add(static_cast<size_t>(lua_gc(L, LUA_GCCOUNT, 0)) * 1024 +
                 static_cast<size_t>(lua_gc(L, LUA_GCCOUNTB, 0)));
}

// ---- Q-frag: SQLite's allocator wrapped, sizes in a side table
// ------------------ Open addressing with linear probing and backward-shift
// deletion, in pages mapped and written before the baseline (so not part of the
// growth).
class SizeTable {
 public:
  static constexpr size_t kSlots = size_t{1} << 20;
  void Init() {
    void* m = mmap(nullptr, kSlots * sizeof(Slot), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) Fail("size table: mmap failed");
    slot_ = static_cast<Slot*>(m);
    std::memset(slot_, 0, kSlots * sizeof(Slot));
  }
  void Put(void* p, size_t n) {
    if (++count_ > kSlots / 4 * 3) Fail("size table full");
    size_t i = Home(p);
    while (slot_[i].key != 0) i = (i + 1) & (kSlots - 1);
    slot_[i] = {reinterpret_cast<uintptr_t>(p), n};
  }
  size_t Take(void* p) {
    const uintptr_t key = reinterpret_cast<uintptr_t>(p);
    size_t i = Home(p);
    while (slot_[i].key != key) {
      if (slot_[i].key == 0) return 0;
      i = (i + 1) & (kSlots - 1);
    }
    const size_t n = slot_[i].n;
    --count_;
    for (size_t j = i;;) {  // backward-shift deletion
      j = (j + 1) & (kSlots - 1);
      if (slot_[j].key == 0) break;
      const size_t h = Home(reinterpret_cast<void*>(slot_[j].key));
      const bool stays = i <= j ? (i < h && h <= j) : (i < h || h <= j);
      if (stays) continue;
      slot_[i] = slot_[j];
      i = j;
    }
    slot_[i] = {0, 0};
    return n;
  }

 private:
  struct Slot {
    uintptr_t key;
    size_t n;
  };
  static size_t Home(void* p) {
    return static_cast<size_t>(
        (reinterpret_cast<uintptr_t>(p) * 0x9E3779B97F4A7C15ull) >> 44);
  }
  Slot* slot_ = nullptr;
  size_t count_ = 0;
};
static_assert(SizeTable::kSlots == size_t{1} << (64 - 44), "Home's shift");

SizeTable g_sizes;
sqlite3_mem_methods g_sqlite;

extern "C" void* FragQMalloc(int n) {
  void* p = g_sqlite.xMalloc(n);
  if (p != nullptr) {
    g_sizes.Put(p, static_cast<size_t>(n));
    TheProbe().Add(static_cast<size_t>(n));
  }
  TheProbe().Call();
  return p;
}
extern "C" void FragQFree(void* p) {
  if (p != nullptr) TheProbe().Sub(g_sizes.Take(p));
  g_sqlite.xFree(p);
  TheProbe().Call();
}
extern "C" void* FragQRealloc(void* p, int n) {
  void* q = g_sqlite.xRealloc(p, n);
  if (q != nullptr) {
    if (p != nullptr) TheProbe().Sub(g_sizes.Take(p));
    g_sizes.Put(q, static_cast<size_t>(n));
    TheProbe().Add(static_cast<size_t>(n));
  }
  TheProbe().Call();
  return q;
}
extern "C" int FragQSize(void* p) { return g_sqlite.xSize(p); }
extern "C" int FragQRoundup(int n) { return g_sqlite.xRoundup(n); }
extern "C" int FragQInit(void*) { return g_sqlite.xInit(g_sqlite.pAppData); }
extern "C" void FragQShutdown(void*) { g_sqlite.xShutdown(g_sqlite.pAppData); }

void WrapSqlite() {
  static const sqlite3_mem_methods kWrap = {
      FragQMalloc,  FragQFree, FragQRealloc,  FragQSize,
      FragQRoundup, FragQInit, FragQShutdown, nullptr};
  if (sqlite3_config(SQLITE_CONFIG_GETMALLOC, &g_sqlite) != SQLITE_OK ||
      sqlite3_config(SQLITE_CONFIG_MALLOC, &kWrap) != SQLITE_OK)
    Fail("sqlite: cannot wrap the allocator");
}

const std::vector<MetricInfo> kFragMetrics = {
    {"rss_per_live", "x"}, {"peak_rss_kib", "KiB"}, {"peak_live_kib", "KiB"}};

WorkloadInfo Frag(const char* id, const char* of, const char* title) {
  WorkloadInfo w;
  w.id = id;
  w.title = title;
  w.study = "fragmentation";
  w.study_of = of;
  w.metrics = kFragMetrics;
  w.primary = "rss_per_live";
  w.unit_label = "peak RSS / peak live bytes";
  return w;
}

// R-frag and Q-frag: the client's own run function with the hooks set.
void RunClient(const char* client, const WorkloadInfo&, const AllocatorInfo& a,
               const ChildArgs& args) {
  const bool q = client[0] == 'Q';
  if (q) g_sizes.Init();
  TheProbe().Start(q ? 1024 : 4096);
  ClientHooks& h = TheClientHooks();
  if (q)
    h.sqlite_configured = WrapSqlite;
  else
    h.lua_state = WrapLuaState;
  const WorkloadInfo* w = FindWorkload(client);
  w->run(*w, a, args);
  TheProbe().Emit();
}

}  // namespace

WorkloadInfo WorkloadEFrag() {
  WorkloadInfo w = Frag("E-frag", "E",
                        "fragmentation over a long churn whose size mix "
                        "shifts every phase (10 x E's steps)");
  w.no_bump = true;
  w.params = [](const WorkloadInfo&, const Sizes& s) {
    return absl::StrFormat(
        "%d live blocks; %d phases of %d steps (free a random block, "
        "allocate a size of the phase's range: 16-64, 128-512, 16-256, "
        "512-2048, 32-128 B, twice); one run per process; RSS sampled ~400 "
        "times",
        s.e_live, kPhases, s.e_steps);
  };
  w.params_json = [](const WorkloadInfo&, const Sizes& s) {
    return absl::StrFormat(
        "{\"live_blocks\":%d,\"phases\":%d,\"steps_per_phase\":%d,"
        "\"ranges\":[[16,64],[128,512],[16,256],[512,2048],[32,128]],"
        "\"threads\":1}",
        s.e_live, kPhases, s.e_steps);
  };
  w.run = [](const WorkloadInfo& w, const AllocatorInfo& a,
             const ChildArgs& args) {
    WithAdapter(w, a, [&](auto make) { RunEFrag(make, args); });
  };
  return w;
}

WorkloadInfo WorkloadRFrag() {
  WorkloadInfo w = Frag("R-frag", "R",
                        "fragmentation of R (Lua): RSS against the bytes Lua "
                        "holds, over warm-up and timed runs");
  w.params = [](const WorkloadInfo& w, const Sizes& s) {
    return FindWorkload("R")->params(w, s) +
           "; live = sizes Lua passes its allocator";
  };
  w.params_json = [](const WorkloadInfo& w, const Sizes& s) {
    return FindWorkload("R")->params_json(w, s);
  };
  w.run = [](const WorkloadInfo& w, const AllocatorInfo& a,
             const ChildArgs& args) { RunClient("R", w, a, args); };
  return w;
}

WorkloadInfo WorkloadQFrag() {
  WorkloadInfo w = Frag("Q-frag", "Q",
                        "fragmentation of Q (SQLite): RSS against the bytes "
                        "SQLite holds, over warm-up and timed runs");
  w.malloc_shaped = true;
  w.params = [](const WorkloadInfo& w, const Sizes& s) {
    return FindWorkload("Q")->params(w, s) +
           "; live = sizes SQLite asks xMalloc/xRealloc for";
  };
  w.params_json = [](const WorkloadInfo& w, const Sizes& s) {
    return FindWorkload("Q")->params_json(w, s);
  };
  w.run = [](const WorkloadInfo& w, const AllocatorInfo& a,
             const ChildArgs& args) { RunClient("Q", w, a, args); };
  return w;
}

}  // namespace bench
