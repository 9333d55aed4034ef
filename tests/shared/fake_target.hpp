#pragma once
// A fake target for unit tests of the run loop and the table of kinds: no Redis, no sockets.
// Each request is decided one loop pass after it starts: allowed while its run has admitted
// fewer than the limit, else denied. Every call the loop makes is written down, in order.

#include <event2/event.h>

#include <memory>
#include <string>
#include <vector>

#include "engine/client.hpp"
#include "runner/target.hpp"

namespace rlcheck::test {

using engine::Decision;
using engine::ErrorKind;
using engine::Outcome;

// How the fake limiter answers.
struct Behaviour {
  int64_t limit = 5;                  // admissions per limiter state, then denials
  bool connects = true;               // false: no connection becomes ready
  ErrorKind error = ErrorKind::none;  // every request errors so, when set
};

// Decides each request one loop pass after start(): allowed while its state (the run) has
// admitted fewer than `limit`, else denied; one thread, so the counts need no lock.
class FakeClient final : public engine::Client {
 public:
  FakeClient(event_base* base, engine::ClientListener& listener, int slot,
             const Behaviour& behaviour, int64_t& admitted)
      : listener_(listener),
        slot_(slot),
        behaviour_(behaviour),
        admitted_(admitted),
        pass_(event_new(base, -1, 0, &FakeClient::on_pass, this), &event_free) {}

  void connect() override {
    listener_.on_connected(slot_, behaviour_.connects, behaviour_.connects ? "" : "refused");
  }
  void start(const engine::RequestTicket&) override { event_active(pass_.get(), EV_TIMEOUT, 0); }
  void abort(ErrorKind why) override {
    event_del(pass_.get());
    Decision decision;
    decision.error = why;
    listener_.on_decision(slot_, std::move(decision));
  }
  bool alive() const override { return behaviour_.connects; }

 private:
  static void on_pass(int, short, void* arg) {
    auto* self = static_cast<FakeClient*>(arg);
    Decision decision;
    if (self->behaviour_.error != ErrorKind::none) {
      decision.error = self->behaviour_.error;
      decision.error_message = "connection refused by the fake";
    } else if (self->admitted_ < self->behaviour_.limit) {
      ++self->admitted_;
      decision.outcome = Outcome::allowed;
    } else {
      decision.outcome = Outcome::denied;
    }
    self->listener_.on_decision(self->slot_, std::move(decision));
  }

  engine::ClientListener& listener_;
  int slot_;
  const Behaviour& behaviour_;
  int64_t& admitted_;
  std::unique_ptr<event, void (*)(event*)> pass_;
};

class FakeFactory final : public engine::ClientFactory {
 public:
  FakeFactory(const Behaviour& behaviour, int64_t& admitted)
      : behaviour_(behaviour), admitted_(admitted) {}
  std::unique_ptr<engine::Client> make(event_base* base, engine::LoopShared*,
                                       engine::ClientListener& listener, int slot, int) override {
    return std::make_unique<FakeClient>(base, listener, slot, behaviour_, admitted_);
  }

 private:
  const Behaviour& behaviour_;
  int64_t& admitted_;
};

// A target whose every call is written to `calls`, in order.
class FakeTarget final : public runner::Target {
 public:
  FakeTarget(const config::Config& config, Behaviour behaviour)
      : config_(config), behaviour_(behaviour) {}

  std::vector<std::string> calls;
  bool judged_early = true;
  std::vector<int64_t> judged_limits;  // judged after the runs: one configuration per limit
  int interrupt_before_run = 0;        // prepare_run says Ctrl-C came before this run

  void prepare_test() override { calls.push_back("prepare_test"); }
  std::string address() const override { return "fake://limiter"; }
  void describe(report::Report& report) const override { report.target.url = address(); }
  faults::FaultedRedis faulted_redis() override { return {}; }
  std::string run_label(int run, int) const override { return std::to_string(run); }
  std::string records_name() const override { return "fake"; }
  bool prepare_run(int run, bool leader) override {
    calls.push_back(fmt("prepare_run", run) + (leader ? "" : " follower"));
    return run != interrupt_before_run;
  }
  runner::StateChoice run_state(int run) const override { return {run, 0, "fake", false}; }
  runner::RunClients clients(const runner::StateChoice& state,
                             const config::LoadConfig& load) override {
    calls.push_back(fmt("clients", state.state));
    admitted_ = 0;  // each run meets a fresh state
    factory_ = std::make_unique<FakeFactory>(behaviour_, admitted_);
    return {factory_.get(), load, "", {}, {}};
  }
  runner::StateAudit audit_state(int run, engine::RecordView records) override {
    calls.push_back(fmt("audit_state", run));
    runner::StateAudit audit;
    audit.keys = {fmt("key", run)};
    audit.key_ttls = {{fmt("key", run), static_cast<int64_t>(records.size())}};
    return audit;
  }
  void clean_up(int run, const runner::StateAudit& audit, const std::vector<engine::RequestRecord>&,
                std::vector<std::string>& left) override {
    calls.push_back(fmt("clean_up", run));
    left.insert(left.end(), audit.keys.begin(), audit.keys.end());
  }
  bool judged_before_runs() const override { return judged_early; }
  std::vector<runner::Judging> judgings(const std::vector<engine::RunResult>& results,
                                        bool) override {
    calls.push_back(fmt("judgings", static_cast<int>(results.size())));
    std::vector<runner::Judging> judgings;
    for (const int64_t limit :
         judged_early ? std::vector<int64_t>{config_.checks.limit} : judged_limits) {
      runner::Judging judging;
      judging.config = config_;
      judging.config.checks.limit = limit;
      judging.key_ttl_applies = false;
      judging.retry_hint_optional = true;
      judgings.push_back(judging);
    }
    return judgings;
  }
  std::chrono::milliseconds longest_retry_wait(
      const std::vector<engine::RunResult>&) const override {
    return std::chrono::milliseconds(0);
  }

 private:
  static std::string fmt(const std::string& what, int run) {
    return what + " " + std::to_string(run);
  }

  const config::Config& config_;
  Behaviour behaviour_;
  int64_t admitted_ = 0;
  std::unique_ptr<FakeFactory> factory_;
};

}  // namespace rlcheck::test
