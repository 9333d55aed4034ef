#include "runner/retry_verification.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "checks/retry_accuracy.hpp"
#include "config/duration.hpp"

namespace rlcheck::runner {
namespace {

using Clock = std::chrono::steady_clock;
using engine::Outcome;
using engine::RequestRecord;

// Each identity's last request (by send instant), when it was a denial with a usable hint.
std::vector<RequestRecord> last_denials(engine::RecordView records) {
  std::map<uint32_t, RequestRecord> last;
  for (const RequestRecord& record : records) {
    if (record.outcome == Outcome::error)
      continue;
    auto [it, inserted] = last.try_emplace(record.identity, record);
    if (!inserted && record.sent_ns >= it->second.sent_ns)
      it->second = record;
  }
  std::vector<RequestRecord> denials;
  for (const auto& [identity, record] : last) {
    if (record.outcome == Outcome::denied && checks::usable_hint_ms(record))
      denials.push_back(record);
  }
  return denials;
}

}  // namespace

checks::RetryVerification verify_retry_after(engine::ClientFactory& factory,
                                             const engine::RunResult& result,
                                             const config::LoadConfig& load, int run,
                                             std::chrono::milliseconds max_wait,
                                             const std::function<void(int64_t wait_ms)>& on_wait,
                                             std::vector<RequestRecord>& retry_records) {
  checks::RetryVerification verification;
  verification.run = run;
  auto denials = last_denials(result.records);
  if (denials.empty()) {
    verification.skip_reason =
        fmt::format("no identity ended run {} denied with a retry hint to verify", run);
    return verification;
  }
  const auto shortest =
      std::min_element(denials.begin(), denials.end(), [](const auto& a, const auto& b) {
        return *checks::usable_hint_ms(a) < *checks::usable_hint_ms(b);
      });
  const int64_t shortest_ms = *checks::usable_hint_ms(*shortest);
  // Under the virtual clock waiting costs nothing: every hint is taken at its word.
  std::erase_if(denials, [&](const RequestRecord& record) {
    return !result.virtual_clock && *checks::usable_hint_ms(record) > max_wait.count();
  });
  if (denials.empty()) {
    verification.told_ms = shortest_ms;
    verification.skip_reason = fmt::format("told {}ms, more than --max-retry-after {}; not waited",
                                           shortest_ms, config::format_duration(max_wait));
    return verification;
  }
  // The identity told to come back soonest: the shortest honest wait.
  const auto due_of = [&](const RequestRecord& record) {
    return result.start + std::chrono::nanoseconds(record.replied_ns) +
           std::chrono::milliseconds(*checks::usable_hint_ms(record));
  };
  const RequestRecord chosen =
      *std::min_element(denials.begin(), denials.end(),
                        [&](const auto& a, const auto& b) { return due_of(a) < due_of(b); });
  verification.identity = chosen.identity;
  verification.told_ms = *checks::usable_hint_ms(chosen);

  const Clock::time_point due = result.virtual_clock ? Clock::now() : due_of(chosen);
  if (on_wait && !result.virtual_clock) {
    on_wait(std::max<int64_t>(
        0, std::chrono::duration_cast<std::chrono::milliseconds>(due - Clock::now()).count()));
  }

  // One request, for the chosen identity, numbered after every request of the run.
  config::LoadConfig retry;
  retry.requests = 1;
  retry.concurrency = 1;
  retry.threads = 1;
  retry.timeout = load.timeout;
  retry.identities = load.identities;
  retry.only_identity = chosen.identity;  // whatever the run's distribution drew for its seq
  retry.not_before = due;                 // connected before, so the request leaves when due
  if (result.virtual_clock) {
    // The retry's virtual instant is exactly when the hint said: the reply's plus the hint.
    retry.virtual_clock = true;
    retry.virtual_origin_ns = result.start_wall_ns + chosen.replied_ns +
                              *checks::usable_hint_ms(chosen) * int64_t{1'000'000};
  }
  uint64_t next_seq = 0;
  for (const RequestRecord& record : result.records)
    next_seq = std::max(next_seq, record.seq + 1);
  retry.first_seq = next_seq;
  const engine::RunResult answer = engine::execute_run(factory, retry);
  if (answer.records.empty() || answer.interrupted) {
    verification.interrupted = answer.interrupted;
    verification.skip_reason = "interrupted while retrying";
    return verification;
  }
  const RequestRecord record = answer.records.front();
  retry_records.push_back(record);
  verification.waited_ms =
      result.virtual_clock
          ? (answer.start_wall_ns + record.sent_ns - (result.start_wall_ns + chosen.replied_ns)) /
                1'000'000
          : std::chrono::duration_cast<std::chrono::milliseconds>(
                answer.start + std::chrono::nanoseconds(record.sent_ns) -
                (result.start + std::chrono::nanoseconds(chosen.replied_ns)))
                .count();
  switch (record.outcome) {
    case Outcome::allowed:
      verification.attempted = true;
      verification.allowed = true;
      verification.outcome = "allowed";
      break;
    case Outcome::denied: {
      verification.attempted = true;
      const auto again = checks::usable_hint_ms(record);
      verification.outcome =
          again ? fmt::format("denied again, told {}ms more", *again) : "denied again";
      break;
    }
    case Outcome::error:
      verification.skip_reason = fmt::format("the retry errored ({}); no verdict on the hint",
                                             engine::error_kind_name(record.error));
      break;
  }
  return verification;
}

}  // namespace rlcheck::runner
