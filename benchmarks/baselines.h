// The naive baselines of the seed articles (shared/seeds), written here from
// their description, so users see what a hand-rolled allocator buys them:
//   - SimplePool: one global mutex guarding an intrusive free list per size
//     class; refills carve a chunk from malloc into blocks.
//   - Arena: a bump pointer through big blocks; no per-block free; reset()
//     rewinds to the first block and keeps the blocks for reuse.
#ifndef PMR_BENCHMARKS_BASELINES_H_
#define PMR_BENCHMARKS_BASELINES_H_

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <mutex>

namespace bench {

class SimplePool {
 public:
  static constexpr size_t kGranule =
      16;  // classes 16, 32, ..., 1024 B; blocks 16-aligned
  static constexpr size_t kMaxBlock = 1024;
  static constexpr size_t kClasses = kMaxBlock / kGranule;
  static constexpr size_t kChunk = 64 * 1024;

  SimplePool() = default;
  SimplePool(const SimplePool&) = delete;
  SimplePool& operator=(const SimplePool&) = delete;
  ~SimplePool() {
    while (chunks_ != nullptr) {
      Node* next = chunks_->next;
      std::free(chunks_);
      chunks_ = next;
    }
  }

  void* allocate(size_t n) {
    if (n > kMaxBlock) return std::malloc(n);
    const size_t c = Class(n);
    std::lock_guard<std::mutex> lock(mu_);
    Node* b = free_[c];
    if (b != nullptr) {
      free_[c] = b->next;
      return b;
    }
    return Carve(c);
  }

  void deallocate(void* p, size_t n) {
    if (p == nullptr) return;
    if (n > kMaxBlock) {
      std::free(p);
      return;
    }
    const size_t c = Class(n);
    Node* b = static_cast<Node*>(p);
    std::lock_guard<std::mutex> lock(mu_);
    b->next = free_[c];
    free_[c] = b;
  }

 private:
  struct Node {
    Node* next;
  };
  static size_t Class(size_t n) { return n == 0 ? 0 : (n - 1) / kGranule; }

  // Called with mu_ held: one chunk, cut into blocks of class c; returns the
  // first.
  void* Carve(size_t c) {
    const size_t bs = (c + 1) * kGranule;
    char* mem = static_cast<char*>(std::malloc(kChunk));
    if (mem == nullptr) return nullptr;
    Node* chunk = reinterpret_cast<Node*>(
        mem);  // the chunk list link, in the first granule
    chunk->next = chunks_;
    chunks_ = chunk;
    char* first = mem + kGranule;
    const size_t count = (kChunk - kGranule) / bs;
    for (size_t i = count;
         i-- > 1;) {  // push backwards: blocks come out in address order
      Node* b = reinterpret_cast<Node*>(first + i * bs);
      b->next = free_[c];
      free_[c] = b;
    }
    return first;
  }

  std::mutex mu_;
  Node* free_[kClasses] = {};
  Node* chunks_ = nullptr;
};

class Arena {
 public:
  static constexpr size_t kAlignment = alignof(std::max_align_t);

  explicit Arena(size_t block_size) : block_size_(block_size) {}
  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;
  ~Arena() {
    reset();
    while (blocks_ != nullptr) {
      Block* next = blocks_->next;
      std::free(blocks_);
      blocks_ = next;
    }
  }

  void* allocate(size_t n, size_t align = kAlignment) {
    const uintptr_t p = (reinterpret_cast<uintptr_t>(cur_) + (align - 1)) &
                        ~static_cast<uintptr_t>(align - 1);
    if (cur_ != nullptr && p <= reinterpret_cast<uintptr_t>(end_) &&
        n <= reinterpret_cast<uintptr_t>(end_) - p) {
      cur_ = reinterpret_cast<char*>(p + n);
      return reinterpret_cast<void*>(p);
    }
    return Refill(n, align);
  }

  // Everything allocated becomes invalid; blocks are kept for the next
  // allocations.
  void reset() {
    while (big_ != nullptr) {
      Block* next = big_->next;
      std::free(big_);
      big_ = next;
    }
    block_ = nullptr;
    cur_ = end_ = nullptr;
  }

 private:
  struct alignas(std::max_align_t) Block {
    Block* next;
  };

  void* Refill(size_t n, size_t align) {
    if (n + align >
        block_size_ -
            sizeof(Block)) {  // too big for a block: a block of its own
      Block* b = static_cast<Block*>(std::malloc(sizeof(Block) + n + align));
      if (b == nullptr) return nullptr;
      b->next = big_;
      big_ = b;
      const uintptr_t p = (reinterpret_cast<uintptr_t>(b + 1) + (align - 1)) &
                          ~static_cast<uintptr_t>(align - 1);
      return reinterpret_cast<void*>(p);
    }
    Block* next = block_ == nullptr ? blocks_ : block_->next;
    if (next == nullptr) {
      next = static_cast<Block*>(std::malloc(block_size_));
      if (next == nullptr) return nullptr;
      next->next = nullptr;
      if (block_ == nullptr)
        blocks_ = next;
      else
        block_->next = next;
    }
    block_ = next;
    cur_ = reinterpret_cast<char*>(next + 1);
    end_ = reinterpret_cast<char*>(next) + block_size_;
    return allocate(n, align);
  }

  size_t block_size_;
  Block* blocks_ = nullptr;  // all kept blocks, in use order
  Block* block_ = nullptr;   // the current one
  Block* big_ = nullptr;     // oversize blocks, freed by reset
  char* cur_ = nullptr;
  char* end_ = nullptr;
};

}  // namespace bench

#endif  // PMR_BENCHMARKS_BASELINES_H_
