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
#include <queue>
#include <vector>

#include "checks/contract_audit.hpp"
#include "checks/lockout.hpp"

namespace rlcheck::checks {

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
  Utilisation finish() const;

 private:
  struct Replay;
  struct Identity;

  AdmissionRule rule_;
  int64_t start_wall_ns_ = 0;
  std::vector<std::unique_ptr<Identity>> identities_;
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
  LockOuts finish();

 private:
  struct Identity;
  struct Pending;

  void settle_before(int64_t sent_ns);
  void settle(const Pending& pending);
  Identity& identity(uint32_t index);

  AdmissionRule rule_;
  int64_t judge_from_ns_;
  int64_t start_wall_ns_ = 0;
  std::vector<std::unique_ptr<Identity>> identities_;
  std::vector<Pending> pending_;  // a min-heap by the instant each can be judged at
  LockOuts found_;
};

}  // namespace rlcheck::checks
