-- An allocation-heavy Lua program: binary trees, string building and table
-- churn. Returns one line of results that does not depend on the allocator;
-- lua_run.c and lua_example_test.cc compare it with the expected line.

-- Binary trees (the Computer Language Benchmarks Game's shape): many small
-- tables, built and dropped.
local function make(depth)
  if depth == 0 then return {} end
  depth = depth - 1
  return { make(depth), make(depth) }
end

local function check(tree)
  if tree[1] then return 1 + check(tree[1]) + check(tree[2]) end
  return 1
end

local nodes = 0
for _ = 1, 6 do nodes = nodes + check(make(12)) end
local long_lived = make(10)

-- String building: formatted pieces joined, and a string grown by
-- concatenation (each step a new string).
local parts = {}
for i = 1, 20000 do
  parts[#parts + 1] = string.format("%d:%s", i, string.rep("x", i % 17))
end
local joined = table.concat(parts, ",")
local grown = ""
for i = 1, 3000 do grown = grown .. tostring(i % 10) end

-- Table churn: a hash table with string keys filled and half emptied, round
-- after round; arrays grown and shrunk.
local map, live = {}, 0
for round = 1, 20 do
  for i = 1, 3000 do map["k" .. (i + round * 7)] = { round, i } end
  for i = 1, 3000, 2 do map["k" .. (i + round * 7)] = nil end
end
for _ in pairs(map) do live = live + 1 end
local array = {}
for round = 1, 30 do
  for i = 1, 2000 do array[i] = tostring(i * round) end
  for i = 2000, 1, -1 do array[i] = nil end
end

collectgarbage()
return string.format("nodes=%d long_lived=%d joined=%d grown=%d live=%d",
                     nodes, check(long_lived), #joined, #grown, live)
