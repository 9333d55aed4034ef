#include "checks/stepped_bucket.hpp"

#include <algorithm>

namespace rlcheck::checks {
namespace {

AdmissionRule smooth_with_burst(const AdmissionRule& rule, int64_t burst) {
  AdmissionRule smooth = rule;
  smooth.burst = std::max<int64_t>(0, burst);
  smooth.step_tokens = 0;
  smooth.step_ns = 0;
  return smooth;
}

}  // namespace

AdmissionRule most_admitting(const AdmissionRule& rule) {
  if (!rule.stepped())
    return rule;
  return smooth_with_burst(rule, rule.burst + rule.step_tokens);
}

AdmissionRule least_holding(const AdmissionRule& rule) {
  if (!rule.stepped())
    return rule;
  return smooth_with_burst(rule, rule.burst - rule.step_tokens);
}

}  // namespace rlcheck::checks
