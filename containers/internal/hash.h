/* Private to containers/: the 64-bit hash shared by pmr_string and
 * pmr_hashmap. Not a public header.
 *
 * The core step is a "folded multiply": the 128-bit product of two 64-bit
 * words, high half XOR low half. Every input bit reaches every output bit in
 * one multiplication, so the low 7 bits (the hashmap's control fragment) and
 * the high bits (its slot index) both depend on the whole key. Inputs are
 * read 8 bytes at a time, little-endian whatever the host, so hashes are
 * identical on every platform. Deterministic: no per-process seed (tables
 * are not hardened against chosen-key flooding; give a keyed hash function
 * to pmr_hashmap when keys come from an adversary). The hash of one 64-bit
 * word, pmr_hash_u64, is inline in hashmap.h: fold(x ^ K0, K1).
 */
#ifndef PMR_IMPL_HASH_H
#define PMR_IMPL_HASH_H

#include <stddef.h>
#include <stdint.h>

#define PMR_IMPL_HASH_K0 0x9e3779b97f4a7c15ull /* 2^64 / golden ratio */
#define PMR_IMPL_HASH_K1 0xd6e8feb86659fd93ull
#define PMR_IMPL_HASH_K2 0xa0761d6478bd642full
#define PMR_IMPL_HASH_K3 0xe7037ed1a0b428dbull

#if defined(__SIZEOF_INT128__)
__extension__ typedef unsigned __int128 pmr_impl_hash_u128;
static inline uint64_t pmr_impl_hash_fold(uint64_t a, uint64_t b) {
  pmr_impl_hash_u128 p = (pmr_impl_hash_u128)a * b;
  return (uint64_t)p ^ (uint64_t)(p >> 64);
}
#else
static inline uint64_t pmr_impl_hash_fold(uint64_t a, uint64_t b) {
  uint64_t al = a & 0xffffffffu, ah = a >> 32;
  uint64_t bl = b & 0xffffffffu, bh = b >> 32;
  uint64_t ll = al * bl, lh = al * bh, hl = ah * bl, hh = ah * bh;
  uint64_t mid = (ll >> 32) + (lh & 0xffffffffu) + (hl & 0xffffffffu);
  uint64_t lo = (ll & 0xffffffffu) | (mid << 32);
  uint64_t hi = hh + (lh >> 32) + (hl >> 32) + (mid >> 32);
  return lo ^ hi;
}
#endif

/* Little-endian loads; compilers turn them into single loads. */
static inline uint64_t pmr_impl_hash_read64(const unsigned char *p) {
  return (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 |
         (uint64_t)p[3] << 24 | (uint64_t)p[4] << 32 | (uint64_t)p[5] << 40 |
         (uint64_t)p[6] << 48 | (uint64_t)p[7] << 56;
}
static inline uint64_t pmr_impl_hash_read_tail(const unsigned char *p,
                                               size_t n) {
  uint64_t v = 0; /* n in 1..7 */
  for (size_t i = 0; i < n; ++i) v |= (uint64_t)p[i] << (8 * i);
  return v;
}

/* The hash of n bytes. The length is mixed in first, so "a" and "a\0"
 * differ. */
static inline uint64_t pmr_impl_hash_bytes(const void *data, size_t n) {
  const unsigned char *p = (const unsigned char *)data;
  uint64_t h =
      pmr_impl_hash_fold((uint64_t)n ^ PMR_IMPL_HASH_K2, PMR_IMPL_HASH_K1);
  while (n >= 16) {
    h = pmr_impl_hash_fold(pmr_impl_hash_read64(p) ^ PMR_IMPL_HASH_K0,
                           pmr_impl_hash_read64(p + 8) ^ h ^ PMR_IMPL_HASH_K3);
    p += 16;
    n -= 16;
  }
  if (n >= 8) {
    h = pmr_impl_hash_fold(pmr_impl_hash_read64(p) ^ PMR_IMPL_HASH_K0,
                           h ^ PMR_IMPL_HASH_K3);
    p += 8;
    n -= 8;
  }
  if (n != 0)
    h = pmr_impl_hash_fold(pmr_impl_hash_read_tail(p, n) ^ PMR_IMPL_HASH_K2,
                           h ^ PMR_IMPL_HASH_K3);
  return pmr_impl_hash_fold(h ^ PMR_IMPL_HASH_K0, PMR_IMPL_HASH_K1);
}

#endif /* PMR_IMPL_HASH_H */
