/* PRIVATE: the geometry of the pools' pages (page_heap.h): a page's size,
 * a segment's pages, and where a page's descriptor lies in its frame. Named
 * once here; everything else derives from these. */
#ifndef PMR_IMPL_PAGE_GEOMETRY_H
#define PMR_IMPL_PAGE_GEOMETRY_H

#include <stddef.h>
#include <stdint.h>

#define PMR_IMPL_PAGE_SHIFT 16
#define PMR_IMPL_PAGE_SIZE ((size_t)1 << PMR_IMPL_PAGE_SHIFT)
/* A segment: what a source asks of upstream at most (1 MiB), fewer pages
 * when upstream cannot give that much. */
#define PMR_IMPL_SEGMENT_SHIFT 20
#define PMR_IMPL_SEGMENT_PAGES \
  (1u << (PMR_IMPL_SEGMENT_SHIFT - PMR_IMPL_PAGE_SHIFT))

/* Descriptors are PMR_IMPL_PAGE_SLOT bytes; a frame's table sits at one of
 * PMR_IMPL_PAGE_COLORS multiples of its size, by address bits above the
 * frame size. 32 spreads the tables of 32 consecutive frames over a whole
 * 64 KiB page, so their descriptors' first lines (the ones every free
 * touches) fall into 512 distinct sets of a 1024-set L2 instead of 128. */
#define PMR_IMPL_PAGE_COLOR_BITS 5
#define PMR_IMPL_PAGE_COLORS (1u << PMR_IMPL_PAGE_COLOR_BITS)
#define PMR_IMPL_PAGE_SLOT_SHIFT 7
#define PMR_IMPL_PAGE_SLOT (1u << PMR_IMPL_PAGE_SLOT_SHIFT)
/* Frames of a source with segment frames (page_source.h: seg_frames): one
 * segment. */
#define PMR_IMPL_SEG_FRAME_SHIFT PMR_IMPL_SEGMENT_SHIFT
/* pmr_impl_page_of shifts an address right by this: a page's index in its
 * frame then lands on multiples of a descriptor's size. */
#define PMR_IMPL_PAGE_OF_SHIFT (PMR_IMPL_PAGE_SHIFT - PMR_IMPL_PAGE_SLOT_SHIFT)
/* A source's frame geometry (page_source.h: frame_mask, color_mask) for
 * frames of `shift` bits: the frame's start, and the bits of (address >>
 * PMR_IMPL_PAGE_OF_SHIFT) that give a descriptor its offset in the frame
 * (the page's index in the table, then the table's colour). */
#define PMR_IMPL_FRAME_MASK(shift) (~(((uintptr_t)1 << (shift)) - 1))
#define PMR_IMPL_COLOR_MASK(shift)                                  \
  ((uint32_t)(((((uint32_t)1 << ((shift)-PMR_IMPL_PAGE_SHIFT)) - 1) \
               << PMR_IMPL_PAGE_SLOT_SHIFT) |                       \
              ((PMR_IMPL_PAGE_COLORS - 1)                           \
               << (PMR_IMPL_PAGE_SLOT_SHIFT +                       \
                   ((shift)-PMR_IMPL_PAGE_SHIFT)))))
_Static_assert(PMR_IMPL_PAGE_OF_SHIFT + PMR_IMPL_PAGE_SLOT_SHIFT +
                       (PMR_IMPL_SEG_FRAME_SHIFT - PMR_IMPL_PAGE_SHIFT) +
                       PMR_IMPL_PAGE_COLOR_BITS <=
                   32,
               "pmr_impl_page_of takes the mask's bits from the low 32 bits "
               "of an address");

#endif /* PMR_IMPL_PAGE_GEOMETRY_H */
