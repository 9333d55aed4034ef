#include <doctest/doctest.h>

#include <string>

#include "config/strategy_name.hpp"

using rlcheck::config::parse_strategy;
using rlcheck::config::Strategy;
using rlcheck::config::strategy_name;
using rlcheck::config::strategy_names_list;

TEST_CASE("parse_strategy knows every strategy by its command-line name") {
  CHECK(parse_strategy("naive") == Strategy::naive);
  CHECK(parse_strategy("incr-expire") == Strategy::incr_expire);
  CHECK(parse_strategy("fixed-window") == Strategy::fixed_window);
  CHECK(parse_strategy("sliding-window") == Strategy::sliding_window);
  CHECK(parse_strategy("token-bucket") == Strategy::token_bucket);
  CHECK(parse_strategy("gcra") == Strategy::gcra);
}

TEST_CASE("lua is an alias of the sliding window") {
  CHECK(parse_strategy("lua") == Strategy::sliding_window);
  CHECK(strategy_name(Strategy::sliding_window) == "sliding-window");
}

TEST_CASE("parse_strategy rejects unknown and misspelled names") {
  CHECK_FALSE(parse_strategy("bogus").has_value());
  CHECK_FALSE(parse_strategy("").has_value());
  CHECK_FALSE(parse_strategy("Naive").has_value());
  CHECK_FALSE(parse_strategy("incr_expire").has_value());
  CHECK_FALSE(parse_strategy("script").has_value());  // spelled --script FILE
}

TEST_CASE("strategy_name is the inverse of parse_strategy") {
  for (Strategy s : {Strategy::naive, Strategy::incr_expire, Strategy::fixed_window,
                     Strategy::sliding_window, Strategy::token_bucket, Strategy::gcra}) {
    const std::string name(strategy_name(s));
    CAPTURE(name);
    CHECK(parse_strategy(name) == s);
    CHECK(std::string(strategy_names_list()).find(name) != std::string::npos);
  }
  CHECK(strategy_name(Strategy::script) == "script");
}

TEST_CASE("the list of names mentions the lua alias") {
  CHECK(std::string(strategy_names_list()).find("lua") != std::string::npos);
}
