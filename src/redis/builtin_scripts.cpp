#include "redis/builtin_scripts.hpp"

namespace rlcheck::redis {

BuiltinScript builtin_script(config::Strategy strategy) {
  switch (strategy) {
    case config::Strategy::sliding_window:
      return {"sliding_window.lua", k_sliding_window_lua};
    case config::Strategy::token_bucket:
      return {"token_bucket.lua", k_token_bucket_lua};
    case config::Strategy::gcra:
      return {"gcra.lua", k_gcra_lua};
    case config::Strategy::sliding_counter:
      return {"sliding_counter.lua", k_sliding_counter_lua};
    case config::Strategy::fixed_first_hit:
      return {"fixed_first_hit.lua", k_fixed_first_hit_lua};
    case config::Strategy::leaky_queue:
      return {"leaky_queue.lua", k_leaky_queue_lua};
    case config::Strategy::concurrency:
      return {"concurrency.lua", k_concurrency_lua};
    default:
      return {};
  }
}

}  // namespace rlcheck::redis
