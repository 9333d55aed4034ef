#include "engine/placeholder_template.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <chrono>
#include <cstdlib>
#include <iterator>
#include <utility>

#include <fmt/format.h>

namespace rlcheck::engine {
namespace {

// How many decimal digits `value` has.
size_t decimal_length(uint64_t value) {
  size_t length = 1;
  for (uint64_t bound = 10; length < 20 && value >= bound; bound *= 10)
    ++length;
  return length;
}

// `value` in decimal at `at`, two digits a step from its last, where they stay (what every
// request's {seq} costs: no copy); null when it does not fit before `end`.
char* write_decimal(char* at, char* end, uint64_t value) {
  static constexpr char k_pairs[] =
      "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
      "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
      "8081828384858687888990919293949596979899";
  const size_t length = decimal_length(value);
  if (static_cast<size_t>(end - at) < length)
    return nullptr;
  char* const last = at + length;
  char* digit = last;
  while (value >= 100) {
    const auto pair = static_cast<size_t>(value % 100) * 2;
    value /= 100;
    *--digit = k_pairs[pair + 1];
    *--digit = k_pairs[pair];
  }
  if (value >= 10) {
    *--digit = k_pairs[value * 2 + 1];
    *--digit = k_pairs[value * 2];
  } else {
    *--digit = static_cast<char>('0' + value);
  }
  return last;
}

}  // namespace

std::expected<PlaceholderTemplate, std::string> PlaceholderTemplate::parse(std::string_view text,
                                                                           Unknown unknown) {
  static constexpr std::array<std::pair<std::string_view, Piece>, 11> k_names{{
      {"limit", Piece::limit},
      {"window_ms", Piece::window_ms},
      {"uuid", Piece::uuid},
      {"seq", Piece::seq},
      {"run", Piece::run},
      {"now_ms", Piece::now_ms},
      {"id", Piece::id},
      {"now_s", Piece::now_s},
      {"window_s", Piece::window_s},
      {"group", Piece::group},
      {"cost", Piece::cost},
  }};
  PlaceholderTemplate parsed;
  std::string literal;
  size_t i = 0;
  while (i < text.size()) {
    if (text[i] != '{') {
      literal.push_back(text[i++]);
      continue;
    }
    const size_t close = text.find('}', i);
    if (close == std::string_view::npos) {
      if (unknown == Unknown::keep) {
        literal.append(text.substr(i));
        break;
      }
      return std::unexpected(fmt::format("'{}' has an unclosed '{{'", text));
    }
    std::string_view name = text.substr(i + 1, close - i - 1);
    bool known = false;
    for (const auto& [spelling, piece] : k_names) {
      if (spelling != name)
        continue;
      if (!literal.empty())
        parsed.parts_.push_back({Piece::literal, std::move(literal)});
      literal.clear();
      parsed.parts_.push_back({piece, {}});
      known = true;
    }
    if (!known && unknown == Unknown::keep) {
      literal.push_back(text[i++]);  // only the brace: a placeholder may follow inside
      continue;
    }
    if (!known) {
      return std::unexpected(fmt::format(
          "'{}' has an unknown placeholder {{{}}}; known: {{limit}} {{window_ms}} {{uuid}} "
          "{{seq}} {{run}} {{now_ms}} {{now_s}} {{window_s}} {{id}} {{group}} {{cost}}",
          text, name));
    }
    i = close + 1;
  }
  if (!literal.empty())
    parsed.parts_.push_back({Piece::literal, std::move(literal)});
  return parsed;
}

std::string PlaceholderTemplate::expand(const PlaceholderContext& context) const {
  std::string out;
  expand_into(context, out);
  return out;
}

int64_t PlaceholderTemplate::ExpansionClock::now_ns() {
  if (!read) {
    ns = clock != nullptr ? clock->read_ns() : wall_now_ns();
    read = true;
  }
  return ns;
}

char* PlaceholderTemplate::write_integer(Piece piece, const PlaceholderContext& context,
                                         ExpansionClock& clock, char* at, char* end) {
  std::to_chars_result written{};
  switch (piece) {
    case Piece::limit:
      written = std::to_chars(at, end, context.limit);
      break;
    case Piece::window_ms:
      written = std::to_chars(at, end, context.window_ms);
      break;
    case Piece::seq:
      return write_decimal(at, end, context.seq);
    case Piece::run:
      written = std::to_chars(at, end, context.run);
      break;
    case Piece::id:
      return write_decimal(at, end, context.identity);
    case Piece::group:
      return write_decimal(at, end,
                           context.group_size > 0
                               ? static_cast<uint64_t>(context.identity / context.group_size)
                               : 0);
    case Piece::cost:
      written = std::to_chars(at, end, context.cost);
      break;
    case Piece::now_ms:
      written = std::to_chars(at, end, floor_div(clock.now_ns(), 1'000'000));
      break;
    default:
      return nullptr;
  }
  return written.ec == std::errc{} ? written.ptr : nullptr;
}

void PlaceholderTemplate::expand_into(const PlaceholderContext& context, std::string& out) const {
  out.clear();
  ExpansionClock clock{context.clock};
  for (const Part& part : parts_) {
    switch (part.piece) {
      case Piece::literal:
        out += part.literal;
        break;
      case Piece::uuid:
        out += random_uuid(context.rng->get());
        break;
      case Piece::now_s: {
        const int64_t us = floor_div(clock.now_ns(), 1'000);
        const int64_t whole = floor_div(us, 1'000'000);
        fmt::format_to(std::back_inserter(out), "{}.{:06}", whole, us - whole * 1'000'000);
        break;
      }
      case Piece::window_s:
        out += seconds_text(context.window_ms);
        break;
      default: {
        char digits[24];  // any 64-bit integer
        const char* end = write_integer(part.piece, context, clock, digits, digits + sizeof digits);
        out.append(digits, static_cast<size_t>(end - digits));
        break;
      }
    }
  }
}

size_t PlaceholderTemplate::expand_to(const PlaceholderContext& context, char* out,
                                      size_t capacity) const {
  char* at = out;
  char* const end = out + capacity;
  ExpansionClock clock{context.clock};
  for (const Part& part : parts_) {
    if (part.piece == Piece::literal) {
      if (static_cast<size_t>(end - at) < part.literal.size())
        return std::string::npos;
      at = std::copy(part.literal.begin(), part.literal.end(), at);
      continue;
    }
    at = write_integer(part.piece, context, clock, at, end);
    if (at == nullptr)
      return std::string::npos;  // not an integer ({uuid} {now_s} {window_s}), or too long
  }
  return static_cast<size_t>(at - out);
}

std::string seconds_text(int64_t ms) {
  std::string text =
      fmt::format("{}{}.{:03}", ms < 0 ? "-" : "", std::llabs(ms) / 1000, std::llabs(ms) % 1000);
  while (text.back() == '0')
    text.pop_back();
  if (text.back() == '.')
    text.pop_back();
  return text;
}

std::string random_uuid(std::mt19937_64& rng) {
  uint64_t high = rng();
  uint64_t low = rng();
  high = (high & 0xffffffffffff0fffULL) | 0x0000000000004000ULL;  // version 4
  low = (low & 0x3fffffffffffffffULL) | 0x8000000000000000ULL;    // RFC 4122 variant
  return fmt::format("{:08x}-{:04x}-{:04x}-{:04x}-{:012x}", high >> 32, (high >> 16) & 0xffff,
                     high & 0xffff, low >> 48, low & 0xffffffffffffULL);
}

bool PlaceholderTemplate::reads_clock() const {
  for (const Part& part : parts_) {
    if (part.piece == Piece::now_ms || part.piece == Piece::now_s)
      return true;
  }
  return false;
}

bool any_reads_clock(const std::vector<std::string>& texts, PlaceholderTemplate::Unknown unknown) {
  for (const std::string& text : texts) {
    const auto parsed = PlaceholderTemplate::parse(text, unknown);
    if (parsed && parsed->reads_clock())
      return true;
  }
  return false;
}

PlaceholderTemplate PlaceholderTemplate::bound(const PlaceholderContext& fixed) const {
  PlaceholderTemplate result;
  for (const Part& part : parts_) {
    std::string text;
    switch (part.piece) {
      case Piece::literal:
        text = part.literal;
        break;
      case Piece::limit:
      case Piece::window_ms:
      case Piece::window_s:
      case Piece::run: {
        PlaceholderTemplate one;
        one.parts_.push_back(part);
        one.expand_into(fixed, text);
        break;
      }
      default:
        result.parts_.push_back(part);
        continue;
    }
    if (!result.parts_.empty() && result.parts_.back().piece == Piece::literal) {
      result.parts_.back().literal += text;
    } else {
      result.parts_.push_back({Piece::literal, std::move(text)});
    }
  }
  return result;
}

bool PlaceholderTemplate::is_constant() const {
  for (const Part& part : parts_) {
    if (part.piece != Piece::literal)
      return false;
  }
  return true;
}

}  // namespace rlcheck::engine
