#include "checks/contract_fit.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <string_view>

#include <fmt/format.h>

#include "checks/ban_audit.hpp"
#include "checks/concurrency_audit.hpp"
#include "checks/latency_fit.hpp"
#include "checks/queue_audit.hpp"
#include "checks/retry_accuracy.hpp"
#include "config/duration.hpp"
#include "config/rate.hpp"

namespace rlcheck::checks {
namespace {

using engine::Outcome;
using engine::RequestRecord;

constexpr int64_t k_ns_per_ms = 1'000'000;
constexpr double k_ns_per_s = 1e9;

// The checks whose verdict a fitting contract must not fail: together they say every admission
// was allowed, no denial came with room and every hint was right.
constexpr std::array<std::string_view, 5> k_explaining{"limit", "contract", "delay", "utilisation",
                                                       "retry-after-accuracy"};

// The checks the contract decides: a failure elsewhere (errors, missing hints) no other
// contract can explain.
bool contract_decides(std::string_view id) {
  return id == "key-ttl" ||
         std::find(k_explaining.begin(), k_explaining.end(), id) != k_explaining.end();
}

using Instants = AnsweredRequest;

// What the records say about the limiter's parameters, over every identity of every run.
struct Evidence {
  int64_t first_burst = 0;  // the most admissions an identity got before its first denial
  // An identity's admissions after its first burst, per second of its admissions' span: the
  // refill, when the load keeps the bucket empty (from the identity with the most of them).
  double rate_after_burst = 0;
  int64_t most_after_burst = 0;
  int64_t longest_hint_ms = 0;  // the longest usable retry hint
  // The longest an identity was still denied after its last admission: from that admission's
  // send to the denial's reply. Longer than a window, a ban's sign (a window has room by then).
  int64_t longest_denied_after_ns = 0;
  std::vector<std::vector<Instants>> admissions;  // per identity and run, by send
  // A queue's signs: the longest send-to-reply of an admission, the latency of a reply nobody
  // waited for (the 99th percentile of the denials', else the shortest), and the rate the
  // admissions of the identity with the most of them were answered at.
  int64_t longest_admitted_ns = 0;
  int64_t unloaded_ns = 0;
  // The median denial's latency (else the shortest): what the longest admission waited beyond
  // for a queue's depth. The 99th percentile there read a queue a place shallower whenever a
  // busy machine answered one denial in a hundred late.
  int64_t typical_ns = 0;
  // The shortest send-to-reply of an admission: where it is shorter than `typical_ns`, the
  // latency of a reply nobody waited for (a fresh key's first is let through at once; a loaded
  // machine may read the denials, which come back while it sends, later than the admissions).
  int64_t fastest_admitted_ns = INT64_MAX;
  double answered_per_s = 0;
  int64_t denials = 0;
};

Evidence gather(const std::vector<RecordedRun>& runs) {
  Evidence evidence;
  std::vector<int64_t> denial_latencies;
  int64_t shortest = INT64_MAX;
  size_t most_admitted = 0;
  for (const RecordedRun& run : runs) {
    const engine::RecordView records = run.records.view();
    std::map<uint32_t, std::vector<uint32_t>> by_identity;  // indices in records
    for (size_t i = 0; i < records.size(); ++i) {
      if (records.outcome(i) != Outcome::error)
        by_identity[run.records.identity(i)].push_back(static_cast<uint32_t>(i));
    }
    for (auto& [identity, decided] : by_identity) {
      engine::stable_sort_by_send(records, decided);
      std::vector<Instants> admitted;
      int64_t burst = 0;
      bool denied = false;
      std::optional<int64_t> last_admitted_ns;
      for (const uint32_t index : decided) {
        const RequestRecord decoded = records[index];
        const RequestRecord* record = &decoded;
        const int64_t latency = record->replied_ns - record->sent_ns;
        shortest = std::min(shortest, latency);
        if (record->outcome == Outcome::allowed) {
          evidence.longest_admitted_ns = std::max(evidence.longest_admitted_ns, latency);
          evidence.fastest_admitted_ns = std::min(evidence.fastest_admitted_ns, latency);
          burst += denied ? 0 : 1;
          admitted.push_back({record->sent_ns, record->replied_ns});
          last_admitted_ns = record->sent_ns;
          continue;
        }
        denied = true;
        if (last_admitted_ns) {
          evidence.longest_denied_after_ns =
              std::max(evidence.longest_denied_after_ns, record->replied_ns - *last_admitted_ns);
        }
        denial_latencies.push_back(latency);
        evidence.longest_hint_ms =
            std::max(evidence.longest_hint_ms, usable_hint_ms(*record).value_or(0));
      }
      if (denied)
        evidence.first_burst = std::max(evidence.first_burst, burst);
      const auto after = static_cast<int64_t>(admitted.size()) - burst;
      if (denied && after > evidence.most_after_burst && admitted.size() >= 2) {
        const int64_t span_ns = admitted.back().sent_ns - admitted.front().sent_ns;
        if (span_ns > 0) {
          evidence.most_after_burst = after;
          evidence.rate_after_burst =
              static_cast<double>(after) * k_ns_per_s / static_cast<double>(span_ns);
        }
      }
      if (admitted.size() >= 2 && admitted.size() > most_admitted) {
        const auto [first, last] = std::minmax_element(
            admitted.begin(), admitted.end(),
            [](const Instants& a, const Instants& b) { return a.replied_ns < b.replied_ns; });
        if (last->replied_ns > first->replied_ns) {
          most_admitted = admitted.size();
          evidence.answered_per_s = static_cast<double>(admitted.size() - 1) * k_ns_per_s /
                                    static_cast<double>(last->replied_ns - first->replied_ns);
        }
      }
      evidence.admissions.push_back(std::move(admitted));
    }
  }
  evidence.denials = static_cast<int64_t>(denial_latencies.size());
  evidence.unloaded_ns = unloaded_latency_ns(denial_latencies, shortest);
  evidence.typical_ns = shortest == INT64_MAX ? 0 : shortest;
  if (!denial_latencies.empty()) {
    const auto middle =
        denial_latencies.begin() + static_cast<std::ptrdiff_t>(denial_latencies.size() / 2);
    std::nth_element(denial_latencies.begin(), middle, denial_latencies.end());
    evidence.typical_ns = *middle;
  }
  return evidence;
}

// An admission held this long beyond the unloaded latency (and 4 times it) says the limiter
// queues: a bucket or a window answers an admission as fast as a denial.
constexpr int64_t k_queue_wait_ns = 20 * k_ns_per_ms;

int64_t queue_wait_ns(const Evidence& evidence) {
  const int64_t wait = evidence.longest_admitted_ns - evidence.unloaded_ns;
  return wait >= k_queue_wait_ns && wait > 4 * evidence.unloaded_ns ? wait : 0;
}

// The shortest span from an admission's send to the send of the limit-th after it: a window
// limiter admits that one only once the first has left its window. 0 when none is that long.
int64_t shortest_limit_span_ns(const Evidence& evidence, int64_t limit) {
  int64_t shortest = 0;
  const auto step = static_cast<size_t>(limit);
  for (const auto& admitted : evidence.admissions) {
    for (size_t i = 0; i + step < admitted.size(); ++i) {
      const int64_t span = admitted[i + step].sent_ns - admitted[i].sent_ns;
      if (span > 0 && (shortest == 0 || span < shortest))
        shortest = span;
    }
  }
  return shortest;
}

// The rate as --refill spells it, exactly: the fewest whole seconds holding a whole number of
// tokens (rates rounded to two significant figures always find one).
config::Rate refill_rate(double tokens_per_s) {
  for (int64_t seconds = 1; seconds <= 1000; ++seconds) {
    const double tokens = tokens_per_s * static_cast<double>(seconds);
    const double whole = std::round(tokens);
    if (whole >= 1 && std::abs(tokens - whole) < 1e-6 * whole)
      return {static_cast<int64_t>(whole), std::chrono::seconds(seconds)};
  }
  return {std::max<int64_t>(1, std::llround(tokens_per_s * 1000)), std::chrono::seconds(1000)};
}

std::string rate_text(const config::Rate& rate) {
  if (rate.period == std::chrono::seconds(1))
    return fmt::format("{}/s", rate.tokens);
  return fmt::format("{}/{}", rate.tokens, config::format_duration(rate.period));
}

// Windows of `kind`; a sliding-window counter's anchored at the first hit when `first_hit`.
ContractFit window_fit(AdmissionRule::Kind kind, int64_t limit, int64_t window_ms,
                       const AdmissionRule& chosen, bool first_hit = false) {
  ContractFit fit;
  const bool counter = kind == AdmissionRule::Kind::sliding_counter;
  fit.contract = kind == AdmissionRule::Kind::sliding ? "sliding"
                 : counter                            ? "sliding-counter"
                                                      : "fixed";
  if (kind != AdmissionRule::Kind::sliding) {
    fit.anchor =
        kind == AdmissionRule::Kind::first_hit || (counter && first_hit) ? "first-hit" : "clock";
  }
  fit.rule.kind = kind;
  fit.rule.first_hit_anchor = counter && first_hit;
  fit.rule.limit = limit;
  fit.rule.window_ns = window_ms * k_ns_per_ms;
  fit.rule.clock_ns = chosen.clock_ns;
  fit.rule.fresh_state = chosen.fresh_state;
  fit.limit = limit;
  fit.window_ms = window_ms;
  fit.flags = fmt::format("--contract {}{} --limit {} --window {}", fit.contract,
                          fit.anchor == "first-hit" ? " --anchor first-hit" : "", limit,
                          config::format_duration(std::chrono::milliseconds(window_ms)));
  return fit;
}

ContractFit bucket_fit(int64_t burst, double tokens_per_s, const AdmissionRule& chosen) {
  const config::Rate rate = refill_rate(tokens_per_s);
  ContractFit fit;
  fit.contract = "token-bucket";
  fit.rule.kind = AdmissionRule::Kind::bucket;
  fit.rule.burst = burst;
  // Audited at the rate printed, so the flags say exactly what was audited.
  fit.rule.tokens_per_ns =
      static_cast<double>(rate.tokens) / static_cast<double>(rate.period.count());
  fit.rule.limit = chosen.limit;
  fit.rule.window_ns = chosen.window_ns;
  fit.rule.clock_ns = chosen.clock_ns;
  fit.rule.fresh_state = chosen.fresh_state;
  fit.burst = burst;
  fit.refill = rate_text(rate);
  fit.flags = fmt::format("--contract token-bucket --burst {} --refill {}", burst, fit.refill);
  return fit;
}

// The same bucket refilled in steps (Symfony's quanta): its rate's tokens at each tick of the
// period --refill spells.
ContractFit stepped_fit(ContractFit fit) {
  const config::Rate rate = refill_rate(fit.rule.tokens_per_ns * 1e9);
  fit.rule.step_tokens = rate.tokens;
  fit.rule.step_ns = rate.period.count();
  fit.refill += ",steps";
  fit.flags += ",steps";
  return fit;
}

bool same_promise(const AdmissionRule& a, const AdmissionRule& b) {
  if (a.kind != b.kind)
    return false;
  if (a.kind == AdmissionRule::Kind::bucket) {
    return a.burst == b.burst && a.step_tokens == b.step_tokens && a.step_ns == b.step_ns &&
           std::abs(a.tokens_per_ns - b.tokens_per_ns) <= 1e-9 * std::abs(b.tokens_per_ns);
  }
  return a.limit == b.limit && a.window_ns == b.window_ns &&
         a.first_hit_anchor == b.first_hit_anchor;
}

// Positive values only, first come first kept.
template <typename T>
void add_distinct(std::vector<T>& values, T value) {
  if (value > 0 && std::find(values.begin(), values.end(), value) == values.end())
    values.push_back(value);
}

// Window lengths to try for `limit`: the one audited, then the admission spacing and the
// longest hint, each rounded to one significant figure, then the spacing to two.
std::vector<int64_t> window_lengths_ms(const Evidence& evidence, int64_t limit,
                                       const AdmissionRule& chosen) {
  std::vector<int64_t> lengths;
  add_distinct(lengths, chosen.window_ns / k_ns_per_ms);
  const auto span_ms = static_cast<double>(shortest_limit_span_ns(evidence, limit)) / k_ns_per_ms;
  const auto hint_ms = static_cast<double>(evidence.longest_hint_ms);
  if (span_ms >= 1)
    add_distinct<int64_t>(lengths, std::llround(round_significant(span_ms, 1)));
  if (hint_ms >= 1)
    add_distinct<int64_t>(lengths, std::llround(round_significant(hint_ms, 1)));
  if (span_ms >= 1)
    add_distinct<int64_t>(lengths, std::llround(round_significant(span_ms, 2)));
  return lengths;
}

// Refill rates to try, tokens per second: the limit per window, then the admission rate after
// the first burst and one token per longest hint (a bucket's wait for its next token), each to
// one significant figure, then to two.
std::vector<double> refill_rates(const Evidence& evidence, const AdmissionRule& chosen) {
  std::vector<double> rates;
  if (chosen.window_ns > 0) {
    add_distinct(rates, static_cast<double>(chosen.limit) * k_ns_per_s /
                            static_cast<double>(chosen.window_ns));
  }
  const double from_hint =
      evidence.longest_hint_ms > 0 ? 1000.0 / static_cast<double>(evidence.longest_hint_ms) : 0;
  for (const int digits : {1, 2}) {
    if (evidence.rate_after_burst > 0)
      add_distinct(rates, round_significant(evidence.rate_after_burst, digits));
    if (from_hint > 0)
      add_distinct(rates, round_significant(from_hint, digits));
  }
  return rates;
}

// A queue of `depth` drained at `per_s`: to arrivals, a bucket of depth + 1.
ContractFit queue_fit(int64_t depth, double per_s, const AdmissionRule& chosen) {
  ContractFit fit = bucket_fit(depth + 1, per_s, chosen);
  fit.contract = "queue";
  fit.burst = 0;
  fit.queue = depth;
  fit.flags = fmt::format("--contract queue --refill {} --queue {}", fit.refill, depth);
  return fit;
}

// The same queue with `nodelay` excess requests let through at once (nginx's limit_req delay=K):
// `depth` more than the plain queue's, whose places are those that wait.
ContractFit undelayed_queue_fit(ContractFit plain, int64_t nodelay) {
  const int64_t waiting = *plain.queue;
  ContractFit fit = queue_fit(waiting + nodelay, plain.rule.tokens_per_ns * k_ns_per_s, plain.rule);
  fit.nodelay = nodelay;
  fit.flags = fmt::format("--contract queue:{},{},nodelay={}", fit.refill, *fit.queue, nodelay);
  return fit;
}

// Queues that explain the longest wait: the rate the admissions were answered at (and the
// other refill rates tried), the depth that rate drains in that wait (beyond the latency of a
// reply nobody waited for: a denial's, or the fastest admission's where shorter), to the
// nearest place: a queue whose last place was never quite taken reads short (arrivals at twice
// the rate fill it to within half a place; nginx, whose cached clock can read 50 ms between two
// arrivals as 49, can keep a key there all run), a reply a loaded machine read late reads long.
// After every such reading, the other depth the wait lies between (the replay keeps the first that
// explains the run). Where admissions were answered at once before the first waited, more than the
// rate drained, the same queues with that undelayed part first (the excess read, then one fewer and
// one more), the wait read as the places beyond it.
std::vector<ContractFit> queue_fits(const Evidence& evidence, const AdmissionRule& chosen) {
  std::vector<ContractFit> fits;
  if (queue_wait_ns(evidence) == 0)
    return fits;  // no sign of a queue
  const int64_t unwaited_ns = std::min(evidence.typical_ns, evidence.fastest_admitted_ns);
  const int64_t wait_ns = evidence.longest_admitted_ns - unwaited_ns;
  std::vector<ContractFit> plain;
  std::vector<ContractFit> plain_other;
  std::vector<ContractFit> undelayed_other;
  std::vector<double> rates;
  for (const int digits : {1, 2}) {
    if (evidence.answered_per_s > 0)
      add_distinct(rates, round_significant(evidence.answered_per_s, digits));
  }
  for (const double rate : refill_rates(evidence, chosen))
    add_distinct(rates, rate);
  for (const double rate : rates) {
    const config::Rate spelled = refill_rate(rate);
    const double per_s = static_cast<double>(spelled.tokens) * k_ns_per_s /
                         static_cast<double>(spelled.period.count());
    const double places = static_cast<double>(wait_ns) * per_s / k_ns_per_s;
    const int64_t depth = std::max<int64_t>(1, std::llround(places));
    const int64_t other = static_cast<double>(depth) > places ? depth - 1 : depth + 1;
    plain.push_back(queue_fit(depth, rate, chosen));
    if (other >= 1)
      plain_other.push_back(queue_fit(other, rate, chosen));
    const std::optional<int64_t> excess =
        read_undelayed_excess(evidence.admissions, unwaited_ns, per_s);
    if (!excess || *excess < 1)
      continue;
    for (const int64_t nodelay : {*excess, *excess - 1, *excess + 1}) {
      if (nodelay >= 1)
        fits.push_back(undelayed_queue_fit(plain.back(), nodelay));
    }
    if (other >= 1)
      undelayed_other.push_back(undelayed_queue_fit(plain_other.back(), *excess));
  }
  fits.insert(fits.end(), undelayed_other.begin(), undelayed_other.end());
  fits.insert(fits.end(), plain.begin(), plain.end());
  fits.insert(fits.end(), plain_other.begin(), plain_other.end());
  return fits;
}

Status status_of(const std::vector<CheckResult>& checks, std::string_view id) {
  for (const CheckResult& check : checks) {
    if (check.id == id)
      return check.status;
  }
  return Status::skip;
}

// Nothing the contract judges fails under the candidate, and what was judged under the
// audited contract is judged under it too (a skip there would explain nothing); but `limit`
// under a slow-down, which admits every request and is judged by `delay` and `contract`.
bool explains(const std::vector<CheckResult>& audited, const std::vector<CheckResult>& replayed,
              bool slow_down) {
  return std::all_of(k_explaining.begin(), k_explaining.end(), [&](std::string_view id) {
    const Status now = status_of(replayed, id);
    if (now == Status::fail)
      return false;
    if (slow_down && id == "limit")
      return true;
    return id == "utilisation" || status_of(audited, id) == Status::skip || now == Status::pass;
  });
}

// `value` rounded up (`up`) or down to `digits` significant figures (value > 0).
double snap_significant(double value, int digits, bool up) {
  const double scale = std::pow(10.0, digits - 1 - static_cast<int>(std::floor(std::log10(value))));
  return up ? std::ceil(value * scale - 1e-9) / scale : std::floor(value * scale + 1e-9) / scale;
}

// A ban of `ban_ms` behind `inner`'s window (sliding, or fixed on the clock).
ContractFit ban_fit(ContractFit inner, int64_t ban_ms) {
  ContractFit fit = std::move(inner);
  const std::string kind = fit.contract;
  fit.contract = "ban";
  fit.ban_ms = ban_ms;
  fit.flags = fmt::format("--contract ban:{}:{}/{},{}", kind, fit.limit,
                          config::format_duration(std::chrono::milliseconds(fit.window_ms)),
                          config::format_duration(std::chrono::milliseconds(ban_ms)));
  return fit;
}

// A contract's spec as the reports name it ("ban:fixed:3/2s,3s"): the flags without --contract.
std::string spec_of_flags(const ContractFit& fit) {
  constexpr std::string_view k_flag = "--contract ";
  return fit.flags.substr(k_flag.size());
}

// Bans that explain denials lasting longer after an admission than the window audited (a
// window has room by then): the limit and window named, fixed on the clock and sliding, and a
// ban as long as the longest such denial run (from the admission's
// send to the denial's reply, so a little longer than the ban it saw), rounded to one and two
// significant figures, to the nearest, up and down: the replay keeps the first that passes.
std::vector<ContractFit> ban_fits(const Evidence& evidence, const AdmissionRule& chosen) {
  std::vector<ContractFit> fits;
  if (chosen.window_ns <= 0 || evidence.longest_denied_after_ns <= chosen.window_ns)
    return fits;
  const double longest_ms = static_cast<double>(evidence.longest_denied_after_ns) / k_ns_per_ms;
  std::vector<int64_t> bans_ms;
  for (const int digits : {1, 2}) {
    add_distinct<int64_t>(bans_ms, std::llround(round_significant(longest_ms, digits)));
    add_distinct<int64_t>(bans_ms, std::llround(snap_significant(longest_ms, digits, true)));
    add_distinct<int64_t>(bans_ms, std::llround(snap_significant(longest_ms, digits, false)));
  }
  const int64_t window_ms = chosen.window_ns / k_ns_per_ms;
  for (const AdmissionRule::Kind kind :
       {AdmissionRule::Kind::fixed, AdmissionRule::Kind::sliding}) {
    for (const int64_t ban_ms : bans_ms)
      fits.push_back(ban_fit(window_fit(kind, chosen.limit, window_ms, chosen), ban_ms));
  }
  return fits;
}

// utilisation skips runs within one window (or refill), where under-admission is --exact's to
// judge; a fit must explain every denial there too, or a burst larger than the limiter's (a
// race's overshoot in one run) would fit runs that were denied with tokens left.
bool any_denied_with_room(const std::vector<RunStats>& runs) {
  return std::any_of(runs.begin(), runs.end(),
                     [](const RunStats& run) { return run.lockouts.count > 0; });
}

int64_t key_life_ms(const AdmissionRule& rule) {
  const int64_t memory_ns = contract_memory_ns(rule);
  return memory_ns == INT64_MAX ? 0 : (memory_ns + k_ns_per_ms - 1) / k_ns_per_ms;
}

}  // namespace

double round_significant(double value, int digits) {
  if (value <= 0)
    return 0;
  const double scale = std::pow(10.0, digits - 1 - static_cast<int>(std::floor(std::log10(value))));
  return std::round(value * scale) / scale;
}

std::string refill_text(double tokens_per_s) {
  return rate_text(refill_rate(tokens_per_s));
}

namespace {

// A concurrency cap in front of a slow backend, judged as a rate, "fits" a window or a queue
// that merely describes the backend's latency. The cap the run proves at least: the most
// admissions of one identity surely in progress at once, by the floor measured from each run;
// nullopt when none was surely in progress (no floor: nothing to tell it by).
std::optional<ContractFit> concurrency_fit(const std::vector<RecordedRun>& runs,
                                           const AdmissionRule& chosen) {
  int64_t most = 0;
  for (const RecordedRun& run : runs) {
    const engine::RecordView records = run.records.view();
    std::map<uint32_t, std::vector<RequestRecord>> by_identity;
    for (size_t i = 0; i < records.size(); ++i)
      by_identity[run.records.identity(i)].push_back(records[i]);
    IdentityRecords identities;
    for (const auto& [identity, list] : by_identity)
      identities.emplace_back(list);
    const int64_t hold_ns = measured_hold_ns(identities);
    for (const RecordSpan& identity : identities)
      most = std::max(most, most_surely_in_progress(identity, hold_ns).count);
  }
  if (most < 1)
    return std::nullopt;
  ContractFit fit;
  fit.contract = "concurrency";
  fit.rule = chosen;  // unused: the cap is audited on its own
  fit.limit = most;
  fit.window_ms = chosen.window_ns / k_ns_per_ms;
  fit.concurrency = most;
  fit.flags = fmt::format("--contract concurrency:{}", most);
  return fit;
}

}  // namespace

std::vector<ContractFit> fit_candidates(const std::vector<RecordedRun>& runs,
                                        const AdmissionRule& chosen) {
  const Evidence evidence = gather(runs);
  // Nothing denied: a limiter that answers late instead (a slow-down), or nothing to tell by.
  if (evidence.denials == 0)
    return slow_down_fits(evidence.admissions, chosen);
  // What a limiter does once it refuses is what tells promises apart: a burst followed by
  // nothing but denials fits any contract generous enough (a race's overshoot included).
  if (evidence.most_after_burst == 0)
    return {};
  std::vector<ContractFit> candidates;
  std::set<std::string> seen;
  // Admissions held far longer than denials: a concurrency cap first (a queue or a window would
  // only describe the backend's latency). Its own audit tells overlap from a race's overshoot
  // (sure spans, not send..reply ones), so the test below does not apply to it. But not where
  // the admissions waited in a staircase, longer the more were ahead of them: a queue, whose
  // fastest admissions a loaded machine read late would give a cap's audit a floor that
  // judges those few alone (nginx's limit_req burst=8 read as concurrency:1).
  if (!waits_climb(evidence.admissions, evidence.unloaded_ns)) {
    if (auto fit = concurrency_fit(runs, chosen)) {
      seen.insert(fit->flags);
      candidates.push_back(*std::move(fit));
    }
  }
  const auto add = [&](ContractFit fit) {
    if (!same_promise(fit.rule, chosen) && seen.insert(fit.flags).second)
      candidates.push_back(std::move(fit));
  };
  // More admitted at once than the capacity under test is a race's overshoot: a larger
  // capacity would disguise it, and a smaller one explains it only where the instants cannot
  // be told apart (windows shorter than the requests took). But a queue's admissions are in
  // flight together while they wait, and its departures audit holds those that leave at once
  // to 1 + K: a queue is tried whatever was in flight, one with an undelayed part only where
  // 1 + K is within the capacity under test.
  const int64_t capacity = chosen.capacity();
  const bool overshot = admitted_at_once(runs) > capacity;
  // Admissions held far longer than denials: a queue, whatever else would count the same.
  for (ContractFit& fit : queue_fits(evidence, chosen)) {
    if (!overshot || !fit.nodelay || 1 + *fit.nodelay <= capacity)
      add(std::move(fit));
  }
  if (overshot)
    return candidates;
  // Windows keep the limit named: a larger one would "explain" any over-admission.
  std::vector<int64_t> limits;
  add_distinct(limits, chosen.limit);
  for (const AdmissionRule::Kind kind :
       {AdmissionRule::Kind::sliding, AdmissionRule::Kind::fixed, AdmissionRule::Kind::first_hit}) {
    if (kind == AdmissionRule::Kind::fixed && chosen.kind == AdmissionRule::Kind::fixed)
      continue;
    // First-hit windows whose phase state from before the run may have set judge little: they
    // would "fit" nearly anything.
    if (kind == AdmissionRule::Kind::first_hit && !chosen.fresh_state)
      continue;
    for (const int64_t limit : limits) {
      for (const int64_t window_ms : window_lengths_ms(evidence, limit, chosen))
        add(window_fit(kind, limit, window_ms, chosen));
    }
  }
  // Sliding-window counters (two fixed windows weighted): on the clock, and opened at the first
  // hit where the limiter surely started the run empty. Their window is the one named or the
  // longest hint's (about a window): the span holding `limit` admissions says nothing of it, as
  // a counter lets up to twice the limit through in one.
  std::vector<int64_t> counter_windows_ms;
  add_distinct(counter_windows_ms, chosen.window_ns / k_ns_per_ms);
  if (evidence.longest_hint_ms >= 1) {
    add_distinct<int64_t>(
        counter_windows_ms,
        std::llround(round_significant(static_cast<double>(evidence.longest_hint_ms), 1)));
  }
  for (const bool first_hit : {false, true}) {
    if (first_hit && !chosen.fresh_state)
      continue;
    for (const int64_t limit : limits) {
      for (const int64_t window_ms : counter_windows_ms)
        add(window_fit(AdmissionRule::Kind::sliding_counter, limit, window_ms, chosen, first_hit));
    }
  }
  // A ban after the windows: it promises the window named and more, and under a steady load a
  // window stretched over its denials explains them as well (a longer window is that). Before
  // the buckets, whose burst and refill are guessed where a ban keeps the limit and window
  // named (a bucket refilled in steps, judged with a tick's slack, fits rack-attack's bans too).
  for (ContractFit& fit : ban_fits(evidence, chosen)) {
    if (seen.insert(fit.flags).second)
      candidates.push_back(std::move(fit));
  }
  std::vector<int64_t> bursts;
  add_distinct(bursts, evidence.first_burst);
  add_distinct(bursts, capacity);
  for (const int64_t burst : bursts) {
    for (const double rate : refill_rates(evidence, chosen))
      add(bucket_fit(burst, rate, chosen));
  }
  // Each in steps after every smooth one, which promises more narrowly. A step is judged with
  // a tick's tokens of slack either way (checks/stepped_bucket.hpp): one token a tick is the
  // smooth refill's own, the tick its phase, and a tick larger than the bucket is mostly
  // slack; either would pass a race's overshoot off as a promise.
  for (const int64_t burst : bursts) {
    for (const double rate : refill_rates(evidence, chosen)) {
      ContractFit stepped = stepped_fit(bucket_fit(burst, rate, chosen));
      if (stepped.rule.step_tokens >= 2 && stepped.rule.step_tokens <= burst)
        add(std::move(stepped));
    }
  }
  return candidates;
}

std::vector<ContractFit> policy_readings(int64_t limit, int64_t window_ms,
                                         const AdmissionRule& chosen) {
  std::vector<ContractFit> readings;
  if (limit <= 0 || window_ms <= 0)
    return readings;
  readings.push_back(bucket_fit(
      limit, static_cast<double>(limit) * 1000.0 / static_cast<double>(window_ms), chosen));
  readings.push_back(window_fit(AdmissionRule::Kind::fixed, limit, window_ms, chosen));
  // Only where the limiter surely started the run empty: otherwise the windows' phase is
  // unknown and the reading judges little, so it would explain nearly anything.
  if (chosen.fresh_state)
    readings.push_back(window_fit(AdmissionRule::Kind::first_hit, limit, window_ms, chosen));
  std::erase_if(readings, [&](const ContractFit& fit) { return same_promise(fit.rule, chosen); });
  return readings;
}

std::optional<Rejudged> rejudge(std::vector<ContractFit> candidates, std::vector<RecordedRun>& runs,
                                const std::vector<RunStats>& stats,
                                const std::vector<CheckResult>& checks, const CheckParams& params,
                                const AuditParams& audit) {
  if (runs.size() != stats.size() || runs.empty())
    return std::nullopt;
  std::vector<std::string> failed;
  for (const CheckResult& check : checks) {
    if (check.status == Status::fail && contract_decides(check.id))
      failed.push_back(check.id);
  }
  if (failed.empty())
    return std::nullopt;

  for (ContractFit& candidate : candidates) {
    AuditParams replay = audit;
    replay.rule = candidate.rule;
    replay.queue_depth = candidate.queue;
    replay.queue_nodelay = candidate.nodelay.value_or(0);
    replay.slow_down = candidate.slow_down;
    replay.concurrency.reset();
    if (candidate.concurrency)
      replay.concurrency.emplace().cap = *candidate.concurrency;
    // A ban, as --contract ban chooses it: a hint may name the whole ban.
    replay.ban.reset();
    if (candidate.ban_ms) {
      replay.ban = BanRule{*candidate.ban_ms * k_ns_per_ms, false};
      replay.max_retry_after_ms = std::max(replay.max_retry_after_ms, *candidate.ban_ms);
      replay.tolerance.window_ms = std::max(replay.tolerance.window_ms, *candidate.ban_ms);
    }
    replay.timeline = false;
    std::vector<RunStats> replayed = stats;
    for (size_t i = 0; i < runs.size(); ++i) {
      if (candidate.rule.kind == AdmissionRule::Kind::fixed) {
        // Placing fixed windows writes into the records: replay a copy.
        engine::RecordLog copy = runs[i].records;
        audit_run(replayed[i], copy, runs[i].start_wall_ns, replay);
      } else {
        audit_run(replayed[i], runs[i].records, runs[i].start_wall_ns, replay);
      }
    }
    settle_hint_resolution(replayed, params.hint_resolution, params.retry_tolerance);
    CheckParams judged = params;
    judged.contract =
        candidate.anchor == "first-hit" ? candidate.contract + " first-hit" : candidate.contract;
    if (candidate.ban_ms)
      judged.contract = spec_of_flags(candidate);
    judged.slow_down.clear();
    if (candidate.slow_down) {
      judged.contract = "slow-down";
      judged.slow_down = spec_of_flags(candidate);
    }
    judged.phase_unknown = candidate.anchor == "first-hit" && !candidate.rule.fresh_state;
    judged.stepped = candidate.rule.stepped();
    if (candidate.rule.kind != AdmissionRule::Kind::bucket) {
      judged.limit = candidate.limit;
      judged.window_ms = candidate.window_ms;
    }
    if (judged.key_ttl_needed_ms > 0)
      judged.key_ttl_needed_ms = key_life_ms(candidate.rule);
    std::vector<CheckResult> replayed_checks = evaluate_checks(replayed, judged);
    if (!explains(checks, replayed_checks, candidate.slow_down.has_value()) ||
        any_denied_with_room(replayed))
      continue;
    // A slow-down's `limit` is skipped, not failed: it admits every request by design.
    for (const std::string& id : failed) {
      const Status now = status_of(replayed_checks, id);
      if (now == Status::pass || (candidate.slow_down && id == "limit" && now == Status::skip))
        candidate.clears.push_back(id);
    }
    if (!candidate.clears.empty())
      return Rejudged{std::move(candidate), std::move(replayed), std::move(replayed_checks)};
  }
  return std::nullopt;
}

std::optional<ContractFit> fit_contract(std::vector<RecordedRun>& runs,
                                        const std::vector<RunStats>& stats,
                                        const std::vector<CheckResult>& checks,
                                        const CheckParams& params, const AuditParams& audit) {
  if (runs.size() != stats.size() || runs.empty())
    return std::nullopt;
  auto found = rejudge(fit_candidates(runs, audit.rule), runs, stats, checks, params, audit);
  if (!found)
    return std::nullopt;
  return std::move(found->fit);
}

std::optional<ContractFit> fit_consume_on_deny(std::vector<RecordedRun>& runs,
                                               const std::vector<RunStats>& stats,
                                               const std::vector<CheckResult>& checks,
                                               const CheckParams& params,
                                               const AuditParams& audit) {
  if (runs.size() != stats.size() || runs.empty() || audit.parts.size() < 2 ||
      std::ranges::any_of(audit.parts,
                          [](const ContractPart& part) { return part.counts_denials; }))
    return std::nullopt;
  std::vector<std::string> failed;
  for (const CheckResult& check : checks) {
    if (check.status == Status::fail && contract_decides(check.id))
      failed.push_back(check.id);
  }
  if (failed.empty())
    return std::nullopt;
  AuditParams replay = audit;
  for (size_t p = 0; p + 1 < replay.parts.size(); ++p)
    replay.parts[p].counts_denials = true;
  replay.timeline = false;
  std::vector<RunStats> replayed = stats;
  for (size_t i = 0; i < runs.size(); ++i)
    audit_run(replayed[i], runs[i].records, runs[i].start_wall_ns, replay);
  settle_hint_resolution(replayed, params.hint_resolution, params.retry_tolerance);
  CheckParams judged = params;
  judged.consume_on_deny = "checked";
  const std::vector<CheckResult> replayed_checks = evaluate_checks(replayed, judged);
  // The reading is how denials count, not a promise of its own: it is named on the checks it
  // clears when it fails none that held and leaves no denial with room; what it does not
  // clear (a hint wrong under every reading) stays failed.
  const bool fails_another = std::ranges::any_of(replayed_checks, [&](const CheckResult& check) {
    return check.status == Status::fail && status_of(checks, check.id) != Status::fail;
  });
  if (fails_another || any_denied_with_room(replayed))
    return std::nullopt;
  ContractFit fit;
  fit.contract = params.contract;
  fit.consume_on_deny = "checked";
  fit.flags = "--consume-on-deny checked";
  for (const std::string& id : failed) {
    if (status_of(replayed_checks, id) == Status::pass)
      fit.clears.push_back(id);
  }
  if (fit.clears.empty())
    return std::nullopt;
  return fit;
}

int64_t admitted_at_once(const std::vector<RecordedRun>& runs) {
  int64_t most = 0;
  for (const RecordedRun& run : runs) {
    const engine::RecordView records = run.records.view();
    std::map<uint32_t, std::vector<RequestRecord>> admitted;
    for (size_t i = 0; i < records.size(); ++i) {
      if (records.outcome(i) == Outcome::allowed)
        admitted[run.records.identity(i)].push_back(records[i]);
    }
    IdentityRecords identities;
    for (const auto& [identity, list] : admitted)
      identities.emplace_back(list);
    most = std::max(most, admitted_in_flight_at_once(identities));
  }
  return most;
}

void note_race(std::vector<CheckResult>& checks, int64_t at_once, int64_t limit) {
  for (CheckResult& check : checks) {
    if (check.status == Status::fail && (check.id == "limit" || check.id == "contract")) {
      check.detail +=
          fmt::format("; {} admissions were in flight at once (limit {})", at_once, limit);
    }
  }
}

void note_fit(std::vector<CheckResult>& checks, const ContractFit& fit) {
  for (CheckResult& check : checks) {
    if (std::find(fit.clears.begin(), fit.clears.end(), check.id) != fit.clears.end())
      check.detail += fmt::format("; the observations fit {}", fit.flags);
  }
}

}  // namespace rlcheck::checks
