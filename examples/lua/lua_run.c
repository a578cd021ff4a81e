#include "examples/lua/lua_run.h"

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
#include <stdio.h>

#include "examples/lua/pmr_lua_alloc.h"

int lua_run_file(pmr_mem_resource *resource, const char *path, char *result,
                 size_t size) {
  lua_State *L = lua_newstate(pmr_lua_alloc, resource);
  if (L == NULL) {
    snprintf(result, size, "lua_newstate: out of memory");
    return -1;
  }
  luaL_openlibs(L);
  int rc = luaL_dofile(L, path);
  const char *s = lua_tostring(L, -1);
  snprintf(result, size, "%s", s != NULL ? s : "(no result)");
  lua_close(L);
  return rc == LUA_OK ? 0 : -1;
}
