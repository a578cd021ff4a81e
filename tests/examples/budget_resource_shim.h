#ifndef PMR_TESTS_EXAMPLES_BUDGET_RESOURCE_SHIM_H
#define PMR_TESTS_EXAMPLES_BUDGET_RESOURCE_SHIM_H
#include "mem_resource/pmr_mem_resource.h"
#ifdef __cplusplus
extern "C" {
#endif
pmr_mem_resource *budget_example_new(pmr_mem_resource *upstream, size_t limit);
size_t budget_example_used(const pmr_mem_resource *r);
void budget_example_delete(pmr_mem_resource *r);
#ifdef __cplusplus
}
#endif
#endif
