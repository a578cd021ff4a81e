/* Lua 5.4 with its memory from a pmr-c resource.
 *
 *   lua_example SCRIPT.lua [RESOURCE]
 *
 * RESOURCE is one of malloc, monotonic, unsynchronized_pool,
 * synchronized_pool, thread_cache, statistics, debug (default:
 * unsynchronized_pool). Prints the script's result and what the resource
 * saw; exits 1 if the script failed or Lua left memory behind. */
#include <stdio.h>

#include "examples/example_resource.h"
#include "examples/lua/lua_run.h"

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s SCRIPT.lua [RESOURCE]\n", argv[0]);
    return 2;
  }
  const char *name = argc > 2 ? argv[2] : "unsynchronized_pool";
  example_resource e;
  if (!example_resource_open(&e, name)) {
    example_resource_print_unknown(stderr, name);
    return 2;
  }
  char result[512];
  int rc =
      lua_run_file(example_resource_get(&e), argv[1], result, sizeof result);
  size_t left = example_resource_bytes_in_use(&e);
  printf("%s: %s\n", name, result);
  printf("  %zu bytes allocated in all, peak %zu, %zu in use after lua_close\n",
         example_resource_total_bytes(&e), example_resource_peak_bytes(&e),
         left);
  size_t leaks = example_resource_close(&e);
  return rc == 0 && left == 0 && leaks == 0 ? 0 : 1;
}
