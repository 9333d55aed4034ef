#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "http/status_set.hpp"

using rlcheck::http::StatusSet;

namespace {

StatusSet parsed(std::string_view text) {
  auto set = StatusSet::parse(text);
  REQUIRE_MESSAGE(set.has_value(), text);
  return *set;
}

struct Rejected {
  std::string text;
  std::string reason;  // the error must contain this
};

}  // namespace

TEST_CASE("StatusSet::parse reads a range and a single status") {
  const StatusSet set = parsed("200-299,304");
  CHECK(set.contains(200));
  CHECK(set.contains(250));
  CHECK(set.contains(299));
  CHECK(set.contains(304));
  CHECK_FALSE(set.contains(199));
  CHECK_FALSE(set.contains(300));
  CHECK_FALSE(set.contains(303));
  CHECK_FALSE(set.contains(305));
  CHECK_FALSE(set.contains(429));
}

TEST_CASE("StatusSet::parse reads one status as exactly that status") {
  const StatusSet set = parsed("429");
  CHECK(set.contains(429));
  for (int status : {100, 200, 428, 430, 503, 599})
    CHECK_FALSE(set.contains(status));
}

TEST_CASE("StatusSet::parse takes inclusive ranges, one-element ranges and the 100-599 edges") {
  const StatusSet all = parsed("100-599");
  for (int status = 100; status <= 599; ++status)
    CHECK(all.contains(status));
  CHECK_FALSE(all.contains(99));
  CHECK_FALSE(all.contains(600));

  const StatusSet one = parsed("503-503");
  CHECK(one.contains(503));
  CHECK_FALSE(one.contains(502));
  CHECK_FALSE(one.contains(504));

  const StatusSet several = parsed("429,503,500-502");
  for (int status : {429, 500, 501, 502, 503})
    CHECK(several.contains(status));
  for (int status : {428, 430, 499, 504})
    CHECK_FALSE(several.contains(status));
}

TEST_CASE("StatusSet::parse accepts overlapping and repeated items") {
  const StatusSet set = parsed("200-210,205-220,200");
  CHECK(set.contains(200));
  CHECK(set.contains(215));
  CHECK(set.contains(220));
  CHECK_FALSE(set.contains(221));
}

TEST_CASE("StatusSet::parse rejects what is not a list of statuses 100-599, naming the item") {
  const std::vector<Rejected> cases{
      {"abc", "'abc' is not a status 100-599"},
      {"99", "'99' is not a status 100-599"},
      {"600", "'600' is not a status 100-599"},
      {"0", "'0' is not a status 100-599"},
      {"-1", "is not a status 100-599"},
      {"300-200", "'300-200' is an empty range"},
      {"", "'' is not a status 100-599"},
      {"200,", "'' is not a status 100-599"},  // a trailing comma leaves an empty item
      {",200", "'' is not a status 100-599"},
      {"200,,300", "'' is not a status 100-599"},
      {"200-", "'' is not a status 100-599"},
      {"-299", "'' is not a status 100-599"},
      {"200-600", "'600' is not a status 100-599"},
      {"200-299-300", "'299-300' is not a status 100-599"},
      {" 200", "' 200' is not a status 100-599"},  // no whitespace in the list
      {"200 ", "'200 ' is not a status 100-599"},
      {"+200", "'+200' is not a status 100-599"},
      {"2xx", "'2xx' is not a status 100-599"},
      {"200.5", "'200.5' is not a status 100-599"},
      {"99999999999", "is not a status 100-599"},  // out of int range
      {"200,abc", "'abc' is not a status 100-599"},
  };
  for (const Rejected& c : cases) {
    CAPTURE(c.text);
    auto set = StatusSet::parse(c.text);
    REQUIRE_FALSE(set.has_value());
    CAPTURE(set.error());
    CHECK(set.error().find(c.reason) != std::string::npos);
  }
}

TEST_CASE("StatusSet::contains is false outside 0-599 without reading out of range") {
  const StatusSet set = parsed("100-599");
  CHECK_FALSE(set.contains(-1));
  CHECK_FALSE(set.contains(-1000));
  CHECK_FALSE(set.contains(0));
  CHECK_FALSE(set.contains(600));
  CHECK_FALSE(set.contains(999));
  CHECK_FALSE(set.contains(1'000'000));
}

TEST_CASE("StatusSet::overlaps is true exactly when a status is in both sets") {
  const StatusSet allowed = parsed("200-299");
  const StatusSet denied = parsed("429");
  CHECK_FALSE(allowed.overlaps(denied));
  CHECK_FALSE(denied.overlaps(allowed));

  const StatusSet touching = parsed("299-300");  // shares only 299
  CHECK(allowed.overlaps(touching));
  CHECK(touching.overlaps(allowed));

  const StatusSet adjacent = parsed("300-399");  // starts right after, shares nothing
  CHECK_FALSE(allowed.overlaps(adjacent));

  CHECK(denied.overlaps(parsed("400-499")));
  CHECK(denied.overlaps(parsed("200,429")));
  CHECK(denied.overlaps(denied));
  CHECK_FALSE(parsed("429").overlaps(parsed("428,430")));
}
