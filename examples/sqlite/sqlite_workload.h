/* A SQLite workload on an in-memory database, the same for the example, its
 * test and benchmark workload Q (benchmarks/README.md): an insert-heavy
 * phase, index builds, point lookups, GROUP BY, UPDATE, DELETE and a LIKE
 * scan, each folded into a digest of every result, so that runs over
 * different allocators can be compared exactly. */
#ifndef PMR_EXAMPLES_SQLITE_SQLITE_WORKLOAD_H
#define PMR_EXAMPLES_SQLITE_SQLITE_WORKLOAD_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Opens a connection to a new in-memory database, runs the workload with
 * `rows` rows (at least 1; the data depends on rows alone), closes the
 * connection. Returns SQLITE_OK (0) with the digest in *digest, or the
 * first SQLite error code (SQLITE_NOMEM when memory ran out); the
 * connection is closed either way. Thread-safe: each call has its own
 * connection and database (SQLite in its default serialized mode). */
int sqlite_workload_run(int rows, uint64_t *digest);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* PMR_EXAMPLES_SQLITE_SQLITE_WORKLOAD_H */
