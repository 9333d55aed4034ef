// --audit auto|batch|stream: whether a run's records are kept and audited after it, or audited
// as they come and dropped (checks/stream_audit.hpp), and what rules the stream out.

#include <optional>
#include <string>

#include <fmt/format.h>

#include "base/exit_code.hpp"
#include "cli/raw_options.hpp"

namespace rlcheck::cli {
namespace {

// Why this test's runs must be audited over all their records (nullopt: they can stream).
std::optional<std::string> stream_refusal(bool http, const config::Config& config) {
  // First: a cap has no window, so the refusal below for one would mislead.
  if (config.checks.contract == "concurrency")
    return "--contract concurrency: requests in progress are counted over the whole run";
  if (http && !(config.checks.limit_given && config.checks.window_given))
    return "http without --limit and --window: the endpoint's are read from its replies after "
           "the runs";
  if (config.command == config::Command::probe)
    return "probe: its phases are judged over their records";
  if (config.load.virtual_clock)
    return "--virtual-clock: the virtual schedule is audited over the whole run";
  if (config.workers.distributed())
    return "--workers: the workers ship their records to be merged";
  if (!config.faults.faults.empty())
    return "--fault: what each fault window saw is measured over the whole run";
  if (config.checks.verify_retry_after)
    return "--verify-retry-after: the retry needs the run's last denials";
  if (!config.load.clock_skews.empty())
    return "--clock-skew: the worst span's admissions are tallied after the run";
  if (config.find_max.enabled)
    return "--find-max: its steps are short runs";
  if (config.load.costs.weighted())
    return "--cost: every unit is counted after the run";
  if (!config.checks.parts.empty())
    return "several --contract: each denial is judged against every part after the run";
  if (config.checks.slow_down)
    return "--contract slow-down: each request's delay is judged against its window's count";
  if (config.checks.ban)
    return "--contract ban: each denial is judged against the bans the whole run can prove";
  const std::string contract = config.checks.contract.value_or("");
  if (contract == "queue" || contract == "sliding-counter")
    return fmt::format("--contract {}: audited over the whole run", contract);
  if (config.checks.anchor.value_or("") == "first-hit")
    return "--anchor first-hit: audited over the whole run";
  if (config.checks.refill && config.checks.refill->steps)
    return "--refill ...,steps: audited over the whole run";
  return std::nullopt;
}

}  // namespace

void fill_audit(const RawOptions& raw, bool http, config::Config& config) {
  const std::string mode = raw.audit.value_or("auto");
  if (mode != "auto" && mode != "batch" && mode != "stream")
    throw base::usage_error(fmt::format("--audit: expected auto, batch or stream, got '{}'", mode));
  const int64_t requests = config.load.requests;
  const std::optional<std::string> refusal = stream_refusal(http, config);
  if (mode == "stream" && refusal)
    throw base::usage_error(fmt::format("--audit stream: not with {}", *refusal));
  const bool stream = mode == "stream" ||
                      (mode == "auto" && !refusal && requests > config::k_stream_above_requests);
  if (!stream && requests > config::k_max_kept_requests) {
    throw base::usage_error(fmt::format(
        "--audit: the run plans {} requests, more than the {} a batch audit keeps; {}", requests,
        config::k_max_kept_requests,
        refusal ? fmt::format("--audit stream would keep none, but not with {}", *refusal)
                : std::string("--audit stream keeps none")));
  }
  config.checks.audit = stream ? config::AuditMode::stream : config::AuditMode::batch;
  config.checks.audit_given = mode == "stream";
}

}  // namespace rlcheck::cli
