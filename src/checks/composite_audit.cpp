#include "checks/composite_audit.hpp"

#include <algorithm>
#include <optional>
#include <tuple>
#include <unordered_map>

#include "checks/composite_denials.hpp"
#include "checks/lockout.hpp"
#include "checks/remaining_units.hpp"
#include "checks/retry_accuracy.hpp"
#include "checks/run_stats.hpp"

namespace rlcheck::checks {
namespace {

using engine::Outcome;
using engine::RequestRecord;

// One part's records (packed, as the run's): keyed by identity or group, each key's by seq,
// fixed windows placed by the part's own window; and, when the part counts denials, the same
// with denials read as admissions.
struct PartRecords {
  engine::RecordLog judged;
  engine::RecordLog used;
  IdentityRecords judged_views;
  IdentityRecords used_views;
};

// The part's copy of `records` (ordered by identity, by seq within one), in one pass: keyed by
// its group for group parts, costs of 1 for requests: parts, denials read as admissions when
// `denials_admitted`. Under costs every admission and every request that may have been one
// unseen stands as many records as its units (so each audit counts units); a denial stays one
// record that needs its cost.
engine::RecordLog part_copy(const engine::RecordLog& records, const ContractPart& part,
                            const AuditParams& audit, bool denials_admitted) {
  const int64_t size = audit.group_size > 0 ? audit.group_size : audit.identities;
  engine::RecordEdit edit;
  // The window a limiter named belongs to no part in particular: each places its own.
  edit.forget_window = true;
  edit.unit_cost = part.counts_requests;
  if (part.per_group)
    edit.identity_divisor = static_cast<uint32_t>(std::clamp<int64_t>(size, 1, UINT32_MAX));
  edit.denials_as_admissions = denials_admitted;
  edit.admissions_in_units = audit.weighted && !part.counts_requests;
  engine::RecordLog copy = records.edited_copy(edit);
  // `records` come ordered by identity and seq; a group's members interleave by seq.
  if (part.per_group) {
    copy.sort_by_seq();  // split_by_identity then keeps each group's in seq order
  }
  return copy;
}

PartRecords part_records(const engine::RecordLog& records, const ContractPart& part,
                         const AuditParams& audit, int64_t start_wall_ns) {
  PartRecords out;
  const int64_t keys = part.per_group ? group_count(audit.identities, audit.group_size)
                                      : std::max<int64_t>(1, audit.identities);
  out.judged = part_copy(records, part, audit, false);
  if (part.counts_denials)
    out.used = part_copy(records, part, audit, true);
  if (part.rule.kind == AdmissionRule::Kind::fixed) {
    assign_wall_windows(out.judged, start_wall_ns, part.rule);
    assign_wall_windows(out.used, start_wall_ns, part.rule);
  }
  out.judged_views = split_by_identity(out.judged, keys);
  out.used_views = part.counts_denials ? split_by_identity(out.used, keys) : out.judged_views;
  return out;
}

struct DenialWaits {
  HintRange range{0, 0, false};
  bool seen = false;
};

// Both, kept side by side: one table, one entry a denial (a run's records are mostly denials).
struct DenialVerdicts {
  DenialRooms rooms;
  DenialWaits waits;
};

// What the parts said of each denial, by request number: a run's numbers are dense (one host:
// 0..N-1; many hosts: a range of them), so a vector by offset, else a map.
template <typename T>
class BySeq {
 public:
  BySeq(uint64_t first, uint64_t last, size_t records) : first_(first) {
    if (last >= first && last - first < 4 * static_cast<uint64_t>(records) + 16)
      dense_.resize(static_cast<size_t>(last - first + 1));
  }
  T& operator[](uint64_t seq) {
    if (!dense_.empty())
      return dense_[static_cast<size_t>(seq - first_)];
    return sparse_[seq];
  }
  const T* find(uint64_t seq) const {
    if (!dense_.empty())
      return &dense_[static_cast<size_t>(seq - first_)];
    const auto found = sparse_.find(seq);
    return found == sparse_.end() ? nullptr : &found->second;
  }

 private:
  uint64_t first_;
  std::vector<T> dense_;
  std::unordered_map<uint64_t, T> sparse_;
};

// A part that counts as the run's records stand, by identity, with no window of its own to
// place: judged on the identities' own views, without a copy.
bool reads_records_as_they_are(const ContractPart& part, const AuditParams& audit) {
  return !part.per_group && !part.counts_denials && !audit.weighted &&
         part.rule.kind != AdmissionRule::Kind::fixed;
}

// The part's views of the run: the identities' own, or its copy of the records.
PartRecords part_views(const engine::RecordLog& records, const IdentityRecords& identities,
                       const ContractPart& part, const AuditParams& audit, int64_t start_wall_ns) {
  if (!reads_records_as_they_are(part, audit))
    return part_records(records, part, audit, start_wall_ns);
  PartRecords shared;
  shared.judged_views = identities;
  shared.used_views = identities;
  return shared;
}

// Adds what part `p` says of each denial it judges to `verdicts`: room or not, and whether it
// is the part with the least room so far.
void note_rooms(BySeq<DenialVerdicts>& verdicts, const PartRecords& kept, const ContractPart& part,
                size_t p, const AdmissionRule& rule, const AuditParams& audit,
                int64_t start_wall_ns, int64_t judge_from_ns) {
  visit_denial_rooms(kept.judged_views, kept.used_views, rule, start_wall_ns, judge_from_ns,
                     part.counts_denials, audit.weighted,
                     [&](uint64_t denial_seq, double used, double capacity, bool room) {
                       verdicts[denial_seq].rooms.add(p, used, capacity, room);
                     });
}

// Adds what part `p` says of each denial to `verdicts`: its room (note_rooms), and its wait
// combined with the other parts' (the latest of them).
void note_part_verdicts(BySeq<DenialVerdicts>& verdicts, const PartRecords& kept,
                        const ContractPart& part, size_t p, const AdmissionRule& rule,
                        const AuditParams& audit, int64_t start_wall_ns, int64_t judge_from_ns) {
  note_rooms(verdicts, kept, part, p, rule, audit, start_wall_ns, judge_from_ns);
  // The soonest instant every part has room: the latest of their waits. A part with room
  // now (unexplained) waits nothing.
  const auto latest = [&](const RequestRecord& denial, const HintRange& range) {
    DenialWaits& entry = verdicts[denial.seq].waits;
    entry.seen = true;
    add_wait(entry.range, range);
  };
  visit_hint_ranges(kept.judged_views, kept.judged_views, rule, start_wall_ns, latest);
  if (part.counts_denials) {
    // Denials it may have counted make the wait longer, never shorter.
    visit_hint_ranges(kept.judged_views, kept.used_views, rule, start_wall_ns,
                      [&](const RequestRecord& denial, const HintRange& range) {
                        HintRange& combined = verdicts[denial.seq].waits.range;
                        if (range.explained) {
                          combined.high_ns = std::max(combined.high_ns, range.high_ns);
                          combined.explained = true;
                        }
                      });
  }
}

// Every part judged the denial, and every one had room: a lock-out.
bool room_in_every_part(const DenialRooms* seen, size_t parts) {
  return seen != nullptr && seen->parts == static_cast<int>(parts) && seen->room;
}

// What the parts said of each denial (note_part_verdicts), judged: each denial once, by
// identity in record order.
DenialVerdictTotals judge_noted_verdicts(const BySeq<DenialVerdicts>& verdicts,
                                         const IdentityRecords& identities,
                                         const AuditParams& audit) {
  DenialVerdictTotals totals;
  totals.locked.assign(identities.size(), false);
  for (size_t id = 0; id < identities.size(); ++id) {
    const RecordSpan view = identities[id];
    const auto identity = static_cast<uint32_t>(id);
    engine::RecordCursor cursor(view);
    for (size_t i = 0; i < view.size(); ++i) {
      if (view.outcome(i) != Outcome::denied)
        continue;
      const DenialVerdicts* verdict = verdicts.find(view.seq(i));
      if (verdict == nullptr)
        continue;
      const RequestRecord& denial = cursor[i];
      if (const DenialRooms* seen = &verdict->rooms;
          seen->parts == static_cast<int>(audit.parts.size())) {
        const bool room = room_in_every_part(seen, audit.parts.size());
        totals.locked[id] = totals.locked[id] || room;
        judge_denial(totals.lockouts, denial, identity, seen->used, seen->capacity, room);
        if (room && totals.lockouts.worst && totals.lockouts.worst->seq == denial.seq)
          totals.lockouts.worst->part = audit.parts[seen->part].spec;
      }
      if (const DenialWaits* found = &verdict->waits; found->seen) {
        totals.grid.add(denial.sent_ns);
        judge_hint(totals.retry_accuracy, denial, identity, found->range, audit.tolerance);
      }
    }
  }
  return totals;
}

}  // namespace

int64_t group_count(int64_t identities, int64_t group_size) {
  if (group_size <= 0)
    return 1;
  return std::max<int64_t>(1, (identities + group_size - 1) / group_size);
}

IdentityRecords audit_composite(RunStats& stats, engine::RecordLog& records, int64_t start_wall_ns,
                                const AuditParams& audit, CompositePath path) {
  IdentityRecords identities = split_by_identity(records, audit.identities);
  int64_t memory_ns = 0;
  int64_t longest_window_ns = 0;
  for (const ContractPart& part : audit.parts) {
    memory_ns = std::max(memory_ns, contract_memory_ns(part.rule));
    longest_window_ns = std::max(longest_window_ns, part.rule.window_ns);
  }
  const int64_t judge_from_ns = audit.fresh_state ? 0 : memory_ns;

  uint64_t first_seq = UINT64_MAX, last_seq = 0;
  for (size_t i = 0; i < records.size(); ++i) {
    first_seq = std::min(first_seq, records.seq(i));
    last_seq = std::max(last_seq, records.seq(i));
  }
  // Parts keyed by identity that count no denials are judged in one pass over the denials
  // (composite_denials.hpp): their views are kept until then.
  const bool at_once =
      path == CompositePath::fastest && std::ranges::none_of(audit.parts, [](const auto& part) {
        return part.per_group || part.counts_denials;
      });
  std::vector<PartRecords> kept_parts;
  kept_parts.reserve(audit.parts.size());
  std::vector<PartDenialViews> denial_views;
  // Else what the parts said of each denial, by request number.
  std::optional<BySeq<DenialVerdicts>> verdicts;
  if (!at_once)
    verdicts.emplace(first_seq, last_seq, records.size());
  std::vector<Utilisation> shares;  // per identity: the part allowing the least
  stats.parts.clear();
  for (size_t p = 0; p < audit.parts.size(); ++p) {
    const ContractPart& part = audit.parts[p];
    AdmissionRule rule = part.rule;
    rule.start_wall_ns = start_wall_ns;
    PartRecords kept = part_views(records, identities, part, audit, start_wall_ns);

    PartAudit result;
    result.spec = part.spec;
    result.name = part.name;
    result.limit = rule.capacity();
    result.per_group = part.per_group;
    result.counts_requests = part.counts_requests;
    result.contract = audit_contract(kept.judged_views, rule);
    if (result.contract.worst.exceeded())
      result.admitted_at_once = admitted_in_flight_at_once(kept.judged_views);
    result.memory_ns = contract_memory_ns(rule);
    stats.parts.push_back(result);

    if (!at_once)
      note_part_verdicts(*verdicts, kept, part, p, rule, audit, start_wall_ns, judge_from_ns);
    // A group's allowance is shared by its members: a member's share is judged by the parts of
    // its own.
    if (!part.per_group) {
      shares.resize(identities.size());
      for (size_t id = 0; id < identities.size(); ++id) {
        const Utilisation share = identity_utilisation(
            kept.judged_views[id], static_cast<uint32_t>(id), rule, start_wall_ns);
        if (share.ratio() > shares[id].ratio() || shares[id].allowed == 0)
          shares[id] = share;
      }
    }
    if (at_once) {
      denial_views.push_back({nullptr, reads_records_as_they_are(part, audit), rule, part.spec});
      kept_parts.push_back(std::move(kept));  // its views keep pointing at the moved records
    }
  }
  for (size_t p = 0; p < denial_views.size(); ++p)
    denial_views[p].views = &kept_parts[p].judged_views;

  // The units responses said were left, against the first part that counts them per identity.
  stats.remaining_units = {};
  for (const ContractPart& part : audit.parts) {
    if (part.per_group || part.counts_requests || part.rule.kind != AdmissionRule::Kind::sliding)
      continue;
    stats.remaining_units.part = part.spec;
    judge_remaining_units(stats.remaining_units, identities, part.rule);
    break;
  }

  // Over-admission: the part that exceeded most stands for the run in `peak`.
  size_t worst = 0;
  for (size_t p = 1; p < stats.parts.size(); ++p) {
    if (stats.parts[p].contract.worst.excess() > stats.parts[worst].contract.worst.excess())
      worst = p;
  }
  stats.contract = stats.parts[worst].contract;
  // The run's worst identity is one (the timeline shows its admissions): a group part's worst
  // span names a group, which stands here as its first member (the part keeps the group).
  if (audit.parts[worst].per_group) {
    const int64_t size = audit.group_size > 0 ? audit.group_size : audit.identities;
    stats.contract.worst_identity = static_cast<uint32_t>(std::min<int64_t>(
        static_cast<int64_t>(stats.contract.worst_identity) * std::max<int64_t>(1, size),
        std::max<int64_t>(0, audit.identities - 1)));
  }
  stats.peak = stats.contract.worst;
  stats.admitted_at_once = stats.parts[worst].admitted_at_once;
  stats.memory_ns = memory_ns;
  // A replay of the requests one by one, each a unit and counted only when admitted, knows
  // nothing of shared group allowances, costs or counted denials.
  stats.share_judged = !audit.weighted && std::ranges::none_of(audit.parts, [](const auto& part) {
    return part.per_group || part.counts_denials;
  });
  for (size_t id = 0; id < shares.size(); ++id) {
    if (id == 0 || shares[id].ratio() < stats.utilisation.ratio())
      stats.utilisation = shares[id];
  }

  // Lock-outs and hints, each denial once.
  DenialVerdictTotals totals =
      at_once ? judge_denials_at_once(identities, denial_views, start_wall_ns, judge_from_ns,
                                      audit.weighted, audit.tolerance)
              : judge_noted_verdicts(*verdicts, identities, audit);
  kept_parts.clear();  // the parts' copies
  stats.lockouts = std::move(totals.lockouts);
  stats.retry_accuracy = std::move(totals.retry_accuracy);
  const SecondGrid& grid = totals.grid;
  const std::vector<bool>& locked = totals.locked;
  for (size_t id = 0; id < identities.size(); ++id) {
    if (!locked[id])
      continue;
    const auto counting = find_denial_counting(identities[id], static_cast<uint32_t>(id),
                                               longest_window_ns, memory_ns);
    if (counting && (!stats.lockouts.denial_counting ||
                     counting->denials > stats.lockouts.denial_counting->denials))
      stats.lockouts.denial_counting = counting;
  }
  auto& resolutions = stats.retry_accuracy.resolutions;
  std::sort(resolutions.begin(), resolutions.end());
  stats.retry_accuracy.instants_off_second_grid = grid.off();
  return identities;
}

}  // namespace rlcheck::checks
