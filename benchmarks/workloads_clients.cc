// The real clients: R (the Lua 5.4 interpreter) and Q (SQLite on an
// in-memory database), each running with the row's allocator as its own: their
// run functions and entries of Workloads() (workloads.cc).

#include <malloc.h>
#include <sqlite3.h>

extern "C" {
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
}

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "absl/strings/str_format.h"
#include "benchmarks/workloads_common.h"
#include "examples/lua/pmr_lua_alloc.h"
#include "examples/sqlite/pmr_sqlite_mem.h"
#include "examples/sqlite/sqlite_workload.h"

namespace bench {

namespace {

// ---- R: a real client, the Lua 5.4 interpreter -----------------------------
// Every allocation of a Lua state goes through the allocator: pmr-c resources
// through examples/lua's pmr_lua_alloc (sized frees, reallocs through
// pmr_reallocate, in place where the resource can), malloc and the drop-ins
// through realloc/free (what Lua's own allocator does), the others through
// their allocate + copy + deallocate.
const char kLuaScript[] = R"lua(
local n = N
-- Binary trees: many small tables built and dropped, one long-lived tree.
local function make(d)
  if d == 0 then return {} end
  d = d - 1
  return { make(d), make(d) }
end
local function check(t)
  if t[1] then return 1 + check(t[1]) + check(t[2]) end
  return 1
end
local long_lived = make(12)
local nodes = 0
for _ = 1, n do nodes = nodes + check(make(11)) end
-- String building: formatted pieces joined, strings grown by concatenation.
local parts = {}
for i = 1, 2000 * n do
  parts[#parts + 1] = string.format("%d:%s", i, string.rep("x", i % 23))
end
local joined = table.concat(parts, ",")
local grown = ""
for i = 1, 400 * n do grown = grown .. string.char(65 + i % 26) end
-- Table churn: string-keyed maps filled and half emptied, arrays grown
-- (reallocs) and shrunk, records of mixed sizes.
local map, live = {}, 0
for round = 1, n do
  for i = 1, 3000 do map["k" .. (i + round * 7)] = { round, i, tostring(i) } end
  for i = 1, 3000, 2 do map["k" .. (i + round * 7)] = nil end
end
for _ in pairs(map) do live = live + 1 end
local arrays = 0
for round = 1, n do
  local a = {}
  for i = 1, 5000 do a[i] = i * round end
  arrays = arrays + #a
end
return string.format("%d %d %d %d %d %d", nodes, #joined, #grown, live,
                     arrays, check(long_lived))
)lua";

struct LuaUd {
  void* adapter;
  void* (*alloc)(void* adapter, size_t n);
  void (*dealloc)(void* adapter, void* p, size_t n);
};

extern "C" void* LuaMalloc(void*, void* ptr, size_t, size_t nsize) {
  if (nsize == 0) {
    std::free(ptr);
    return nullptr;
  }
  return std::realloc(ptr, nsize);
}

extern "C" void* LuaGeneric(void* ud, void* ptr, size_t osize, size_t nsize) {
  auto* u = static_cast<LuaUd*>(ud);
  if (nsize == 0) {
    if (ptr != nullptr) u->dealloc(u->adapter, ptr, osize);
    return nullptr;
  }
  void* p = u->alloc(u->adapter, nsize);
  if (p != nullptr && ptr != nullptr) {
    std::memcpy(p, ptr, std::min(osize, nsize));
    u->dealloc(u->adapter, ptr, osize);
  }
  return p;
}

template <class Make>
void RunR(Make make, const ChildArgs& args) {
  using A = AdapterOf<Make>;
  auto a = make();
  LuaUd ud{
      a.get(), [](void* x, size_t n) { return static_cast<A*>(x)->alloc(n); },
      [](void* x, void* p, size_t n) { static_cast<A*>(x)->dealloc(p, n); }};
  lua_Alloc fn = LuaGeneric;
  void* fn_ud = &ud;
  if constexpr (std::is_same_v<A, PmrAdapter>) {
    fn = pmr_lua_alloc;
    fn_ud = a->resource();
  } else if constexpr (std::is_same_v<A, MallocAdapter>) {
    fn = LuaMalloc;
    fn_ud = nullptr;
  }
  const std::string script =
      "local N = " + std::to_string(args.sizes.r_scale) + "\n" + kLuaScript;
  const long base = StatusKib("VmRSS");
  std::vector<double> ms;
  std::string first;
  for (int r = -args.warmup; r < args.rounds; ++r) {
    const uint64_t t0 = NowNs();
    lua_State* L = lua_newstate(fn, fn_ud);
    if (L == nullptr) Fail("lua_newstate failed");
    if (TheClientHooks().lua_state) TheClientHooks().lua_state(L);
    luaL_openlibs(L);
    if (luaL_loadstring(L, script.c_str()) != LUA_OK ||
        lua_pcall(L, 0, 1, 0) != LUA_OK)
      Fail(lua_tostring(L, -1));
    std::string result = lua_tostring(L, -1);
    lua_close(L);
    const uint64_t t1 = NowNs();
    a->drop();
    if (first.empty()) first = result;
    if (result != first) Fail("lua: results differ between rounds");
    if (r >= 0) ms.push_back((t1 - t0) / 1e6);
  }
  EmitMetric("ms_per_run", ms);
  EmitRssGrowth(base);
}

// ---- Q: a real client, SQLite on an in-memory database ---------------------
// SQLite's allocator hooks are malloc-shaped (xFree and xRealloc get no
// size, xSize asks for it): pmr-c resources through pmr_sqlite_use (a
// pmr_malloc_adapter: no header over the pools and the thread cache), malloc
// and the drop-ins through hooks that call malloc, free, realloc and
// malloc_usable_size (what SQLite's own mem1.c does where
// malloc_usable_size exists, so the drop-ins take part with their own
// sizes).
extern "C" void* QMalloc(int n) { return std::malloc(static_cast<size_t>(n)); }
extern "C" void QFree(void* p) { std::free(p); }
extern "C" void* QRealloc(void* p, int n) {
  return std::realloc(p, static_cast<size_t>(n));
}
extern "C" int QSize(void* p) {
  return p == nullptr ? 0 : static_cast<int>(malloc_usable_size(p));
}
extern "C" int QRoundup(int n) { return (n + 7) & ~7; }
extern "C" int QInit(void*) { return SQLITE_OK; }
extern "C" void QShutdown(void*) {}

template <class Make>
void RunQ(Make make, const ChildArgs& args) {
  using A = AdapterOf<Make>;
  auto a = make();
  sqlite3_shutdown();
  if constexpr (std::is_same_v<A, PmrAdapter>) {
    if (pmr_sqlite_use(a->resource()) != SQLITE_OK)
      Fail("sqlite: SQLITE_CONFIG_MALLOC refused");
  } else if constexpr (std::is_same_v<A, MallocAdapter>) {
    static const sqlite3_mem_methods kMalloc = {
        QMalloc, QFree, QRealloc, QSize, QRoundup, QInit, QShutdown, nullptr};
    if (sqlite3_config(SQLITE_CONFIG_MALLOC, &kMalloc) != SQLITE_OK)
      Fail("sqlite: SQLITE_CONFIG_MALLOC refused");
  } else {
    Fail("sqlite: no malloc-shaped hooks over this allocator");
  }
  if (TheClientHooks().sqlite_configured) TheClientHooks().sqlite_configured();
  const long base = StatusKib("VmRSS");
  std::vector<double> ms;
  uint64_t first = 0;
  for (int r = -args.warmup; r < args.rounds; ++r) {
    const uint64_t t0 = NowNs();
    uint64_t digest = 0;
    if (sqlite3_initialize() != SQLITE_OK) Fail("sqlite3_initialize failed");
    int rc = sqlite_workload_run(static_cast<int>(args.sizes.q_rows), &digest);
    sqlite3_shutdown();
    const uint64_t t1 = NowNs();
    if (rc != SQLITE_OK) Fail(sqlite3_errstr(rc));
    a->drop();
    if (first == 0) first = digest;
    if (digest != first) Fail("sqlite: results differ between rounds");
    Sink() += digest;
    if (r >= 0) ms.push_back((t1 - t0) / 1e6);
  }
  EmitMetric("ms_per_run", ms);
  EmitRssGrowth(base);
}

}  // namespace

WorkloadInfo WorkloadR() {
  WorkloadInfo w;
  w.id = "R";
  w.title =
      "a real client: the Lua 5.4 interpreter running allocation-heavy Lua";
  w.metrics = {{"ms_per_run", "ms"}, {"peak_rss_growth_kib", "KiB"}};
  w.primary = "ms_per_run";
  w.unit_label = "ms per script run (new state, script, lua_close)";
  w.params = [](const WorkloadInfo&, const Sizes& s) {
    return absl::StrFormat(
        "Lua 5.4 (Debian's liblua5.4), a new state per run with the standard "
        "libraries; a script of binary trees, string building and table churn "
        "at size factor %d; pmr-c through pmr_lua_alloc (sized, "
        "pmr_reallocate), malloc rows through realloc/free",
        s.r_scale);
  };
  w.params_json = [](const WorkloadInfo&, const Sizes& s) {
    return absl::StrFormat("{\"size_factor\":%d,\"threads\":1}", s.r_scale);
  };
  w.run = [](const WorkloadInfo& w, const AllocatorInfo& a,
             const ChildArgs& args) {
    WithAdapter(w, a, [&](auto make) { RunR(make, args); });
  };
  return w;
}

WorkloadInfo WorkloadQ() {
  WorkloadInfo w;
  w.id = "Q";
  w.title = "a real client: SQLite on an in-memory database";
  w.malloc_shaped = true;
  w.metrics = {{"ms_per_run", "ms"}, {"peak_rss_growth_kib", "KiB"}};
  w.primary = "ms_per_run";
  w.unit_label = "ms per run (initialize, workload, sqlite3_shutdown)";
  w.params = [](const WorkloadInfo&, const Sizes& s) {
    return absl::StrFormat(
        "SQLite 3 (Debian's libsqlite3), one connection to a new in-memory "
        "database per run: %d rows inserted in one transaction, two indexes "
        "built, %d point lookups, GROUP BY, UPDATE of a third, DELETE of a "
        "fifth, LIKE scan; SQLITE_CONFIG_MALLOC: pmr-c through "
        "pmr_malloc_adapter (pmr_sqlite_use), malloc rows through "
        "malloc/free/realloc/malloc_usable_size",
        s.q_rows, s.q_rows / 4 + 1);
  };
  w.params_json = [](const WorkloadInfo&, const Sizes& s) {
    return absl::StrFormat("{\"rows\":%d,\"lookups\":%d,\"threads\":1}",
                           s.q_rows, s.q_rows / 4 + 1);
  };
  w.run = [](const WorkloadInfo& w, const AllocatorInfo& a,
             const ChildArgs& args) {
    WithAdapter(w, a, [&](auto make) { RunQ(make, args); });
  };
  return w;
}

}  // namespace bench
