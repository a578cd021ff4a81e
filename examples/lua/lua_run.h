/* Runs a Lua script on a Lua state whose every allocation goes through a
 * pmr_mem_resource (pmr_lua_alloc). */
#ifndef PMR_EXAMPLES_LUA_LUA_RUN_H
#define PMR_EXAMPLES_LUA_LUA_RUN_H

#include <stddef.h>

#include "mem_resource/pmr_mem_resource.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Runs the script file at `path` over `resource` with Lua's standard
 * libraries, copies the string it returns (or the error message) into
 * result[0..size), closes the state, and returns 0 on success, -1 on error
 * (the script failed, or the resource ran out of memory). After it returns,
 * every block the state took is back in `resource`. */
int lua_run_file(pmr_mem_resource *resource, const char *path, char *result,
                 size_t size);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* PMR_EXAMPLES_LUA_LUA_RUN_H */
