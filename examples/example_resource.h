/* The examples' resource picker: any resource of pmr-c, chosen by name, with
 * a statistics counter in front of it, so a program can show (and a test
 * check) that a library gave back every byte it took.
 *
 *     example_resource e;
 *     if (!example_resource_open(&e, "synchronized_pool")) ...
 *     use example_resource_get(&e) ...
 *     example_resource_bytes_in_use(&e)   0 once everything is given back
 *     example_resource_close(&e);         frees everything
 *
 * Names: malloc, monotonic, unsynchronized_pool, synchronized_pool,
 * thread_cache, statistics, debug (a debug_resource: aborts on the first
 * double free, wrong size or overrun). Single-threaded use unless the
 * resource is thread-safe. */
#ifndef PMR_EXAMPLES_EXAMPLE_RESOURCE_H
#define PMR_EXAMPLES_EXAMPLE_RESOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "pmr.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct example_resource {
  int kind;
  pmr_statistics counter; /* what the program is given */
  union {
    pmr_monotonic_buffer monotonic;
    pmr_unsynchronized_pool unsync;
    pmr_synchronized_pool sync;
    pmr_thread_cache cache;
    pmr_statistics stats;
    pmr_debug_resource debug;
  } u;
} example_resource;

/* Every name example_resource_open accepts, NULL-terminated. */
extern const char *const example_resource_names[];

/* Writes "unknown resource NAME; one of: malloc, monotonic, ..." (every
 * name of example_resource_names) and a newline to f: what a program says
 * when example_resource_open does not know a name. */
void example_resource_print_unknown(FILE *f, const char *name);

/* Sets up the resource called `name` over the malloc resource. False for an
 * unknown name or a failed init (nothing to close then). */
bool example_resource_open(example_resource *e, const char *name);

/* The counted resource to hand to a library. */
pmr_mem_resource *example_resource_get(example_resource *e);

/* Blocks and bytes allocated through example_resource_get and not given
 * back. */
size_t example_resource_blocks_in_use(const example_resource *e);
size_t example_resource_bytes_in_use(const example_resource *e);
/* Bytes ever allocated, and the peak in use. */
size_t example_resource_total_bytes(const example_resource *e);
size_t example_resource_peak_bytes(const example_resource *e);

/* Destroys the resource (everything goes back to malloc). Returns the leaks
 * the debug resource found (0 for the others). */
size_t example_resource_close(example_resource *e);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* PMR_EXAMPLES_EXAMPLE_RESOURCE_H */
