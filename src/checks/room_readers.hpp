#pragma once
// The room a contract had at each denial of one identity (or group): what lockout.cpp judges
// lock-outs by, one identity at a time, so an audit of several parts can ask every part of one
// denial at once. The readings favour the limiter (see lockout.hpp). The readers a denial's
// instants answer (sliding, bucket) are asked inline: the audits ask once a denial.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "checks/contract_audit.hpp"
#include "checks/first_hit.hpp"
#include "checks/lockout.hpp"
#include "checks/prefix_walk.hpp"
#include "checks/sliding_counter.hpp"
#include "checks/stepped_bucket.hpp"

namespace rlcheck::checks {
namespace room {

// The admissions of one identity, sorted two ways for counting by binary search.
struct Admissions {
  std::vector<int64_t> sent;     // sorted
  std::vector<int64_t> replied;  // sorted

  explicit Admissions(RecordSpan records);

  // Admissions that may have come before a denial replied at `replied_ns`.
  size_t possibly_before(int64_t replied_ns, int64_t clock_ns) const {
    return static_cast<size_t>(std::lower_bound(sent.begin(), sent.end(), replied_ns + clock_ns) -
                               sent.begin());
  }

  size_t replied_by(int64_t at_ns) const {
    return static_cast<size_t>(std::upper_bound(replied.begin(), replied.end(), at_ns) -
                               replied.begin());
  }
};

// Sliding: the admissions possibly before the denial, less those surely out of the window when
// it was decided (even read at their reply, plus the clock, before the denial's send).
// Denials asked in record order (near send order): each count is walked to from the last.
class SlidingRoom {
 public:
  SlidingRoom(RecordSpan records, const AdmissionRule& rule) : admissions_(records), rule_(rule) {}

  double used(int64_t sent_ns, int64_t replied_ns) {
    const int64_t possibly_by = replied_ns + rule_.clock_ns;
    before_ = prefix_from(before_, admissions_.sent, [&](int64_t t) { return t < possibly_by; });
    const int64_t gone_by = sent_ns - rule_.window_ns - rule_.clock_ns;
    gone_ = prefix_from(gone_, admissions_.replied, [&](int64_t t) { return t <= gone_by; });
    return static_cast<double>(before_ - std::min(before_, gone_));
  }

 private:
  Admissions admissions_;
  const AdmissionRule& rule_;
  size_t before_ = 0;  // the last denial's admissions possibly before it
  size_t gone_ = 0;    // and surely out of its window
};

// Fixed: the admissions possibly before the denial in the window it surely fell in. An
// admission that may sit on either side of a boundary counts in both.
class FixedRoom {
 public:
  FixedRoom(RecordSpan records, const AdmissionRule& rule, int64_t start_wall_ns);
  // nullopt: the denial may sit on either side of a boundary.
  std::optional<double> used(const engine::RequestRecord& denial) const;

 private:
  // The limiter's own window index when it named one, else the wall windows its send and
  // reply (widened by the clock) fall in. Lone windows (negative) are recomputed.
  std::pair<int64_t, int64_t> windows_of(const engine::RequestRecord& record) const;

  const AdmissionRule& rule_;
  int64_t start_wall_ns_;
  std::map<int64_t, std::vector<int64_t>> sent_by_window_;
};

// Bucket: starting full, the level at t is min(B, min over admissions k of
// B - (admissions in [a_k, t]) + rate x (t - a_k)). Favouring the limiter, a_k is k's reply
// plus the clock, t the denial's send less the clock, and every admission possibly before the
// denial that may come after k's send counts: P - (admissions replied before k's send, less
// twice the clock), P the admissions possibly before. Each k's term is then
// B - P + rate x t + g_k, with g_k independent of the denial, so a prefix minimum over k in
// send order answers each denial by binary search.
class BucketRoom {
 public:
  BucketRoom(RecordSpan records, const AdmissionRule& rule);
  double used(int64_t sent_ns, int64_t replied_ns) const;

 private:
  // The refill from a common origin up to a span's start (as much as may have come) and up to
  // its end (as little): the rate's, or a stepped bucket's ticks where --anchor places them.
  double refill_by_start(int64_t at_ns) const;
  double refill_by_end(int64_t at_ns) const;

  Admissions admissions_;
  const AdmissionRule& rule_;
  // A stepped bucket's ticks, placed by --anchor in a bucket the run surely started full.
  std::optional<TickPhase> ticks_;
  std::vector<double> prefix_min_;  // min of g_k over the first k + 1 admissions by send
  // The lowest level the bucket can have started the run at, by the first k + 1 admissions
  // replied (a prefix maximum of bucket_start_term).
  std::vector<double> least_start_;
};

}  // namespace room

// The most of the contract the admissions seen can have used at a denial, and whether that
// left room for it.
struct DenialRoom {
  double used = 0;
  double capacity = 0;  // the limit, or the burst
  bool room = false;
};

class IdentityRoom {
 public:
  // `judged`: the identity's records; `used`: the admissions the contract counted (the same
  // records, or with denials read as admissions: `counts_self`, the denial judged does not
  // count against itself). `weighted`: a denial needs room for its cost, else for one. `rule`
  // must outlive the reader; fixed windows already assigned. `unknown`: unknown_sends(judged)
  // when the caller has it already (it must outlive the reader), else found here.
  IdentityRoom(RecordSpan judged, RecordSpan used, const AdmissionRule& rule, int64_t start_wall_ns,
               bool counts_self, bool weighted, const std::vector<int64_t>* unknown = nullptr);
  // It points at its own members.
  IdentityRoom(const IdentityRoom&) = delete;
  IdentityRoom& operator=(const IdentityRoom&) = delete;
  IdentityRoom(IdentityRoom&&) = delete;
  IdentityRoom& operator=(IdentityRoom&&) = delete;
  ~IdentityRoom() = default;

  // The room at denial `index` of `judged`; nullopt where the rule places it in no one window
  // (fixed: it may sit on either side of a boundary). Denials asked near send order are
  // answered fastest (sliding walks its counts from the last denial's).
  std::optional<DenialRoom> at(size_t index);

 private:
  // `at` for every rule but sliding (the one most audits ask, inline).
  std::optional<DenialRoom> at_other(size_t index);

  // What the admissions used, less what the denial counts itself, plus every request that may
  // have been admitted unseen: it may have been decided any time after its send, so every one
  // sent before the denial's reply may have been just before it, in its window.
  // What denial `i` asks for: its cost under costs, else one.
  double need(size_t i) const { return weighted_ ? static_cast<double>(judged_.cost(i)) : 1.0; }

  DenialRoom reading(size_t i, double admitted, int64_t replied_ns, double capacity) const {
    const double need = this->need(i);
    const double self = counts_self_ ? need : 0.0;
    const double used =
        admitted - self + static_cast<double>(sent_before(*unknown_, replied_ns + rule_.clock_ns));
    return {used, capacity, had_room(used, capacity, need)};
  }

  RecordSpan judged_;
  engine::RecordCursor cursor_;  // denials decoded whole only for the rules that read them
  const AdmissionRule& rule_;
  bool counts_self_;
  bool weighted_;
  std::vector<int64_t> own_unknown_;
  const std::vector<int64_t>* unknown_;  // sorted sends of the requests possibly admitted unseen
  std::optional<room::SlidingRoom> sliding_;
  std::optional<room::FixedRoom> fixed_;
  std::optional<FirstHitWindows> first_hit_;
  std::optional<SlidingCounter> counter_;
  std::optional<room::BucketRoom> bucket_;
};

inline std::optional<DenialRoom> IdentityRoom::at(size_t i) {
  if (sliding_) {
    const int64_t replied_ns = judged_.replied_ns(i);
    return reading(i, sliding_->used(judged_.sent_ns(i), replied_ns), replied_ns,
                   static_cast<double>(rule_.limit));
  }
  return at_other(i);
}

}  // namespace rlcheck::checks
