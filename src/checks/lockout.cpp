#include "checks/lockout.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <tuple>
#include <vector>

#include "checks/room_readers.hpp"
#include "checks/stepped_bucket.hpp"

namespace rlcheck::checks {
namespace {

using engine::Outcome;
using engine::RequestRecord;

}  // namespace

double bucket_start_term(size_t rank, int64_t replied_ns, const AdmissionRule& rule) {
  return static_cast<double>(rank) -
         rule.tokens_per_ns * static_cast<double>(replied_ns + rule.clock_ns);
}

// Room for one more: below the limit, or a whole token left (with a hair for rounding).
bool had_room(double used, double capacity, double need) {
  return used + need <= capacity + 1e-9;
}

namespace {

// Counts a denial as judged, and as a lock-out when it had `room`; true then.
bool count_judged(LockOuts& found, bool room) {
  ++found.judged;
  if (room)
    ++found.count;
  return room;
}

// Keeps `denial`, a lock-out, when it is the worst so far.
void note_lock_out(LockOuts& found, const RequestRecord& denial, uint32_t identity, double used,
                   double capacity) {
  // The most room, then the earliest send, the lowest identity, the lowest seq: one order
  // whatever order the records come in.
  const LockOut candidate{identity, denial.seq, denial.sent_ns, used, capacity, {}};
  const auto key = [](const LockOut& lock_out) {
    return std::tie(lock_out.used, lock_out.sent_ns, lock_out.identity, lock_out.seq);
  };
  if (!found.worst || key(candidate) < key(*found.worst))
    found.worst = candidate;
}

}  // namespace

void judge_denial(LockOuts& found, const RequestRecord& denial, uint32_t identity, double used,
                  double capacity, bool room) {
  if (count_judged(found, room))
    note_lock_out(found, denial, identity, used, capacity);
}

std::optional<DenialCounting> find_denial_counting(RecordSpan records, uint32_t identity,
                                                   int64_t window_ns, int64_t memory_ns) {
  if (window_ns <= 0 || memory_ns <= 0 || memory_ns == INT64_MAX)
    return std::nullopt;
  // The last admission (by reply), then the requests sent after it, in send order.
  int64_t last_admitted = INT64_MIN;
  for (size_t i = 0; i < records.size(); ++i) {
    if (records.outcome(i) == Outcome::allowed)
      last_admitted = std::max(last_admitted, records.replied_ns(i));
  }
  if (last_admitted == INT64_MIN)
    return std::nullopt;
  std::vector<int64_t> after;
  for (size_t i = 0; i < records.size(); ++i) {
    const int64_t sent = records.sent_ns(i);
    if (sent <= last_admitted)
      continue;
    if (records.outcome(i) != Outcome::denied)
      return std::nullopt;  // an error after it: a lost reply may have been an admission
    after.push_back(sent);
  }
  std::sort(after.begin(), after.end());
  // Long after the contract had forgotten every admission: it surely had room there.
  const int64_t forgotten = last_admitted + memory_ns + window_ns;
  const auto late =
      std::count_if(after.begin(), after.end(), [&](int64_t sent) { return sent > forgotten; });
  if (late < 2)
    return std::nullopt;
  int64_t previous = last_admitted;
  for (const int64_t sent : after) {
    if (sent - previous >= window_ns)
      return std::nullopt;  // a pause as long as a window: not a client that kept sending
    previous = sent;
  }
  DenialCounting found;
  found.identity = identity;
  found.last_admitted_ns = last_admitted;
  found.denials = static_cast<int64_t>(after.size());
  const int64_t span = after.back() - after.front();
  found.offered_per_s =
      span > 0 ? static_cast<double>(after.size() - 1) * 1e9 / static_cast<double>(span) : 0;
  return found;
}

int64_t contract_memory_ns(const AdmissionRule& rule) {
  // A sliding-window counter weighs the previous window too.
  if (rule.kind == AdmissionRule::Kind::sliding_counter)
    return 2 * rule.window_ns;
  if (rule.kind != AdmissionRule::Kind::bucket)
    return rule.window_ns;
  if (rule.tokens_per_ns <= 0)
    return INT64_MAX;
  // A stepped bucket may take a tick more to fill: the smooth bucket that admits the most's.
  return static_cast<int64_t>(
      std::ceil(static_cast<double>(most_admitting(rule).burst) / rule.tokens_per_ns));
}

namespace {

// Visits every judged denial (sent at or after `judge_from_ns`) of `judged` with the most of
// each part the admissions of `used` (the same identities, or the same records with denials
// read as admissions) can have used at it (IdentityRoom).
// `on_judged(identity, records, index, used, capacity, room)`.
template <typename OnJudged>
void walk_denials(const IdentityRecords& judged_views, const IdentityRecords& used_views,
                  const AdmissionRule& rule, int64_t start_wall_ns, int64_t judge_from_ns,
                  bool counts_self, bool weighted, const OnJudged& on_judged) {
  for (size_t id = 0; id < judged_views.size(); ++id) {
    const RecordSpan records = judged_views[id];
    const RecordSpan admissions = id < used_views.size() ? used_views[id] : records;
    const auto judged = [&](size_t i) {
      return records.outcome(i) == Outcome::denied && records.sent_ns(i) >= judge_from_ns;
    };
    bool any_judged = false;
    for (size_t i = 0; i < records.size() && !any_judged; ++i)
      any_judged = judged(i);
    if (!any_judged)
      continue;
    IdentityRoom room(records, admissions, rule, start_wall_ns, counts_self, weighted);
    for (size_t i = 0; i < records.size(); ++i) {
      if (!judged(i))
        continue;
      if (const auto found = room.at(i))
        on_judged(static_cast<uint32_t>(id), records, i, found->used, found->capacity, found->room);
    }
  }
}

}  // namespace

LockOuts find_lockouts(const IdentityRecords& identities, const AdmissionRule& rule,
                       int64_t start_wall_ns, int64_t judge_from_ns) {
  LockOuts found;
  std::vector<bool> locked(identities.size(), false);
  walk_denials(identities, identities, rule, start_wall_ns, judge_from_ns, false, false,
               [&](uint32_t identity, RecordSpan records, size_t i, double used, double capacity,
                   bool room) {
                 if (!count_judged(found, room))
                   return;
                 locked[identity] = true;
                 note_lock_out(found, records[i], identity, used, capacity);
               });
  // Denials with room, all after its last admission from a client that kept sending: name
  // the pattern (the identity locked out longest).
  for (size_t id = 0; id < identities.size(); ++id) {
    if (!locked[id])
      continue;
    const auto counting = find_denial_counting(identities[id], static_cast<uint32_t>(id),
                                               rule.window_ns, contract_memory_ns(rule));
    // The most denials; of equals, the lowest identity (the first visited).
    if (counting && (!found.denial_counting || counting->denials > found.denial_counting->denials))
      found.denial_counting = counting;
  }
  return found;
}

void visit_denial_rooms(const IdentityRecords& judged, const IdentityRecords& used,
                        const AdmissionRule& rule, int64_t start_wall_ns, int64_t judge_from_ns,
                        bool used_counts_denials, bool weighted, const DenialRoomVisitor& visit) {
  walk_denials(judged, used, rule, start_wall_ns, judge_from_ns, used_counts_denials, weighted,
               [&](uint32_t, RecordSpan records, size_t i, double used_now, double capacity,
                   bool room) { visit(records.seq(i), used_now, capacity, room); });
}

}  // namespace rlcheck::checks
