/* Every public header compiles as strict C11 (-std=c11 -pedantic -Werror) and
 * the basics work from plain C. The other tests compile the same headers as
 * C++. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>

#include "mem_resource/mem_resource.h"

static int failures = 0;
#define CHECK(cond)                                                   \
  do {                                                                \
    if (!(cond)) {                                                    \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, \
              #cond);                                                 \
      ++failures;                                                     \
    }                                                                 \
  } while (0)

int main(void) {
  pmr_mem_resource *m = pmr_malloc_resource();
  void *p = pmr_allocate(m, 100, 64);
  CHECK(p != NULL);
  CHECK(((uintptr_t)p % 64) == 0);
  pmr_deallocate(m, p, 100, 64);

  errno = 0;
  CHECK(pmr_allocate(m, 8, 6) == NULL);
  CHECK(errno == EINVAL);
  CHECK(pmr_allocate(pmr_null_resource(), 8, 8) == NULL);
  CHECK(pmr_is_equal(m, m));
  CHECK(!pmr_is_equal(m, pmr_null_resource()));
  CHECK(pmr_get_default_resource() == m);
  CHECK(pmr_set_default_resource(pmr_null_resource()) == m);
  CHECK(pmr_set_default_resource(NULL) == pmr_null_resource());

  if (failures == 0) printf("c_headers_test: all checks passed\n");
  return failures == 0 ? 0 : 1;
}
