// --contract (one name, one spec with its parameters, or several parts), --consume-on-deny and
// --group-size.

#include <fmt/format.h>

#include "base/exit_code.hpp"
#include "cli/raw_options.hpp"
#include "config/config.hpp"
#include "config/contract_spec.hpp"
#include "config/strategy_name.hpp"

namespace rlcheck::cli {
namespace {

using base::usage_error;
using config::ContractSpec;

constexpr int64_t k_max_group_size = 10'000;

std::vector<ContractSpec> parse_specs(const RawOptions& raw) {
  std::vector<ContractSpec> specs;
  for (const std::string& text : raw.contracts) {
    auto spec = config::parse_contract_spec(text);
    if (!spec)
      throw usage_error(fmt::format("--contract: {}", spec.error()));
    specs.push_back(std::move(*spec));
  }
  return specs;
}

// A flag and the spec both giving a parameter, differently: one of them is a mistake.
template <typename T>
void agree(const char* flag, bool flag_given, const T& flag_value,
           const std::optional<T>& spec_value, const ContractSpec& spec) {
  if (flag_given && spec_value && !(*spec_value == flag_value)) {
    throw usage_error(
        fmt::format("{}: --contract {} gives it too, differently; give it once", flag, spec.text));
  }
}

// One spec with its parameters: the same as the flags it stands for.
void apply_single(const RawOptions& raw, const ContractSpec& spec, config::CheckConfig& checks) {
  agree("--limit", raw.limit.has_value(), checks.limit, spec.limit, spec);
  agree("--window", raw.window_given, checks.window, spec.window, spec);
  if (spec.limit) {
    checks.limit = *spec.limit;
    checks.limit_given = true;
  }
  if (spec.window) {
    checks.window = *spec.window;
    checks.window_given = true;
  }
  if (spec.anchor)
    checks.anchor = spec.anchor;
  if (spec.burst)
    checks.burst = spec.burst;
  if (spec.queue)
    checks.queue = spec.queue;
  agree("--nodelay", raw.nodelay.has_value(), raw.nodelay.value_or(0), spec.nodelay, spec);
  if (spec.nodelay)
    checks.nodelay = spec.nodelay;
  checks.slow_down = spec.slow_down;
  if (spec.refill)
    checks.refill = spec.refill;
  checks.ban = spec.ban;
  checks.ban_renews = spec.ban_renews;
  if (spec.ban && raw.anchor && *raw.anchor != "clock") {
    throw usage_error(
        fmt::format("--anchor {}: a ban's fixed windows are on the clock (--contract {})",
                    *raw.anchor, spec.text));
  }
}

}  // namespace

std::optional<std::string> read_contracts(const RawOptions& raw, config::CheckConfig& checks) {
  std::vector<ContractSpec> specs = parse_specs(raw);
  if (specs.empty())
    return std::nullopt;
  if (specs.size() == 1 && !specs.front().per_group && !specs.front().counts_requests) {
    apply_single(raw, specs.front(), checks);
    checks.contract = specs.front().name;
    return specs.front().name;
  }
  for (const ContractSpec& spec : specs) {
    if (spec.ban) {
      throw usage_error(fmt::format(
          "--contract {}: a ban locks the identity out of every limit, so it is a contract of "
          "its own, not a part of several",
          spec.text));
    }
    if (spec.name == "concurrency") {
      throw usage_error(fmt::format(
          "--contract {}: a concurrency cap counts requests in progress, not over time, so it is "
          "a contract of its own, not a part of several",
          spec.text));
    }
    if (spec.slow_down) {
      throw usage_error(fmt::format(
          "--contract {}: a slow-down delays rather than denies, so it is a contract of its own, "
          "not a part of several",
          spec.text));
    }
    if (spec.name == "queue") {
      throw usage_error(fmt::format(
          "--contract {}: a queue delays rather than denies, so it is a contract of its own, not "
          "a part of several",
          spec.text));
    }
    if (specs.size() > 1 && !spec.has_parameters()) {
      throw usage_error(
          fmt::format("--contract {}: with several contracts, each gives its parameters ({}:10/1s, "
                      "token-bucket:20,10/s)",
                      spec.text, spec.name));
    }
  }
  checks.parts = std::move(specs);
  checks.contract = checks.parts.front().name;
  return std::nullopt;
}

void fill_costs(const RawOptions& raw, config::Config& config) {
  if (raw.cost && raw.cost_dist)
    throw usage_error("--cost-dist: give --cost or --cost-dist, not both");
  if (!raw.cost && !raw.cost_dist)
    return;
  const char* flag = raw.cost ? "--cost" : "--cost-dist";
  auto plan = raw.cost ? config::parse_cost(*raw.cost) : config::parse_cost_dist(*raw.cost_dist);
  if (!plan)
    throw usage_error(fmt::format("{}: {}", flag, plan.error()));
  plan->seed = config.load.identity_seed;
  if (!plan->weighted())
    return;
  // Each unit is counted as an admission of its own by the audits.
  const double units = plan->mean() * static_cast<double>(config.load.requests);
  if (units > static_cast<double>(config::k_max_kept_requests)) {
    throw usage_error(fmt::format(
        "{}: about {:.0f} units a run ({} requests of {:.1f} on average); the audits count up to "
        "{} units a run",
        flag, units, config.load.requests, plan->mean(), config::k_max_kept_requests));
  }
  const auto refuse = [&](const std::string& contract) {
    throw usage_error(
        fmt::format("{}: costs are counted by every contract but a queue or a concurrency cap, "
                    "whose places are requests: {}",
                    flag, contract));
  };
  const auto& checks = config.checks;
  for (const ContractSpec& part : checks.parts) {
    if (part.name == "queue")
      refuse(part.text);
  }
  if (checks.parts.empty()) {
    const std::string contract = checks.contract.value_or("");
    if (contract == "queue" || contract == "concurrency")
      refuse(contract);
  }
  if (checks.ban)
    throw usage_error(fmt::format("{}: a ban counts requests, whatever they cost", flag));
  if (checks.slow_down)
    throw usage_error(fmt::format("{}: a slow-down counts requests, whatever they cost", flag));
  // The probe counts admissions and reads them in units: every request must cost the same.
  if (config.command == config::Command::probe &&
      (!plan->choices.empty() || plan->low != plan->high))
    throw usage_error(fmt::format(
        "{}: probe sends one cost throughout (--cost N): with costs that vary, the admissions it "
        "counts would not say how many units a limit holds",
        flag));
  config.load.costs = *std::move(plan);
}

void refuse_costs_for_strategies(const config::Config& config) {
  if (!config.load.costs.weighted())
    return;
  const bool compare = config.command == config::Command::compare;
  std::vector<config::Strategy> strategies = config.compare_strategies;
  if (!compare)
    strategies = {config.redis.strategy};
  for (const config::Strategy strategy : strategies) {
    if (strategy == config::Strategy::script || config::strategy_takes_cost(strategy))
      continue;
    throw usage_error(fmt::format(
        "--cost: the {} strategy's places are requests; every other built-in strategy takes a "
        "cost, as does your --script with {{cost}} among its --arg values",
        config::strategy_name(strategy)));
  }
}

void resolve_contract_parts(const RawOptions& raw, config::Config& config) {
  config::CheckConfig& checks = config.checks;
  if (raw.group_size) {
    if (*raw.group_size < 1 || *raw.group_size > k_max_group_size) {
      throw usage_error(fmt::format("--group-size: must be between 1 and {}, got {}",
                                    k_max_group_size, *raw.group_size));
    }
    config.load.group_size = *raw.group_size;
  }
  if (raw.consume_on_deny) {
    if (*raw.consume_on_deny != "none" && *raw.consume_on_deny != "checked") {
      throw usage_error(fmt::format("--consume-on-deny: expected none or checked, got '{}'",
                                    *raw.consume_on_deny));
    }
    if (checks.parts.size() < 2) {
      throw usage_error(
          "--consume-on-deny: only with several --contract (what a denial counts in the parts "
          "checked before the one that denied it)");
    }
    checks.consume_on_deny = *raw.consume_on_deny == "checked";
  }
  if (checks.parts.empty())
    return;
  if (config.command == config::Command::probe) {
    throw usage_error(
        "--contract: probe infers one contract; give several to redis, http or compare to "
        "audit them");
  }
  if (raw.anchor) {
    throw usage_error(
        "--anchor: with several --contract (or a group: part), give each part's anchor in it: "
        "fixed:100/1m@first-hit");
  }
  for (size_t p = 0; p < checks.parts.size(); ++p) {
    ContractSpec& part = checks.parts[p];
    const bool windowed =
        part.name == "sliding" || part.name == "fixed" || part.name == "sliding-counter";
    if (!part.limit)
      part.limit = windowed ? checks.limit : checks.burst.value_or(checks.limit);
    if (!part.window)
      part.window = checks.window;
    if (part.name == "fixed" || part.name == "sliding-counter")
      part.anchor = part.anchor.value_or("clock");
    if (!part.burst)
      part.burst = checks.burst.value_or(*part.limit);
    if (!part.refill)
      part.refill = checks.refill.value_or(config::Rate{*part.limit, *part.window});
    if (part.refill->steps) {
      throw usage_error(fmt::format(
          "--contract {}: a refill in steps is judged for one contract alone, not among several",
          part.text));
    }
    const bool counts_denials = checks.consume_on_deny && p + 1 < checks.parts.size();
    if (counts_denials && (part.anchor == "first-hit" || part.name == "sliding-counter")) {
      throw usage_error(fmt::format(
          "--consume-on-deny checked: a part that may count denials is read as sliding, fixed "
          "on the clock or a bucket; --contract {} is checked before another (put it last)",
          part.text));
    }
  }
  // The first part's limit and window stand in for --limit and --window where those were not
  // given: {limit} and {window_ms} in script arguments, URLs and reports.
  const ContractSpec& first = checks.parts.front();
  if (!raw.limit)
    checks.limit = *first.limit;
  if (!raw.window_given)
    checks.window = *first.window;
  checks.limit_given = true;
  checks.window_given = true;
  checks.anchor = first.anchor;
}

}  // namespace rlcheck::cli
