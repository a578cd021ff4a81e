/* A library loaded with dlopen by dropin_child's "dlopen" scenario: it
 * allocates in its constructor and frees in its destructor, hands blocks to
 * the program and takes the program's blocks, all through malloc. */
#include <stdlib.h>
#include <string.h>

void *dropin_plugin_make(size_t bytes);
int dropin_plugin_take(void *p);

static void *held;

__attribute__((constructor)) static void plugin_load(void) {
  held = malloc(4096);
  if (held != NULL) memset(held, 7, 4096);
}

__attribute__((destructor)) static void plugin_unload(void) {
  free(held);
  free(malloc(100)); /* allocation while the library is being unloaded */
}

/* A block for the program to free (after dlclose, too). */
void *dropin_plugin_make(size_t bytes) {
  void *p = malloc(bytes);
  if (p != NULL) memset(p, 1, bytes);
  return p;
}

/* Frees a block of the program's; 1 when `held` was intact. */
int dropin_plugin_take(void *p) {
  free(p);
  const unsigned char *h = (const unsigned char *)held;
  if (h == NULL) return 0;
  for (int i = 0; i < 4096; ++i)
    if (h[i] != 7) return 0;
  return 1;
}
