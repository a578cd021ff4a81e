/* Private to containers/: the keyed 64-bit hash of pmr_hashmap and
 * pmr_string. Not a public header (pmr_hashmap.h includes it for its inline
 * lookups; nothing here is part of the API).
 *
 * Keys. A hash is keyed by two secret words (s0, s1) derived from a 64-bit
 * seed by pmr_impl_hash_keys. pmr_hashmap gives every table its own seed,
 * drawn from a per-process secret (containers/hash.c) and a per-table counter,
 * or the caller's (pmr_hashmap_set_seed).
 *
 * The step. mix(x, y) is a "protected folded multiply": the 128-bit product
 * x * y, high half XOR low half, XOR x XOR y. The product spreads every input
 * bit over the output; the XOR of the operands means that a zero product
 * (x == 0) does not reset the state: mix(0, y) == y. Each input block (a, b)
 * enters as mix(a ^ s0, b ^ h), h being the running state (which starts from
 * s1): the attacker's words are XORed with a secret on BOTH sides of the
 * multiplication, so no block value is known to make the product degenerate
 * without knowing the key (the unkeyed fold of the past, fold(a ^ K0, b ^ h),
 * set the state to 0 whenever a == K0, for any h: 2^64 keys with one hash).
 * The remaining degenerate operands (x in a handful of values such as 1,
 * where mix(1, y) == 1) are x = a ^ s0 for a secret s0: an attacker who does
 * not know s0 hits one with probability about 2^-64 per block.
 *
 * Inputs are read little-endian whatever the host, so a seed gives the same
 * hashes on every platform. Keys of 1..16 bytes are read as two (possibly
 * overlapping) words; longer keys as 16-byte blocks, the last one ending at
 * the last byte; the length is part of the initial state. The 8-byte key of
 * a u64 map is one word: fold(fold(x ^ s0, s1), K1), s1 odd (there is no
 * block to absorb, so no state to collapse; see pmr_impl_hash_u64).
 */
#ifndef PMR_IMPL_HASH_H
#define PMR_IMPL_HASH_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PMR_IMPL_HASH_K0 0x9e3779b97f4a7c15ull /* 2^64 / golden ratio */
#define PMR_IMPL_HASH_K1 0xd6e8feb86659fd93ull
#define PMR_IMPL_HASH_K2 0xa0761d6478bd642full

#if defined(__SIZEOF_INT128__)
__extension__ typedef unsigned __int128 pmr_impl_hash_u128;
/* Low half XOR high half of the 128-bit product a * b. */
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

/* The protected step: never loses y when the product is zero. */
static inline uint64_t pmr_impl_hash_mix(uint64_t x, uint64_t y) {
  return pmr_impl_hash_fold(x, y) ^ x ^ y;
}

/* Little-endian loads; compilers turn them into single loads. */
static inline uint64_t pmr_impl_hash_read64(const unsigned char *p) {
  return (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 |
         (uint64_t)p[3] << 24 | (uint64_t)p[4] << 32 | (uint64_t)p[5] << 40 |
         (uint64_t)p[6] << 48 | (uint64_t)p[7] << 56;
}
static inline uint64_t pmr_impl_hash_read32(const unsigned char *p) {
  return (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 |
         (uint64_t)p[3] << 24;
}

/* The two secret words of a seed (s1 odd, so never 0). A bijective 64-bit
 * finalizer (splitmix64's) applied to two different offsets of the seed. */
static inline uint64_t pmr_impl_hash_avalanche(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
static inline void pmr_impl_hash_keys(uint64_t seed, uint64_t *s0,
                                      uint64_t *s1) {
  *s0 = pmr_impl_hash_avalanche(seed + PMR_IMPL_HASH_K0);
  *s1 = pmr_impl_hash_avalanche(seed + PMR_IMPL_HASH_K1) | 1u;
}

/* The hash of an 8-byte key. One keyed multiplication (secret s0 and s1)
 * alone leaves, for a few percent of random s1, arithmetic progressions of
 * keys (0, 1, 2, ...; i << 44) in few slots: the probe start takes bits 7..
 * of the product's low half, where a progression maps to a lattice that some
 * multipliers make coarse. A second multiplication by a fixed odd constant
 * breaks that up (tests/unit/hashmap_flood_test measures it over 100 seeds). */
static inline uint64_t pmr_impl_hash_u64(uint64_t x, uint64_t s0, uint64_t s1) {
  return pmr_impl_hash_fold(pmr_impl_hash_fold(x ^ s0, s1), PMR_IMPL_HASH_K1);
}

/* The hash of n bytes at data (NULL allowed when n is 0). */
static inline uint64_t pmr_impl_hash_bytes(const void *data, size_t n,
                                           uint64_t s0, uint64_t s1) {
  const unsigned char *p = (const unsigned char *)data;
  uint64_t a, b, h = s1 ^ ((uint64_t)n * PMR_IMPL_HASH_K2);
  if (n <= 16) {
    if (n >= 8) {
      a = pmr_impl_hash_read64(p);
      b = pmr_impl_hash_read64(p + n - 8);
    } else if (n >= 4) {
      a = pmr_impl_hash_read32(p);
      b = pmr_impl_hash_read32(p + n - 4);
    } else if (n > 0) {
      a = (uint64_t)p[0] << 16 | (uint64_t)p[n >> 1] << 8 | p[n - 1];
      b = 0;
    } else {
      a = b = 0;
    }
  } else {
    size_t i = n;
    do {
      h = pmr_impl_hash_mix(pmr_impl_hash_read64(p) ^ s0,
                            pmr_impl_hash_read64(p + 8) ^ h);
      p += 16;
      i -= 16;
    } while (i > 16);
    a = pmr_impl_hash_read64(p + i - 16);
    b = pmr_impl_hash_read64(p + i - 8);
  }
  h = pmr_impl_hash_mix(a ^ s0, b ^ h);
  return pmr_impl_hash_fold(h ^ s0, s1);
}

/* The per-process secret: random from the OS at first use (thread-safe;
 * every thread sees the same value), never 0. */
uint64_t pmr_impl_hash_process_seed(void);
/* A new table seed: the process secret mixed with a per-process counter, so
 * two tables (and two processes) get unrelated seeds. Thread-safe. */
uint64_t pmr_impl_hash_table_seed(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* PMR_IMPL_HASH_H */
