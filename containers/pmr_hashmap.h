/* pmr-c: pmr_hashmap, an open-addressing hash map over any pmr_mem_resource
 * (std::pmr::unordered_map for C, laid out like a Swiss table).
 *
 * Keys and values are fixed-size byte blobs whose sizes and alignments are
 * given at init (value_size 0 makes a set). Keys are chosen by kind:
 *   - bytes  (pmr_hashmap_init): plain keys compared and hashed as bytes;
 *            zero any padding in struct keys. 8-byte keys (uint64_t...) have
 *            an inline lookup, pmr_hashmap_find_u64.
 *   - cstr   (pmr_hashmap_init_cstr): a key is a `const char *` (stored as
 *            the pointer, NOT copied: the text must stay alive and unchanged
 *            while in the map); hashed and compared by its text. NULL is a
 *            valid key, equal only to NULL.
 *   - string (pmr_hashmap_init_string): a key is a pmr_string (or a text
 *            (p, n), the _str functions); the map stores its own copy of the
 *            bytes, exactly sized, with the value, in records packed into
 *            chunks it allocates from its resource (an insertion allocates
 *            only when the last chunk is full). Iteration and find_key show a
 *            stored key as a const pmr_string that only views the map's bytes
 *            (read it with pmr_string_c_str, _length, _resource...; never
 *            edit or destroy it): the iterator's lives in the iterator (valid
 *            until its next step), find_key's in the map (valid until the
 *            next find_key or change of the map). A key of 2^31 bytes or
 *            more, or a 2^32nd key, fails as too large (NOMEM).
 *   - custom (pmr_hashmap_init_custom): plain bytes with the caller's hash
 *            and/or equality functions (NULL = the built-in one).
 * Every function that takes a key takes a POINTER to it: `&k` for an
 * integer, `&text` for a `const char *text`, `&str` for a pmr_string.
 * NULL (the library's rule, pmr_mem_resource.h): a NULL key pointer is a
 * caller error (a cstr key that is NULL is passed as a pointer to it);
 * debug builds (-DPMR_DEBUG) report it through pmr_report_misuse, lookups
 * then find nothing and insertions fail (PMR_HASHMAP_BADARG, NULL with
 * errno EINVAL). So is a NULL map (or iterator) given to any function, the
 * inline ones included: debug builds report it and the call changes
 * nothing and returns false, NULL, 0, PMR_HASHMAP_BADARG or, for empty,
 * true (an iterator that ends at once, for iter_begin).
 * Values are copied byte-wise and never interpreted.
 *
 * Table: capacity is 0 or a power of two >= 16; one control byte per slot
 * (empty, deleted, or 7 bits of the key's hash) scanned 16 at a time (SSE2,
 * or portable 64-bit word tricks elsewhere; same layout); triangular probing
 * over groups; at most 7/8 of the slots used. Erase leaves a tombstone only
 * when a probe may have passed the slot (otherwise the slot becomes empty);
 * tombstones are dropped when the table is rebuilt. A slot holds the key and
 * the value, except in a string map, where it holds a 4-byte reference to
 * the key's record. The records an erasure leaves dead are reclaimed by a
 * compaction: when an insertion needs a new chunk and dead bytes are at
 * least the live ones, and by shrink_to_fit; clear, and erasing the last
 * key, give every chunk back.
 *
 * Keys from an adversary (hash flooding). The built-in hashes are keyed:
 * every map gets its own seed at init, derived from a per-process secret
 * (random from the OS at first use: getrandom or /dev/urandom; where neither
 * exists, a mix of clocks, process id and ASLR addresses) and a per-map
 * counter. For the built-in key kinds (bytes, 8-byte keys, cstr, string, and
 * custom maps that keep the built-in hash), an attacker who chooses the keys
 * but does not know the seed cannot predict which keys collide: no input
 * block resets the hash state, and collisions found offline, in another
 * process or against another map do not carry over, so operations stay O(1)
 * on average whatever the keys. What an attacker CAN still do: observe
 * timings over many requests to learn about one long-lived map (the hash is
 * fast, not a cryptographic MAC), and make every map slow when it knows the
 * seed: a seed given with pmr_hashmap_set_seed (for reproducible tests and
 * benchmarks) must not be guessable when keys come from outside. A hash
 * function given to pmr_hashmap_init_custom is the caller's responsibility
 * (pmr_hash_bytes, seeded per process, is a safe building block). A child of
 * fork() shares its parent's secret. The layout and the iteration order
 * depend on the seed: they are reproducible only under an explicit seed.
 *
 * Errors: an operation that cannot get memory (or would exceed the largest
 * table) fails and leaves the map exactly as it was: contents, size,
 * capacity. Inserting a key that is present, find, erase, clear and iteration
 * never allocate. Nothing aborts.
 *
 * Pointers to keys and values (from find, emplace, iteration) stay valid
 * until the element is erased or the table is rebuilt: by an insertion of a
 * NEW key that needs room, reserve, shrink_to_fit, the assignments, swap,
 * move or destroy. Erasing never moves other elements. In a string map the
 * values and key bytes move only when the records are compacted (by an
 * insertion of a NEW key, even after reserve, or by shrink_to_fit), not when
 * the table alone is rebuilt; the key views follow the rules above.
 *
 * Iteration (order unspecified, fixed by the seed and the operations;
 * erasing the current element is allowed and the walk goes on):
 *     pmr_hashmap_iter it = pmr_hashmap_iter_begin(&m);
 *     while (pmr_hashmap_iter_next(&it)) {
 *       use(it.key, it.value);
 *       if (drop(it.key)) pmr_hashmap_iter_erase(&it);
 *     }
 *
 * Thread safety: none; a map is used by one thread at a time.
 */
#ifndef PMR_CONTAINERS_HASHMAP_H
#define PMR_CONTAINERS_HASHMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "../mem_resource/pmr_mem_resource.h"
#include "internal/hash.h"
#include "internal/hashmap_table.h"
#include "pmr_string.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A user hash of the key at `key` (must give equal keys equal hashes; all 64
 * bits are used). ctx is the pointer given at init. */
typedef uint64_t (*pmr_hashmap_hash_fn)(const void *key, void *ctx);
/* A user equality of the keys at a and b. */
typedef bool (*pmr_hashmap_equal_fn)(const void *a, const void *b, void *ctx);

/* The fields are private: use the functions. */
typedef struct pmr_hashmap {
  unsigned char *ctrl; /* capacity + group width control bytes */
  unsigned char *slots;
  size_t mask; /* capacity - 1, or 0 when capacity is 0 */
  size_t capacity;
  size_t size;
  size_t growth_left; /* insertions into empty slots before a rebuild */
  size_t key_size, key_align, value_size, value_align;
  size_t value_offset, slot_size, slot_align;
  int kind;
  pmr_hashmap_hash_fn hash;
  pmr_hashmap_equal_fn equal;
  void *ctx;
  pmr_mem_resource *resource;
  uint64_t seed0, seed1; /* the keys of the hash (see pmr_hashmap_set_seed) */
  /* String maps: the records holding keys and values (hashmap_str.c). */
  struct pmr_impl_hashmap_chunk *chunks;
  size_t nchunks, chunks_cap;
  size_t rec_live, rec_dead; /* bytes of live and of erased records */
  pmr_string key_view;       /* what find_key points to (string maps) */
} pmr_hashmap;

/* Results of the insertions. Negative means failure, map unchanged. */
typedef enum pmr_hashmap_status {
  /* A caller error, not a lack of memory: a key of the wrong kind (a text
   * key, _str, on a map of neither string nor cstr keys; an 8-byte key by
   * value, _u64, on a map whose keys are not 8 bytes), a text that cannot
   * be a key (NULL with a length above 0; for a cstr map, not a C string of
   * length n), or, in debug builds, a NULL map or key pointer. errno is
   * EINVAL (the pointer-returning emplace functions return NULL with errno
   * EINVAL); debug builds (-DPMR_DEBUG) report it through
   * pmr_report_misuse. */
  PMR_HASHMAP_BADARG = -2,
  PMR_HASHMAP_NOMEM = -1,   /* out of memory or too large: map unchanged */
  PMR_HASHMAP_EXISTED = 0,  /* the key was present */
  PMR_HASHMAP_INSERTED = 1, /* the key was new and has been added */
} pmr_hashmap_status;

/* Initialise an empty map (no allocation) over r (NULL = the default
 * resource at this moment), for each key kind described above. False, m
 * untouched, when a size is not a multiple of its alignment, an alignment is
 * not a power of two, or key_size is 0. */
bool pmr_hashmap_init(pmr_hashmap *m, size_t key_size, size_t key_align,
                      size_t value_size, size_t value_align,
                      pmr_mem_resource *r);
bool pmr_hashmap_init_cstr(pmr_hashmap *m, size_t value_size,
                           size_t value_align, pmr_mem_resource *r);
bool pmr_hashmap_init_string(pmr_hashmap *m, size_t value_size,
                             size_t value_align, pmr_mem_resource *r);
bool pmr_hashmap_init_custom(pmr_hashmap *m, size_t key_size, size_t key_align,
                             size_t value_size, size_t value_align,
                             pmr_hashmap_hash_fn hash,
                             pmr_hashmap_equal_fn equal, void *ctx,
                             pmr_mem_resource *r);

/* Re-keys m's hash with one derived from seed, so that equal seeds and equal
 * sequences of operations give equal layouts and iteration orders (tests,
 * benchmarks). Only on an empty map: false, nothing changed, when m holds
 * keys. Anyone who knows or guesses seed can make the map slow with chosen
 * keys: do not pass a fixed seed to maps that take keys from outside. */
bool pmr_hashmap_set_seed(pmr_hashmap *m, uint64_t seed);

/* Destroys the keys (string kind) and gives the table back. m is then an
 * empty map with the same configuration: reuse or destroy again is allowed. */
void pmr_hashmap_destroy(pmr_hashmap *m);

pmr_mem_resource *pmr_hashmap_resource(const pmr_hashmap *m);
size_t pmr_hashmap_size(const pmr_hashmap *m);
bool pmr_hashmap_empty(const pmr_hashmap *m);
/* Slots in the table (0 or a power of two); up to 7/8 of them hold keys. */
size_t pmr_hashmap_capacity(const pmr_hashmap *m);

/* The value stored for *key, or NULL when absent. */
void *pmr_hashmap_find(const pmr_hashmap *m, const void *key);
bool pmr_hashmap_contains(const pmr_hashmap *m, const void *key);

/* The same for maps of 8-byte plain keys (pmr_hashmap_init with key_size 8,
 * e.g. uint64_t), with the key by value, inlined into the caller: the fast
 * path for hot lookups (an out-of-line call per lookup costs more than the
 * probe on large tables; figures: containers/README.md). On a map
 * of another kind it is pmr_hashmap_find(m, &key) when the key size is 8,
 * else NULL (a caller error: debug builds report it). */
static inline void *pmr_hashmap_find_u64(const pmr_hashmap *m, uint64_t key);
/* The map's own copy of the key equal to *key, or NULL when absent (a
 * string map's: a view, see above). */
const void *pmr_hashmap_find_key(const pmr_hashmap *m, const void *key);

/* Adds *key with *value (value may be NULL: zero-filled) when the key is
 * absent; leaves the stored value alone when present. When value_out is not
 * NULL it receives the stored value's address (NULL on failure). */
pmr_hashmap_status pmr_hashmap_insert(pmr_hashmap *m, const void *key,
                                      const void *value, void **value_out);

/* The same for maps of 8-byte plain keys, with the key by value, inlined
 * like pmr_hashmap_find_u64: a new key that fits without a rebuild (and with
 * no tombstone in the table) is placed inline, anything else goes through
 * pmr_hashmap_insert. On a map of another kind it is pmr_hashmap_insert(m,
 * &key, value, value_out) when the key size is 8, else PMR_HASHMAP_BADARG
 * (*value_out NULL, errno EINVAL). */
static inline pmr_hashmap_status pmr_hashmap_insert_u64(pmr_hashmap *m,
                                                        uint64_t key,
                                                        const void *value,
                                                        void **value_out);

/* Like insert, but overwrites the value when the key is present
 * (EXISTED then means "assigned"). */
pmr_hashmap_status pmr_hashmap_insert_or_assign(pmr_hashmap *m, const void *key,
                                                const void *value);

/* The value slot for *key, inserting the key with a zero-filled value when
 * absent; *inserted (if not NULL) tells which. NULL on failure. */
void *pmr_hashmap_emplace(pmr_hashmap *m, const void *key, bool *inserted);

/* Removes *key. True when it was present. Never allocates. With value_out not
 * NULL, the value is copied there first. */
bool pmr_hashmap_erase(pmr_hashmap *m, const void *key, void *value_out);
/* The same for maps of 8-byte plain keys, inlined like pmr_hashmap_find_u64
 * (containers/README.md, "Why inline"). On a
 * map of another kind it is pmr_hashmap_erase(m, &key, NULL) when the key
 * size is 8, else false (a caller error: debug builds report it). */
static inline bool pmr_hashmap_erase_u64(pmr_hashmap *m, uint64_t key);

/* ---- Text keys of cstr and string maps by (pointer, length): no key to
 * build. (p, n) is the n bytes at p (p may be NULL when n is 0); it equals a
 * string key with the same bytes, and a C-string key of length n with the
 * same characters (never the NULL key, never a text holding a NUL). Same
 * results as the functions above given the equivalent key. On a map of
 * another kind, a caller error: find NULL, erase false (debug builds report
 * them), the insertions PMR_HASHMAP_BADARG (emplace_str NULL, errno EINVAL);
 * never PMR_HASHMAP_NOMEM, which means out of memory. */
void *pmr_hashmap_find_str(const pmr_hashmap *m, const char *p, size_t n);
/* Erase by text: as pmr_hashmap_erase. */
bool pmr_hashmap_erase_str(pmr_hashmap *m, const char *p, size_t n,
                           void *value_out);
/* Insertions by text: as pmr_hashmap_insert / _insert_or_assign / _emplace.
 * A string map copies the text into a new key only when it is absent. A cstr
 * map stores p itself (not a copy): p must be a C string of length n
 * (p[n] == '\0', no NUL before), else PMR_HASHMAP_BADARG, map unchanged. */
pmr_hashmap_status pmr_hashmap_insert_str(pmr_hashmap *m, const char *p,
                                          size_t n, const void *value,
                                          void **value_out);
pmr_hashmap_status pmr_hashmap_insert_or_assign_str(pmr_hashmap *m,
                                                    const char *p, size_t n,
                                                    const void *value);
void *pmr_hashmap_emplace_str(pmr_hashmap *m, const char *p, size_t n,
                              bool *inserted);

/* Makes room for n keys in total without another rebuild of the table (a
 * string map's records still take chunks as keys come). False on failure,
 * map unchanged. */
bool pmr_hashmap_reserve(pmr_hashmap *m, size_t n);

/* Rebuilds the table at the smallest capacity that holds size() keys (none
 * when empty), dropping tombstones. False on failure, map unchanged. */
bool pmr_hashmap_shrink_to_fit(pmr_hashmap *m);

/* Removes every key; keeps the capacity. Never allocates. */
void pmr_hashmap_clear(pmr_hashmap *m);

/* ---- Iteration. */
typedef struct pmr_hashmap_iter {
  /* The current element, after a true iter_next (a string map's key is a
   * view held in the iterator itself). */
  const void *key;
  void *value;
  pmr_hashmap *impl_map; /* private */
  size_t impl_next;      /* private */
  size_t impl_off;       /* private */
  pmr_string impl_key;   /* private: the key of a string map */
} pmr_hashmap_iter;

/* An iterator before the first element. */
pmr_hashmap_iter pmr_hashmap_iter_begin(pmr_hashmap *m);
/* Moves to the next element: true with key/value set, false at the end. */
bool pmr_hashmap_iter_next(pmr_hashmap_iter *it);
/* Erases the current element (after a true iter_next, at most once); the
 * next iter_next continues with the following elements, none skipped or
 * repeated. Never allocates. Other insertions during a walk invalidate it. */
void pmr_hashmap_iter_erase(pmr_hashmap_iter *it);

/* ---- Copies, moves, swap. */

/* Initialises dst (not initialised before) as a copy of src over r (NULL =
 * default), same configuration and capacity (string keys deep-copied into
 * r). False on failure: dst is then a valid empty map over r. */
bool pmr_hashmap_init_copy(pmr_hashmap *dst, const pmr_hashmap *src,
                           pmr_mem_resource *r);
/* Initialises dst with src's table and resource in O(1); src becomes empty. */
void pmr_hashmap_init_move(pmr_hashmap *dst, pmr_hashmap *src);
/* Makes dst (initialised, same configuration) a copy of src, keeping dst's
 * resource. False, dst unchanged, on failure or configuration mismatch. */
bool pmr_hashmap_copy_assign(pmr_hashmap *dst, const pmr_hashmap *src);
/* Moves src into dst (initialised, same configuration), keeping dst's
 * resource: takes src's table when pmr_is_equal(src's resource, dst's
 * resource), else copies into dst's resource. On success src is empty.
 * False, both unchanged, on failure or configuration mismatch. */
bool pmr_hashmap_move_assign(pmr_hashmap *dst, pmr_hashmap *src);
/* Swaps everything, resources included, in O(1). */
void pmr_hashmap_swap(pmr_hashmap *a, pmr_hashmap *b);

/* ---- Probe statistics: the cost of the lookups of every present key, as
 * operation counts (for tests and for checking a custom hash). O(size *
 * probe length); never allocates. */
typedef struct pmr_hashmap_stats {
  size_t keys;       /* = size */
  size_t groups;     /* groups of 16 control bytes scanned, summed over keys */
  size_t max_groups; /* the longest probe, in groups (0 when empty) */
  size_t compares;   /* key comparisons (control bytes matching the key's 7
                        hash bits, the key itself included), summed */
} pmr_hashmap_stats;
pmr_hashmap_stats pmr_hashmap_probe_stats(const pmr_hashmap *m);

/* ---- The built-in hashes, for custom hash functions. All 64 bits mixed;
 * keyed as described above. pmr_hash_bytes and pmr_hash_u64 use the
 * per-process secret (stable within a process, different in each);
 * the _with_seed forms a seed of the caller's (reproducible). Thread-safe. */
uint64_t pmr_hash_bytes(const void *data, size_t n);
uint64_t pmr_hash_u64(uint64_t x);
uint64_t pmr_hash_bytes_with_seed(const void *data, size_t n, uint64_t seed);
uint64_t pmr_hash_u64_with_seed(uint64_t x, uint64_t seed);

/* Internal: the part of PMR_HASHMAP_TYPED and PMR_HASHMAP_TYPED_STR that
 * does not depend on the key. */
#define PMR_IMPL_HASHMAP_TYPED_COMMON(name)                          \
  typedef struct name {                                              \
    pmr_hashmap impl;                                                \
  } name;                                                            \
  PMR_MAYBE_UNUSED static inline void name##_destroy(name *m) {      \
    pmr_hashmap_destroy(&m->impl);                                   \
  }                                                                  \
  PMR_MAYBE_UNUSED static inline size_t name##_size(const name *m) { \
    return pmr_hashmap_size(&m->impl);                               \
  }                                                                  \
  PMR_MAYBE_UNUSED static inline pmr_hashmap *name##_base(name *m) { \
    return &m->impl;                                                 \
  }

/* The typed iterator of a typed map: key points to KeyT, value to V. */
#define PMR_IMPL_HASHMAP_TYPED_ITER(name, KeyT, V)                         \
  typedef struct name##_iter {                                             \
    /* the current element, after a true name_iter_next */                 \
    KeyT *key;                                                             \
    V *value;                                                              \
    pmr_hashmap_iter impl; /* private */                                   \
  } name##_iter;                                                           \
  PMR_MAYBE_UNUSED static inline name##_iter name##_iter_begin(name *m) {  \
    name##_iter it;                                                        \
    it.key = NULL;                                                         \
    it.value = NULL;                                                       \
    it.impl = pmr_hashmap_iter_begin(&m->impl);                            \
    return it;                                                             \
  }                                                                        \
  PMR_MAYBE_UNUSED static inline bool name##_iter_next(name##_iter *it) {  \
    if (!pmr_hashmap_iter_next(&it->impl)) return false;                   \
    it->key = (KeyT *)it->impl.key;                                        \
    it->value = (V *)it->impl.value;                                       \
    return true;                                                           \
  }                                                                        \
  PMR_MAYBE_UNUSED static inline void name##_iter_erase(name##_iter *it) { \
    pmr_hashmap_iter_erase(&it->impl);                                     \
  }

/* ---- Typed maps. PMR_HASHMAP_TYPED(name, K, V) defines the type `name`
 * (a struct holding one pmr_hashmap) and inline functions that take keys and
 * values by type, so a key or value of the wrong type or size does not
 * compile (a uint32_t * where the map holds uint64_t values, a struct of the
 * wrong type), where the void * functions would read or write past it:
 *   bool name_init(name *m, pmr_mem_resource *r);      plain-byte keys
 *   void name_destroy(name *m);
 *   size_t name_size(const name *m);
 *   V *name_find(const name *m, K key);                   NULL when absent
 *   pmr_hashmap_status name_insert(name *m, K key, V value);
 *   pmr_hashmap_status name_insert_or_assign(name *m, K key, V value);
 *   V *name_emplace(name *m, K key, bool *inserted);      zero-filled if new
 *   bool name_erase(name *m, K key, V *value_out);        value_out may be NULL
 *   pmr_hashmap *name_base(name *m);   the map, for every other function
 * and a typed iterator, name_iter, with the fields `K const *key` and
 * `V *value` (set by a true name_iter_next; no cast needed):
 *   name_iter name_iter_begin(name *m);   before the first element
 *   bool name_iter_next(name_iter *it);   next element; false at the end
 *   void name_iter_erase(name_iter *it);  erases the current element
 * (the rules of pmr_hashmap_iter_begin/_next/_erase), as in
 *   name_iter it = name_iter_begin(&m);
 *   while (name_iter_next(&it)) total += *it.value;
 * Keys are hashed and compared as bytes (zero a struct key's padding); 8-byte
 * keys take the inline u64 paths. Contracts are those of the functions
 * above. PMR_HASHMAP_TYPED_STR(name, V) is the same for a map with pmr_string
 * keys taken as (pointer, length) text: name_find(m, p, n),
 * name_insert(m, p, n, value), name_insert_or_assign(m, p, n, value),
 * name_emplace(m, p, n, inserted), name_erase(m, p, n, value_out); its
 * iterator's key is a `const struct pmr_string *` (read it with
 * pmr_string_c_str and pmr_string_length from containers/pmr_string.h). */
#define PMR_HASHMAP_TYPED(name, K, V)                                        \
  PMR_IMPL_HASHMAP_TYPED_COMMON(name)                                        \
  PMR_IMPL_HASHMAP_TYPED_ITER(name, K const, V)                              \
  PMR_MAYBE_UNUSED static inline bool name##_init(name *m,                   \
                                                  pmr_mem_resource *r) {     \
    return pmr_hashmap_init(&m->impl, sizeof(K), PMR_ALIGNOF(K), sizeof(V),  \
                            PMR_ALIGNOF(V), r);                              \
  }                                                                          \
  PMR_MAYBE_UNUSED static inline V *name##_find(const name *m, K key) {      \
    if (sizeof(K) == sizeof(uint64_t)) {                                     \
      uint64_t k;                                                            \
      memcpy(&k, &key, sizeof k);                                            \
      return (V *)pmr_hashmap_find_u64(&m->impl, k);                         \
    }                                                                        \
    return (V *)pmr_hashmap_find(&m->impl, &key);                            \
  }                                                                          \
  PMR_MAYBE_UNUSED static inline pmr_hashmap_status name##_insert(           \
      name *m, K key, V value) {                                             \
    if (sizeof(K) == sizeof(uint64_t)) {                                     \
      uint64_t k;                                                            \
      memcpy(&k, &key, sizeof k);                                            \
      return pmr_hashmap_insert_u64(&m->impl, k, &value, NULL);              \
    }                                                                        \
    return pmr_hashmap_insert(&m->impl, &key, &value, NULL);                 \
  }                                                                          \
  PMR_MAYBE_UNUSED static inline pmr_hashmap_status name##_insert_or_assign( \
      name *m, K key, V value) {                                             \
    return pmr_hashmap_insert_or_assign(&m->impl, &key, &value);             \
  }                                                                          \
  PMR_MAYBE_UNUSED static inline V *name##_emplace(name *m, K key,           \
                                                   bool *inserted) {         \
    return (V *)pmr_hashmap_emplace(&m->impl, &key, inserted);               \
  }                                                                          \
  PMR_MAYBE_UNUSED static inline bool name##_erase(name *m, K key,           \
                                                   V *value_out) {           \
    if (sizeof(K) == sizeof(uint64_t) && value_out == NULL) {                \
      uint64_t k;                                                            \
      memcpy(&k, &key, sizeof k);                                            \
      return pmr_hashmap_erase_u64(&m->impl, k);                             \
    }                                                                        \
    return pmr_hashmap_erase(&m->impl, &key, value_out);                     \
  }

#define PMR_HASHMAP_TYPED_STR(name, V)                                         \
  PMR_IMPL_HASHMAP_TYPED_COMMON(name)                                          \
  PMR_IMPL_HASHMAP_TYPED_ITER(name, const struct pmr_string, V)                \
  PMR_MAYBE_UNUSED static inline bool name##_init(name *m,                     \
                                                  pmr_mem_resource *r) {       \
    return pmr_hashmap_init_string(&m->impl, sizeof(V), PMR_ALIGNOF(V), r);    \
  }                                                                            \
  PMR_MAYBE_UNUSED static inline V *name##_find(const name *m, const char *p,  \
                                                size_t n) {                    \
    return (V *)pmr_hashmap_find_str(&m->impl, p, n);                          \
  }                                                                            \
  PMR_MAYBE_UNUSED static inline pmr_hashmap_status name##_insert(             \
      name *m, const char *p, size_t n, V value) {                             \
    return pmr_hashmap_insert_str(&m->impl, p, n, &value, NULL);               \
  }                                                                            \
  PMR_MAYBE_UNUSED static inline pmr_hashmap_status name##_insert_or_assign(   \
      name *m, const char *p, size_t n, V value) {                             \
    return pmr_hashmap_insert_or_assign_str(&m->impl, p, n, &value);           \
  }                                                                            \
  PMR_MAYBE_UNUSED static inline V *name##_emplace(name *m, const char *p,     \
                                                   size_t n, bool *inserted) { \
    return (V *)pmr_hashmap_emplace_str(&m->impl, p, n, inserted);             \
  }                                                                            \
  PMR_MAYBE_UNUSED static inline bool name##_erase(name *m, const char *p,     \
                                                   size_t n, V *value_out) {   \
    return pmr_hashmap_erase_str(&m->impl, p, n, value_out);                   \
  }

/* ==== Private: the inline paths of 8-byte keys. Not for direct use. The
 * table's control bytes and probe are in internal/hashmap_table.h. */

#define PMR_IMPL_HASHMAP_KIND_U64 1 /* plain 8-byte keys */

/* The slot of key k in a map of kind u64, or (size_t)-1. */
static inline size_t pmr_impl_hashmap_index_u64(const pmr_hashmap *m,
                                                uint64_t k) {
  size_t empty;
  return pmr_impl_hashmap_probe_u64(m->ctrl, m->slots, m->slot_size, m->mask, k,
                                    pmr_impl_hash_u64(k, m->seed0, m->seed1),
                                    &empty);
}

/* find_u64 and erase_u64 on a map of another kind (out of line, and taking
 * the key by value, so the inline loops keep it in a register). */
void *pmr_impl_hashmap_find_u64_other(const pmr_hashmap *m, uint64_t k);
bool pmr_impl_hashmap_erase_u64_other(pmr_hashmap *m, uint64_t k);

pmr_hashmap_status pmr_impl_hashmap_insert_u64_other(pmr_hashmap *m, uint64_t k,
                                                     const void *value,
                                                     void **value_out);

static inline pmr_hashmap_status pmr_hashmap_insert_u64(pmr_hashmap *m,
                                                        uint64_t k,
                                                        const void *value,
                                                        void **value_out) {
  PMR_IMPL_CHECK_NOT_NULL(m, "map", PMR_HASHMAP_BADARG);
  /* Room for a new key, and no tombstone (a new key goes to the first EMPTY
   * of the group where the probe stops). */
  if (PMR_UNLIKELY(m->kind != PMR_IMPL_HASHMAP_KIND_U64 ||
                   m->growth_left == 0 ||
                   m->size + m->growth_left != m->capacity - m->capacity / 8))
    return pmr_impl_hashmap_insert_u64_other(m, k, value, value_out);
  const uint64_t h = pmr_impl_hash_u64(k, m->seed0, m->seed1);
  size_t empty = 0; /* set by the probe when the key is absent */
  size_t i = pmr_impl_hashmap_probe_u64(m->ctrl, m->slots, m->slot_size,
                                        m->mask, k, h, &empty);
  pmr_hashmap_status st = PMR_HASHMAP_EXISTED;
  if (PMR_LIKELY(i == (size_t)-1)) {
    i = empty;
    pmr_impl_hashmap_set_ctrl(m->ctrl, m->mask, i, (unsigned char)(h & 0x7f));
    unsigned char *slot = m->slots + i * m->slot_size;
    memcpy(slot, &k, sizeof k);
    unsigned char *v = slot + m->value_offset;
    if (m->value_size == 8 && value != NULL)
      memcpy(v, value, 8);
    else if (m->value_size != 0 && value != NULL)
      memcpy(v, value, m->value_size);
    else if (m->value_size != 0)
      memset(v, 0, m->value_size);
    ++m->size;
    --m->growth_left;
    st = PMR_HASHMAP_INSERTED;
  }
  if (value_out != NULL)
    *value_out = m->slots + i * m->slot_size + m->value_offset;
  return st;
}

static inline void *pmr_hashmap_find_u64(const pmr_hashmap *m, uint64_t k) {
  PMR_IMPL_CHECK_NOT_NULL(m, "map", NULL);
  if (PMR_UNLIKELY(m->kind != PMR_IMPL_HASHMAP_KIND_U64))
    return pmr_impl_hashmap_find_u64_other(m, k);
  size_t i = pmr_impl_hashmap_index_u64(m, k);
  return i != (size_t)-1 ? m->slots + i * m->slot_size + m->value_offset : NULL;
}

static inline bool pmr_hashmap_erase_u64(pmr_hashmap *m, uint64_t k) {
  PMR_IMPL_CHECK_NOT_NULL(m, "map", false);
  if (PMR_UNLIKELY(m->kind != PMR_IMPL_HASHMAP_KIND_U64))
    return pmr_impl_hashmap_erase_u64_other(m, k);
  size_t i = pmr_impl_hashmap_index_u64(m, k);
  if (i == (size_t)-1) return false;
  --m->size;
  m->growth_left += pmr_impl_hashmap_free_ctrl(m->ctrl, m->mask, i);
  return true;
}

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* PMR_CONTAINERS_HASHMAP_H */
