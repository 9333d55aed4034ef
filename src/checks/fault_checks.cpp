#include "checks/fault_checks.hpp"

#include <algorithm>
#include <climits>
#include <cstdint>

#include <fmt/format.h>

#include "config/count_text.hpp"

namespace rlcheck::checks {
namespace {

using engine::Outcome;
using engine::RequestRecord;

int64_t whole_ms(int64_t ns) {
  return (ns + (ns >= 0 ? 500'000 : -500'000)) / 1'000'000;
}

bool overlaps(const RequestRecord& record, const FaultWindow& fault) {
  return record.sent_ns <= fault.until_ns && record.replied_ns >= fault.at_ns;
}

bool within(const RequestRecord& record, const FaultWindow& fault) {
  return record.sent_ns >= std::max(fault.at_ns, fault.held_from_ns) &&
         record.replied_ns <= fault.until_ns;
}

void note_first(std::optional<FaultRequest>& first, const RequestRecord& record) {
  if (!first || record.sent_ns < first->sent_ns ||
      (record.sent_ns == first->sent_ns && record.seq < first->seq)) {
    first = FaultRequest{record.seq, record.sent_ns};
  }
}

void measure_one(FaultWindow& fault, int64_t after_end_ns, engine::RecordView records) {
  fault.during_allowed = fault.during_denied = fault.during_errors = 0;
  fault.allowed_while_faulted = fault.refused_while_faulted = 0;
  fault.first_allowed_while_faulted.reset();
  fault.first_refused_while_faulted.reset();
  fault.sent_after = fault.errors_after = 0;
  fault.last_error_after_ns.reset();
  fault.recovered_after_ns.reset();
  // The first request decided normally after the fault: the earliest sent, then the lowest seq.
  int64_t first_normal_sent = INT64_MAX;
  uint64_t first_normal_seq = UINT64_MAX;
  for (const RequestRecord& record : records) {
    if (overlaps(record, fault)) {
      switch (record.outcome) {
        case Outcome::allowed:
          ++fault.during_allowed;
          break;
        case Outcome::denied:
          ++fault.during_denied;
          break;
        case Outcome::error:
          ++fault.during_errors;
          ++fault.refused_while_faulted;
          note_first(fault.first_refused_while_faulted, record);
          break;
      }
      if (within(record, fault) && record.outcome == Outcome::allowed) {
        ++fault.allowed_while_faulted;
        note_first(fault.first_allowed_while_faulted, record);
      } else if (within(record, fault) && record.outcome == Outcome::denied) {
        ++fault.refused_while_faulted;
        note_first(fault.first_refused_while_faulted, record);
      }
    }
    if (record.sent_ns <= fault.until_ns || record.sent_ns >= after_end_ns)
      continue;
    ++fault.sent_after;
    const int64_t since_end = record.sent_ns - fault.until_ns;
    if (record.outcome == Outcome::error) {
      ++fault.errors_after;
      fault.last_error_after_ns = std::max(fault.last_error_after_ns.value_or(0), since_end);
    } else if (record.sent_ns < first_normal_sent ||
               (record.sent_ns == first_normal_sent && record.seq < first_normal_seq)) {
      first_normal_sent = record.sent_ns;
      first_normal_seq = record.seq;
      fault.recovered_after_ns = record.replied_ns - fault.until_ns;
    }
  }
}

struct FaultAt {
  const RunStats* run;
  const FaultWindow* fault;
};

std::vector<FaultAt> applied_faults(const std::vector<RunStats>& runs) {
  std::vector<FaultAt> applied;
  for (const RunStats& run : runs) {
    for (const FaultWindow& fault : run.faults) {
      if (fault.applied)
        applied.push_back({&run, &fault});
    }
  }
  return applied;
}

std::string request_text(const RunStats& run, const FaultRequest& request) {
  return fmt::format("run {} seq {} at {}ms", run.run, request.seq, whole_ms(request.sent_ns));
}

// The first recovery failure of one fault, or empty.
std::string recovery_failure(const FaultAt& at, int64_t recovery_ms) {
  const FaultWindow& fault = *at.fault;
  const int64_t limit_ns = recovery_ms * 1'000'000;
  if (!fault.recovered_after_ns) {
    return fmt::format(
        "run {}: after {} no request was decided normally again ({} sent after it, "
        "all errored)",
        at.run->run, fault.spec, fault.sent_after);
  }
  if (*fault.recovered_after_ns > limit_ns) {
    return fmt::format(
        "run {}: after {} the first normal decision came {}ms after it ended > --recovery {}ms",
        at.run->run, fault.spec, whole_ms(*fault.recovered_after_ns), recovery_ms);
  }
  if (fault.last_error_after_ns && *fault.last_error_after_ns > limit_ns) {
    return fmt::format(
        "run {}: after {} requests still errored {}ms after it ended > --recovery {}ms ({})",
        at.run->run, fault.spec, whole_ms(*fault.last_error_after_ns), recovery_ms,
        config::counted(fault.errors_after, "errored request"));
  }
  return "";
}

}  // namespace

void measure_faults(std::vector<FaultWindow>& faults, engine::RecordView records) {
  for (FaultWindow& fault : faults) {
    if (!fault.applied)
      continue;
    // The span after this fault ends where the next applied one begins.
    int64_t after_end_ns = INT64_MAX;
    for (const FaultWindow& other : faults) {
      if (&other != &fault && other.applied && other.at_ns >= fault.until_ns &&
          other.at_ns < after_end_ns) {
        after_end_ns = other.at_ns;
      }
    }
    measure_one(fault, after_end_ns, records);
  }
}

CheckResult check_fail_mode(const std::vector<RunStats>& runs, const CheckParams& params) {
  if (!params.expect_fail_mode)
    return {"fail-mode", Status::skip, "without --expect-fail-mode"};
  const std::vector<FaultAt> applied = applied_faults(runs);
  if (applied.empty())
    return {"fail-mode", Status::skip, "no fault was applied"};
  const bool closed = *params.expect_fail_mode == "closed";
  int64_t allowed = 0, refused = 0, overlapping = 0;
  const FaultAt* first_at = nullptr;
  const FaultRequest* first = nullptr;
  for (const FaultAt& at : applied) {
    allowed += at.fault->allowed_while_faulted;
    refused += at.fault->refused_while_faulted;
    overlapping += at.fault->during_allowed + at.fault->during_denied + at.fault->during_errors;
    const auto& offender =
        closed ? at.fault->first_allowed_while_faulted : at.fault->first_refused_while_faulted;
    if (offender && first == nullptr) {
      first_at = &at;
      first = &*offender;
    }
  }
  const std::string faults = config::counted(static_cast<int64_t>(applied.size()), "fault");
  if (first != nullptr) {
    const int64_t offending = closed ? allowed : refused;
    return {"fail-mode", Status::fail,
            fmt::format("expected fail-{}, but {} {} while {} held ({} allowed, {} denied or "
                        "errored); first: {} during {}",
                        *params.expect_fail_mode, config::counted(offending, "request"),
                        closed ? "were allowed" : "were denied or errored", faults, allowed,
                        refused, request_text(*first_at->run, *first), first_at->fault->spec)};
  }
  if (allowed + refused == 0) {
    return {"fail-mode", Status::pass,
            fmt::format("no request was decided while {} held ({} overlapped and waited it out)",
                        faults, overlapping)};
  }
  return {"fail-mode", Status::pass,
          fmt::format("fail-{} while {} held: {} allowed, {} denied or errored",
                      *params.expect_fail_mode, faults, allowed, refused)};
}

CheckResult check_recovery(const std::vector<RunStats>& runs, const CheckParams& params) {
  const std::vector<FaultAt> applied = applied_faults(runs);
  if (applied.empty())
    return {"recovery", Status::skip, "no fault was applied"};
  const FaultAt* slowest = nullptr;
  int64_t judged = 0;
  for (const FaultAt& at : applied) {
    if (at.fault->sent_after == 0)
      continue;
    ++judged;
    if (std::string failure = recovery_failure(at, params.recovery_ms); !failure.empty())
      return {"recovery", Status::fail, failure};
    if (slowest == nullptr || *at.fault->recovered_after_ns > *slowest->fault->recovered_after_ns)
      slowest = &at;
  }
  if (judged == 0)
    return {"recovery", Status::skip, "no request was sent after a fault ended"};
  return {"recovery", Status::pass,
          fmt::format("decided normally again within {}ms of each of {}; slowest {}ms (run {}, "
                      "{})",
                      params.recovery_ms, config::counted(judged, "fault"),
                      whole_ms(*slowest->fault->recovered_after_ns), slowest->run->run,
                      slowest->fault->spec)};
}

}  // namespace rlcheck::checks
