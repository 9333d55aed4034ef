#pragma once
// Text with placeholders, parsed once and expanded per request (--arg values; URLs, headers
// and bodies of HTTP requests): {limit} {window_ms} {uuid} (unique per request) {seq} (request
// number) {run} {now_ms} {id} (the identity the request speaks for, see identity_map.hpp),
// {group} (its group of --group-size identities), {cost} (its units, --cost),
// {now_s} (Unix seconds with six decimals) and {window_s} (the window in seconds: "2", "0.5").

#include <cstdint>
#include <expected>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "engine/client_rng.hpp"
#include "engine/request_clock.hpp"

namespace rlcheck::engine {

struct PlaceholderContext {
  int64_t limit = 0;
  int64_t window_ms = 0;
  int run = 1;
  uint64_t seq = 0;
  uint32_t identity = 0;     // for {id}
  ClientRng* rng = nullptr;  // for {uuid}; required when the template has one
  // For {now_ms} and {now_s}; null reads the wall clock. Pointed to, not copied: a request's
  // clock is written just before it is expanded (request_clock.hpp, copy_clock).
  const RequestClock* clock = nullptr;
  int64_t group_size = 0;  // for {group}: identity / group_size (0: group 0)
  int64_t cost = 1;        // for {cost}: the request's units (--cost)
};

class PlaceholderTemplate {
 public:
  enum class Unknown {
    error,  // an unknown or unclosed placeholder is an error naming it (--arg)
    keep,   // braces that name no placeholder are text (a JSON body: {"user": 1})
  };
  static std::expected<PlaceholderTemplate, std::string> parse(std::string_view text,
                                                               Unknown unknown = Unknown::error);
  std::string expand(const PlaceholderContext& context) const;
  // Replaces `out` with the expansion, keeping its capacity.
  void expand_into(const PlaceholderContext& context, std::string& out) const;
  // Writes the expansion into `out` when it fits in `capacity` and has only literals and
  // integers ({limit} {window_ms} {seq} {run} {id} {group} {cost} {now_ms}): its length, else npos
  // (use expand_into). The run loop's form: no string is touched.
  size_t expand_to(const PlaceholderContext& context, char* out, size_t capacity) const;
  // The same text with {limit}, {window_ms}, {window_s} and {run} written as `fixed` has them:
  // what a run repeats in every request is formatted once.
  PlaceholderTemplate bound(const PlaceholderContext& fixed) const;
  // True when the text has no placeholder: every expansion is the same.
  bool is_constant() const;
  // True when the text reads the clock ({now_ms} or {now_s}).
  bool reads_clock() const;

 private:
  enum class Piece {
    literal,
    limit,
    window_ms,
    uuid,
    seq,
    run,
    now_ms,
    id,
    now_s,
    window_s,
    group,
    cost
  };
  struct Part {
    Piece piece;
    std::string literal;
  };
  // The clock, read at most once per expansion: {now_ms} and {now_s} in one text name one
  // instant.
  struct ExpansionClock {
    const RequestClock* clock;
    int64_t ns = 0;
    bool read = false;
    int64_t now_ns();
  };
  // Writes the integer `piece` stands for ({limit} {window_ms} {seq} {run} {id} {now_ms}) at
  // `at`: the end written; null when `piece` is no integer or its digits do not fit.
  static char* write_integer(Piece piece, const PlaceholderContext& context, ExpansionClock& clock,
                             char* at, char* end);

  std::vector<Part> parts_;
};

// Whether any of `texts`, parsed as templates, reads the clock ({now_ms} or {now_s}); texts that
// do not parse read nothing.
bool any_reads_clock(const std::vector<std::string>& texts, PlaceholderTemplate::Unknown unknown);

// A duration in milliseconds as seconds, as short as exact: 2000 -> "2", 500 -> "0.5",
// 1250 -> "1.25".
std::string seconds_text(int64_t ms);

// A random RFC 4122 version-4 UUID from `rng`, so --seed reproduces it.
std::string random_uuid(std::mt19937_64& rng);

}  // namespace rlcheck::engine
