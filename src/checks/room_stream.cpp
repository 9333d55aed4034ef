#include "checks/room_stream.hpp"

#include <algorithm>
#include <functional>
#include <optional>

namespace rlcheck::checks {

using engine::Outcome;
using engine::RequestRecord;

int64_t window_of(const RequestRecord& record, int64_t start_wall_ns, const AdmissionRule& rule) {
  return record.bucket != 0 ? record.bucket
                            : wall_window(start_wall_ns, record.sent_ns, rule.window_ns);
}

void ContractReplay::add(int64_t sent_ns, int64_t window) {
  switch (rule_.kind) {
    case AdmissionRule::Kind::fixed: {
      int64_t& count = per_window_[window];
      if (count < rule_.limit) {
        ++count;
        ++allowed_;
      }
      return;
    }
    case AdmissionRule::Kind::bucket: {
      if (!last_ns_) {
        tokens_ = static_cast<double>(rule_.burst);
        last_ns_ = first_ns_ = sent_ns;
      }
      const double refilled =
          rule_.stepped()
              ? static_cast<double>(rule_.step_tokens * ((sent_ns - first_ns_) / rule_.step_ns -
                                                         (*last_ns_ - first_ns_) / rule_.step_ns))
              : rule_.tokens_per_ns * static_cast<double>(sent_ns - *last_ns_);
      tokens_ = std::min(static_cast<double>(rule_.burst), tokens_ + refilled);
      last_ns_ = sent_ns;
      if (tokens_ >= 1.0) {
        tokens_ -= 1.0;
        ++allowed_;
      }
      return;
    }
    default:
      while (!in_window_.empty() && in_window_.front() <= sent_ns - rule_.window_ns)
        in_window_.pop_front();
      if (static_cast<int64_t>(in_window_.size()) < rule_.limit) {
        in_window_.push_back(sent_ns);
        ++allowed_;
      }
      return;
  }
}

struct UtilisationStream::Identity {
  explicit Identity(const AdmissionRule& rule) : decided(rule), with_unknown(rule) {}
  ContractReplay decided;       // the decided requests
  ContractReplay with_unknown;  // and the errored ones that may have been admitted
  int64_t admitted = 0;
  int64_t unknown = 0;
};

UtilisationStream::UtilisationStream(const AdmissionRule& rule, size_t identities)
    : rule_(rule), identities_(identities, [rule] { return std::make_unique<Identity>(rule); }) {}
UtilisationStream::~UtilisationStream() = default;
UtilisationStream::UtilisationStream(UtilisationStream&&) noexcept = default;
UtilisationStream& UtilisationStream::operator=(UtilisationStream&&) noexcept = default;

void UtilisationStream::add(const RequestRecord& record, uint32_t identity) {
  const bool unknown = engine::is_unknown(record);
  if (record.outcome == Outcome::error && !unknown)
    return;
  Identity& state = identities_[identity];
  const int64_t window =
      rule_.kind == AdmissionRule::Kind::fixed ? window_of(record, start_wall_ns_, rule_) : 0;
  state.with_unknown.add(record.sent_ns, window);
  if (unknown) {
    ++state.unknown;
    return;
  }
  state.decided.add(record.sent_ns, window);
  state.admitted += record.outcome == Outcome::allowed ? 1 : 0;
}

void UtilisationStream::forget_before(uint32_t identity, int64_t window) {
  if (Identity* state = identities_.find(identity)) {
    state->decided.forget_before(window);
    state->with_unknown.forget_before(window);
  }
}

void UtilisationStream::add_closed(const RequestRecord& record, uint32_t identity) {
  if (record.outcome == Outcome::allowed)
    ++identities_[identity].admitted;
}

size_t UtilisationStream::windows_held() const {
  size_t held = 0;
  for (size_t id = 0; id < identities_.size(); ++id) {
    if (const Identity* state = identities_.find(id))
      held += state->decided.windows_held() + state->with_unknown.windows_held();
  }
  return held;
}

// measure_utilisation's choice: per identity the reading that gives the larger share, then
// the identity with the smallest (of equals, the lowest).
Utilisation UtilisationStream::finish() const {
  Utilisation lowest;
  for (size_t id = 0; id < identities_.size(); ++id) {
    Utilisation share;
    share.identity = static_cast<uint32_t>(id);
    if (const Identity* state = identities_.find(id)) {
      share.allowed = state->decided.allowed();
      share.admitted = state->admitted;
      if (state->unknown > 0) {
        Utilisation admitted = share;
        admitted.unknown = state->unknown;
        admitted.admitted += state->unknown;
        admitted.allowed = state->with_unknown.allowed();
        if (admitted.ratio() > share.ratio())
          share = admitted;
      }
    }
    if (id == 0 || share.ratio() < lowest.ratio())
      lowest = share;
  }
  return lowest;
}

// One identity's state for the lock-out audit.
struct LockOutStream::Identity {
  int64_t admissions = 0;  // admissions come in so far
  int64_t unknown = 0;     // errored requests that may have been admitted, so far
  // Replies of admissions not yet counted by `replied_by` (a min-heap).
  std::priority_queue<int64_t, std::vector<int64_t>, std::greater<>> replies;
  int64_t replied_by = 0;      // admissions replied by the latest threshold asked
  double lowest_term = 1e300;  // bucket: the prefix minimum of BucketRoom's g_k
  // bucket, state from before the run: admission replies not yet in `least_start` (a min-heap),
  // how many are, and the lowest level the bucket can have started at by them.
  std::priority_queue<int64_t, std::vector<int64_t>, std::greater<>> start_replies;
  size_t start_replied = 0;
  double least_start = 0;
  std::map<int64_t, int64_t> per_window;  // fixed: admissions per window they may sit in
  std::map<int64_t, int64_t> waiting;     // fixed: denials waiting to be judged, per window
  int64_t lock_outs = 0;
  // find_denial_counting, as it goes: the requests sent after the latest admission's reply.
  int64_t last_admitted_ns = INT64_MIN;
  int64_t after = 0, late = 0;
  int64_t first_after_ns = 0, last_after_ns = 0;
  bool paused = false, errored = false;

  // The lowest start level by the admissions replied by `at_ns` (asked in increasing order).
  double least_start_by(int64_t at_ns, const AdmissionRule& rule) {
    while (!start_replies.empty() && start_replies.top() <= at_ns) {
      least_start =
          std::max(least_start, bucket_start_term(++start_replied, start_replies.top(), rule));
      start_replies.pop();
    }
    return least_start;
  }

  // Admissions replied by `at_ns` (thresholds asked in increasing order).
  int64_t replied_by_ns(int64_t at_ns) {
    while (!replies.empty() && replies.top() <= at_ns) {
      replies.pop();
      ++replied_by;
    }
    return replied_by;
  }
};

// A denial waiting for every admission sent before its reply (plus the clock).
struct LockOutStream::Pending {
  int64_t at_ns = 0;  // admissions sent before this count as possibly before it
  RequestRecord denial;
  uint32_t identity = 0;
  double gone = 0;                // sliding: admissions surely out of the window at its send
  std::optional<int64_t> window;  // fixed: the one it surely fell in
  double least_start = 0;         // bucket: the lowest level it can have started the run at
};

LockOutStream::LockOutStream(const AdmissionRule& rule, size_t identities, int64_t judge_from_ns)
    : rule_(rule), judge_from_ns_(judge_from_ns), identities_(identities) {}
LockOutStream::~LockOutStream() = default;
LockOutStream::LockOutStream(LockOutStream&&) noexcept = default;
LockOutStream& LockOutStream::operator=(LockOutStream&&) noexcept = default;

void LockOutStream::add(const RequestRecord& record, uint32_t index) {
  // Every admission sent before this one is in: the denials waiting for them are judged.
  pending_.settle_before(record.sent_ns, [this](const Pending& pending) { settle(pending); });
  Identity& state = identities_[index];
  const int64_t memory_ns = contract_memory_ns(rule_);
  // find_denial_counting: an admission restarts the requests after it; the others extend them.
  if (record.outcome == Outcome::allowed) {
    state.last_admitted_ns = std::max(state.last_admitted_ns, record.replied_ns);
    state.after = state.late = 0;
    state.paused = state.errored = false;
  } else if (state.last_admitted_ns != INT64_MIN && record.sent_ns > state.last_admitted_ns) {
    const int64_t previous = state.after == 0 ? state.last_admitted_ns : state.last_after_ns;
    state.paused = state.paused || record.sent_ns - previous >= rule_.window_ns;
    state.errored = state.errored || record.outcome != Outcome::denied;
    if (state.after == 0)
      state.first_after_ns = record.sent_ns;
    state.last_after_ns = record.sent_ns;
    ++state.after;
    if (memory_ns != INT64_MAX &&
        record.sent_ns > state.last_admitted_ns + memory_ns + rule_.window_ns)
      ++state.late;
  }

  if (record.outcome == Outcome::allowed) {
    ++state.admissions;
    if (rule_.kind == AdmissionRule::Kind::bucket) {
      const auto replied_before =
          static_cast<double>(state.replied_by_ns(record.sent_ns - 2 * rule_.clock_ns - 1));
      state.lowest_term =
          std::min(state.lowest_term,
                   replied_before - rule_.tokens_per_ns *
                                        static_cast<double>(record.replied_ns + rule_.clock_ns));
    }
    state.replies.push(record.replied_ns);
    if (rule_.kind == AdmissionRule::Kind::bucket && !rule_.fresh_state)
      state.start_replies.push(record.replied_ns);
    if (rule_.kind == AdmissionRule::Kind::fixed) {
      // FixedRoom: the limiter's window when it named one, else each wall window the admission
      // may sit in.
      if (record.bucket > 0) {
        ++state.per_window[record.bucket];
      } else {
        const int64_t first =
            wall_window(start_wall_ns_, record.sent_ns - rule_.clock_ns, rule_.window_ns);
        const int64_t last =
            wall_window(start_wall_ns_, record.replied_ns + rule_.clock_ns, rule_.window_ns);
        for (int64_t window = first; window <= last; ++window)
          ++state.per_window[window];
      }
    }
    return;
  }
  if (engine::is_unknown(record)) {
    ++state.unknown;
    return;
  }
  if (record.outcome != Outcome::denied || record.sent_ns < judge_from_ns_)
    return;
  Pending pending{record.replied_ns + rule_.clock_ns, record,
                  index % static_cast<uint32_t>(identities_.size()), 0, std::nullopt};
  if (rule_.kind == AdmissionRule::Kind::bucket && !rule_.fresh_state)
    pending.least_start = state.least_start_by(record.sent_ns, rule_);
  if (rule_.kind == AdmissionRule::Kind::sliding) {
    pending.gone =
        static_cast<double>(state.replied_by_ns(record.sent_ns - rule_.window_ns - rule_.clock_ns));
  }
  if (rule_.kind == AdmissionRule::Kind::fixed) {
    const int64_t first =
        record.bucket > 0
            ? record.bucket
            : wall_window(start_wall_ns_, record.sent_ns - rule_.clock_ns, rule_.window_ns);
    const int64_t last =
        record.bucket > 0
            ? record.bucket
            : wall_window(start_wall_ns_, record.replied_ns + rule_.clock_ns, rule_.window_ns);
    if (first != last)
      return;  // it may sit on either side of a boundary: not judged
    pending.window = first;
    ++state.waiting[first];
  }
  pending_.push(pending);
}

void LockOutStream::forget_before(uint32_t identity, int64_t window) {
  Identity* state = identities_.find(identity);
  if (state == nullptr)
    return;
  if (!state->waiting.empty())
    window = std::min(window, state->waiting.begin()->first);
  state->per_window.erase(state->per_window.begin(), state->per_window.lower_bound(window));
}

void LockOutStream::add_closed(const RequestRecord& record, uint32_t identity) {
  if (record.outcome == Outcome::allowed || engine::is_unknown(record))
    ++identities_[identity].unknown;
}

size_t LockOutStream::windows_held() const {
  size_t held = 0;
  for (size_t id = 0; id < identities_.size(); ++id) {
    if (const Identity* state = identities_.find(id))
      held += state->per_window.size();
  }
  return held;
}

void LockOutStream::settle(const Pending& pending) {
  Identity& state = identities_[pending.identity];
  const RequestRecord& denial = pending.denial;
  const auto before = static_cast<double>(state.admissions);
  const auto unseen = static_cast<double>(state.unknown);
  double used = 0, capacity = static_cast<double>(rule_.limit);
  switch (rule_.kind) {
    case AdmissionRule::Kind::fixed: {
      const auto it = state.per_window.find(*pending.window);
      used = (it == state.per_window.end() ? 0.0 : static_cast<double>(it->second)) + unseen;
      if (auto waiting = state.waiting.find(*pending.window);
          waiting != state.waiting.end() && --waiting->second == 0)
        state.waiting.erase(waiting);
      break;
    }
    case AdmissionRule::Kind::bucket: {
      const auto burst = static_cast<double>(rule_.burst);
      capacity = burst;
      const double at = rule_.tokens_per_ns * static_cast<double>(denial.sent_ns - rule_.clock_ns);
      double level = burst;
      if (state.admissions > 0)
        level = burst - before + at + state.lowest_term;
      if (!rule_.fresh_state)
        level = std::min(level, std::min(burst, pending.least_start) + at - before);
      used = burst - std::min(burst, level) + unseen;
      break;
    }
    default:
      used = before - std::min(before, pending.gone) + unseen;
      break;
  }
  const int64_t count = found_.count;
  judge_denial(found_, denial, pending.identity, used, capacity, had_room(used, capacity));
  state.lock_outs += found_.count - count;
}

LockOuts LockOutStream::finish() {
  pending_.settle_before(INT64_MAX, [this](const Pending& pending) { settle(pending); });
  const int64_t memory_ns = contract_memory_ns(rule_);
  for (size_t id = 0; id < identities_.size(); ++id) {
    const Identity* state = identities_.find(id);
    if (state == nullptr || state->lock_outs == 0)
      continue;
    // find_denial_counting's conditions, on what was gathered.
    if (rule_.window_ns <= 0 || memory_ns <= 0 || memory_ns == INT64_MAX ||
        state->last_admitted_ns == INT64_MIN || state->errored || state->paused || state->late < 2)
      continue;
    DenialCounting counting;
    counting.identity = static_cast<uint32_t>(id);
    counting.last_admitted_ns = state->last_admitted_ns;
    counting.denials = state->after;
    const int64_t span = state->last_after_ns - state->first_after_ns;
    counting.offered_per_s =
        span > 0 ? static_cast<double>(state->after - 1) * 1e9 / static_cast<double>(span) : 0;
    if (!found_.denial_counting || counting.denials > found_.denial_counting->denials)
      found_.denial_counting = counting;
  }
  return found_;
}

}  // namespace rlcheck::checks
