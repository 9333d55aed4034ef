#pragma once
// A run audited as its records come (--audit stream), so a soak's memory stays flat: each
// record is counted and dropped, and each identity keeps only what its window audit needs (the
// admissions of the current span; a fixed window's count). Records must come in (sent,
// replied) order (engine::Sequencer); the figures are then those summarize_run gives for the
// same records: counts, hints, the contract's worst span and the fixed windows' boundary
// burst, utilisation, lock-outs and retry-hint accuracy. What needs every record kept (the
// timeline, the contract fit) is not built, and the run's stats say so (RunStats::streamed).

#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "checks/hint_stream.hpp"
#include "checks/peak_stream.hpp"
#include "checks/room_stream.hpp"
#include "checks/run_stats.hpp"
#include "checks/stream_state.hpp"
#include "engine/record_log.hpp"

namespace rlcheck::checks {

class StreamAudit {
 public:
  // Why runs audited under `audit` cannot be audited as they go; nullopt: they can.
  static std::optional<std::string> refusal(const AuditParams& audit);

  explicit StreamAudit(const AuditParams& audit);
  StreamAudit(StreamAudit&&) noexcept;
  StreamAudit& operator=(StreamAudit&&) noexcept;
  ~StreamAudit();

  // The start line on the wall clock: fixed windows are placed by it.
  void begin(int64_t start_wall_ns);
  void add(const engine::RequestRecord& record);

  // Writes what was audited into `stats` (from summarize_measures): the counts, the contract's
  // worst span, utilisation and lock-outs, the send span and the memory the contract gives
  // state. Once.
  void finish(RunStats& stats);

  // One record per identity and window index a decided request named: what a strategy's
  // keys_touched reads.
  engine::RecordLog touched() const;
  // When every request so far errored without reaching a connection: the first such error
  // (not counting never-sent ones); nullopt otherwise (and when there was none).
  std::optional<engine::ErrorKind> never_connected() const {
    return reached_ ? std::nullopt : first_unconnected_;
  }
  // Records that came out of (sent, replied) order: counted, not audited.
  uint64_t out_of_order() const { return out_of_order_; }
  // Fixed windows: records that fell in a window already forgotten (its limiter's clock went
  // back): counted, not audited.
  uint64_t closed_window() const { return closed_window_; }
  // Fixed windows: the entries held for them, every audit and identity together.
  size_t windows_held() const;

 private:
  struct Identity;
  // Fixed windows, per identity: how far its limiter's clock runs ahead of ours at least, as
  // the windows it named show (INT64_MIN: none named), and the index below which its windows
  // are forgotten.
  struct Horizon {
    int64_t least_offset_ns = INT64_MIN;
    int64_t forgotten_below = INT64_MIN;
  };

  bool within_horizon(const engine::RequestRecord& record, uint32_t index);
  void forget_windows(uint32_t identity, uint32_t index, int64_t below);

  AuditParams audit_;
  size_t identity_count_;
  int64_t start_wall_ns_ = 0;
  RunStats counts_;
  IdentityStates<Identity> identities_;  // made at their first admission
  std::unique_ptr<UtilisationStream> utilisation_;
  std::unique_ptr<LockOutStream> lockouts_;
  std::unique_ptr<RetryAccuracyStream> hints_;
  std::set<std::pair<uint32_t, int64_t>> touched_;
  std::vector<Horizon> horizons_;  // fixed windows only
  int64_t first_sent_ns_ = INT64_MAX, last_sent_ns_ = INT64_MIN;
  int64_t last_ns_[2] = {INT64_MIN, INT64_MIN};  // the last audited record's sent, replied
  uint64_t out_of_order_ = 0;
  uint64_t closed_window_ = 0;
  bool reached_ = false;  // some request reached a connection
  std::optional<engine::ErrorKind> first_unconnected_;
};

}  // namespace rlcheck::checks
