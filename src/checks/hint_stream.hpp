#pragma once
// Retry-hint accuracy as a run's records come in send order (--audit stream), with state
// bounded by a window per identity: the streaming twin of measure_retry_accuracy for sliding,
// fixed and bucket contracts. Each denial's shortest wait is read when it comes (what surely
// came before it replied before its send), its longest once every admission sent before its
// reply has come in (for a bucket, also every admission replied by the latest of their
// replies). Records must have replied after they were sent (true of any real request).

#include <cstdint>
#include <functional>
#include <memory>
#include <queue>
#include <vector>

#include <tuple>

#include "checks/retry_accuracy.hpp"
#include "checks/stream_state.hpp"

namespace rlcheck::checks {

class RetryAccuracyStream {
 public:
  RetryAccuracyStream(const AdmissionRule& rule, size_t identities,
                      const AccuracyTolerance& tolerance);
  ~RetryAccuracyStream();
  RetryAccuracyStream(RetryAccuracyStream&&) noexcept;
  RetryAccuracyStream& operator=(RetryAccuracyStream&&) noexcept;

  void begin(int64_t start_wall_ns) { start_wall_ns_ = start_wall_ns; }
  // A record with fixed windows placed as audit_run places them, in (sent, replied) order.
  void add(const engine::RequestRecord& record, uint32_t identity);
  RetryAccuracy finish();

 private:
  struct Identity;
  struct Pending;

  // bucket: an admission the replay by reply has still to take.
  struct Unreplayed {
    int64_t replied_ns = 0;
    int64_t sent_ns = 0;
    size_t identity = 0;
    bool operator>(const Unreplayed& other) const {
      return std::tie(replied_ns, sent_ns, identity) >
             std::tie(other.replied_ns, other.sent_ns, other.identity);
    }
  };

  void replay_before(int64_t at_ns);
  void settle_before(int64_t sent_ns);
  void settle(Pending pending);

  AdmissionRule rule_;
  AccuracyTolerance tolerance_;
  int64_t start_wall_ns_ = 0;
  IdentityStates<Identity> identities_;
  WaitingDenials<Pending> pending_;
  std::priority_queue<Unreplayed, std::vector<Unreplayed>, std::greater<>> unreplayed_;
  RetryAccuracy accuracy_;
  SecondGrid grid_;  // the run's sends, for accuracy_.instants_off_second_grid
};

}  // namespace rlcheck::checks
