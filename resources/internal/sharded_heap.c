/* Page heaps in shards over one page source (see sharded_heap.h). */
#include "resources/internal/sharded_heap.h"

_Thread_local unsigned pmr_impl_tl_shard PMR_IMPL_TLS_MODEL;
pmr_impl_shard pmr_impl_no_shard = {.lock = 1};
static atomic_uint next_shard_hint;

void pmr_impl_sharded_init(pmr_impl_sharded_heap *h, pmr_mem_resource *up,
                           const pmr_pool_options *opts) {
  for (unsigned i = 0; i <= PMR_IMPL_SHARDS; ++i)
    atomic_init(&h->slot[i], &pmr_impl_no_shard);
  pmr_impl_source_init(&h->src, up, opts->max_blocks_per_chunk,
                       opts->max_free_bytes, true);
  atomic_init(&h->create_lock, 0);
  h->largest = (uint32_t)opts->largest_required_pool_block;
}

void pmr_impl_sharded_release(pmr_impl_sharded_heap *h) {
  for (unsigned i = 0; i < PMR_IMPL_SHARDS; ++i) {
    pmr_impl_shard *sh = atomic_exchange_explicit(
        &h->slot[i + 1], &pmr_impl_no_shard, memory_order_acq_rel);
    if (sh != &pmr_impl_no_shard)
      pmr_deallocate(h->src.upstream, sh, sizeof *sh, alignof(pmr_impl_shard));
  }
  pmr_impl_source_release(&h->src);
}

static pmr_impl_shard *make_shard(pmr_impl_sharded_heap *h, unsigned i) {
  pmr_impl_spin_lock(&h->create_lock);
  pmr_impl_shard *sh = pmr_impl_sharded_get(h, i);
  if (sh == NULL) {
    sh = (pmr_impl_shard *)pmr_allocate(h->src.upstream, sizeof *sh,
                                        alignof(pmr_impl_shard));
    if (sh != NULL) {
      atomic_init(&sh->lock, 0);
      pmr_impl_heap_init(&sh->heap, &h->src, h->largest, false);
      atomic_store_explicit(&h->slot[i + 1], sh, memory_order_release);
    }
  }
  pmr_impl_spin_unlock(&h->create_lock);
  return sh;
}

pmr_impl_shard *pmr_impl_sharded_lock(pmr_impl_sharded_heap *h, unsigned i) {
  pmr_impl_shard *sh = pmr_impl_sharded_get(h, i);
  if (sh == NULL && (sh = make_shard(h, i)) == NULL) return NULL;
  pmr_impl_spin_lock(&sh->lock);
  return sh;
}

pmr_impl_shard *pmr_impl_sharded_lock_mine(pmr_impl_sharded_heap *h) {
  if (PMR_UNLIKELY(pmr_impl_tl_shard == 0))
    pmr_impl_tl_shard = 1 + atomic_fetch_add_explicit(&next_shard_hint, 1,
                                                      memory_order_relaxed) %
                                PMR_IMPL_SHARDS;
  unsigned i = pmr_impl_tl_shard - 1;
  pmr_impl_shard *sh = pmr_impl_sharded_get(h, i);
  if (PMR_LIKELY(sh != NULL && pmr_impl_spin_try_lock(&sh->lock))) return sh;
  if (sh == NULL && (sh = make_shard(h, i)) != NULL &&
      pmr_impl_spin_try_lock(&sh->lock))
    return sh;
  for (unsigned n = 1; n < PMR_IMPL_SHARDS; ++n) {
    unsigned j = (i + n) % PMR_IMPL_SHARDS;
    pmr_impl_shard *other = pmr_impl_sharded_get(h, j);
    if (other != NULL && pmr_impl_spin_try_lock(&other->lock)) {
      pmr_impl_tl_shard = j + 1; /* prefer the idle one from now on */
      return other;
    }
  }
  if (sh == NULL) {
    for (unsigned j = 0; j < PMR_IMPL_SHARDS && sh == NULL; ++j)
      sh = pmr_impl_sharded_get(h, j);
    if (sh == NULL) return NULL;
  }
  pmr_impl_spin_lock(&sh->lock);
  return sh;
}

void *pmr_impl_sharded_alloc_held(pmr_impl_sharded_heap *h, pmr_impl_shard *sh,
                                  unsigned idx) {
  void *p = pmr_impl_heap_alloc_held(&sh->heap, &sh->heap.classes[idx]);
  if (p != NULL) return p;
  /* Free blocks in other shards' pages before new memory (try_lock only: sh
   * stays locked, so no order between shards is needed). */
  for (unsigned j = 0; j < PMR_IMPL_SHARDS; ++j) {
    pmr_impl_shard *o = pmr_impl_sharded_get(h, j);
    if (o == NULL || o == sh || !pmr_impl_spin_try_lock(&o->lock)) continue;
    p = pmr_impl_heap_alloc_held(&o->heap, &o->heap.classes[idx]);
    pmr_impl_spin_unlock(&o->lock);
    if (p != NULL) return p;
  }
  /* Pages that other shards keep with no block in use (a class's current
   * page stays when it empties), and blocks other threads freed into them,
   * go back to the shared free pages. */
  bool reclaimed = false;
  for (unsigned j = 0; j < PMR_IMPL_SHARDS; ++j) {
    pmr_impl_shard *o = pmr_impl_sharded_get(h, j);
    if (o == NULL || (o != sh && !pmr_impl_spin_try_lock(&o->lock))) continue;
    reclaimed |= pmr_impl_heap_trim(&o->heap) != 0;
    if (o != sh) pmr_impl_spin_unlock(&o->lock);
  }
  if (!reclaimed) return NULL;
  return pmr_impl_heap_alloc_held(&sh->heap, &sh->heap.classes[idx]);
}

void *pmr_impl_sharded_alloc(pmr_impl_sharded_heap *h, pmr_impl_shard **shp,
                             unsigned home, unsigned idx) {
  for (;;) {
    void *p = pmr_impl_sharded_alloc_held(h, *shp, idx);
    if (p != NULL) return p;
    pmr_impl_spin_unlock(&(*shp)->lock);
    *shp = NULL;
    if (!pmr_impl_source_grow(&h->src)) return NULL;
    pmr_impl_shard *sh = home < PMR_IMPL_SHARDS ? pmr_impl_sharded_lock(h, home)
                                                : pmr_impl_sharded_lock_mine(h);
    if (sh == NULL) return NULL;
    *shp = sh;
  }
}

void pmr_impl_sharded_free_slow(pmr_impl_shard *sh, pmr_impl_page *pg) {
  pmr_impl_heap_free_slow(pg);
  pmr_impl_spin_unlock(&sh->lock);
}

void pmr_impl_sharded_free_many(const pmr_impl_sharded_heap *h,
                                void *const *blocks, size_t n) {
  pmr_impl_shard *held = NULL;
  for (size_t i = 0; i < n; ++i) {
    void *p = blocks[i];
    pmr_impl_page *pg = pmr_impl_page_of(&h->src, p);
    pmr_impl_shard *sh = pmr_impl_shard_of(pg->heap);
    if (sh != held) {
      if (held != NULL) pmr_impl_spin_unlock(&held->lock);
      held = pmr_impl_spin_try_lock(&sh->lock) ? sh : NULL;
    }
    if (held == NULL)
      pmr_impl_heap_free_remote(pg, p);
    else if (pmr_impl_page_push(pg, p))
      pmr_impl_heap_free_slow(pg);
  }
  if (held != NULL) pmr_impl_spin_unlock(&held->lock);
}

size_t pmr_impl_sharded_trim(pmr_impl_sharded_heap *h) {
  for (unsigned i = 0; i < PMR_IMPL_SHARDS; ++i) {
    pmr_impl_shard *sh = pmr_impl_sharded_get(h, i);
    if (sh == NULL) continue;
    pmr_impl_spin_lock(&sh->lock);
    pmr_impl_heap_trim(&sh->heap);
    pmr_impl_spin_unlock(&sh->lock);
  }
  return pmr_impl_source_trim(&h->src, 0);
}

void pmr_impl_sharded_stats(pmr_impl_sharded_heap *h, pmr_pool_stats *st) {
  pmr_impl_spin_lock(&h->src.lock);
  st->free_page_bytes += h->src.free_count * PMR_IMPL_PAGE_SIZE;
  st->held_bytes += h->src.segment_bytes;
  pmr_impl_spin_unlock(&h->src.lock);
  for (unsigned i = 0; i < PMR_IMPL_SHARDS; ++i)
    if (pmr_impl_sharded_get(h, i) != NULL)
      st->held_bytes += sizeof(pmr_impl_shard);
}

size_t pmr_impl_sharded_locks(pmr_impl_sharded_heap *h, pmr_impl_spin **all) {
  size_t n = 0;
  all[n++] = &h->create_lock;
  for (unsigned i = 0; i < PMR_IMPL_SHARDS; ++i) {
    pmr_impl_shard *sh = pmr_impl_sharded_get(h, i);
    if (sh != NULL) all[n++] = &sh->lock;
  }
  all[n++] = &h->src.lock; /* taken under a shard's lock: last */
  return n;
}
