#include "examples/lua/pmr_lua_alloc.h"

#include "mem_resource/pmr_mem_resource.h"

void *pmr_lua_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
  pmr_mem_resource *r = (pmr_mem_resource *)ud;
  if (nsize == 0) {
    pmr_deallocate(r, ptr, osize, PMR_LUA_ALIGNMENT);
    return NULL;
  }
  /* For a new block (ptr == NULL) Lua passes the object's type in osize. */
  if (ptr == NULL) return pmr_allocate(r, nsize, PMR_LUA_ALIGNMENT);
  return pmr_reallocate(r, ptr, osize, nsize, PMR_LUA_ALIGNMENT);
}
