/* The drop-in's statistics as text (pmr_dropin.h). */
#include <stdio.h>

#include "malloc/pmr_dropin.h"
#include "resources/internal/platform.h"

/* The build's mode, named in the statistics (libpmr_malloc_secure.so). */
#ifdef PMR_SECURE
#define MODE_NAME ", secure mode"
#else
#define MODE_NAME ""
#endif

void pmr_dropin_print_stats(int fd) {
  pmr_dropin_stats st = pmr_dropin_get_stats();
  char line[512];
  int n = snprintf(line, sizeof line,
                   "pmr_malloc: engine %s" MODE_NAME
                   ", threads with a heap %zu\n"
                   "pmr_malloc: held %zu bytes (free pages %zu, kept large "
                   "blocks %zu), calloc mappings %zu, records %zu\n"
                   "pmr_malloc: peak RSS %zu bytes\n",
                   st.engine, st.threads, st.held_bytes, st.free_page_bytes,
                   st.free_oversize_bytes, st.mapped_bytes, st.record_bytes,
                   st.peak_rss_bytes);
  if (n <= 0) return;
  size_t len = (size_t)n < sizeof line ? (size_t)n : sizeof line - 1;
  pmr_impl_os_write(fd, line, len);
}
