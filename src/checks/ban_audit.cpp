#include "checks/ban_audit.hpp"

#include <algorithm>
#include <deque>
#include <limits>
#include <set>
#include <vector>

#include "engine/request_record.hpp"

namespace rlcheck::checks {
namespace {

using engine::Outcome;

constexpr int64_t k_never = std::numeric_limits<int64_t>::min() / 4;

// One request of an identity, as the ban audit reads it.
struct BanItem {
  int64_t sent = 0;
  int64_t replied = 0;
  Outcome outcome = Outcome::error;
  bool reached = false;  // decided, or errored after it may have reached the limiter
  size_t index = 0;      // in the identity's records
};

std::vector<BanItem> ban_items_by_send(RecordSpan records) {
  std::vector<BanItem> items;
  items.reserve(records.size());
  for (size_t i = 0; i < records.size(); ++i) {
    const engine::RequestRecord record = records[i];
    const bool decided = record.outcome != Outcome::error;
    items.push_back({record.sent_ns, record.replied_ns, record.outcome,
                     decided || engine::is_unknown(record), i});
  }
  std::stable_sort(items.begin(), items.end(),
                   [](const BanItem& a, const BanItem& b) { return a.sent < b.sent; });
  return items;
}

// Where the inner window puts requests, surely (a proved ban) or possibly (any ban).
class InnerWindows {
 public:
  InnerWindows(const AdmissionRule& rule, int64_t start_wall_ns)
      : rule_(rule), start_wall_ns_(start_wall_ns) {}

  bool fixed() const { return rule_.kind == AdmissionRule::Kind::fixed; }
  // fixed: the window a request was surely decided in, else nullopt.
  std::optional<int64_t> sure_window(const BanItem& item) const {
    const int64_t first = window_at(item.sent - rule_.clock_ns);
    if (first != window_at(item.replied + rule_.clock_ns))
      return std::nullopt;
    return first;
  }
  // The earliest send (from the run start) of a request that may share a window with one sent
  // at `sent_ns`, given replies at most `latency_ns` after their sends.
  int64_t shared_from(int64_t sent_ns, int64_t latency_ns) const {
    if (!fixed())
      return sent_ns - rule_.window_ns - rule_.clock_ns - latency_ns;
    return window_start(window_at(sent_ns - rule_.clock_ns)) - rule_.clock_ns - latency_ns;
  }
  // Whether a request sent at `sent_ns` may share a window with one from before the run.
  bool may_share_with_before_run(int64_t sent_ns) const {
    if (!fixed())
      return sent_ns - rule_.window_ns - rule_.clock_ns < 0;
    return window_at(sent_ns - rule_.clock_ns) <= window_at(0);
  }

 private:
  int64_t window_at(int64_t at_ns) const {
    return wall_window(start_wall_ns_, at_ns, rule_.window_ns);
  }
  // The start of window `index`, from the run start.
  int64_t window_start(int64_t index) const { return index * rule_.window_ns - start_wall_ns_; }
  const AdmissionRule& rule_;
  int64_t start_wall_ns_;
};

// A ban surely begun: L admissions and a decided request after them, surely in one window.
struct ProvedTrigger {
  int64_t begun_from = 0;  // the last admission's send: the ban began no earlier
  int64_t begun_by = 0;    // the request's reply: it began no later
  size_t next = 0;         // the item after that request
};

std::optional<ProvedTrigger> find_proved_trigger(const std::vector<BanItem>& items, size_t from,
                                                 const AdmissionRule& inner,
                                                 const InnerWindows& windows) {
  const auto limit = static_cast<size_t>(inner.limit);
  if (limit == 0)
    return std::nullopt;
  // The last L admissions of the current window, by send, and their replies, sorted.
  std::deque<const BanItem*> admissions;
  std::multiset<int64_t> replies;
  std::optional<int64_t> window;
  for (size_t j = from; j < items.size(); ++j) {
    const BanItem& item = items[j];
    if (item.outcome == Outcome::error)
      continue;
    std::optional<int64_t> sure;
    if (windows.fixed()) {
      sure = windows.sure_window(item);
      if (!sure)
        continue;
    }
    if (admissions.size() == limit && (!windows.fixed() || sure == window)) {
      const bool within = windows.fixed() || item.replied - admissions.front()->sent <
                                                 inner.window_ns - inner.clock_ns;
      if (within && item.sent >= *replies.rbegin())
        return ProvedTrigger{admissions.back()->sent, item.replied, j + 1};
    }
    if (item.outcome != Outcome::allowed)
      continue;
    if (windows.fixed() && sure != window) {
      admissions.clear();
      replies.clear();
      window = sure;
    }
    admissions.push_back(&item);
    replies.insert(item.replied);
    if (admissions.size() > limit) {
      replies.erase(replies.find(admissions.front()->replied));
      admissions.pop_front();
    }
  }
  return std::nullopt;
}

// Per identity: the proved bans (breaches, and the earliest end each request surely saw) and
// the latest any possible ban could end (lock-outs, hints).
class IdentityBans {
 public:
  IdentityBans(RecordSpan records, uint32_t identity, const AdmissionRule& inner,
               const BanRule& ban, int64_t start_wall_ns, bool fresh_state)
      : records_(records),
        identity_(identity),
        inner_(inner),
        ban_(ban),
        windows_(inner, start_wall_ns),
        fresh_state_(fresh_state),
        tolerance_(ban_tolerance_ns(inner, ban)),
        items_(ban_items_by_send(records)) {
    for (const BanItem& item : items_)
      latency_ = std::max(latency_, item.replied - item.sent);
  }

  void prove_bans(BanAudit& audit) {
    sure_end_.assign(items_.size(), k_never);
    size_t from = 0;
    size_t kept = 0;
    while (const auto trigger = find_proved_trigger(items_, from, inner_, windows_)) {
      ++audit.bans;
      int64_t end = trigger->begun_from + ban_.ban_ns - tolerance_;
      size_t j = first_sent_at(trigger->begun_by);
      for (; j < items_.size() && items_[j].sent < end; ++j) {
        const BanItem& item = items_[j];
        if (item.outcome == Outcome::error || item.replied > end)
          continue;
        if (ban_.renews)
          end = std::max(end, item.sent + ban_.ban_ns - tolerance_);
        sure_end_[j] = end;
        if (item.outcome == Outcome::allowed)
          breach(audit, item, trigger->begun_by, end);
      }
      if (end > trigger->begun_by && kept++ < k_ban_spans_kept)
        audit.spans.push_back({identity_, trigger->begun_by, end});
      from = std::max(j, trigger->next);
    }
  }

  void bound_bans() {
    const size_t n = items_.size();
    // counted_upto[k]: of the first k requests (by send), those that may have counted.
    std::vector<int64_t> counted_upto(n + 1, 0);
    counted_before_.assign(n, 0);
    latest_end_.assign(n, k_never);
    for (size_t j = 0; j < n; ++j) {
      const BanItem& item = items_[j];
      // Requests that may share its window and reach the limiter before it is decided; those
      // sent after it (in flight together) count whatever they were.
      int64_t count =
          counted_upto[j] - counted_upto[first_sent_at(windows_.shared_from(item.sent, latency_))];
      for (size_t k = j + 1; k < n && items_[k].sent < item.replied; ++k)
        count += items_[k].reached ? 1 : 0;
      counted_before_[j] = count;
      // A ban's requests do not count. A denial is one of them when it surely came during a
      // proved ban, or when its window held fewer than L: else it was wrong, and that is
      // proof enough. Requests from before the run may fill its window: its count is unknown.
      const bool before_run = !fresh_state_ && windows_.may_share_with_before_run(item.sent);
      const bool denied = item.outcome == Outcome::denied;
      const bool few = count < inner_.limit && !before_run;
      const bool counted = item.reached && !(denied && (few || sure_end_[j] != k_never));
      counted_upto[j + 1] = counted_upto[j] + (counted ? 1 : 0);
      // The L-th request may start a ban (Allow2Ban), and so may any after it.
      if (counted && (count + 1 >= inner_.limit || before_run))
        latest_end_[j] = item.replied + ban_.ban_ns + tolerance_;
    }
    // A request that may come during a ban may renew it; renewals follow bans, so this settles
    // in a few passes.
    for (bool changed = ban_.renews; changed;) {
      changed = false;
      int64_t earlier = run_start_ban_end();
      for (size_t j = 0; j < n; ++j) {
        const BanItem& item = items_[j];
        const int64_t renewed = item.replied + ban_.ban_ns + tolerance_;
        if (item.reached && latest_end_[j] < renewed &&
            item.sent < std::max(earlier, concurrent_end(j))) {
          latest_end_[j] = renewed;
          changed = true;
        }
        earlier = std::max(earlier, latest_end_[j]);
      }
    }
    latest_end_through_.assign(n, k_never);
    int64_t through = run_start_ban_end();
    for (size_t j = 0; j < n; ++j)
      latest_end_through_[j] = through = std::max(through, latest_end_[j]);
  }

  void judge_denials(BanAudit& audit, const AccuracyTolerance& tolerance, SecondGrid& grid) {
    const int64_t judge_from = fresh_state_ ? 0 : inner_.window_ns + inner_.clock_ns + latency_;
    for (size_t j = 0; j < items_.size(); ++j) {
      const BanItem& item = items_[j];
      if (item.outcome != Outcome::denied)
        continue;
      const engine::RequestRecord denial = records_[item.index];
      if (item.sent >= judge_from) {
        const bool banned = item.sent < ban_in_force_until(j, false);
        const bool room = !banned && counted_before_[j] < inner_.limit;
        judge_denial(audit.lockouts, denial, identity_, static_cast<double>(counted_before_[j]),
                     static_cast<double>(inner_.limit), room);
      }
      if (!usable_hint_ms(denial))
        continue;
      grid.add(denial.sent_ns);
      judge_hint(audit.retry, denial, identity_, hint_range(j), tolerance);
    }
  }

 private:
  size_t first_sent_at(int64_t at_ns) const {
    return static_cast<size_t>(
        std::lower_bound(items_.begin(), items_.end(), at_ns,
                         [](const BanItem& item, int64_t at) { return item.sent < at; }) -
        items_.begin());
  }

  int64_t run_start_ban_end() const { return fresh_state_ ? k_never : ban_.ban_ns + tolerance_; }

  // The latest a ban begun (or renewed) by a request sent after item `self` but before its
  // reply can end.
  int64_t concurrent_end(size_t self) const {
    int64_t until = k_never;
    for (size_t k = self + 1; k < items_.size() && items_[k].sent < items_[self].replied; ++k)
      until = std::max(until, latest_end_[k]);
    return until;
  }

  // The latest a ban in force while item `self` was decided can end: begun (or renewed) by a
  // request sent before its reply, or from before the run unless the state was fresh. Its own
  // counts only `with_self`.
  int64_t ban_in_force_until(size_t self, bool with_self) const {
    int64_t until = self > 0 ? latest_end_through_[self - 1] : run_start_ban_end();
    until = std::max(until, concurrent_end(self));
    return with_self ? std::max(until, latest_end_[self]) : until;
  }

  // From the earliest a proved ban can end to the latest any can, from the denial.
  HintRange hint_range(size_t j) const {
    const BanItem& item = items_[j];
    const int64_t latest = ban_in_force_until(j, true);
    HintRange range;
    range.explained = latest > item.sent;
    range.high_ns = static_cast<double>(std::max<int64_t>(0, latest - item.sent));
    if (sure_end_[j] > item.replied)
      range.low_ns = static_cast<double>(sure_end_[j] - item.replied);
    range.low_ns = std::min(range.low_ns, range.high_ns);
    return range;
  }

  void breach(BanAudit& audit, const BanItem& item, int64_t banned, int64_t end) const {
    ++audit.breaches;
    if (audit.first && audit.first->sent_ns <= item.sent)
      return;
    audit.first = BanBreach{identity_, records_[item.index].seq, item.sent, banned, end};
  }

  RecordSpan records_;
  uint32_t identity_;
  const AdmissionRule& inner_;
  const BanRule& ban_;
  InnerWindows windows_;
  bool fresh_state_;
  int64_t tolerance_;
  std::vector<BanItem> items_;
  int64_t latency_ = 0;  // the longest send-to-reply
  std::vector<int64_t> sure_end_;
  std::vector<int64_t> counted_before_;      // requests that may share its window, before it
  std::vector<int64_t> latest_end_;          // the latest a ban it began or renewed can end
  std::vector<int64_t> latest_end_through_;  // the latest of latest_end_ up to it
};

}  // namespace

int64_t ban_tolerance_ns(const AdmissionRule& inner, const BanRule& ban) {
  return inner.clock_ns + 1'000'000 + ban.ban_ns / 10'000;
}

BanAudit audit_bans(const IdentityRecords& identities, const AdmissionRule& inner,
                    const BanRule& ban, int64_t start_wall_ns, bool fresh_state,
                    const AccuracyTolerance& tolerance) {
  BanAudit audit;
  SecondGrid grid;
  for (size_t id = 0; id < identities.size(); ++id) {
    IdentityBans bans(identities[id], static_cast<uint32_t>(id), inner, ban, start_wall_ns,
                      fresh_state);
    bans.prove_bans(audit);
    bans.bound_bans();
    bans.judge_denials(audit, tolerance, grid);
  }
  std::sort(audit.retry.resolutions.begin(), audit.retry.resolutions.end());
  audit.retry.instants_off_second_grid = grid.off();
  return audit;
}

}  // namespace rlcheck::checks
