#pragma once
// What `rlcheck probe` sends its requests through: the run loop's targets (each kind makes its
// own, targets/<kind>/), one identity (a fresh limiter state) per phase of the probe, on one
// timeline.

#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "checks/contract_inference.hpp"
#include "config/config.hpp"
#include "engine/run.hpp"
#include "runner/target.hpp"

namespace rlcheck::probe {

class ProbeSender {
 public:
  using Clock = std::chrono::steady_clock;

  explicit ProbeSender(const config::Config& config);
  virtual ~ProbeSender() = default;

  // Sends `count` requests one after another on one connection (with `at_once`, all together,
  // a connection each), speaking for `identity` (a
  // limiter state no other identity shares, when fresh_identities()), the first not before
  // `not_before`. Each request's timeout is the configured one, capped so that all `count` end
  // by `deadline` (a request past its cap is an error, and budget_ran_out() says why). Returns
  // each request's decision on the probe's timeline (ns since the target was made). Throws
  // FatalError(cannot_test) when no connection could be made.
  std::vector<checks::ProbeRequest> send(int identity, int64_t count, Clock::time_point not_before,
                                         Clock::time_point deadline, bool at_once = false);

  // The probe's timeline: the real clock, or under --virtual-clock the next free virtual
  // instant (waiting on it costs nothing; back-to-back requests are a virtual ms apart).
  int64_t now_ns() const;
  bool virtual_clock() const { return load_.virtual_clock; }
  Clock::time_point at(int64_t ns) const { return origin_ + std::chrono::nanoseconds(ns); }
  int64_t requests_sent() const { return requests_sent_; }
  // Every run so far: the responses' headers say what the endpoint advertises.
  const std::vector<engine::RunResult>& results() const { return results_; }
  // The first error of the last send, "" when none: the probe stops on errors.
  const std::string& last_error() const { return last_error_; }
  bool interrupted() const { return interrupted_; }
  // The last send's error was a timeout that the deadline, not --timeout, imposed.
  bool budget_ran_out() const { return budget_ran_out_; }
  // Whether each identity meets a limiter state of its own: an HTTP endpoint needs {run} where
  // it reads the identity, or a source address per identity (--source-address, two or more);
  // else every identity is the same one.
  virtual bool fresh_identities() const { return true; }
  // How many identities meet limiter states of their own: identity i shares identity j's when
  // i - j is a multiple of this (a source address per identity, cycling).
  virtual int distinct_identities() const { return fresh_identities() ? 1 << 20 : 1; }
  // What makes an identity fresh, as the probe's reasons say it ("{run} in the header
  // X-API-Key", "a key of its own"); "" when fresh_identities() is false.
  virtual std::string fresh_identity_source() const { return "a limiter state of its own"; }
  // Where the requests carry `placeholder` ("the header X-API-Key"); "" when nowhere.
  virtual std::string where_written(std::string_view) const { return ""; }

  virtual std::string describe() const = 0;  // the URL, or the Redis and the limiter

 protected:
  // The limiter state identity `identity` meets.
  virtual runner::StateChoice state_of(int identity) const = 0;
  // After a send: what its requests wrote, for clean-up.
  virtual void sent(const runner::StateChoice&, engine::RecordView) {}
  virtual runner::Target& target() = 0;

 private:
  // Appends to last_error_ the --denied-status that would accept a status error that looks like
  // a denial (503 or 4xx after admissions).
  void name_denial_status();
  engine::RunResult run(int identity, const config::LoadConfig& load);

  config::LoadConfig load_;  // one connection, one request at a time

  Clock::time_point origin_ = Clock::now();
  int64_t virtual_origin_ns_ = 0;  // --virtual-clock: the timeline's 0 as a virtual unix instant
  int64_t virtual_cursor_ns_ = 0;  // --virtual-clock: the next instant a request may have
  int64_t requests_sent_ = 0;
  std::vector<engine::RunResult> results_;
  std::string last_error_;
  bool interrupted_ = false;
  bool budget_ran_out_ = false;
};

// A probe's seed: --seed, else drawn, so that a second probe meets fresh identities too.
uint64_t probe_seed(const config::Config& config);

}  // namespace rlcheck::probe
