/* pmr-c: every public header in one include.
 *
 *     #include "pmr.h"
 *
 * Each header below is named after the type it declares and states the
 * contract of its functions; include one of them alone when that is all a
 * file needs. Headers under an `internal/` folder are not part of the API.
 */
#ifndef PMR_H
#define PMR_H

#include "mem_resource/pmr_malloc_adapter.h"
#include "mem_resource/pmr_mem_resource.h"

#include "resources/pmr_debug_resource.h"
#include "resources/pmr_monotonic_buffer.h"
#include "resources/pmr_pool_options.h"
#include "resources/pmr_segment_cache.h"
#include "resources/pmr_statistics.h"
#include "resources/pmr_synchronized_pool.h"
#include "resources/pmr_thread_cache.h"
#include "resources/pmr_unsynchronized_pool.h"

#include "containers/pmr_hashmap.h"
#include "containers/pmr_string.h"
#include "containers/pmr_vector.h"

#endif /* PMR_H */
