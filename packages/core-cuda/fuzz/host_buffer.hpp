// Caller memory for one operand of a fuzz case. Small extents get an exact-size heap block, so
// AddressSanitizer sees any byte read or written past the end; extents past `heap_limit` (a
// leading dimension of 2^28, say) get a lazily committed anonymous mapping, so the case costs
// only the pages the library touches and 64-bit offsets are exercised for real.
#pragma once

#include <sys/mman.h>

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <utility>

namespace bsrmm::fuzz {

class HostBuffer {
 public:
  static constexpr std::size_t heap_limit = std::size_t{16} << 20;
  // Virtual size past which a case is skipped: far below the 47-bit user address space that
  // AddressSanitizer's shadow shares.
  static constexpr std::size_t map_limit = std::size_t{1} << 37;

  HostBuffer() = default;
  // `bytes` bytes at data(), which lies `misalign` bytes past a 16-byte boundary.
  HostBuffer(std::size_t bytes, std::size_t misalign = 0) : bytes_(bytes), misalign_(misalign) {
    const std::size_t total = bytes + misalign;
    if (total == 0) return;
    if (total <= heap_limit) {
      heap_ = static_cast<unsigned char*>(std::malloc(total));
      if (heap_ == nullptr) std::abort();
      base_ = heap_;
    } else {
      void* mapped = mmap(nullptr, total, PROT_READ | PROT_WRITE,
                          MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
      if (mapped == MAP_FAILED) std::abort();
      mapped_ = total;
      base_ = static_cast<unsigned char*>(mapped);
    }
  }
  ~HostBuffer() {
    std::free(heap_);
    if (mapped_ != 0) munmap(base_, mapped_);
  }
  HostBuffer(HostBuffer&& other) noexcept { swap(other); }
  HostBuffer& operator=(HostBuffer&& other) noexcept {
    swap(other);
    return *this;
  }
  HostBuffer(const HostBuffer&) = delete;
  HostBuffer& operator=(const HostBuffer&) = delete;

  unsigned char* data() const { return base_ == nullptr ? nullptr : base_ + misalign_; }
  std::size_t size() const { return bytes_; }
  // A mapping is too large to scan: checks look at the elements the case defines only.
  bool mapped() const { return mapped_ != 0; }

 private:
  void swap(HostBuffer& other) noexcept {
    std::swap(heap_, other.heap_);
    std::swap(base_, other.base_);
    std::swap(mapped_, other.mapped_);
    std::swap(bytes_, other.bytes_);
    std::swap(misalign_, other.misalign_);
  }

  unsigned char* heap_ = nullptr;
  unsigned char* base_ = nullptr;
  std::size_t mapped_ = 0;
  std::size_t bytes_ = 0;
  std::size_t misalign_ = 0;
};

}  // namespace bsrmm::fuzz
