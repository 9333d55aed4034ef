#pragma once
// An allocator for large buffers written once, front to back (a run's records): blocks of at
// least one huge page are aligned to 2 MiB and advised as huge pages (MADV_HUGEPAGE), so the
// kernel faults them in 2 MiB at a time where it grants huge pages on request. At 36 bytes a
// record that is one page fault every 58 000 records instead of every 114. Smaller blocks get
// what std::allocator gives; where the kernel refuses the advice, a large block is only
// aligned.

#include <sys/mman.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>

namespace rlcheck::engine {

inline constexpr size_t k_huge_page_bytes = size_t{2} * 1024 * 1024;

template <class T>
class HugePageAllocator {
 public:
  using value_type = T;

  HugePageAllocator() = default;
  template <class U>
  HugePageAllocator(const HugePageAllocator<U>&) noexcept {}  // NOLINT: rebinding

  T* allocate(size_t count) {
    if (!huge(count))
      return std::allocator<T>{}.allocate(count);
    const size_t bytes = rounded(count);
    void* block = std::aligned_alloc(k_huge_page_bytes, bytes);
    if (block == nullptr)
      throw std::bad_alloc();
    madvise(block, bytes, MADV_HUGEPAGE);  // advice: refused, nothing changes
    return static_cast<T*>(block);
  }

  void deallocate(T* block, size_t count) noexcept {
    if (huge(count)) {
      std::free(block);
    } else {
      std::allocator<T>{}.deallocate(block, count);
    }
  }

  friend bool operator==(const HugePageAllocator&, const HugePageAllocator&) { return true; }

 private:
  static bool huge(size_t count) { return count >= k_huge_page_bytes / sizeof(T); }
  static size_t rounded(size_t count) {
    const size_t bytes = count * sizeof(T);  // the vector asked within max_size()
    if (bytes > SIZE_MAX - k_huge_page_bytes)
      throw std::bad_alloc();
    return (bytes + k_huge_page_bytes - 1) / k_huge_page_bytes * k_huge_page_bytes;
  }
};

}  // namespace rlcheck::engine
