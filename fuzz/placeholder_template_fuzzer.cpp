// Fuzzes placeholder templates (--arg values, URLs, headers, bodies): parsed both ways (unknown
// braces an error, or kept as text) and expanded.
#include <cstddef>
#include <cstdint>
#include <random>
#include <string_view>

#include "engine/placeholder_template.hpp"

using rlcheck::engine::PlaceholderContext;
using rlcheck::engine::PlaceholderTemplate;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  std::mt19937_64 rng(7);
  PlaceholderContext context{
      .limit = 10, .window_ms = 60'000, .run = 2, .seq = 12345, .identity = 6, .rng = &rng};
  for (auto unknown : {PlaceholderTemplate::Unknown::error, PlaceholderTemplate::Unknown::keep}) {
    auto parsed = PlaceholderTemplate::parse(text, unknown);
    if (!parsed)
      continue;
    std::string out = parsed->expand(context);
    parsed->expand_into(context, out);
  }
  return 0;
}
