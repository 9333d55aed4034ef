#include "engine/huge_page_allocator.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

#include "engine/record_log.hpp"

namespace rlcheck::engine {

TEST_CASE("huge page allocator: large blocks start on a huge page, small ones as usual") {
  std::vector<PackedRecord, HugePageAllocator<PackedRecord>> large;
  large.reserve(100'000);  // 3.6 MB
  CHECK(reinterpret_cast<uintptr_t>(large.data()) % k_huge_page_bytes == 0);
  std::vector<PackedRecord, HugePageAllocator<PackedRecord>> small;
  small.reserve(10);
  CHECK(reinterpret_cast<uintptr_t>(small.data()) % alignof(PackedRecord) == 0);
  // Growing from small to large past the threshold keeps every element.
  for (uint32_t i = 0; i < 200'000; ++i)
    small.push_back(PackedRecord{i, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0});
  CHECK(reinterpret_cast<uintptr_t>(small.data()) % k_huge_page_bytes == 0);
  bool kept = true;
  for (uint32_t i = 0; i < 200'000; ++i)
    kept = kept && small[i].sent_low == i;
  CHECK(kept);
  small.shrink_to_fit();
  small.resize(3);
  small.shrink_to_fit();  // large to small: freed by the rule it was allocated by
  CHECK(small.size() == 3);
  CHECK(small[2].sent_low == 2);
}

}  // namespace rlcheck::engine
