#include "tests/testkit/counting_resource.h"

#include <cerrno>
#include <sstream>

namespace pmrtest {

const pmr_mem_resource_ops CountingResource::kOps = {
    &CountingResource::Allocate,
    &CountingResource::Deallocate,
    nullptr,
    nullptr,
    nullptr,
    nullptr,
    nullptr};

CountingResource::CountingResource(pmr_mem_resource* upstream)
    : hook_{{&kOps}, this}, upstream_(upstream) {}

CountingResource::~CountingResource() {
  for (auto& kv : live_)
    pmr_deallocate(upstream_, kv.first, kv.second.bytes, kv.second.alignment);
}

void* CountingResource::Allocate(pmr_mem_resource* self, size_t bytes,
                                 size_t alignment) {
  CountingResource* c = reinterpret_cast<Hook*>(self)->owner;
  std::lock_guard<std::mutex> lock(c->mu_);
  void* p = nullptr;
  if (c->failing_armed_ && c->successes_left_ == 0) {
    errno = ENOMEM;
  } else {
    if (c->failing_armed_) --c->successes_left_;
    p = pmr_allocate(c->upstream_, bytes, alignment);
  }
  c->calls_.push_back({Call::kAllocate, p, bytes, alignment});
  if (p == nullptr) {
    ++c->failed_;
    return nullptr;
  }
  ++c->allocations_;
  c->live_[p] = {bytes, alignment};
  c->bytes_ += bytes;
  if (c->bytes_ > c->max_bytes_) c->max_bytes_ = c->bytes_;
  return p;
}

void CountingResource::Deallocate(pmr_mem_resource* self, void* p, size_t bytes,
                                  size_t alignment) {
  CountingResource* c = reinterpret_cast<Hook*>(self)->owner;
  std::lock_guard<std::mutex> lock(c->mu_);
  c->calls_.push_back({Call::kDeallocate, p, bytes, alignment});
  ++c->deallocations_;
  auto it = c->live_.find(p);
  if (it == c->live_.end() || it->second.bytes != bytes ||
      it->second.alignment != alignment) {
    std::ostringstream msg;
    msg << "deallocate(" << p << ", " << bytes << ", " << alignment << "): ";
    if (it == c->live_.end())
      msg << "pointer not outstanding";
    else
      msg << "allocated as (" << it->second.bytes << ", "
          << it->second.alignment << ")";
    c->last_mismatch_ = msg.str();
    ++c->mismatches_;
    return;  // never hand a bad pointer on to upstream
  }
  c->bytes_ -= bytes;
  c->live_.erase(it);
  pmr_deallocate(c->upstream_, p, bytes, alignment);
}

size_t CountingResource::allocations() const {
  std::lock_guard<std::mutex> lock(mu_);
  return allocations_;
}
size_t CountingResource::failed_allocations() const {
  std::lock_guard<std::mutex> lock(mu_);
  return failed_;
}
size_t CountingResource::deallocations() const {
  std::lock_guard<std::mutex> lock(mu_);
  return deallocations_;
}
size_t CountingResource::outstanding_blocks() const {
  std::lock_guard<std::mutex> lock(mu_);
  return live_.size();
}
size_t CountingResource::outstanding_bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return bytes_;
}
size_t CountingResource::max_outstanding_bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return max_bytes_;
}
size_t CountingResource::mismatches() const {
  std::lock_guard<std::mutex> lock(mu_);
  return mismatches_;
}
std::string CountingResource::last_mismatch() const {
  std::lock_guard<std::mutex> lock(mu_);
  return last_mismatch_;
}
std::vector<Call> CountingResource::calls() const {
  std::lock_guard<std::mutex> lock(mu_);
  return calls_;
}
void CountingResource::clear_calls() {
  std::lock_guard<std::mutex> lock(mu_);
  calls_.clear();
}
void CountingResource::fail_after(size_t n) {
  std::lock_guard<std::mutex> lock(mu_);
  failing_armed_ = true;
  successes_left_ = n;
}
void CountingResource::never_fail() {
  std::lock_guard<std::mutex> lock(mu_);
  failing_armed_ = false;
}

}  // namespace pmrtest
