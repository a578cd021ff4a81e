/* Private to containers/: the control bytes of pmr_hashmap's table and the
 * probe of 8-byte keys, the one definition shared by the inline paths of
 * pmr_hashmap.h and by the hashmap_*.c files. Not a public header; nothing here
 * is part of the API.
 *
 * A table of capacity C (0 or a power of two >= 16) has C + GROUP control
 * bytes: one per slot, then copies of the first GROUP, so that a group load
 * at any position reads GROUP bytes. A control byte is EMPTY (0x80), DELETED
 * (0xFE, a tombstone) or, for a full slot, the low 7 bits of the key's hash
 * (H2). The rest of the hash (H1) picks where a probe starts; probing visits
 * groups at triangular offsets (GROUP, 2 * GROUP, ... apart), which visits
 * every group of a power-of-two table, and stops at the first group holding
 * an EMPTY. Groups are always 16 bytes, scanned with SSE2 when the compiler
 * targets it (and PMR_HASHMAP_PORTABLE is not defined), else as two 64-bit
 * words: the layout does not depend on the scanner.
 */
#ifndef PMR_IMPL_HASHMAP_TABLE_H
#define PMR_IMPL_HASHMAP_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#if defined(__SSE2__) && !defined(PMR_HASHMAP_PORTABLE)
#include <emmintrin.h>
#endif

#include "../../mem_resource/pmr_mem_resource.h"
#include "hash.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PMR_IMPL_HASHMAP_GROUP 16
#define PMR_IMPL_HASHMAP_EMPTY 0x80
#define PMR_IMPL_HASHMAP_DELETED 0xFE

/* Bit i set: byte i of the group matches. */
typedef uint32_t pmr_impl_hashmap_bits;

#if defined(__SSE2__) && !defined(PMR_HASHMAP_PORTABLE)
static inline pmr_impl_hashmap_bits pmr_impl_hashmap_match(
    const unsigned char *g, unsigned char c) {
  __m128i v = _mm_loadu_si128((const __m128i *)(const void *)g);
  return (pmr_impl_hashmap_bits)_mm_movemask_epi8(
      _mm_cmpeq_epi8(v, _mm_set1_epi8((char)c)));
}
/* Bytes with the high bit set: EMPTY or DELETED. */
static inline pmr_impl_hashmap_bits pmr_impl_hashmap_match_free(
    const unsigned char *g) {
  return (pmr_impl_hashmap_bits)_mm_movemask_epi8(
      _mm_loadu_si128((const __m128i *)(const void *)g));
}
#else
/* Gathers the high bit of each byte of x (bytes 0..7) into bits 0..7. */
static inline pmr_impl_hashmap_bits pmr_impl_hashmap_gather(uint64_t x) {
  return (pmr_impl_hashmap_bits)((((x >> 7) & 0x0101010101010101ull) *
                                  0x0102040810204080ull) >>
                                 56);
}
/* Exact per-byte equality: no false matches. */
static inline pmr_impl_hashmap_bits pmr_impl_hashmap_match8(uint64_t w,
                                                            unsigned char c) {
  uint64_t x = w ^ (0x0101010101010101ull * c); /* zero bytes match */
  uint64_t nz = ((x & 0x7f7f7f7f7f7f7f7full) + 0x7f7f7f7f7f7f7f7full) | x;
  return pmr_impl_hashmap_gather(~nz & 0x8080808080808080ull);
}
static inline pmr_impl_hashmap_bits pmr_impl_hashmap_match(
    const unsigned char *g, unsigned char c) {
  return pmr_impl_hashmap_match8(pmr_impl_hash_read64(g), c) |
         pmr_impl_hashmap_match8(pmr_impl_hash_read64(g + 8), c) << 8;
}
static inline pmr_impl_hashmap_bits pmr_impl_hashmap_match_free(
    const unsigned char *g) {
  return pmr_impl_hashmap_gather(pmr_impl_hash_read64(g) &
                                 0x8080808080808080ull) |
         pmr_impl_hashmap_gather(pmr_impl_hash_read64(g + 8) &
                                 0x8080808080808080ull)
             << 8;
}
#endif

static inline unsigned pmr_impl_hashmap_lowest(pmr_impl_hashmap_bits b) {
#if defined(__GNUC__) || defined(__clang__)
  return (unsigned)__builtin_ctz(b);
#else
  unsigned n = 0;
  while (!(b & 1u)) b >>= 1, ++n;
  return n;
#endif
}

/* Positions of the group after its highest set bit (b != 0). */
static inline unsigned pmr_impl_hashmap_leading(pmr_impl_hashmap_bits b) {
#if defined(__GNUC__) || defined(__clang__)
  return (unsigned)__builtin_clz(b) - (32 - PMR_IMPL_HASHMAP_GROUP);
#else
  unsigned n = 0;
  for (pmr_impl_hashmap_bits top = 1u << (PMR_IMPL_HASHMAP_GROUP - 1);
       !(b & top); top >>= 1)
    ++n;
  return n;
#endif
}

/* Sets control byte i of a table (mask = capacity - 1) and its copy past
 * the end. */
static inline void pmr_impl_hashmap_set_ctrl(unsigned char *ctrl, size_t mask,
                                             size_t i, unsigned char c) {
  ctrl[i] = c;
  ctrl[((i - PMR_IMPL_HASHMAP_GROUP) & mask) + PMR_IMPL_HASHMAP_GROUP] = c;
}

/* Frees full slot i. When every group-wide window holding i also holds an
 * EMPTY, no probe ever went past i, so it becomes EMPTY (true: the slot
 * counts towards the room left again); otherwise it becomes a tombstone
 * (false). */
static inline bool pmr_impl_hashmap_free_ctrl(unsigned char *ctrl, size_t mask,
                                              size_t i) {
  const size_t before_pos = (i - PMR_IMPL_HASHMAP_GROUP) & mask;
  pmr_impl_hashmap_bits before =
      pmr_impl_hashmap_match(ctrl + before_pos, PMR_IMPL_HASHMAP_EMPTY);
  pmr_impl_hashmap_bits after =
      pmr_impl_hashmap_match(ctrl + i, PMR_IMPL_HASHMAP_EMPTY);
  bool never_full =
      before != 0 && after != 0 &&
      pmr_impl_hashmap_lowest(after) + pmr_impl_hashmap_leading(before) <
          PMR_IMPL_HASHMAP_GROUP;
  pmr_impl_hashmap_set_ctrl(
      ctrl, mask, i,
      never_full ? PMR_IMPL_HASHMAP_EMPTY : PMR_IMPL_HASHMAP_DELETED);
  return never_full;
}

/* The slot of the 8-byte key k (hash h) in a table whose slots (slot_size
 * bytes each) start with the key, or (size_t)-1; then *empty gets the first
 * EMPTY slot of the group that ended the probe (where an insertion goes when
 * the table has no tombstones). */
static inline size_t pmr_impl_hashmap_probe_u64(const unsigned char *ctrl,
                                                const unsigned char *slots,
                                                size_t slot_size, size_t mask,
                                                uint64_t k, uint64_t h,
                                                size_t *empty) {
  const unsigned char h2 = (unsigned char)(h & 0x7f);
  size_t pos = (size_t)(h >> 7) & mask, step = 0;
#if defined(__GNUC__) || defined(__clang__)
  /* The key is most often in the first slots of the first group: fetching
   * them along with the control bytes overlaps the two cache misses of a
   * hit in a large table. */
  __builtin_prefetch(slots + pos * slot_size);
#endif
  for (;;) {
    const unsigned char *g = ctrl + pos;
    for (pmr_impl_hashmap_bits b = pmr_impl_hashmap_match(g, h2); b != 0;
         b &= b - 1) {
      size_t i = (pos + pmr_impl_hashmap_lowest(b)) & mask;
      uint64_t s;
      memcpy(&s, slots + i * slot_size, sizeof s);
      if (PMR_LIKELY(s == k)) return i;
    }
    pmr_impl_hashmap_bits e = pmr_impl_hashmap_match(g, PMR_IMPL_HASHMAP_EMPTY);
    if (PMR_LIKELY(e != 0)) {
      *empty = (pos + pmr_impl_hashmap_lowest(e)) & mask;
      return (size_t)-1;
    }
    step += PMR_IMPL_HASHMAP_GROUP;
    pos = (pos + step) & mask;
  }
}

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* PMR_IMPL_HASHMAP_TABLE_H */
