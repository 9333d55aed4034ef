#include "judging/contract_choice.hpp"

#include <algorithm>
#include <cmath>

namespace rlcheck::judging {
namespace {

using namespace std::chrono_literals;

// Limiters commonly read their clock in milliseconds (Redis TIME in a script, Date.now()).
constexpr auto k_clock_resolution = 1ms;

std::string own_contract(std::optional<config::Strategy> strategy) {
  if (strategy == config::Strategy::fixed_window || strategy == config::Strategy::incr_expire ||
      strategy == config::Strategy::fixed_first_hit)
    return "fixed";
  if (strategy == config::Strategy::leaky_queue)
    return "queue";
  if (strategy == config::Strategy::concurrency)
    return "concurrency";
  if (strategy == config::Strategy::token_bucket)
    return "token-bucket";
  if (strategy == config::Strategy::gcra)
    return "gcra";
  if (strategy == config::Strategy::sliding_counter)
    return "sliding-counter";
  return "sliding";
}

// INCR + EXPIRE on the first hit: its window opens with the first request after the last
// one expired, not on the clock's boundaries.
std::string own_anchor(std::optional<config::Strategy> strategy) {
  return strategy == config::Strategy::incr_expire || strategy == config::Strategy::fixed_first_hit
             ? "first-hit"
             : "clock";
}

checks::AdmissionRule rule_for(const std::string& name, const std::string& anchor, int64_t limit,
                               config::Nanos window, int64_t burst, const config::Rate& refill) {
  checks::AdmissionRule rule;
  rule.kind = checks::contract_kind(name, anchor).value_or(checks::AdmissionRule::Kind::sliding);
  rule.limit = limit;
  rule.window_ns = window.count();
  rule.burst = burst;
  rule.tokens_per_ns =
      static_cast<double>(refill.tokens) / static_cast<double>(refill.period.count());
  rule.clock_ns = std::chrono::nanoseconds(k_clock_resolution).count();
  rule.first_hit_anchor = anchor == "first-hit";
  if (refill.steps && rule.kind == checks::AdmissionRule::Kind::bucket) {
    rule.step_tokens = refill.tokens;
    rule.step_ns = refill.period.count();
    if (anchor == "clock")
      rule.ticks = checks::AdmissionRule::Ticks::clock;
    else if (anchor == "first-hit")
      rule.ticks = checks::AdmissionRule::Ticks::first_hit;
  }
  return rule;
}

// How long a bucket refilling at `refill` takes to free one token, in whole ms up: a whole
// period when it refills in steps.
int64_t refill_interval_ms(const config::Rate& refill) {
  if (refill.steps)
    return config::to_milliseconds(refill.period);
  return static_cast<int64_t>(std::ceil(static_cast<double>(refill.period.count()) /
                                        static_cast<double>(refill.tokens) / 1e6));
}

// Under costs, the longest wait a request of `cost` units (at most the contract's capacity:
// a larger one never passes, and is told no wait) can honestly be told: a bucket refills its
// units one interval each; a sliding-window counter's estimate falls below L - c + 1 up to
// (c - 1) / L of a window into the next window. Windows and logs free it within a window.
int64_t longest_costly_wait_ms(const checks::AdmissionRule& rule, const config::Rate& refill,
                               int64_t cost) {
  const int64_t units = std::clamp<int64_t>(cost, 1, std::max<int64_t>(1, rule.capacity()));
  const int64_t window_ms = rule.window_ns / 1'000'000;
  if (rule.kind == checks::AdmissionRule::Kind::bucket)
    return units * refill_interval_ms(refill);
  if (rule.kind == checks::AdmissionRule::Kind::sliding_counter && rule.limit > 0)
    return window_ms + (window_ms * (units - 1) + rule.limit - 1) / rule.limit;
  return window_ms;
}

// Several contracts: each part's rule; hints are bounded by the longest part's wait.
void choose_parts(const config::Config& config, ContractChoice& choice) {
  const auto& parts = config.checks.parts;
  int64_t longest_ms = 0;
  for (size_t p = 0; p < parts.size(); ++p) {
    const config::ContractSpec& spec = parts[p];
    checks::ContractPart part;
    part.spec = spec.text;
    part.name = spec.name;
    part.per_group = spec.per_group;
    part.counts_requests = spec.counts_requests;
    part.counts_denials = config.checks.consume_on_deny && p + 1 < parts.size();
    part.rule = rule_for(spec.name, spec.anchor.value_or(""), *spec.limit, *spec.window,
                         *spec.burst, *spec.refill);
    part.rule.fresh_state = choice.audit.fresh_state;
    const bool bucket = part.rule.kind == checks::AdmissionRule::Kind::bucket;
    longest_ms = std::max(longest_ms, bucket ? refill_interval_ms(*spec.refill)
                                             : config::to_milliseconds(*spec.window));
    if (config.load.costs.weighted() && !spec.counts_requests) {
      longest_ms = std::max(
          longest_ms, longest_costly_wait_ms(part.rule, *spec.refill, config.load.costs.largest()));
    }
    choice.audit.parts.push_back(std::move(part));
  }
  choice.audit.group_size = config.load.group_size;
  if (!config.checks.max_retry_after)
    choice.audit.max_retry_after_ms = std::max(choice.audit.max_retry_after_ms, longest_ms);
  choice.audit.tolerance.window_ms = std::max(choice.audit.tolerance.window_ms, longest_ms);
}

// --contract ban: a denial may be told to wait out the whole ban.
void choose_ban(const config::Config& config, ContractChoice& choice) {
  const config::Nanos ban = *config.checks.ban;
  choice.audit.ban = checks::BanRule{ban.count(), config.checks.ban_renews};
  const int64_t ban_ms = config::to_milliseconds(ban);
  if (!config.checks.max_retry_after)
    choice.audit.max_retry_after_ms = std::max(choice.audit.max_retry_after_ms, ban_ms);
  choice.audit.tolerance.window_ms = std::max(choice.audit.tolerance.window_ms, ban_ms);
}

}  // namespace

ContractChoice choose_contract(const config::Config& config,
                               std::optional<config::Strategy> strategy, int64_t limit) {
  ContractChoice choice;
  choice.name = config.checks.contract.value_or(own_contract(strategy));
  if (choice.name == "fixed" || choice.name == "sliding-counter") {
    choice.anchor = config.checks.anchor.value_or(config.checks.contract ? std::string("clock")
                                                                         : own_anchor(strategy));
  }
  // A bucket in steps: where its ticks fall, when --anchor says.
  if (choice.name == "token-bucket" && config.checks.refill && config.checks.refill->steps)
    choice.anchor = config.checks.anchor.value_or("");
  choice.burst = config.checks.burst.value_or(limit);
  choice.refill = config.checks.refill.value_or(config::Rate{limit, config.checks.window});
  // A queue of B is, to arrivals, a bucket of B + 1 (one leaves at once, B wait).
  if (choice.name == "queue") {
    choice.audit.queue_depth = config.checks.queue.value_or(limit);
    choice.burst = *choice.audit.queue_depth + 1;
    choice.audit.queue_nodelay = config.checks.nodelay.value_or(0);
  }
  // A slow-down delays rather than denies: its rule is the window it counts in.
  if (const auto& slow = config.checks.slow_down) {
    checks::SlowDownRule& rule = choice.audit.slow_down.emplace();
    rule.after = slow->after;
    rule.window_ns = slow->window.count();
    rule.step_ns = slow->step.count();
    rule.max_ns = slow->max ? slow->max->count() : 0;
    rule.kind = slow->kind == "fixed"       ? checks::SlowDownRule::Kind::fixed
                : slow->kind == "first-hit" ? checks::SlowDownRule::Kind::first_hit
                                            : checks::SlowDownRule::Kind::sliding;
  }
  // A concurrency cap counts requests in progress: the limit is the cap, and no window applies.
  if (choice.name == "concurrency") {
    checks::ConcurrencyRule& cap = choice.audit.concurrency.emplace();
    cap.cap = limit;
    if (config.checks.hold)
      cap.hold_ns = config.checks.hold->count();
    cap.released_by_run = !config.redis.release_script_path.empty();
  }

  checks::AdmissionRule& rule = choice.audit.rule;
  rule = rule_for(choice.name, choice.anchor, limit, config.checks.window, choice.burst,
                  choice.refill);

  const int64_t window_ms = config::to_milliseconds(config.checks.window);
  choice.audit.identities = config.load.identities;
  choice.audit.max_retry_after_ms =
      config::to_milliseconds(config.checks.max_retry_after.value_or(config.checks.window));
  // A bucket (or queue) that is empty frees its next request one refill interval on: a hint that
  // long is honest, however short the window (which such a contract does not judge by).
  if (!config.checks.max_retry_after && rule.kind == checks::AdmissionRule::Kind::bucket) {
    choice.audit.max_retry_after_ms =
        std::max(choice.audit.max_retry_after_ms, refill_interval_ms(choice.refill));
  }
  if (!config.checks.max_retry_after && config.load.costs.weighted())
    choice.audit.max_retry_after_ms =
        std::max(choice.audit.max_retry_after_ms,
                 longest_costly_wait_ms(rule, choice.refill, config.load.costs.largest()));
  // Each hint's tolerance follows from its resolution (checks::hint_tolerance) and the window.
  choice.audit.tolerance.window_ms = window_ms;
  // Many hosts: any worker may ask for the HTML report worker 0 renders.
  choice.audit.timeline = !config.output.html_path.empty() || config.workers.distributed();
  // A fresh key per run (or --reset) starts empty; --exact says the user vouches for it.
  choice.audit.fresh_state =
      config.checks.exact || (strategy.has_value() && (!config.redis.key || config.redis.reset));
  rule.fresh_state = choice.audit.fresh_state;
  // --clock-skew: judged on rlcheck's clock, whatever window a skewed client named.
  choice.audit.clock_skews = config.load.clock_skews.size();
  choice.audit.own_clock_windows = !config.load.clock_skews.empty();
  if (config.checks.ban) {
    choose_ban(config, choice);
  }
  if (!config.checks.parts.empty())
    choose_parts(config, choice);
  choice.audit.weighted = config.load.costs.weighted();
  return choice;
}

}  // namespace rlcheck::judging
