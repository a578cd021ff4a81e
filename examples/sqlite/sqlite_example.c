/* SQLite with its memory from a pmr-c resource.
 *
 *   sqlite_example [RESOURCE] [ROWS] [THREADS]
 *
 * Runs the workload of sqlite_workload.h (ROWS rows, default 20000) on
 * THREADS threads at once (default 4), each with its own connection and
 * in-memory database, SQLite's memory served by RESOURCE (malloc,
 * monotonic, unsynchronized_pool, synchronized_pool, thread_cache,
 * statistics, debug; default thread_cache; a resource that is not
 * thread-safe runs one thread) through pmr_sqlite_use. Prints the digest
 * and the memory figures; exits 1 if a thread failed, the threads' digests
 * differ, or memory was left behind after sqlite3_shutdown. */
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "examples/example_resource.h"
#include "examples/sqlite/pmr_sqlite_mem.h"
#include "examples/sqlite/sqlite_workload.h"

#define MAX_THREADS 64

typedef struct {
  int rows, rc;
  uint64_t digest;
} job;

static void *run(void *arg) {
  job *j = (job *)arg;
  j->rc = sqlite_workload_run(j->rows, &j->digest);
  return NULL;
}

int main(int argc, char **argv) {
  const char *name = argc > 1 ? argv[1] : "thread_cache";
  int rows = argc > 2 ? atoi(argv[2]) : 20000;
  int threads = argc > 3 ? atoi(argv[3]) : 4;
  if (threads < 1) threads = 1;
  if (threads > MAX_THREADS) threads = MAX_THREADS;
  example_resource e;
  if (!example_resource_open(&e, name)) {
    example_resource_print_unknown(stderr, name);
    return 2;
  }
  if (!(pmr_resource_traits(example_resource_get(&e)) & PMR_TRAIT_THREAD_SAFE))
    threads = 1;
  if (pmr_sqlite_use(example_resource_get(&e)) != SQLITE_OK ||
      sqlite3_initialize() != SQLITE_OK) {
    fprintf(stderr, "%s: SQLite refused the allocator\n", name);
    return 2;
  }
  job jobs[MAX_THREADS];
  pthread_t ids[MAX_THREADS];
  int started = 0;
  for (int i = 0; i < threads; ++i) {
    jobs[i].rows = rows;
    jobs[i].rc = -1;
    jobs[i].digest = 0;
    if (pthread_create(&ids[i], NULL, run, &jobs[i]) != 0) break;
    ++started;
  }
  int ok = started == threads;
  for (int i = 0; i < started; ++i) {
    pthread_join(ids[i], NULL);
    ok = ok && jobs[i].rc == SQLITE_OK && jobs[i].digest == jobs[0].digest;
  }
  size_t peak = example_resource_peak_bytes(&e);
  sqlite3_shutdown(); /* SQLite gives back what it still holds */
  size_t left = example_resource_bytes_in_use(&e);
  printf(
      "%s: %d thread(s) x %d rows, digest %016llx%s; SQLite took %zu bytes "
      "in all, peak %zu, %zu in use after sqlite3_shutdown\n",
      name, started, rows, (unsigned long long)jobs[0].digest,
      ok ? "" : " (FAILED)", example_resource_total_bytes(&e), peak, left);
  size_t leaks = example_resource_close(&e);
  return ok && left == 0 && leaks == 0 ? 0 : 1;
}
