#include "runner/retry_verification.hpp"

#include <algorithm>
#include <functional>
#include <map>

#include <fmt/format.h>

#include "checks/retry_accuracy.hpp"
#include "config/duration.hpp"

namespace rlcheck::runner {
namespace {

using Clock = std::chrono::steady_clock;
using engine::Outcome;
using engine::RequestRecord;

// Whole-second hints are read at this many phases of their second (the denial's and probes').
constexpr int k_hint_phases = 4;

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

// The hint a retry holds to: the instant its denial's reply plus its hint promise (`due`).
struct Promise {
  RequestRecord told;  // replied_ns from the run's start, as the run's own records
  Clock::time_point due;
  int phases = 1;            // the phases of a second the hint was read at
  bool interrupted = false;  // Ctrl-C came while probing
};

using Ask = std::function<engine::RunResult(Clock::time_point when, int64_t virtual_origin_ns)>;

// Whole-second hints are honest only if they hold at every phase of the second: a limiter that
// rounds down says 1 s where 1.9 s are left once in a while, by luck of where its denials fell.
// Three more denials a quarter of a second apart spread the phases, and the hint that promises
// the earliest instant is the one retried: a floored hint is then early by at least three
// quarters of a second, every time; a ceiled one is never early. Only where the hint leaves a
// margin of two steps, so no probe can meet the slot freed. The probes' records join `asked`.
Promise earliest_promise(const RequestRecord& chosen, Clock::time_point due,
                         const engine::RunResult& result, const Ask& ask,
                         std::vector<RequestRecord>& asked) {
  Promise promise{chosen, due};
  const int64_t told_ms = *checks::usable_hint_ms(chosen);
  // Whole seconds by their format (Retry-After), or by their value (a script's milliseconds
  // that are all whole seconds may be rounded to them).
  const int64_t step_ms =
      std::max<int64_t>(chosen.hint_resolution_ms, told_ms % 1000 == 0 ? 1000 : 1);
  if (result.virtual_clock || step_ms < 1000 || told_ms < 2 * step_ms)
    return promise;
  const Clock::time_point denied_at = result.start + std::chrono::nanoseconds(chosen.replied_ns);
  for (int phase = 1; phase < k_hint_phases; ++phase) {
    const engine::RunResult probe =
        ask(denied_at + std::chrono::milliseconds(phase * step_ms / k_hint_phases), 0);
    if (probe.interrupted) {
      promise.interrupted = true;
      return promise;
    }
    if (probe.records.empty())
      break;
    RequestRecord record = probe.records.front();
    asked.push_back(record);
    if (record.outcome != Outcome::denied || !checks::usable_hint_ms(record))
      break;  // the phases read so far are what there is to retry
    ++promise.phases;
    const Clock::time_point replied = probe.start + std::chrono::nanoseconds(record.replied_ns);
    const Clock::time_point probe_due =
        replied + std::chrono::milliseconds(*checks::usable_hint_ms(record));
    if (probe_due < promise.due) {
      record.replied_ns =
          std::chrono::duration_cast<std::chrono::nanoseconds>(replied - result.start).count();
      promise = {record, probe_due, promise.phases};
    }
  }
  return promise;
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

  // One request for the chosen identity, numbered after every request of the run (and of the
  // probes before it), leaving at `when`.
  uint64_t next_seq = 0;
  for (const RequestRecord& record : result.records)
    next_seq = std::max(next_seq, record.seq + 1);
  const Ask ask = [&](Clock::time_point when, int64_t virtual_origin_ns) {
    config::LoadConfig retry = config::one_at_a_time({}, 1);
    retry.timeout = load.timeout;
    retry.identities = load.identities;
    retry.only_identity = chosen.identity;  // whatever the run's distribution drew for its seq
    retry.not_before = when;                // connected before, so the request leaves when due
    if (result.virtual_clock) {
      retry.virtual_clock = true;
      retry.virtual_origin_ns = virtual_origin_ns;
    }
    retry.first_seq = next_seq++;
    return engine::execute_run(factory, retry);
  };

  Promise promise = earliest_promise(chosen, due_of(chosen), result, ask, retry_records);
  if (promise.interrupted) {
    verification.interrupted = true;
    verification.skip_reason = "interrupted while retrying";
    return verification;
  }
  const RequestRecord& told = promise.told;
  Clock::time_point due = promise.due;
  verification.told_ms = *checks::usable_hint_ms(told);
  verification.phases = promise.phases;

  if (result.virtual_clock)
    due = Clock::now();
  if (on_wait && !result.virtual_clock) {
    on_wait(std::max<int64_t>(
        0, std::chrono::duration_cast<std::chrono::milliseconds>(due - Clock::now()).count()));
  }
  // The retry's virtual instant is exactly when the hint said: the reply's plus the hint.
  const engine::RunResult answer =
      ask(due, result.start_wall_ns + told.replied_ns + verification.told_ms * int64_t{1'000'000});
  if (answer.records.empty() || answer.interrupted) {
    verification.interrupted = answer.interrupted;
    verification.skip_reason = "interrupted while retrying";
    return verification;
  }
  const RequestRecord record = answer.records.front();
  retry_records.push_back(record);
  verification.waited_ms =
      result.virtual_clock
          ? (answer.start_wall_ns + record.sent_ns - (result.start_wall_ns + told.replied_ns)) /
                1'000'000
          : std::chrono::duration_cast<std::chrono::milliseconds>(
                answer.start + std::chrono::nanoseconds(record.sent_ns) -
                (result.start + std::chrono::nanoseconds(told.replied_ns)))
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
