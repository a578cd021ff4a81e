/* Lua 5.4 over any pmr-c resource: a lua_Alloc that serves the interpreter
 * from a pmr_mem_resource.
 *
 *     lua_State *L = lua_newstate(pmr_lua_alloc, resource);
 *     ... lua_close(L);    every block is back in `resource`
 *
 * lua_Alloc passes the block's size on every call, so no header is needed:
 * Lua's frees become pmr_deallocate with their size, its reallocs
 * pmr_reallocate (in place where the resource can resize, else allocate +
 * copy + free). The resource must be thread-safe only if the Lua states
 * using it run on several threads at once. Needs no Lua header: the
 * signature is lua_Alloc's. */
#ifndef PMR_EXAMPLES_LUA_PMR_LUA_ALLOC_H
#define PMR_EXAMPLES_LUA_PMR_LUA_ALLOC_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The alignment Lua's blocks get: what Lua itself requires (LUAI_MAXALIGN:
 * double, pointer, lua_Integer, long), so pools round sizes to 8 and not 16.
 */
#define PMR_LUA_ALIGNMENT 8

/* A lua_Alloc: `ud` is the pmr_mem_resource *. ptr == NULL allocates nsize
 * (osize then names the object type, ignored); nsize == 0 frees ptr (osize
 * bytes) and returns NULL; otherwise resizes ptr from osize to nsize.
 * Returns NULL only when the resource cannot give the memory; ptr is then
 * untouched, as Lua requires. */
void *pmr_lua_alloc(void *ud, void *ptr, size_t osize, size_t nsize);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* PMR_EXAMPLES_LUA_PMR_LUA_ALLOC_H */
