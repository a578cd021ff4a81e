/* pmr_pool_options: std::pmr::pool_options, shared by the pool resources. */
#ifndef PMR_RESOURCES_POOL_OPTIONS_H
#define PMR_RESOURCES_POOL_OPTIONS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Defaults (a 0 option means "the default") and limits (larger values are
 * clamped to them; SIZE_MAX clamps to the maximum, not to the minimum). */
#define PMR_POOL_DEFAULT_MAX_BLOCKS_PER_CHUNK ((size_t)4096)
#define PMR_POOL_MAX_MAX_BLOCKS_PER_CHUNK ((size_t)1 << 20)
#define PMR_POOL_DEFAULT_LARGEST_BLOCK ((size_t)4096)
#define PMR_POOL_MAX_LARGEST_BLOCK ((size_t)1 << 20) /* 1 MiB */

typedef struct pmr_pool_options {
  /* The most blocks a chunk from upstream holds. Chunks of a size class start
   * at about 4 KiB (at least one block, at most this many blocks) and double
   * until they hold this many blocks or reach 1 MiB (or one block, if a
   * block is larger). */
  size_t max_blocks_per_chunk;
  /* The largest request served from the pools; larger ones go straight to
   * upstream. Rounded up to a size class: the effective value reported by
   * the pool's options() is exactly the threshold (one byte more goes to
   * upstream). A request counts by its size rounded up to its alignment. */
  size_t largest_required_pool_block;
} pmr_pool_options;

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* PMR_RESOURCES_POOL_OPTIONS_H */
