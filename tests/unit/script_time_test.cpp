// Finding a script's call to Redis TIME, which --virtual-clock refuses.

#include <doctest/doctest.h>

#include "redis/builtin_scripts.hpp"
#include "redis/script_time.hpp"

using rlcheck::redis::line_calling_time;

TEST_CASE("line_calling_time: a TIME literal in any quoting, on its line") {
  CHECK(line_calling_time("local t = redis.call('TIME')") == 1);
  CHECK(line_calling_time("local a = 1\nlocal t = redis.call(\"time\")\n") == 2);
  CHECK(line_calling_time("\n\nlocal t = redis.pcall([[Time]])") == 3);
  CHECK(line_calling_time("local t = redis.call([==[TIME]==])") == 1);
  CHECK(line_calling_time("local s = [[\n\n]]\nlocal t = redis.call('TIME')") == 4);
}

TEST_CASE("line_calling_time: comments, other words and identifiers are not calls") {
  CHECK_FALSE(line_calling_time("-- uses redis.call('TIME') no more\nreturn 1"));
  CHECK_FALSE(line_calling_time("--[[ redis.call('TIME')\n]] return 1"));
  CHECK_FALSE(line_calling_time("--[==[ ]] 'TIME' ]==] return 1"));
  CHECK_FALSE(line_calling_time("local time = tonumber(ARGV[3])\nreturn time"));
  CHECK_FALSE(line_calling_time("redis.call('SET', 'TIMEOUT', 1)"));
  CHECK_FALSE(line_calling_time("local s = 'it\\'s TIME'"));
  CHECK_FALSE(line_calling_time("local s = 'unterminated"));
  CHECK_FALSE(line_calling_time(""));
}

TEST_CASE("line_calling_time: the built-in scripts that read Redis's clock are found") {
  using namespace rlcheck::redis;
  for (const std::string_view lua :
       {k_sliding_window_lua, k_token_bucket_lua, k_gcra_lua, k_sliding_counter_lua}) {
    CHECK(line_calling_time(lua).has_value());
  }
  CHECK_FALSE(line_calling_time(k_fixed_first_hit_lua).has_value());
}
