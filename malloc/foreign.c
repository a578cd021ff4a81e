/* Foreign pointers: what the drop-in can tell of a pointer that is no
 * block it holds (internal/dropin.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* dladdr, pthread_getattr_np */
#endif
#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/auxv.h>

#include "malloc/internal/dropin.h"
#include "malloc/internal/tag_registry.h"
#include "resources/internal/platform.h"

const char *pmr_impl_dropin_never_a_block(const void *p) {
  /* Inside the first OS page of a mapped block of ours (of the basic
   * alignment): p + 1, p + 16, a header mistaken for the block. */
  uintptr_t first = ((uintptr_t)p & ~(uintptr_t)(pmr_impl_os_page_size() - 1)) +
                    pmr_impl_tag_front(PMR_IMPL_TAG_ALIGN);
  if (first < (uintptr_t)p &&
      pmr_impl_tag_registry_state((const void *)first, false) ==
          PMR_IMPL_TAGREG_LIVE)
    return "not the start of a block in use (inside a large one)";
  pthread_attr_t a;
  if (pthread_getattr_np(pthread_self(), &a) == 0) {
    void *lo = NULL;
    size_t size = 0;
    bool got = pthread_attr_getstack(&a, &lo, &size) == 0;
    pthread_attr_destroy(&a);
    if (got && (uintptr_t)p - (uintptr_t)lo < size)
      return "a pointer into the stack";
  }
  Dl_info info;
  if (dladdr(p, &info) != 0 && info.dli_fbase != NULL &&
      (uintptr_t)info.dli_fbase != (uintptr_t)getauxval(AT_BASE))
    return "a pointer into a loaded object's static storage or code";
  return NULL;
}
