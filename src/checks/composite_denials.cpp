#include "checks/composite_denials.hpp"

#include <algorithm>
#include <numeric>
#include <optional>

#include "checks/identity_predictor.hpp"
#include "checks/room_readers.hpp"

namespace rlcheck::checks {
namespace {

using engine::Outcome;
using engine::RequestRecord;

// The denials of `records`, by index, in record order.
void collect_denials(RecordSpan records, std::vector<uint32_t>& denials) {
  denials.clear();
  for (size_t i = 0; i < records.size(); ++i) {
    if (records.outcome(i) == Outcome::denied)
      denials.push_back(static_cast<uint32_t>(i));
  }
}

// One part's readers of one identity, each built when first asked.
struct PartOfIdentity {
  RecordSpan records;
  bool reads_lead = false;  // the lead's records: its denials, their decoding, unknown sends
  // Else its own denials (of the same ranks as the lead's) and unknown sends.
  std::vector<uint32_t> denials;
  std::vector<int64_t> unknown;
  std::optional<engine::RecordCursor> cursor;
  std::optional<IdentityRoom> room;
  std::optional<IdentityPredictor> predictor;
};

}  // namespace

void add_wait(HintRange& combined, const HintRange& range) {
  if (range.never)
    combined.never = true;
  if (!range.explained)
    return;
  combined.low_ns = std::max(combined.low_ns, range.low_ns);
  combined.high_ns = std::max(combined.high_ns, range.high_ns);
  combined.explained = true;
}

DenialVerdictTotals judge_denials_at_once(const IdentityRecords& identities,
                                          const std::vector<PartDenialViews>& parts,
                                          int64_t start_wall_ns, int64_t judge_from_ns,
                                          bool weighted, const AccuracyTolerance& tolerance) {
  DenialVerdictTotals totals;
  totals.locked.assign(identities.size(), false);
  std::vector<uint32_t> denials;
  std::vector<uint32_t> by_send;  // ranks of `denials`, in send order
  std::vector<PartOfIdentity> of_part(parts.size());
  for (size_t id = 0; id < identities.size(); ++id) {
    // The first part's records lead: its denials, in send order, are the run's (a copy keeps
    // every field a verdict reads of a denial), decoded once for every part reading the same.
    const RecordSpan lead = parts.front().own_records ? identities[id] : (*parts.front().views)[id];
    const auto identity = static_cast<uint32_t>(id);
    collect_denials(lead, denials);
    if (denials.empty())
      continue;
    by_send.resize(denials.size());
    std::iota(by_send.begin(), by_send.end(), 0U);
    const auto earlier = [&](uint32_t a, uint32_t b) {
      return lead.sent_ns(denials[a]) < lead.sent_ns(denials[b]);
    };
    if (!std::is_sorted(by_send.begin(), by_send.end(), earlier))
      std::stable_sort(by_send.begin(), by_send.end(), earlier);
    const std::vector<int64_t> lead_unknown = unknown_sends(lead);
    for (size_t p = 0; p < parts.size(); ++p) {
      PartOfIdentity& part = of_part[p];
      part.reads_lead = p == 0 || (parts[p].own_records && parts.front().own_records);
      part.records = part.reads_lead        ? lead
                     : parts[p].own_records ? identities[id]
                                            : (*parts[p].views)[id];
      part.room.reset();
      part.predictor.reset();
      part.cursor.reset();
      part.unknown.clear();
      if (!part.reads_lead) {
        collect_denials(part.records, part.denials);
        part.cursor.emplace(part.records);
        part.unknown = unknown_sends(part.records);
      }
    }
    // Hints judged in record order name the first never-admissible one: so here too.
    const bool never_named = totals.retry_accuracy.never_worst.has_value();
    std::optional<std::pair<uint32_t, HintError>> first_never;
    engine::RecordCursor cursor(lead);
    for (const uint32_t rank : by_send) {
      const uint32_t index = denials[rank];
      const RequestRecord& denial = cursor[index];
      const bool judged = denial.sent_ns >= judge_from_ns;
      const bool hinted = usable_hint_ms(denial).has_value();
      if (!judged && !hinted)
        continue;
      DenialRooms rooms;
      HintRange wait{0, 0, false};
      for (size_t p = 0; p < parts.size(); ++p) {
        PartOfIdentity& part = of_part[p];
        const AdmissionRule& rule = parts[p].rule;
        const size_t own_index = part.reads_lead ? index : part.denials[rank];
        const std::vector<int64_t>* unknown = part.reads_lead ? &lead_unknown : &part.unknown;
        if (judged) {
          if (!part.room) {
            part.room.emplace(part.records, part.records, rule, start_wall_ns, false, weighted,
                              unknown);
          }
          if (const auto found = part.room->at(own_index))
            rooms.add(p, found->used, found->capacity, found->room);
        }
        if (hinted) {
          if (!part.predictor)
            part.predictor.emplace(part.records, rule, start_wall_ns, unknown);
          const RequestRecord& own = part.reads_lead ? denial : (*part.cursor)[own_index];
          add_wait(wait, part.predictor->predict(own));
        }
      }
      if (judged && rooms.parts == parts.size()) {
        totals.locked[id] = totals.locked[id] || rooms.room;
        LockOuts& lockouts = totals.lockouts;
        judge_denial(lockouts, denial, identity, rooms.used, rooms.capacity, rooms.room);
        if (rooms.room && lockouts.worst && lockouts.worst->seq == denial.seq)
          lockouts.worst->part = parts[rooms.part].spec;
      }
      if (hinted) {
        totals.grid.add(denial.sent_ns);
        judge_hint(totals.retry_accuracy, denial, identity, wait, tolerance);
        if (wait.never && !never_named) {
          if (!first_never || rank < first_never->first)
            first_never.emplace(rank, *totals.retry_accuracy.never_worst);
          totals.retry_accuracy.never_worst.reset();
        }
      }
    }
    if (first_never)
      totals.retry_accuracy.never_worst = first_never->second;
  }
  return totals;
}

}  // namespace rlcheck::checks
