#include <doctest/doctest.h>

#include <chrono>
#include <cstdint>
#include <limits>
#include <random>
#include <set>
#include <string>
#include <utility>

#include "engine/placeholder_template.hpp"

using rlcheck::engine::ClientRng;
using rlcheck::engine::PlaceholderContext;
using rlcheck::engine::PlaceholderTemplate;
using rlcheck::engine::random_uuid;
using rlcheck::engine::RequestClock;

namespace {

bool mentions(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

std::string expand(const std::string& text, const PlaceholderContext& context) {
  auto parsed = PlaceholderTemplate::parse(text);
  REQUIRE(parsed.has_value());
  return parsed->expand(context);
}

bool is_lower_hex(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

bool looks_like_uuid_v4(const std::string& s) {
  if (s.size() != 36)
    return false;
  for (size_t i = 0; i < s.size(); ++i) {
    const bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash ? s[i] != '-' : !is_lower_hex(s[i]))
      return false;
  }
  const char variant = s[19];
  return s[14] == '4' && (variant == '8' || variant == '9' || variant == 'a' || variant == 'b');
}

int64_t now_ms() {
  const auto now = std::chrono::system_clock::now().time_since_epoch();
  return std::chrono::duration_cast<std::chrono::milliseconds>(now).count();
}

}  // namespace

TEST_CASE("each numeric placeholder expands to its context value") {
  PlaceholderContext context;
  context.limit = 25;
  context.window_ms = 60'000;
  context.run = 3;
  context.seq = 417;
  CHECK(expand("{limit}", context) == "25");
  CHECK(expand("{window_ms}", context) == "60000");
  CHECK(expand("{run}", context) == "3");
  CHECK(expand("{seq}", context) == "417");
}

TEST_CASE("{seq} and {id} are written in decimal at every width") {
  PlaceholderContext context;
  for (const uint64_t seq :
       {uint64_t{0}, uint64_t{7}, uint64_t{10}, uint64_t{99}, uint64_t{100}, uint64_t{4'096},
        uint64_t{99'999}, uint64_t{1'000'000'001}, std::numeric_limits<uint64_t>::max()}) {
    context.seq = seq;
    context.identity = static_cast<uint32_t>(seq);
    CHECK(expand("{seq}", context) == std::to_string(seq));
    CHECK(expand("{id}", context) == std::to_string(static_cast<uint32_t>(seq)));
  }
  // Each side of every change of width.
  for (uint64_t power = 10; power <= 10'000'000'000'000'000'000U; power *= 10) {
    for (const uint64_t seq : {power - 1, power}) {
      context.seq = seq;
      CHECK(expand("{seq}", context) == std::to_string(seq));
    }
    if (power > std::numeric_limits<uint64_t>::max() / 10)
      break;
  }
}

TEST_CASE("literal text around and between placeholders is kept") {
  PlaceholderContext context;
  context.limit = 5;
  context.seq = 9;
  context.run = 2;
  CHECK(expand("plain", context) == "plain");
  CHECK(expand("", context).empty());
  CHECK(expand("user:{run}-{seq}/max={limit}!", context) == "user:2-9/max=5!");
  CHECK(expand("{seq}{seq}", context) == "99");
  CHECK(expand("a}b", context) == "a}b");
}

TEST_CASE("one parsed template expands anew for each request") {
  auto parsed = PlaceholderTemplate::parse("req-{seq}");
  REQUIRE(parsed.has_value());
  PlaceholderContext context;
  context.seq = 1;
  CHECK(parsed->expand(context) == "req-1");
  context.seq = 2;
  CHECK(parsed->expand(context) == "req-2");
}

TEST_CASE("{now_ms} is the wall clock in milliseconds") {
  PlaceholderContext context;
  const int64_t before = now_ms();
  const std::string text = expand("{now_ms}", context);
  const int64_t after = now_ms();
  const int64_t value = std::stoll(text);
  CHECK(value >= before);
  CHECK(value <= after);
}

TEST_CASE("{now_s} is the wall clock in seconds with six decimals") {
  PlaceholderContext context;
  const int64_t before = now_ms();
  const std::string text = expand("{now_s}", context);
  const int64_t after = now_ms();
  REQUIRE(text.size() > 7);
  CHECK(text[text.size() - 7] == '.');
  const double value = std::stod(text);
  CHECK(value * 1000 >= static_cast<double>(before) - 1);
  CHECK(value * 1000 <= static_cast<double>(after) + 1);
}

TEST_CASE("{window_s} is the window in seconds, as short as exact") {
  PlaceholderContext context;
  for (const auto& [window_ms, seconds] : {std::pair<int64_t, const char*>{2000, "2"},
                                           {500, "0.5"},
                                           {1250, "1.25"},
                                           {1, "0.001"},
                                           {60'000, "60"},
                                           {0, "0"}}) {
    context.window_ms = window_ms;
    CHECK(expand("{window_s}", context) == seconds);
    CHECK(rlcheck::engine::seconds_text(window_ms) == seconds);
  }
  context.window_ms = 2000;
  CHECK(expand("{window_ms}:{window_s}", context) == "2000:2");
}

TEST_CASE("{uuid} draws a fresh v4 UUID from the context generator") {
  ClientRng rng(7);
  PlaceholderContext context;
  context.rng = &rng;
  const std::string first = expand("{uuid}", context);
  const std::string second = expand("{uuid}", context);
  CHECK(looks_like_uuid_v4(first));
  CHECK(looks_like_uuid_v4(second));
  CHECK(first != second);

  ClientRng same_seed(7);
  PlaceholderContext replay;
  replay.rng = &same_seed;
  CHECK(expand("id={uuid}", replay) == "id=" + first);
}

TEST_CASE("an unknown placeholder is an error naming it") {
  for (const char* text : {"{bogus}", "x{limits}", "{}", "{LIMIT}", "{ seq}"}) {
    CAPTURE(text);
    auto parsed = PlaceholderTemplate::parse(text);
    REQUIRE_FALSE(parsed.has_value());
    CHECK(mentions(parsed.error(), "unknown placeholder"));
  }
  CHECK(mentions(PlaceholderTemplate::parse("{bogus}").error(), "{bogus}"));
}

TEST_CASE("an unclosed placeholder is an error") {
  for (const char* text : {"{limit", "abc{", "{seq}-{run"}) {
    CAPTURE(text);
    auto parsed = PlaceholderTemplate::parse(text);
    REQUIRE_FALSE(parsed.has_value());
    CHECK(mentions(parsed.error(), "unclosed"));
  }
}

TEST_CASE("a client's generator, made when first drawn from, draws what its seed always drew") {
  ClientRng lazy(42);
  std::mt19937_64 eager(42);
  for (int i = 0; i < 3; ++i)
    CHECK(lazy.get()() == eager());
  CHECK(&lazy.get() == &lazy.get());
}

TEST_CASE("random_uuid has the RFC 4122 version-4 shape") {
  std::mt19937_64 rng(12345);
  std::set<std::string> seen;
  for (int i = 0; i < 200; ++i) {
    const std::string uuid = random_uuid(rng);
    CAPTURE(uuid);
    CHECK(looks_like_uuid_v4(uuid));
    seen.insert(uuid);
  }
  CHECK(seen.size() == 200);
}

TEST_CASE("random_uuid is reproducible from the seed and differs across seeds") {
  std::mt19937_64 a(42), b(42), c(43);
  for (int i = 0; i < 5; ++i) {
    const std::string from_a = random_uuid(a);
    CHECK(from_a == random_uuid(b));
    CHECK(from_a != random_uuid(c));
  }
}

TEST_CASE("{id} is the identity the request speaks for, as it is given") {
  const auto parsed = rlcheck::engine::PlaceholderTemplate::parse("/api?user={id}");
  REQUIRE(parsed.has_value());
  rlcheck::engine::PlaceholderContext context;
  context.seq = 10;
  CHECK(parsed->expand(context) == "/api?user=0");
  context.identity = 2;
  CHECK(parsed->expand(context) == "/api?user=2");
}

TEST_CASE("a template bound to a run's fixed values expands as the template does") {
  PlaceholderContext fixed;
  fixed.limit = 25;
  fixed.window_ms = 1500;
  fixed.run = 3;
  ClientRng rng(11), same_rng(11);
  for (const std::string text : {"{limit}", "{window_ms}:{window_s}", "k:{run}:{seq}",
                                 "{id}-{limit}-{uuid}", "plain", "{seq}{seq}", ""}) {
    CAPTURE(text);
    auto parsed = PlaceholderTemplate::parse(text);
    REQUIRE(parsed.has_value());
    const PlaceholderTemplate bound = parsed->bound(fixed);
    PlaceholderContext request = fixed;
    request.seq = 4242;
    request.identity = 7;
    request.rng = &rng;
    PlaceholderContext same_request = request;
    same_request.rng = &same_rng;
    CHECK(bound.expand(request) == parsed->expand(same_request));
  }
  const auto fixed_only = PlaceholderTemplate::parse("{limit}/{window_ms}/{run}/{window_s}");
  REQUIRE(fixed_only.has_value());
  CHECK_FALSE(fixed_only->is_constant());
  CHECK(fixed_only->bound(fixed).is_constant());
  CHECK(fixed_only->bound(fixed).expand({}) == "25/1500/3/1.5");
}

TEST_CASE("expand_to writes what expand does, or says it cannot") {
  ClientRng rng(3);
  const RequestClock clock{.virtual_unix_ns = 1'700'000'000'123'456'789, .skew_ns = 0};
  PlaceholderContext context{.limit = 25,
                             .window_ms = 60'000,
                             .run = 3,
                             .seq = 417,
                             .identity = 9,
                             .rng = &rng,
                             .clock = &clock};
  for (const char* text :
       {"ab12:{run}:{seq}", "{limit}/{window_ms}", "id-{id}", "{now_ms}", "plain", ""}) {
    CAPTURE(text);
    auto parsed = PlaceholderTemplate::parse(text);
    REQUIRE(parsed.has_value());
    char out[64];
    const size_t length = parsed->expand_to(context, out, sizeof out);
    REQUIRE(length != std::string::npos);
    CHECK(std::string(out, length) == parsed->expand(context));
    // One byte short: it says so rather than writing past the end.
    if (length > 0)
      CHECK(parsed->expand_to(context, out, length - 1) == std::string::npos);
  }
  for (const char* text : {"{uuid}", "{now_s}", "{window_s}"}) {
    CAPTURE(text);
    char out[64];
    CHECK(PlaceholderTemplate::parse(text)->expand_to(context, out, sizeof out) ==
          std::string::npos);
  }
}
