/* The SQLite workload (see sqlite_workload.h). */
#include "examples/sqlite/sqlite_workload.h"

#include <sqlite3.h>
#include <stddef.h>
#include <string.h>

/* FNV-1a over the results. */
static void fold(uint64_t *h, const void *data, size_t n) {
  const unsigned char *b = (const unsigned char *)data;
  for (size_t i = 0; i < n; ++i) *h = (*h ^ b[i]) * 0x100000001b3ull;
}

static void fold_int(uint64_t *h, sqlite3_int64 v) { fold(h, &v, sizeof v); }

/* A deterministic generator (xorshift64*) for the rows' contents. */
static uint64_t next(uint64_t *s) {
  *s ^= *s >> 12;
  *s ^= *s << 25;
  *s ^= *s >> 27;
  return *s * 0x2545F4914F6CDD1Dull;
}

/* Runs sql, folding every column of every row into *h. */
static int query(sqlite3 *db, const char *sql, uint64_t *h) {
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
  while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
    for (int c = 0; c < sqlite3_column_count(st); ++c) {
      const unsigned char *t = sqlite3_column_text(st, c);
      if (t != NULL) fold(h, t, (size_t)sqlite3_column_bytes(st, c));
    }
    rc = SQLITE_OK;
  }
  sqlite3_finalize(st);
  return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

static int exec(sqlite3 *db, const char *sql, uint64_t *h) {
  int rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
  if (rc == SQLITE_OK) fold_int(h, sqlite3_changes(db));
  return rc;
}

/* rows rows: an id, a key (a permutation of 0..rows-1 spread by a
 * multiplier), a group of 97, a name and a note of 16 to 200 characters. */
static int insert_rows(sqlite3 *db, int rows) {
  static const char letters[] = "abcdefghijklmnopqrstuvwxyz ";
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_exec(db, "BEGIN", NULL, NULL, NULL);
  if (rc == SQLITE_OK)
    rc = sqlite3_prepare_v2(
        db, "INSERT INTO t(k, g, name, note) VALUES(?,?,?,?)", -1, &st, NULL);
  uint64_t seed = 0x9E3779B97F4A7C15ull;
  char name[32], note[208];
  for (int i = 0; rc == SQLITE_OK && i < rows; ++i) {
    sqlite3_int64 k = ((sqlite3_int64)i * 7919) % rows;
    size_t len = 16 + (size_t)(next(&seed) % 185);
    for (size_t j = 0; j < len; ++j)
      note[j] = letters[next(&seed) % (sizeof letters - 1)];
    sqlite3_snprintf(sizeof name, name, "name-%08lld", k);
    sqlite3_bind_int64(st, 1, k);
    sqlite3_bind_int(st, 2, (int)(k % 97));
    sqlite3_bind_text(st, 3, name, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 4, note, (int)len, SQLITE_TRANSIENT);
    rc = sqlite3_step(st);
    if (rc == SQLITE_DONE) rc = sqlite3_reset(st);
  }
  sqlite3_finalize(st);
  if (rc == SQLITE_OK) return sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
  sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
  return rc;
}

/* rows / 4 lookups by key through the index. */
static int lookups(sqlite3 *db, int rows, uint64_t *h) {
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(db, "SELECT id, note FROM t WHERE k = ?", -1, &st,
                              NULL);
  for (int i = 0; rc == SQLITE_OK && i < rows / 4 + 1; ++i) {
    sqlite3_bind_int64(st, 1, ((sqlite3_int64)i * 104729) % rows);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
      fold_int(h, sqlite3_column_int64(st, 0));
      fold(h, sqlite3_column_text(st, 1), (size_t)sqlite3_column_bytes(st, 1));
    }
    rc = rc == SQLITE_DONE ? sqlite3_reset(st) : rc;
  }
  sqlite3_finalize(st);
  return rc;
}

int sqlite_workload_run(int rows, uint64_t *digest) {
  if (rows < 1) rows = 1;
  uint64_t h = 0xcbf29ce484222325ull;
  sqlite3 *db = NULL;
  int rc = sqlite3_open(":memory:", &db);
  if (rc == SQLITE_OK)
    rc = sqlite3_exec(db,
                      "CREATE TABLE t(id INTEGER PRIMARY KEY, k INTEGER, "
                      "g INTEGER, name TEXT, note TEXT)",
                      NULL, NULL, NULL);
  if (rc == SQLITE_OK) rc = insert_rows(db, rows);
  if (rc == SQLITE_OK) rc = exec(db, "CREATE INDEX t_k ON t(k)", &h);
  if (rc == SQLITE_OK) rc = exec(db, "CREATE INDEX t_name ON t(name)", &h);
  if (rc == SQLITE_OK) rc = lookups(db, rows, &h);
  if (rc == SQLITE_OK)
    rc = query(db,
               "SELECT g, count(*), sum(length(note)), min(name), max(name) "
               "FROM t GROUP BY g ORDER BY g",
               &h);
  if (rc == SQLITE_OK)
    rc = exec(db,
              "UPDATE t SET note = upper(note) || ' ' || name WHERE g % 3 = 0",
              &h);
  if (rc == SQLITE_OK) rc = exec(db, "DELETE FROM t WHERE k % 5 = 0", &h);
  if (rc == SQLITE_OK)
    rc = query(db,
               "SELECT count(*), sum(length(note)) FROM t "
               "WHERE note LIKE '%ab%c%' OR name LIKE 'name-0000%7'",
               &h);
  if (rc == SQLITE_OK)
    rc = query(db, "SELECT count(*), sum(k), total(length(note)) FROM t", &h);
  if (rc == SQLITE_OK) *digest = h;
  int closed = sqlite3_close(db);
  return rc != SQLITE_OK ? rc : closed;
}
