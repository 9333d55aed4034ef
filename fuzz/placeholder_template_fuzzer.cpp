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
  rlcheck::engine::ClientRng rng(7);
  PlaceholderContext context{
      .limit = 10, .window_ms = 60'000, .run = 2, .seq = 12345, .identity = 6, .rng = &rng};
  const rlcheck::engine::RequestClock clock{.virtual_unix_ns = 1'700'000'000'123'456'789};
  context.clock = &clock;  // both forms read one instant
  for (auto unknown : {PlaceholderTemplate::Unknown::error, PlaceholderTemplate::Unknown::keep}) {
    auto parsed = PlaceholderTemplate::parse(text, unknown);
    if (!parsed)
      continue;
    std::string out = parsed->expand(context);
    parsed->expand_into(context, out);
    // The run loop's form writes the same, or declines.
    char written[64];
    const size_t length = parsed->expand_to(context, written, sizeof written);
    if (length != std::string::npos && std::string_view(written, length) != out)
      __builtin_trap();
  }
  return 0;
}
