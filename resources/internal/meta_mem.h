/* PRIVATE: memory for the library's own records: threads' heaps and
 * records, page-map leaves, nodes of the registries of live instances.
 *
 * From the C library's calloc / aligned_alloc, except in a process whose
 * malloc is pmr-c's own (the drop-in, malloc/): there calling malloc from
 * inside the allocator would come back into it (a thread's first heap
 * would ask for a heap), so once pmr_impl_meta_use_os() was called these
 * come straight from the OS: blocks of powers of two from 64 bytes, carved
 * from 1 MiB mappings and kept on free lists for reuse (a spin lock; fork
 * safe through fork_guard.h), larger ones mapped on their own. */
#ifndef PMR_IMPL_META_MEM_H
#define PMR_IMPL_META_MEM_H

#include <stdbool.h>
#include <stddef.h>

/* `bytes` of zeroed memory, aligned to 64 (a cache line of its own at each
 * end) below 256 KiB and to 16 from there; NULL when there is none. errno
 * untouched. */
void *pmr_impl_meta_alloc(size_t bytes);
/* Frees p (NULL: nothing) from pmr_impl_meta_alloc. errno untouched. */
void pmr_impl_meta_free(void *p);

/* From now on pmr_impl_meta_alloc takes memory from the OS. Call before
 * any other function of the library, once (the drop-in's first malloc);
 * blocks from before are never passed to pmr_impl_meta_free afterwards
 * (there are none). */
void pmr_impl_meta_use_os(void);
bool pmr_impl_meta_uses_os(void);

/* Bytes the OS mode holds mapped (its statistics). */
size_t pmr_impl_meta_mapped_bytes(void);

#endif /* PMR_IMPL_META_MEM_H */
