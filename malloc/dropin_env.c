/* The drop-in's settings from the environment (internal/dropin.h). Read
 * while the engine is being made: nothing here allocates. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "malloc/internal/dropin.h"
#include "resources/internal/platform.h"
#include "resources/pmr_segment_cache.h"

bool pmr_impl_dropin_env_is(const char *name, const char *value) {
  const char *v = pmr_impl_os_getenv(name);
  return v != NULL && strcmp(v, value) == 0;
}

/* A decimal number from the environment, or `otherwise` when it is unset
 * or not one (strtoull allocates nothing). */
static unsigned long long env_number(const char *name,
                                     unsigned long long otherwise) {
  const char *v = pmr_impl_os_getenv(name);
  if (v == NULL || *v < '0' || *v > '9') return otherwise;
  char *end;
  unsigned long long n = strtoull(v, &end, 10);
  return *end == '\0' ? n : otherwise;
}

void pmr_impl_dropin_env_reservoir(void) {
  unsigned long long keep = env_number("PMR_MALLOC_KEEP_BYTES",
                                       PMR_LARGE_RESERVOIR_DEFAULT_MAX_BYTES);
  unsigned long long ms = env_number("PMR_MALLOC_PURGE_DELAY_MS",
                                     PMR_LARGE_RESERVOIR_DEFAULT_DELAY_MS);
  if (keep > SIZE_MAX) keep = SIZE_MAX;
  if (ms > 3600000u) ms = 3600000u; /* an hour at most */
  if (keep != PMR_LARGE_RESERVOIR_DEFAULT_MAX_BYTES ||
      ms != PMR_LARGE_RESERVOIR_DEFAULT_DELAY_MS)
    pmr_large_reservoir_set_limits((size_t)keep, (unsigned)ms);
}
