#include "app/probe_command.hpp"

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "base/exit_code.hpp"
#include "cli/command_line.hpp"
#include "engine/interrupt.hpp"
#include "judging/advertised_params.hpp"
#include "probe/probe_sequence.hpp"
#include "targets/target_kind.hpp"

namespace rlcheck::app {

checks::InferredContract infer_contract(ProbeSender& target, ProbeSender::Clock::time_point started,
                                        ProbeSender::Clock::time_point deadline) {
  return probe::Sequence(target, started, deadline).run();
}

namespace {

// Some denial carried a retry hint (Retry-After, a RateLimit reset): else the endpoint gives
// none, and flags pasted into `rlcheck http` must not ask for one.
bool any_denial_hinted(const std::vector<engine::RunResult>& results) {
  for (const engine::RunResult& result : results) {
    for (const engine::RequestRecord& record : result.records) {
      if (record.outcome == engine::Outcome::denied && (record.retry_ms || record.hint_invalid))
        return true;
    }
  }
  return false;
}

// --cost N: every request cost N units, so what was counted in requests is N times as many
// units. A window admitted k requests of N: its limit in units is kN to kN + N - 1, and kN
// judges alike any run whose requests all cost N.
void count_in_units(checks::InferredContract& inferred, int64_t cost) {
  inferred.cost = cost;
  // A cap on requests in progress counts requests, whatever they cost.
  if (cost == 1 || inferred.algorithm == "concurrency" ||
      (!inferred.limit && !inferred.burst && !inferred.refill_per_s))
    return;
  const auto times = [cost](std::optional<int64_t>& count) {
    if (count)
      *count *= cost;
  };
  times(inferred.limit);
  times(inferred.burst);
  if (inferred.refill_per_s) {
    *inferred.refill_per_s *= static_cast<double>(cost);
    inferred.refill_interval.low_per_s *= static_cast<double>(cost);
    inferred.refill_interval.high_per_s *= static_cast<double>(cost);
  }
  if (inferred.second)
    times(inferred.second->limit);
  inferred.notes.push_back(fmt::format(
      "every request cost {} units (--cost): limits are in units, the requests admitted times {}; "
      "the true limit may be up to {} units more",
      cost, cost, cost - 1));
}

// Whether a contract in units can be judged by a pasted run (the audits count units in sliding
// and clock-anchored fixed windows; a bucket's burst in units is only known to within a cost).
bool units_judged(const checks::InferredContract& inferred) {
  return inferred.algorithm == "sliding" ||
         (inferred.algorithm == "fixed" && inferred.anchor != "first-hit");
}

// The flags that name what was found: the first contract alone as it always was, or, with a
// second limit, both as --contract parts; --cost N when requests cost N.
std::string flags_for(checks::InferredContract& inferred,
                      const checks::AdvertisedContract& advertised) {
  std::string flags = checks::suggest_flags(inferred, advertised);
  if (flags.empty())
    return flags;
  if (inferred.cost > 1 && !units_judged(inferred)) {
    inferred.notes.push_back(fmt::format(
        "no flags: with --cost, a {} cannot be named in units exactly (a run's audits count "
        "units in sliding and clock-anchored fixed windows)",
        inferred.algorithm));
    return "";
  }
  if (inferred.second && inferred.second->outcome == "found") {
    const std::string second = checks::second_limit_spec(*inferred.second);
    if (second.empty())
      return "";
    flags = fmt::format("--contract {} --contract {}", checks::contract_spec(inferred, advertised),
                        second);
  }
  if (inferred.cost > 1)
    flags += fmt::format(" --cost {}", inferred.cost);
  return flags;
}

// The limiter is sent each request's cost: {cost} where the requests carry it (an endpoint's
// URL, header or body; a --script's --arg values), or a built-in strategy that takes one.
void refuse_cost_unsent(const config::Config& config, const ProbeSender& target) {
  if (!config.load.costs.weighted() || !target.where_written("{cost}").empty())
    return;
  throw base::usage_error(
      "--cost: probe sends each request's cost where {cost} stands (the URL, a header or the "
      "body; a --script's --arg), and there is none: without it the limiter counts requests");
}

}  // namespace

int run_probe(const config::Config& config) {
  const auto started = ProbeSender::Clock::now();
  const targets::TargetKind& kind = targets::kind_of(config);
  std::unique_ptr<ProbeSender> target = kind.probe_sender(config);
  report::ProbeReport report;
  report.mode = kind.command.name;
  report.target = target->describe();
  refuse_cost_unsent(config, *target);
  report.inferred = infer_contract(*target, started, started + config.probe.max_time);
  count_in_units(report.inferred, config.load.costs.weighted() ? config.load.costs.low : 1);
  // What the headers advertised before the sustained phase: its denials may name the second
  // limit, which is not the first one's to be judged by.
  const judging::AdvertisedParams advertised = judging::read_advertised_params(
      target->results(),
      report.inferred.second ? report.inferred.second->runs_before : target->results().size());
  report.advertised.limit = advertised.limit;
  report.advertised.window_s = advertised.window_s;
  // A window read off a timestamp reset may be a second either way (window_readings_s): the
  // reading nearest the measured window is the one to show and judge.
  if (const auto& measured = report.inferred.window_ms; measured && advertised.window_s) {
    for (const int64_t reading : advertised.window_readings_s) {
      if (std::llabs(reading * 1000 - *measured) <
          std::llabs(*report.advertised.window_s * 1000 - *measured))
        report.advertised.window_s = reading;
    }
  }
  report.judgement = checks::judge_advertised(report.inferred, report.advertised);
  report.flags = flags_for(report.inferred, report.advertised);
  if (!report.flags.empty()) {
    report.parts.push_back(checks::contract_spec(report.inferred, report.advertised));
    if (report.inferred.second && report.inferred.second->outcome == "found")
      report.parts.push_back(checks::second_limit_spec(*report.inferred.second));
  }
  // Where the kind's command can be told that denials carry no hint.
  if (!report.flags.empty() && !any_denial_hinted(target->results()) &&
      cli::option_kind(kind.command.name, "no-require-retry-after") != cli::OptionKind::none)
    report.flags += " --no-require-retry-after";
  if (config.load.virtual_clock) {
    report.virtual_clock = true;
    report.inferred.notes.push_back(
        "probed on a virtual clock: test with the same --virtual-clock and a schedule (--rate R "
        "--duration D, or --interval); a queue holds requests on the real clock, so none can be "
        "found this way");
  }
  report.requests = target->requests_sent();
  report.elapsed_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(ProbeSender::Clock::now() - started)
          .count();
  report.interrupted = target->interrupted() || engine::interrupted();
  base::ExitCode code = base::ExitCode::ok;
  if (report.interrupted)
    code = base::ExitCode::interrupted;
  else if (report.inferred.algorithm == "unknown")
    code = base::ExitCode::cannot_test;
  else if (report.judgement.matches == false)
    code = base::ExitCode::check_failed;
  report.exit_code = static_cast<int>(code);
  if (config.output.json)
    std::cout << report::probe_to_json(report).dump(2) << "\n";
  else
    std::cout << report::render_probe(report, config.output.quiet);
  std::cout.flush();
  return report.exit_code;
}

}  // namespace rlcheck::app
