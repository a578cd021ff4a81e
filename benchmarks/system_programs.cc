// The programs of benchmark SYS and their generated inputs
// (system_programs.h).
#include "benchmarks/system_programs.h"

#include <unistd.h>

#include <cstdint>
#include <string>

#include "absl/strings/str_format.h"

namespace bench {
namespace {

constexpr char kSqlite[] = "/usr/bin/sqlite3";
constexpr char kLua[] = "/usr/bin/lua5.4";
constexpr char kPython[] = "/usr/bin/python3";  // not a PATH shim
constexpr char kXz[] = "/usr/bin/xz";

// splitmix64: the inputs' pseudo-random numbers (fixed seeds).
struct Rng {
  uint64_t s;
  uint64_t Next() {
    uint64_t z = (s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  size_t Below(size_t n) { return static_cast<size_t>(Next() % n); }
};

std::string Letters(Rng* r, size_t n) {
  std::string s;
  for (size_t i = 0; i < n; ++i) s += static_cast<char>('a' + r->Below(26));
  return s;
}

// Rows of (id, key, group of 97, name, note of 16-200 letters) inserted in
// transactions of 10,000, two indexes, point lookups of a tenth of the keys,
// GROUP BY, UPDATE of a third (notes grow), DELETE of a fifth, LIKE scan,
// group_concat into a new table, ORDER BY with LIMIT. Every SELECT orders
// or aggregates, so the output is fixed.
std::string SqlScript(size_t rows) {
  static const char* kSyl[] = {"ka", "lo", "mi", "nu", "ra", "se", "ti",
                               "vo", "be", "da", "fe", "go", "hu", "jo"};
  Rng r{44};
  auto key = [](size_t i) {
    return absl::StrFormat("k%08x",
                           (i * 2654435761u) & static_cast<size_t>(~0u));
  };
  std::string s =
      ".bail on\n"
      "CREATE TABLE t(id INTEGER PRIMARY KEY, k TEXT NOT NULL, g INTEGER, "
      "name TEXT, note TEXT);\n";
  for (size_t i = 1; i <= rows; ++i) {
    if (i % 10000 == 1) s += "BEGIN;\n";
    std::string name;
    for (size_t j = 0, n = 2 + r.Below(3); j < n; ++j)
      name += kSyl[r.Below(14)];
    absl::StrAppendFormat(&s, "INSERT INTO t VALUES(%d,'%s',%d,'%s','%s');\n",
                          i, key(i), i % 97, name,
                          Letters(&r, 16 + r.Below(185)));
    if (i % 10000 == 0 || i == rows) s += "COMMIT;\n";
  }
  s += "CREATE INDEX t_k ON t(k);\n"
       "CREATE INDEX t_g ON t(g, name);\n";
  for (size_t i = 1; i <= rows; i += 10)
    absl::StrAppendFormat(
        &s, "SELECT id, g, name, length(note) FROM t WHERE k = '%s';\n",
        key(i));
  s += "SELECT g, count(*), sum(length(note)), min(name), max(name) FROM t "
       "GROUP BY g ORDER BY g;\n"
       "UPDATE t SET note = note || upper(substr(note, 1, 40)) "
       "WHERE id % 3 = 0;\n"
       "DELETE FROM t WHERE id % 5 = 0;\n"
       "SELECT count(*), sum(length(note)) FROM t WHERE note LIKE '%abc%';\n"
       "CREATE TABLE u AS SELECT g, group_concat(name, ',') AS names FROM "
       "(SELECT g, name FROM t ORDER BY id) GROUP BY g;\n"
       "SELECT g, length(names), substr(names, 1, 40) FROM u ORDER BY g;\n"
       "SELECT name, count(*) AS c FROM t GROUP BY name ORDER BY c DESC, name "
       "LIMIT 20;\n"
       "SELECT id, k FROM t ORDER BY note DESC, id LIMIT 20;\n"
       "DROP TABLE u;\n"
       "SELECT count(*), total(g), sum(length(note)) FROM t;\n";
  return s;
}

// Table and string churn: n string keys counted in a map over 4 rounds
// (half removed each round), a string of n pieces joined and split, binary
// trees of depth 12 built and walked, a long-lived one of depth 14, a string
// grown by 2,000 concatenations. Prints totals (pairs' order aside, fixed).
std::string LuaScript(size_t n) {
  return absl::StrFormat(R"(local n = %d
local keys = {}
for i = 1, n do keys[i] = string.format("k%%07d:%%s", i, string.rep("x", i %% 37)) end
local m = {}
for r = 1, 4 do
  for i = 1, n do
    local k = keys[(i * 7919 + r) %% n + 1]
    m[k] = (m[k] or 0) + #k
  end
  for i = 1, n, 2 do m[keys[(i * 31 + r) %% n + 1]] = nil end
end
local count, sum = 0, 0
for _, v in pairs(m) do count = count + 1; sum = sum + v end
local parts = {}
for i = 1, n do parts[#parts + 1] = keys[i]:upper():sub(1, 12) .. i end
local s = table.concat(parts, ",")
local words = 0
for w in s:gmatch("[^,]+") do words = words + #w end
local function tree(d) if d == 0 then return {} end return {tree(d - 1), tree(d - 1)} end
local function check(t) if t[1] then return 1 + check(t[1]) + check(t[2]) end return 1 end
local long = tree(14)
local nodes = 0
for i = 1, n // 2000 + 1 do nodes = nodes + check(tree(12)) end
local grown = ""
for i = 1, 2000 do grown = grown .. tostring(i * i) end
print(count, sum, #s, words, nodes, check(long), #grown)
)",
                         n);
}

// dict, list, str and object churn of the same shape as the Lua script,
// plus a sort of n ints, n/10 small sets and a sort of tuples.
std::string PythonScript(size_t n) {
  return absl::StrFormat(R"(n = %d
keys = ['k%%07d:%%s' %% (i, 'x' * (i %% 37)) for i in range(n)]
d = {}
for r in range(4):
    for i in range(n):
        k = keys[(i * 7919 + r) %% n]
        d[k] = d.get(k, 0) + len(k)
    for i in range(0, n, 2):
        d.pop(keys[(i * 31 + r) %% n], None)
lst = sorted((i * 2654435761) %% 1000003 for i in range(n))
s = ','.join(k.upper()[:12] + str(i) for i, k in enumerate(keys))
words = s.split(',')
sets = [set(range(i %% 50)) for i in range(n // 10)]
class Node:
    __slots__ = ('l', 'r')
    def __init__(self, l, r):
        self.l = l
        self.r = r
def tree(depth):
    return Node(tree(depth - 1), tree(depth - 1)) if depth else None
def check(t):
    return 1 + check(t.l) + check(t.r) if t else 1
nodes = sum(check(tree(12)) for _ in range(n // 4000 + 1))
tuples = sorted((len(w), w) for w in words[: n // 2])
print(len(d), sum(d.values()), lst[n // 2], len(s), len(words),
      sum(len(x) for x in sets), nodes, tuples[-1])
)",
                         n);
}

// Text of about `bytes`: lines of a hex counter and words drawn from 512
// made-up words (compresses about 3:1).
std::string XzInput(size_t bytes) {
  Rng r{45};
  std::vector<std::string> vocab;
  for (int i = 0; i < 512; ++i) vocab.push_back(Letters(&r, 2 + r.Below(9)));
  std::string s;
  s.reserve(bytes + 128);
  for (size_t line = 0; s.size() < bytes; ++line) {
    absl::StrAppendFormat(&s, "%08x", line);
    for (size_t j = 0, n = 4 + r.Below(12); j < n; ++j)
      s += " " + vocab[r.Below(512)];
    s += "\n";
  }
  return s;
}

}  // namespace

SystemProgram ProgramOf(const std::string& id, const Sizes& s,
                        bool with_input) {
  SystemProgram p;
  if (id == "SYS-redis") {
    p.redis = true;
    p.argv = {kRedisServer};
    if (with_input)
      p.input =
          "DBSIZE\nLLEN mylist\nSTRLEN key:__rand_int__\n"
          "LRANGE mylist 0 1\nLINDEX mylist -1\n";
    p.params = absl::StrFormat(
        "redis-server 127.0.0.1 on a free port (--save '' --appendonly no, a "
        "temp dir), under the row's malloc; redis-benchmark -n %d -P 16 -d "
        "100 -q -t set,get,lpush,lrange_100 (50 clients) and redis-cli under "
        "glibc; then SHUTDOWN NOSAVE. wall = redis-benchmark's run; cpu, "
        "peak RSS = the server's; output = redis-cli's DBSIZE, LLEN, STRLEN, "
        "LRANGE, LINDEX after the run",
        s.sys_redis_requests);
    p.params_json = absl::StrFormat(
        "{\"requests_per_test\":%d,\"pipeline\":16,\"data_bytes\":100,"
        "\"clients\":50,\"tests\":\"set,get,lpush,lrange_100\"}",
        s.sys_redis_requests);
  } else if (id == "SYS-sqlite") {
    p.argv = {kSqlite, "-batch", ":memory:"};
    if (with_input) p.input = SqlScript(s.sys_sql_rows);
    p.params = absl::StrFormat(
        "sqlite3 -batch :memory: < script: %d rows inserted (transactions of "
        "10,000), two indexes, %d point lookups, GROUP BY, UPDATE of a third, "
        "DELETE of a fifth, LIKE scan, group_concat table, ORDER BY ... "
        "LIMIT; output = every SELECT's rows",
        s.sys_sql_rows, (s.sys_sql_rows + 9) / 10);
    p.params_json =
        absl::StrFormat("{\"rows\":%d,\"lookups\":%d,\"threads\":1}",
                        s.sys_sql_rows, (s.sys_sql_rows + 9) / 10);
  } else if (id == "SYS-lua") {
    p.argv = {kLua, "-"};
    if (with_input) p.input = LuaScript(s.sys_lua_n);
    p.params = absl::StrFormat(
        "lua5.4 - < script (n = %d): n string keys counted in a table over 4 "
        "rounds (half removed each), n pieces joined and split, %d binary "
        "trees of depth 12 and one of depth 14, a string grown by 2,000 "
        "concatenations; output = the totals",
        s.sys_lua_n, s.sys_lua_n / 2000 + 1);
    p.params_json = absl::StrFormat("{\"n\":%d,\"threads\":1}", s.sys_lua_n);
  } else if (id == "SYS-python") {
    p.argv = {kPython, "-I", "-S", "-"};
    if (with_input) p.input = PythonScript(s.sys_py_n);
    p.params = absl::StrFormat(
        "/usr/bin/python3 -I -S - < script (n = %d): n string keys counted in "
        "a dict over 4 rounds (half popped each), n ints sorted, n pieces "
        "joined and split, n/10 small sets, %d trees of depth 12 (objects "
        "with __slots__), tuples sorted; output = the totals",
        s.sys_py_n, s.sys_py_n / 4000 + 1);
    p.params_json = absl::StrFormat("{\"n\":%d,\"threads\":1}", s.sys_py_n);
  } else if (id == "SYS-xz") {
    p.argv = {kXz, "-T2", "-3", "--block-size=1MiB", "-c"};
    if (with_input) p.input = XzInput(s.sys_xz_bytes);
    p.params = absl::StrFormat(
        "xz -T2 -3 --block-size=1MiB -c < %.1f MiB of generated text (2 "
        "compressing threads; the 1 MiB blocks make the output independent of "
        "timing); output = the .xz stream",
        static_cast<double>(s.sys_xz_bytes) / (1 << 20));
    p.params_json = absl::StrFormat(
        "{\"bytes\":%d,\"threads\":2,\"preset\":3,\"block_bytes\":1048576}",
        s.sys_xz_bytes);
  }
  return p;
}

const char* ProgramTitle(const std::string& id) {
  if (id == "SYS-redis") return "a real program: redis-server under load";
  if (id == "SYS-sqlite") return "a real program: the sqlite3 shell";
  if (id == "SYS-lua") return "a real program: the lua5.4 interpreter";
  if (id == "SYS-python") return "a real program: python3";
  if (id == "SYS-xz") return "a real program: xz -T2 (2 threads)";
  return "?";
}

std::string SystemNotes(const std::string& id) {
  std::string s =
      "   median = wall ms per run; RSS+MiB here = the program's peak RSS "
      "(wait4's ru_maxrss); every row's output must equal glibc_malloc's\n"
      "   targets (issue #44): time <= mimalloc's, peak RSS <= glibc's, the "
      "same output; the SYS table below has every ratio\n";
  if (id == "SYS-redis")
    s += "   Debian's redis-server is linked with libjemalloc.so.2: the "
         "glibc_malloc row preloads the C library itself, so its malloc is "
         "glibc's;\n   a preloaded malloc takes over "
         "malloc/free/calloc/realloc/malloc_usable_size (redis' mallctl calls "
         "still reach the idle jemalloc)\n";
  if (id == "SYS-python")
    s += "   CPython serves objects up to 512 B from its own arenas (pymalloc, "
         "mapped with mmap): malloc sees the larger blocks (dict tables, "
         "lists, long strings)\n";
  return s;
}

std::string ProgramMissing(const std::string& id) {
  std::vector<const char*> need;
  if (id == "SYS-redis") need = {kRedisServer, kRedisBenchmark, kRedisCli};
  if (id == "SYS-sqlite") need = {kSqlite};
  if (id == "SYS-lua") need = {kLua};
  if (id == "SYS-python") need = {kPython};
  if (id == "SYS-xz") need = {kXz};
  std::string missing;
  for (const char* p : need)
    if (access(p, X_OK) != 0)
      missing += (missing.empty() ? "no " : ", ") + std::string(p);
  return missing;
}

}  // namespace bench
