#include "checks/timeline.hpp"

#include <algorithm>
#include <cstdint>

namespace rlcheck::checks {
namespace {

using engine::Outcome;
using engine::RequestRecord;

TimelineSeries bin_identity(RecordSpan records, uint32_t identity, const Timeline& timeline,
                            int64_t window_ns) {
  const auto bins = static_cast<size_t>(k_timeline_bins);
  TimelineSeries series;
  series.identity = identity;
  series.allowed.assign(bins, 0);
  series.denied.assign(bins, 0);
  series.errors.assign(bins, 0);
  series.in_window.assign(bins, 0);
  std::vector<int64_t> admitted_at;  // reply instants
  for (const RequestRecord& record : records) {
    const auto bin = std::min(
        bins - 1, static_cast<size_t>(std::max<int64_t>(0, record.sent_ns) / timeline.bin_ns));
    switch (record.outcome) {
      case Outcome::allowed:
        ++series.allowed[bin];
        admitted_at.push_back(record.replied_ns);
        break;
      case Outcome::denied:
        ++series.denied[bin];
        break;
      case Outcome::error:
        ++series.errors[bin];
        break;
    }
  }
  std::sort(admitted_at.begin(), admitted_at.end());
  size_t entered = 0, left = 0;
  for (size_t bin = 0; bin < bins; ++bin) {
    const int64_t end = static_cast<int64_t>(bin + 1) * timeline.bin_ns;
    while (entered < admitted_at.size() && admitted_at[entered] <= end)
      ++entered;
    while (left < entered && admitted_at[left] <= end - window_ns)
      ++left;
    series.in_window[bin] = static_cast<uint32_t>(entered - left);
  }
  return series;
}

}  // namespace

Timeline build_timeline(const IdentityRecords& identities, const AdmissionRule& rule,
                        int64_t duration_ns, uint32_t worst_identity) {
  Timeline timeline;
  timeline.duration_ns = std::max<int64_t>(duration_ns, 1);
  timeline.bin_ns =
      std::max<int64_t>(1, (timeline.duration_ns + k_timeline_bins - 1) / k_timeline_bins);
  timeline.identities = static_cast<int64_t>(identities.size());
  timeline.contract_line = rule.kind == AdmissionRule::Kind::bucket
                               ? static_cast<double>(rule.burst) +
                                     rule.tokens_per_ns * static_cast<double>(rule.window_ns)
                               : static_cast<double>(rule.limit);
  std::vector<uint32_t> shown{worst_identity};
  for (uint32_t id = 0; id < identities.size() && shown.size() < k_timeline_series; ++id) {
    if (id != worst_identity)
      shown.push_back(id);
  }
  for (uint32_t id : shown) {
    if (id < identities.size())
      timeline.series.push_back(bin_identity(identities[id], id, timeline, rule.window_ns));
  }
  return timeline;
}

void add_offered_rate(Timeline& timeline, const IdentityRecords& identities,
                      const engine::Schedule& schedule) {
  if (!schedule.open_model())
    return;
  // A run's requests are numbered from its first (load.first_seq), the schedule's from 0; the
  // run holds a record of every request, the unsent ones too.
  uint64_t first_seq = UINT64_MAX;
  for (const RecordSpan records : identities) {
    for (const RequestRecord& record : records)
      first_seq = std::min(first_seq, record.seq);
  }
  std::vector<SentRequest> sent;
  for (const RecordSpan records : identities) {
    for (const RequestRecord& record : records) {
      if (record.error != engine::ErrorKind::not_sent)
        sent.push_back({record.seq - first_seq, record.sent_ns});
    }
  }
  timeline.rate = offered_rate(sent, schedule);
}

}  // namespace rlcheck::checks
