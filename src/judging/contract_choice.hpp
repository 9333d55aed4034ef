#pragma once
// The promise a target is audited against: --contract (and --anchor), else the built-in
// strategy's own (incr-expire: fixed windows opened at the first hit), else (HTTP, user
// scripts, naive) a sliding window of the limit.

#include <optional>
#include <string>

#include "checks/run_stats.hpp"
#include "config/config.hpp"

namespace rlcheck::judging {

struct ContractChoice {
  std::string name;    // sliding, fixed, sliding-counter, token-bucket, gcra, queue, concurrency
  std::string anchor;  // fixed, sliding-counter: "clock" or "first-hit"; empty for the others
  int64_t burst = 0;   // token-bucket, gcra; a queue: its depth (audit.queue_depth) + 1
  config::Rate refill;
  checks::AuditParams audit;
};

// `strategy` unset for HTTP; `limit` as configured or advertised.
ContractChoice choose_contract(const config::Config& config,
                               std::optional<config::Strategy> strategy, int64_t limit);

}  // namespace rlcheck::judging
