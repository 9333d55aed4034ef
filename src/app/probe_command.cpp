#include "app/probe_command.hpp"

#include <cstdlib>
#include <iostream>

#include <fmt/format.h>

#include "app/probe_sequence.hpp"
#include "base/exit_code.hpp"
#include "engine/interrupt.hpp"
#include "runner/advertised_params.hpp"

namespace rlcheck::app {

checks::InferredContract infer_contract(ProbeTarget& target, ProbeTarget::Clock::time_point started,
                                        ProbeTarget::Clock::time_point deadline) {
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

}  // namespace

int run_probe(const config::Config& config) {
  const auto started = ProbeTarget::Clock::now();
  std::unique_ptr<ProbeTarget> target = config.http.urls.empty()
                                            ? runner::make_redis_probe_target(config)
                                            : runner::make_http_probe_target(config);
  report::ProbeReport report;
  report.mode = config.http.urls.empty() ? "redis" : "http";
  report.target = target->describe();
  report.inferred = infer_contract(*target, started, started + config.probe.max_time);
  const runner::AdvertisedParams advertised = runner::read_advertised_params(target->results());
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
  report.flags = checks::suggest_flags(report.inferred, report.advertised);
  if (report.mode == "http" && !report.flags.empty() && !any_denial_hinted(target->results()))
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
      std::chrono::duration_cast<std::chrono::milliseconds>(ProbeTarget::Clock::now() - started)
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
