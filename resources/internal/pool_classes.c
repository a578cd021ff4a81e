/* The pools' size classes: the tables of the rule in pool_classes.h, and
 * effective options. */
#include "resources/internal/pool_classes.h"

/* Class of each size s <= 1024, indexed by (s + 7) / 8. Built by hand from
 * the class rule in pool_classes.h; pmr_impl_pool_class_of is tested against
 * pmr_impl_pool_class_size for every size. */
#define C8(x) x, x, x, x, x, x, x, x
const uint8_t
    pmr_impl_pool_class_table[PMR_IMPL_POOL_TABLE_LIMIT / 8 + 1] =
        {
            0,      0,      1,      2,      3,      4,
            5,      6,      7, /* s = 0..64, step 8 */
            8,      8,      9,      9,      10,     10,
            11,     11, /* 72..128: 80, 96, 112, 128 */
            12,     12,     12,     12,     13,     13,
            13,     13,     14,     14,     14,     14,
            15,     15,     15,     15,     /* ..256 */
            C8(16), C8(17), C8(18), C8(19), /* ..512 */
            C8(20), C8(20), C8(21), C8(21), C8(22), C8(22),
            C8(23), C8(23), /* ..1024 */
};
#undef C8

/* The class sizes of the rule in pool_classes.h, in order: 8 .. 64 by 8, four
 * per power of two to 4 KiB, the page-fitted twelve to 16 KiB, four per power
 * of two to 1 MiB. */
const uint32_t pmr_impl_pool_class_sizes[PMR_IMPL_POOL_CLASSES] = {
    8,      16,     24,     32,     40,     48,     56,     64,     80,
    96,     112,    128,    160,    192,    224,    256,    320,    384,
    448,    512,    640,    768,    896,    1024,   1280,   1536,   1792,
    2048,   2560,   3072,   3584,   4096,   4368,   4672,   5040,   5456,
    5952,   6544,   7280,   8192,   9360,   10912,  13104,  16384,  20480,
    24576,  28672,  32768,  40960,  49152,  57344,  65536,  81920,  98304,
    114688, 131072, 163840, 196608, 229376, 262144, 327680, 393216, 458752,
    524288, 655360, 786432, 917504, 1048576};

pmr_pool_options pmr_impl_pool_effective_options(const pmr_pool_options *opts) {
  pmr_pool_options o = {0, 0, 0};
  if (opts != NULL) o = *opts;
  o.max_blocks_per_chunk = pmr_impl_clamp_option(
      o.max_blocks_per_chunk, PMR_POOL_DEFAULT_MAX_BLOCKS_PER_CHUNK,
      PMR_POOL_MAX_MAX_BLOCKS_PER_CHUNK);
  size_t largest = pmr_impl_clamp_option(o.largest_required_pool_block,
                                         PMR_POOL_DEFAULT_LARGEST_BLOCK,
                                         PMR_IMPL_POOL_MAX_CLASS_SIZE);
  o.largest_required_pool_block =
      pmr_impl_pool_class_size(pmr_impl_pool_class_of(largest));
  if (o.max_free_bytes == 0) o.max_free_bytes = PMR_POOL_DEFAULT_MAX_FREE_BYTES;
  return o;
}
