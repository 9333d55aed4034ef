#pragma once
// The contract checks: each has a stable id and is pass, fail or skip, with the figure.

#include <string>
#include <vector>

#include "checks/run_stats.hpp"

namespace rlcheck::checks {

enum class Status { pass, fail, skip };
enum class Verdict { pass, fail, error };

struct CheckResult {
  std::string id;  // "limit", "exact", "retry-after-present", ...
  Status status = Status::skip;
  std::string detail;  // the figure that decided it, in one line
};

struct CheckParams {
  int64_t limit = 10;
  int64_t requests = 200;
  int64_t window_ms = 60'000;
  int64_t max_retry_after_ms = 60'000;
  int64_t max_errors = 0;  // per run
  bool exact = false;
  bool key_ttl_applies = true;       // redis targets have keys to inspect
  bool retry_hint_optional = false;  // http --no-require-retry-after
};

std::vector<CheckResult> evaluate_checks(const std::vector<RunStats>& runs,
                                         const CheckParams& params);

// error when the errors check failed (the test itself is in doubt), else fail when any
// check failed, else pass.
Verdict verdict_of(const std::vector<CheckResult>& checks);

const char* status_name(Status status);
const char* verdict_name(Verdict verdict);

}  // namespace rlcheck::checks
