#pragma once
// The promise a target is audited against: --contract, else the built-in strategy's own, else
// (HTTP, user scripts, the counter strategies) a sliding window of the limit.

#include <optional>
#include <string>

#include "checks/run_stats.hpp"
#include "config/config.hpp"

namespace rlcheck::app {

struct ContractChoice {
  std::string name;  // sliding, fixed, token-bucket, gcra
  int64_t burst = 0;
  config::Rate refill;
  checks::AuditParams audit;
};

// `strategy` unset for HTTP; `limit` as configured or advertised.
ContractChoice choose_contract(const config::Config& config,
                               std::optional<config::Strategy> strategy, int64_t limit);

}  // namespace rlcheck::app
