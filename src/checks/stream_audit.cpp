#include "checks/stream_audit.hpp"

#include <algorithm>
#include <tuple>

#include "checks/lockout.hpp"

namespace rlcheck::checks {

struct StreamAudit::Identity {
  // The window audit `rule` asks for: its worst span, and under a fixed one the boundary burst.
  explicit Identity(const AdmissionRule& rule) {
    switch (rule.kind) {
      case AdmissionRule::Kind::bucket:
        bucket.emplace(rule);
        break;
      case AdmissionRule::Kind::fixed: {
        fixed.emplace(rule);
        AdmissionRule span = rule;
        span.kind = AdmissionRule::Kind::sliding;
        sliding.emplace(span);
        break;
      }
      default:
        sliding.emplace(rule);
        break;
    }
  }
  std::optional<SlidingPeakStream> sliding;  // sliding; fixed: the boundary burst
  std::optional<BucketPeakStream> bucket;
  std::optional<FixedPeakStream> fixed;
};

std::optional<std::string> StreamAudit::refusal(const AuditParams& audit) {
  using Kind = AdmissionRule::Kind;
  const Kind kind = audit.rule.kind;
  if (kind == Kind::first_hit)
    return "first-hit windows (--anchor first-hit) are audited over the whole run";
  if (kind == Kind::sliding_counter)
    return "--contract sliding-counter is audited over the whole run";
  if (audit.queue_depth)
    return "--contract queue is audited over the whole run";
  if (audit.clock_skews > 0)
    return "--clock-skew tallies the worst span's admissions after the run";
  return std::nullopt;
}

StreamAudit::StreamAudit(const AuditParams& audit)
    : audit_(audit),
      identity_count_(static_cast<size_t>(std::max<int64_t>(1, audit.identities))),
      identities_(identity_count_,
                  [rule = audit.rule] { return std::make_unique<Identity>(rule); }),
      utilisation_(std::make_unique<UtilisationStream>(audit.rule, identity_count_)),
      lockouts_(std::make_unique<LockOutStream>(
          audit.rule, identity_count_, audit.fresh_state ? 0 : contract_memory_ns(audit.rule))),
      hints_(std::make_unique<RetryAccuracyStream>(audit.rule, identity_count_, audit.tolerance)) {
  if (audit.rule.kind == AdmissionRule::Kind::fixed && audit.rule.window_ns > 0)
    horizons_.resize(identity_count_);
}

void StreamAudit::begin(int64_t start_wall_ns) {
  start_wall_ns_ = start_wall_ns;
  utilisation_->begin(start_wall_ns);
  lockouts_->begin(start_wall_ns);
  hints_->begin(start_wall_ns);
}

StreamAudit::StreamAudit(StreamAudit&&) noexcept = default;
StreamAudit& StreamAudit::operator=(StreamAudit&&) noexcept = default;
StreamAudit::~StreamAudit() = default;

void StreamAudit::add(const engine::RequestRecord& original) {
  tally_record(counts_, original, audit_.max_retry_after_ms);
  if (original.outcome != engine::Outcome::error || !engine::never_connected(original.error))
    reached_ = true;
  else if (!first_unconnected_ && original.error != engine::ErrorKind::not_sent)
    first_unconnected_ = original.error;
  if (original.error == engine::ErrorKind::not_sent)
    return;  // never sent: no instant, nothing any audit places
  if (std::tie(original.sent_ns, original.replied_ns) < std::tie(last_ns_[0], last_ns_[1])) {
    ++out_of_order_;
    return;
  }
  // As audit_run prepares the records: windows the clients' clocks named are dropped, and
  // admissions without one get the wall clock's.
  engine::RequestRecord record = original;
  if (audit_.own_clock_windows)
    record.bucket = 0;
  const auto index = static_cast<uint32_t>(record.identity % identity_count_);
  if (!horizons_.empty() && !within_horizon(record, index)) {
    // Left out of the window audits; where leaving out an admission could go against the
    // limiter (a denial looking as if it had room, a smaller share), it still counts for it.
    ++closed_window_;
    utilisation_->add_closed(record, index);
    lockouts_->add_closed(record, index);
    return;
  }
  last_ns_[0] = original.sent_ns;
  last_ns_[1] = original.replied_ns;
  if (original.outcome != engine::Outcome::error) {
    touched_.emplace(original.identity, original.bucket);
    first_sent_ns_ = std::min(first_sent_ns_, original.sent_ns);
    last_sent_ns_ = std::max(last_sent_ns_, original.sent_ns);
  }
  const AdmissionRule& rule = audit_.rule;
  if (rule.kind == AdmissionRule::Kind::fixed && rule.window_ns > 0)
    place_in_wall_window(record, start_wall_ns_, rule);
  utilisation_->add(record, index);
  lockouts_->add(record, index);
  hints_->add(record, index);
  if (record.outcome != engine::Outcome::allowed)
    return;
  Identity& state = identities_[record.identity];
  if (state.sliding)
    state.sliding->add(record.sent_ns, record.replied_ns);
  if (state.bucket)
    state.bucket->add(record.sent_ns, record.replied_ns);
  if (state.fixed)
    state.fixed->add(record.bucket, record.sent_ns, record.replied_ns);
}

// Fixed windows are forgotten once no request to come can count in them, so a soak holds a few
// windows an identity, not every window it ran through. Requests come in send order, and one
// sent at `sent` counts in wall windows from the one holding `sent` less the clock on, or in
// the window its limiter named: the one holding the decision on the limiter's clock, which
// runs `offset` ahead of ours (negative: behind). A decision comes before its reply, so a named
// window starts before the reply plus the offset: each named record gives a lower bound on the
// offset, and a request still to come names a window at or after the one holding `sent` plus
// that bound. The windows below are closed. A request that counts in one anyway (the limiter's
// clock went back; in a run that names windows, an errored request whose wall window lies
// behind the limiter's) is counted (closed_window) and left out of the audits, as far as that
// can only favour the limiter.
bool StreamAudit::within_horizon(const engine::RequestRecord& record, uint32_t index) {
  const AdmissionRule& rule = audit_.rule;
  Horizon& horizon = horizons_[index];
  const int64_t wall = wall_window(start_wall_ns_, record.sent_ns - rule.clock_ns, rule.window_ns);
  const bool named = record.bucket > 0;
  if ((named ? record.bucket : wall) < horizon.forgotten_below)
    return false;
  if (named) {
    const int64_t named_start_ns = record.bucket * rule.window_ns;
    horizon.least_offset_ns =
        std::max(horizon.least_offset_ns, named_start_ns - (start_wall_ns_ + record.replied_ns));
  }
  const int64_t below =
      horizon.least_offset_ns != INT64_MIN
          ? wall_window(start_wall_ns_, record.sent_ns + horizon.least_offset_ns, rule.window_ns)
          : wall;
  if (below > horizon.forgotten_below) {
    horizon.forgotten_below = below;
    forget_windows(record.identity, index, below);
  }
  return true;
}

void StreamAudit::forget_windows(uint32_t identity, uint32_t index, int64_t below) {
  utilisation_->forget_before(index, below);
  lockouts_->forget_before(index, below);
  if (Identity* state = identities_.find(index); state != nullptr && state->fixed)
    state->fixed->forget_before(below);
  // key-ttl inspects the keys of each identity's first windows and of those still open.
  constexpr int k_first_windows_kept = 3;
  auto it = touched_.lower_bound({identity, INT64_MIN});
  for (int kept = 0; kept < k_first_windows_kept && it != touched_.end() && it->first == identity;
       ++kept)
    ++it;
  while (it != touched_.end() && it->first == identity && it->second < below)
    it = touched_.erase(it);
}

size_t StreamAudit::windows_held() const {
  size_t held = touched_.size() + utilisation_->windows_held() + lockouts_->windows_held();
  for (size_t id = 0; id < identity_count_; ++id) {
    if (const Identity* state = identities_.find(id); state != nullptr && state->fixed)
      held += state->fixed->windows_held();
  }
  return held;
}

void StreamAudit::finish(RunStats& stats) {
  const RunStats& counts = counts_;
  stats.requests = counts.requests;
  stats.allowed = counts.allowed;
  stats.denied = counts.denied;
  stats.errors = counts.errors;
  stats.unknown = counts.unknown;
  stats.error_kinds = counts.error_kinds;
  stats.status_counts = counts.status_counts;
  stats.hinted_status_errors = counts.hinted_status_errors;
  const std::string hint_sample = stats.retry.invalid_sample;
  stats.retry = counts.retry;
  stats.retry.invalid_sample = hint_sample;
  const std::string header_sample = stats.advertised.malformed_sample;
  stats.advertised = counts.advertised;
  stats.advertised.malformed_sample = header_sample;
  finish_tally(stats);
  stats.streamed = true;
  stats.streamed_out_of_order = static_cast<int64_t>(out_of_order_);
  stats.streamed_closed_window = static_cast<int64_t>(closed_window_);

  // audit_contract's choice over identities, in order, the empty ones included.
  const AdmissionRule& rule = audit_.rule;
  AdmissionRule sliding = rule;
  sliding.kind = AdmissionRule::Kind::sliding;
  const AdmissionPeak none_peak = find_admission_peak(engine::RecordView(), rule);
  const AdmissionPeak none_burst = find_admission_peak(engine::RecordView(), sliding);
  ContractAudit& contract = stats.contract;
  for (size_t id = 0; id < identity_count_; ++id) {
    const Identity* state = identities_.find(id);
    AdmissionPeak peak = none_peak, burst = none_burst;
    if (state != nullptr) {
      if (state->bucket)
        peak = state->bucket->peak();
      else if (state->fixed)
        peak = state->fixed->peak(), burst = state->sliding->peak();
      else
        peak = state->sliding->peak();
    }
    if (id == 0 || peak.excess() > contract.worst.excess()) {
      contract.worst = peak;
      contract.worst_identity = static_cast<uint32_t>(id);
    }
    if (rule.kind == AdmissionRule::Kind::fixed &&
        (id == 0 || burst.count > contract.boundary_burst.count))
      contract.boundary_burst = burst;
  }
  stats.peak = contract.worst;
  stats.memory_ns = contract_memory_ns(rule);
  stats.utilisation = utilisation_->finish();
  stats.lockouts = lockouts_->finish();
  stats.retry_accuracy = hints_->finish();
  stats.send_span_ns = first_sent_ns_ <= last_sent_ns_ ? last_sent_ns_ - first_sent_ns_ : 0;
}

engine::RecordLog StreamAudit::touched() const {
  engine::RecordLog log;
  for (const auto& [identity, bucket] : touched_) {
    engine::RequestRecord record;
    record.identity = identity;
    record.bucket = bucket;
    record.outcome = engine::Outcome::allowed;
    log.push_back(record);
  }
  return log;
}

}  // namespace rlcheck::checks
