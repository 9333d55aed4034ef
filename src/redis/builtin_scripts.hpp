#pragma once
// The Lua limiters of lua/, compiled in.

#include <string_view>

#include "config/config.hpp"

namespace rlcheck::redis {

extern const std::string_view k_sliding_window_lua;
extern const std::string_view k_token_bucket_lua;
extern const std::string_view k_gcra_lua;
extern const std::string_view k_sliding_counter_lua;
extern const std::string_view k_fixed_first_hit_lua;
extern const std::string_view k_leaky_queue_lua;
extern const std::string_view k_concurrency_lua;

struct BuiltinScript {
  std::string_view file_name;  // as in lua/
  std::string_view source;
};

// The script of a Lua strategy; empty source for strategies made of plain commands.
BuiltinScript builtin_script(config::Strategy strategy);

}  // namespace rlcheck::redis
