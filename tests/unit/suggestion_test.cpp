#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "cli/suggestion.hpp"

using rlcheck::cli::closest_name;
using rlcheck::cli::did_you_mean;
using rlcheck::cli::edit_distance;

TEST_CASE("edit_distance counts insertions, deletions, substitutions and adjacent swaps") {
  CHECK(edit_distance("", "") == 0);
  CHECK(edit_distance("abc", "") == 3);
  CHECK(edit_distance("", "abc") == 3);
  CHECK(edit_distance("concurrency", "concurrency") == 0);
  CHECK(edit_distance("concurency", "concurrency") == 1);  // a letter left out
  CHECK(edit_distance("requestss", "requests") == 1);      // one too many
  CHECK(edit_distance("limot", "limit") == 1);             // one wrong
  CHECK(edit_distance("stratgey", "strategy") == 1);       // two swapped
  CHECK(edit_distance("kitten", "sitting") == 3);
  CHECK(edit_distance("ca", "abc") == 3);       // restricted: a swapped pair is not edited again
  CHECK(edit_distance("Redis", "redis") == 1);  // case counts here; closest_name ignores it
}

TEST_CASE("closest_name offers the nearest name only when it is close enough") {
  const std::vector<std::string> options{"requests", "concurrency", "runs",  "limit",
                                         "window",   "redis",       "reset", "report"};
  CHECK(closest_name("concurency", options) == "concurrency");
  CHECK(closest_name("reqests", options) == "requests");
  CHECK(closest_name("WINDOW", options) == "window");
  CHECK(closest_name("rnus", options) == "runs");
  CHECK_FALSE(closest_name("bogus-flag", options).has_value());
  CHECK_FALSE(closest_name("x", options).has_value());
  CHECK_FALSE(closest_name("", options).has_value());
  CHECK_FALSE(closest_name("concurrency", {}).has_value());
  // Short words allow one slip, not two: "rn" is not "runs".
  CHECK_FALSE(closest_name("rn", options).has_value());
}

TEST_CASE("closest_name breaks ties by the order of the candidates") {
  CHECK(closest_name("rese", {"reset", "reuse"}) == "reset");
  CHECK(closest_name("rese", {"reuse", "reset"}) == "reuse");
}

TEST_CASE("did_you_mean words the suggestion, or says nothing") {
  const std::vector<std::string> commands{"redis", "http", "compare", "serve", "run"};
  CHECK(did_you_mean("reds", commands) == "; did you mean redis?");
  CHECK(did_you_mean("concurency", {"concurrency"}, "--") == "; did you mean --concurrency?");
  CHECK(did_you_mean("nonsense", commands).empty());
}
