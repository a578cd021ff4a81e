#ifndef PMR_TESTS_EXAMPLES_COUNT_DISTINCT_H
#define PMR_TESTS_EXAMPLES_COUNT_DISTINCT_H
#include <stdint.h>
#include "mem_resource/pmr_mem_resource.h"
#ifdef __cplusplus
extern "C" {
#endif
/* README's container example (count_distinct.c). */
long count_distinct(const uint64_t *xs, size_t n, pmr_mem_resource *mem);
#ifdef __cplusplus
}
#endif
#endif
