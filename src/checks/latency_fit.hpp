#pragma once
// What the contract fit (checks/contract_fit) reads of the latency promises from a run's
// admissions, one identity at a time: a slow-down (nothing denied, the first N of a window
// answered at the unloaded latency and each later one a step later, up to a longest delay:
// checks/slow_down_probe's reading of the probe's requests, here of the run's), a queue's
// undelayed part (nginx's limit_req delay=K: K excess requests answered at once before the
// others wait), and whether the waits climbed with the number ahead (a queue, not a cap). Pure
// readings: the fit replays every candidate they lead to before proposing it.

#include <cstdint>
#include <optional>
#include <vector>

#include "checks/contract_audit.hpp"
#include "checks/contract_fit.hpp"
#include "checks/slow_down_probe.hpp"

namespace rlcheck::checks {

// An admission's instants, from the run's start line.
struct AnsweredRequest {
  int64_t sent_ns = 0;
  int64_t replied_ns = 0;
};

// The slow-down the admissions read as (read_slow_down, with 50 ms of slack for replies a loaded
// machine read late, on each identity's admissions sent
// within `window_ns` of its first, ranked by latency: the order the limiter counted them in,
// whether they were sent at once or one after another), of the identities that read as one the
// one with the most delayed requests (then the one whose delays stopped growing: its cap was
// seen); nullopt when none reads as one. `identities`: each identity's admissions, any order.
std::optional<SlowDownSteps> read_recorded_slow_down(
    const std::vector<std::vector<AnsweredRequest>>& identities, int64_t window_ns);

// How many excess requests a queue drained `per_s` a second let through at once on one
// identity: its admissions (by send) answered within the larger of 10 ms and a quarter of a
// drain interval of `unloaded_ns` before the first that waited longer, less the first and the
// requests the rate drained while they were sent. nullopt when no admission waited (no sign of
// a queue) or the rate is unknown; the most of the identities that show one.
std::optional<int64_t> read_undelayed_excess(
    const std::vector<std::vector<AnsweredRequest>>& identities, int64_t unloaded_ns, double per_s);

// Whether the admissions waited in a staircase, as a queue holds them and a concurrency cap
// does not: on some identity, the admissions sent while two or more of its earlier ones were
// still unanswered waited (their median, beyond `unloaded_ns`) at least 10 ms and more than
// twice as long as its fastest admission did. A queue holds the k-th in line about k / rate
// and lets the first of a fresh key through at once; a cap holds every admission about the
// backend's latency however many are ahead of it (its audit reads a floor from the fastest
// and judges none that took twice that). A reply a loaded machine read late lengthens the
// fastest by tens of ms, far less than half of what a queue made those behind others wait.
bool waits_climb(const std::vector<std::vector<AnsweredRequest>>& identities, int64_t unloaded_ns);

// The slow-downs that may explain a run nothing was denied in, for the fit to replay in turn:
// N, the step and the longest delay read_recorded_slow_down reads (the step and the longest
// delay snapped to a round duration within their tolerance, then to two significant figures;
// no longest delay when the delays never stopped growing), in the window judged (`chosen`'s),
// counted from each identity's first request (only where the limiter surely started the run
// empty), in a sliding window, then in windows fixed on the clock. None when no identity reads
// as a slow-down or no window was judged.
std::vector<ContractFit> slow_down_fits(const std::vector<std::vector<AnsweredRequest>>& identities,
                                        const AdmissionRule& chosen);

}  // namespace rlcheck::checks
