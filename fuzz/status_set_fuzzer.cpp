// Fuzzes --allowed-status / --denied-status sets ("200-299,304").
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "http/status_set.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  if (auto set = rlcheck::http::StatusSet::parse(text); set) {
    for (int status : {-1, 0, 99, 100, 429, 599, 600, 1000})
      (void)set->contains(status);
    if (set->contains(99) || set->contains(600))
      __builtin_trap();  // only 100-599 can be members
  }
  return 0;
}
