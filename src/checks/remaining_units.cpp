#include "checks/remaining_units.hpp"

#include <algorithm>
#include <vector>

namespace rlcheck::checks {
namespace {

using engine::Outcome;
using engine::RequestRecord;

struct Admission {
  int64_t sent_ns;
  int64_t replied_ns;
  int64_t cost;
  uint64_t seq;
};

}  // namespace

void judge_remaining_units(RemainingUnits& found, const IdentityRecords& identities,
                           const AdmissionRule& rule) {
  for (size_t id = 0; id < identities.size(); ++id) {
    const RecordSpan records = identities[id];
    std::vector<Admission> admitted;
    std::vector<Admission> unknown;  // may have been admitted unseen
    std::vector<RequestRecord> said;
    int64_t longest_latency = 0;
    engine::RecordCursor cursor(records);
    for (size_t i = 0; i < records.size(); ++i) {
      // Denials count nothing: only admissions and errors are decoded.
      if (records.outcome(i) == Outcome::denied)
        continue;
      const RequestRecord& record = cursor[i];
      const Admission one{record.sent_ns, record.replied_ns, std::max<int64_t>(record.cost, 1),
                          record.seq};
      if (record.outcome == Outcome::allowed) {
        admitted.push_back(one);
        longest_latency = std::max(longest_latency, record.replied_ns - record.sent_ns);
        if (record.remaining_units)
          said.push_back(record);
      } else if (engine::is_unknown(record)) {
        unknown.push_back(one);
      }
    }
    if (said.empty())
      continue;
    const auto by_send = [](const Admission& a, const Admission& b) {
      return a.sent_ns < b.sent_ns;
    };
    std::sort(admitted.begin(), admitted.end(), by_send);
    for (const RequestRecord& x : said) {
      // Surely in its window: replied before it was sent, sent after its reply less the window
      // (plus the clock). Possibly: sent before its reply, replied after its send less the window.
      int64_t sure = 0, possible = 0;
      const int64_t earliest = x.sent_ns - rule.window_ns - rule.clock_ns - longest_latency;
      auto y =
          std::lower_bound(admitted.begin(), admitted.end(), Admission{earliest, 0, 0, 0}, by_send);
      for (; y != admitted.end() && y->sent_ns < x.replied_ns + rule.clock_ns; ++y) {
        if (y->seq == x.seq)
          continue;
        if (y->replied_ns > x.sent_ns - rule.window_ns - rule.clock_ns)
          possible += y->cost;
        if (y->replied_ns <= x.sent_ns &&
            y->sent_ns > x.replied_ns - rule.window_ns + rule.clock_ns)
          sure += y->cost;
      }
      for (const Admission& u : unknown) {
        if (u.sent_ns < x.replied_ns)
          possible += u.cost;
      }
      const int64_t cost = std::max<int64_t>(x.cost, 1);
      const int64_t high = std::max<int64_t>(0, rule.limit - sure - cost);
      const int64_t low = std::max<int64_t>(0, rule.limit - possible - cost);
      ++found.judged;
      const int64_t told = *x.remaining_units;
      if (told >= low && told <= high)
        continue;
      ++found.wrong;
      if (!found.first)
        found.first = RemainingMismatch{static_cast<uint32_t>(id), x.seq, told, low, high};
    }
  }
}

}  // namespace rlcheck::checks
