#pragma once
// The audits of a limiter's denials, as a run's records come in send order (--audit stream),
// with state bounded by a window per identity: the streaming twins of measure_utilisation and
// find_lockouts for sliding, fixed and bucket contracts. Fed one run's records in (sent,
// replied) order, with fixed windows placed as audit_run places them, each gives what the
// batch audit gives (tests/unit/stream_audit_test.cpp replays both).

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <queue>
#include <vector>

#include "checks/contract_audit.hpp"
#include "checks/lockout.hpp"
#include "checks/stream_state.hpp"

namespace rlcheck::checks {

// First come, first served under the contract (sliding, fixed or bucket), one request at a
// time in send order: how many the contract admits.
class ContractReplay {
 public:
  // A stepped bucket replays with its ticks counted from the first request (the bucket made
  // then, as Symfony's): one placement of many, so its share is reported, not judged
  // (RunStats::share_judged).
  explicit ContractReplay(const AdmissionRule& rule) : rule_(rule) {}
  // `window`: fixed only, the window the request counts in (window_of).
  void add(int64_t sent_ns, int64_t window);
  // fixed: no request will count in the windows below `window` any more.
  void forget_before(int64_t window) {
    per_window_.erase(per_window_.begin(), per_window_.lower_bound(window));
  }
  int64_t allowed() const { return allowed_; }
  size_t windows_held() const { return per_window_.size(); }

 private:
  AdmissionRule rule_;
  int64_t allowed_ = 0;
  std::deque<int64_t> in_window_;          // sliding: the admitted sends still in the window
  std::map<int64_t, int64_t> per_window_;  // fixed: admitted per window
  std::optional<int64_t> last_ns_;         // bucket: the previous request's send
  int64_t first_ns_ = 0;                   // stepped bucket: the first request's send
  double tokens_ = 0;                      // bucket
};

// The fixed window a request counts in for the contract's replay: the one its limiter named
// or audit_run placed it in, else the wall clock's at its send.
int64_t window_of(const engine::RequestRecord& record, int64_t start_wall_ns,
                  const AdmissionRule& rule);

// First come, first served under the contract, twice: over the decided requests, and over
// them with the errored ones that may have been admitted (measure_utilisation's readings).
class UtilisationStream {
 public:
  UtilisationStream(const AdmissionRule& rule, size_t identities);
  ~UtilisationStream();
  UtilisationStream(UtilisationStream&&) noexcept;
  UtilisationStream& operator=(UtilisationStream&&) noexcept;
  void begin(int64_t start_wall_ns) { start_wall_ns_ = start_wall_ns; }
  void add(const engine::RequestRecord& record, uint32_t identity);
  // fixed: no request of `identity` will count in the windows below `window` any more.
  void forget_before(uint32_t identity, int64_t window);
  // A record in a window already forgotten: an admission still counts as the limiter's, but
  // is not replayed (so the share can only rise).
  void add_closed(const engine::RequestRecord& record, uint32_t identity);
  Utilisation finish() const;
  size_t windows_held() const;

 private:
  struct Identity;

  AdmissionRule rule_;
  int64_t start_wall_ns_ = 0;
  IdentityStates<Identity> identities_;
};

// Each denial judged once every admission that may have come before it (sent before its reply)
// has come in; what left the window before its send is counted as it comes.
class LockOutStream {
 public:
  LockOutStream(const AdmissionRule& rule, size_t identities, int64_t judge_from_ns);
  ~LockOutStream();
  LockOutStream(LockOutStream&&) noexcept;
  LockOutStream& operator=(LockOutStream&&) noexcept;
  void begin(int64_t start_wall_ns) { start_wall_ns_ = start_wall_ns; }
  void add(const engine::RequestRecord& record, uint32_t identity);
  // fixed: no admission of `identity` will count in the windows below `window` any more; those
  // a denial still waits on are kept until it is judged.
  void forget_before(uint32_t identity, int64_t window);
  // A record in a window already forgotten: an admission, or an error that may have been one,
  // counts as possibly used in every later denial's window, as an unknown request does.
  void add_closed(const engine::RequestRecord& record, uint32_t identity);
  LockOuts finish();
  size_t windows_held() const;

 private:
  struct Identity;
  struct Pending;

  void settle(const Pending& pending);

  AdmissionRule rule_;
  int64_t judge_from_ns_;
  int64_t start_wall_ns_ = 0;
  IdentityStates<Identity> identities_;
  WaitingDenials<Pending> pending_;
  LockOuts found_;
};

}  // namespace rlcheck::checks
