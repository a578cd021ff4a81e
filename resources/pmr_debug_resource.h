/* pmr_debug_resource: a test resource that catches misuse of the memory it
 * hands out (in the spirit of BDE's bslma::TestAllocator, P1160).
 *
 * It wraps any upstream and gives each block a header and guard bytes:
 *
 *   upstream block: [header | guard >= 16 bytes | user block | guard 16 bytes]
 *
 * The upstream block is asked with max(alignment, 16) and the user block
 * placed at the requested alignment (any power of two), so the front guard
 * grows with the alignment. New blocks are filled with 0xCD, guards with
 * 0xFD, freed blocks with 0xDD. It detects, each with one message through
 * pmr_report_misuse naming the resource (its name and address), the pointer,
 * the sizes and the allocation's serial number (#1 is the first block):
 *
 *   - double free (a block in quarantine, or among the last 4096 returned to
 *     upstream); a pointer it never gave out (also: "N bytes into block P");
 *     deallocation with other bytes or alignment than the allocation. The
 *     bad call is ignored: the block stays live (and will be a leak).
 *   - writes before or after a block (header and guards), checked when the
 *     block is freed and by pmr_debug_resource_check;
 *   - writes to freed memory: freed blocks wait in a FIFO quarantine (the
 *     last quarantine_blocks blocks, at most quarantine_bytes bytes) and are
 *     checked when they leave it, by pmr_debug_resource_check and at destroy;
 *   - leaks at destroy, each listed, then freed to upstream. A leak shows
 *     the block as it was allocated, not what the caller used of it: a
 *     container's leaked buffer shows its capacity (a pmr_string holding 39
 *     characters may show as a block of 47 bytes), a hashmap its table.
 * A damaged guard or freed block is restored once reported, so each damage is
 * reported once. Live blocks are looked up in a hash table of user pointers
 * (libc malloc, not upstream: upstream sees exactly one block per block), so
 * a foreign pointer is never read.
 *
 * After reporting, an operation that found misuse calls abort() unless
 * continue_on_misuse is set, when the default misuse handler
 * (stderr) is installed: that is what a test allocator does (a test fails at
 * the first bug, with the message on stderr). A handler installed with
 * pmr_set_misuse_handler takes over instead (a test asserting on the
 * messages, a service logging them): the bad call is then ignored and the
 * program goes on. The handler must not call back into the same debug
 * resource.
 *
 * Failure injection (to test a caller's out-of-memory paths): fail the nth
 * allocation from now, fail what would take bytes in use above a limit, fail
 * everything; failures give NULL with errno = ENOMEM.
 *
 * pmr_try_resize is forwarded to upstream's (the guards move with the end);
 * growth obeys the byte limit and fail-always. Equal only to itself.
 *
 * Thread safety: every operation takes one mutex, and upstream is called
 * only with it held, so any upstream (even a single-threaded one) is safe;
 * the resource can be used from any thread.
 * fork(): usable and destroyable in the child of a multi-threaded parent
 * (pthread_atfork handlers take every live resource's mutex before fork()).
 * A live resource is listed for this: destroy it before its storage goes
 * away.
 * Failure: NULL when upstream fails, when failure is injected, or when the
 * tracking table cannot grow (errno = ENOMEM).
 * NULL (pmr_mem_resource.h): a NULL resource given to any function below is
 * a caller error: debug builds (-DPMR_DEBUG) report it through
 * pmr_report_misuse (never abort) and the call changes nothing and returns
 * false, NULL, 0 or zeroed stats and options. */
#ifndef PMR_RESOURCES_DEBUG_RESOURCE_H
#define PMR_RESOURCES_DEBUG_RESOURCE_H

#include <stdbool.h>
#include <stdint.h>

#include "../mem_resource/pmr_mem_resource.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Guard bytes after each block; before it there are at least as many. */
#define PMR_DEBUG_GUARD_BYTES 16

/* Zeroed options (or NULL) are the defaults: no name, a quarantine of 1024
 * blocks and 4 MiB, abort after reporting misuse. */
typedef struct pmr_debug_resource_options {
  const char *name;         /* in every message; copied (63 bytes at most);
                               NULL or "" for none */
  size_t quarantine_blocks; /* freed blocks kept back (0: 1024) */
  size_t quarantine_bytes;  /* and their bytes at most (0: 4 MiB); a larger
                               block skips the quarantine */
  bool no_quarantine;       /* true: freed blocks go back at once */
  bool continue_on_misuse;  /* true: never abort() after reporting */
} pmr_debug_resource_options;

/* The state is private; its size is fixed here so the resource can live on
 * the stack or inside another struct. */
typedef struct pmr_debug_resource {
  pmr_mem_resource base; /* first: the abstract resource */
  PMR_IMPL_STATE(384);
} pmr_debug_resource;

typedef struct pmr_debug_resource_stats {
  uint64_t allocations;        /* successful; also the last serial number */
  uint64_t deallocations;      /* accepted ones (misuse is not counted) */
  uint64_t failed_allocations; /* injected or upstream failures */
  uint64_t injected_failures;
  uint64_t misuse; /* problems reported so far, leaks included */
  size_t blocks_in_use, bytes_in_use, peak_bytes_in_use;
  size_t quarantined_blocks, quarantined_bytes;
} pmr_debug_resource_stats;

/* Initialises d. opts == NULL means the defaults. upstream == NULL means
 * the default resource at this moment. Never fails (returns true), never calls
 * upstream (the tables are allocated at first use). d must not be live:
 * initialising a live resource again reports it through pmr_report_misuse
 * and destroys it first (its leaks reported). */
bool pmr_debug_resource_init(pmr_debug_resource *d,
                             const pmr_debug_resource_options *opts,
                             pmr_mem_resource *upstream);

/* Checks every block in quarantine and gives it back to upstream; then
 * reports each block still in use as a leak (in allocation order, with size,
 * alignment and serial number) and gives it back to upstream too, so nothing
 * is left. Returns the number of leaked blocks; aborts after reporting when
 * something was wrong and continue_on_misuse is not set. Idempotent: destroy
 * again returns 0 and does nothing. d may be initialised again afterwards.
 * Not to be called while other threads use d. */
size_t pmr_debug_resource_destroy(pmr_debug_resource *d);

pmr_mem_resource *pmr_debug_resource_upstream(const pmr_debug_resource *d);

/* Checks the guards of every live block and the guards and fill of every
 * block in quarantine now; reports each problem. Returns the number of
 * problems found (0: all intact). Thread-safe. */
size_t pmr_debug_resource_check(pmr_debug_resource *d);

/* Checks every block in quarantine and gives it back to upstream now.
 * Returns the number of problems found. Thread-safe. */
size_t pmr_debug_resource_flush_quarantine(pmr_debug_resource *d);

pmr_debug_resource_stats pmr_debug_resource_get_stats(
    const pmr_debug_resource *d);

/* The options in effect: zeros replaced by the defaults, name pointing at
 * d's own copy (valid until d is destroyed). */
pmr_debug_resource_options pmr_debug_resource_get_options(
    const pmr_debug_resource *d);

/* Sets continue_on_misuse to !on. Thread-safe. */
void pmr_debug_resource_set_abort_on_misuse(pmr_debug_resource *d, bool on);

/* Failure injection; each is thread-safe and lasts until stop_failing.
 * fail_nth: the nth allocation from now fails (1: the next one), once; 0
 * cancels. fail_over_bytes: an allocation fails when it would take bytes in
 * use above limit. fail_always: every allocation fails. stop_failing
 * cancels all three. Injected failures are counted, never reported. */
void pmr_debug_resource_fail_nth(pmr_debug_resource *d, uint64_t n);
void pmr_debug_resource_fail_over_bytes(pmr_debug_resource *d, size_t limit);
void pmr_debug_resource_fail_always(pmr_debug_resource *d);
void pmr_debug_resource_stop_failing(pmr_debug_resource *d);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* PMR_RESOURCES_DEBUG_RESOURCE_H */
