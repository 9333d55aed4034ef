// execute_run's bookkeeping over clients that decide on the next loop pass: the early stop on
// errors (load.stop_after_errors), the per-node tally merged across worker threads, and the
// schedule the requests leave on (--stages, Poisson arrivals) with its per-stage tallies.

#include <doctest/doctest.h>

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <mutex>

#include <event2/event.h>

#include "engine/identity_map.hpp"
#include "engine/run.hpp"

using namespace rlcheck;
using engine::Decision;
using engine::ErrorKind;
using engine::Outcome;

namespace {

// Decides each request one loop pass after start(): an error when `errs(seq)`, else allowed;
// even requests name node a:1, odd ones b:2.
class PassClient final : public engine::Client {
 public:
  using StartFn = std::function<void(const engine::RequestTicket&)>;
  PassClient(event_base* base, engine::ClientListener& listener, int slot,
             std::function<bool(uint64_t)> errs, StartFn on_start)
      : listener_(listener),
        slot_(slot),
        errs_(std::move(errs)),
        on_start_(std::move(on_start)),
        pass_(event_new(base, -1, 0, &PassClient::on_pass, this), &event_free) {}

  void connect() override { listener_.on_connected(slot_, true, {}); }
  void start(const engine::RequestTicket& ticket) override {
    seq_ = ticket.seq;
    if (on_start_)
      on_start_(ticket);
    event_active(pass_.get(), EV_TIMEOUT, 0);
  }
  void abort(ErrorKind why) override {
    event_del(pass_.get());
    Decision decision;
    decision.error = why;
    listener_.on_decision(slot_, std::move(decision));
  }
  bool alive() const override { return true; }

 private:
  static void on_pass(int, short, void* arg) {
    auto* self = static_cast<PassClient*>(arg);
    Decision decision;
    if (self->errs_(self->seq_)) {
      decision.error = ErrorKind::server_error;
      decision.error_message = "limiter exploded";
    } else {
      decision.outcome = Outcome::allowed;
    }
    decision.node = self->seq_ % 2 == 0 ? "a:1" : "b:2";
    self->listener_.on_decision(self->slot_, std::move(decision));
  }

  engine::ClientListener& listener_;
  int slot_;
  std::function<bool(uint64_t)> errs_;
  StartFn on_start_;
  std::unique_ptr<event, void (*)(event*)> pass_;
  uint64_t seq_ = 0;
};

class PassFactory final : public engine::ClientFactory {
 public:
  explicit PassFactory(std::function<bool(uint64_t)> errs, PassClient::StartFn on_start = nullptr)
      : errs_(std::move(errs)), on_start_(std::move(on_start)) {}
  std::unique_ptr<engine::Client> make(event_base* base, engine::LoopShared*,
                                       engine::ClientListener& listener, int slot, int) override {
    return std::make_unique<PassClient>(base, listener, slot, errs_, on_start_);
  }

 private:
  std::function<bool(uint64_t)> errs_;
  PassClient::StartFn on_start_;
};

config::LoadConfig load_of(int64_t requests, int concurrency, int threads) {
  config::LoadConfig load;
  load.requests = requests;
  load.concurrency = concurrency;
  load.threads = threads;
  load.timeout = std::chrono::seconds(5);
  return load;
}

int64_t count_errors(const engine::RunResult& result) {
  return std::count_if(result.records.begin(), result.records.end(),
                       [](const auto& record) { return record.outcome == Outcome::error; });
}

}  // namespace

TEST_CASE("execute_run: requests are counted per node, merged over the worker threads") {
  PassFactory factory([](uint64_t) { return false; });
  const engine::RunResult result = engine::execute_run(factory, load_of(101, 6, 3));
  CHECK(result.records.size() == 101);
  CHECK(result.by_node == std::map<std::string, int64_t>{{"a:1", 51}, {"b:2", 50}});
  CHECK_FALSE(result.stopped_on_errors);
}

TEST_CASE("execute_run: once errors exceed stop_after_errors, no more requests leave") {
  PassFactory factory([](uint64_t) { return true; });
  config::LoadConfig load = load_of(1000, 4, 2);

  SUBCASE("with the limit: stopped, only the requests sent are recorded") {
    load.stop_after_errors = 3;
    const engine::RunResult result = engine::execute_run(factory, load);
    CHECK(result.stopped_on_errors);
    // The 4th error stops the run; the other connections' requests in flight finish.
    CHECK(count_errors(result) >= 4);
    CHECK(result.records.size() <= 4 + 3);
    CHECK(count_errors(result) == static_cast<int64_t>(result.records.size()));
    CHECK(result.error_samples.count(ErrorKind::not_sent) == 0);
  }
  SUBCASE("without: every request is sent") {
    const engine::RunResult result = engine::execute_run(factory, load);
    CHECK_FALSE(result.stopped_on_errors);
    CHECK(result.records.size() == 1000);
  }
}

TEST_CASE("execute_run: errors within stop_after_errors do not stop the run") {
  PassFactory factory([](uint64_t seq) { return seq % 10 == 0; });  // 10 of 100
  config::LoadConfig load = load_of(100, 4, 1);
  load.stop_after_errors = 10;
  const engine::RunResult result = engine::execute_run(factory, load);
  CHECK_FALSE(result.stopped_on_errors);
  CHECK(result.records.size() == 100);
  CHECK(count_errors(result) == 10);
}

TEST_CASE("execute_run: the open model drops the requests still waiting for their due time") {
  // One request a second over 20 connections: 19 wait for their turn when the first errors.
  PassFactory factory([](uint64_t) { return true; });
  config::LoadConfig load = load_of(20, 20, 1);
  load.rate = config::Rate{1, std::chrono::seconds(1)};
  load.stop_after_errors = 0;
  const engine::RunResult result = engine::execute_run(factory, load);
  CHECK(result.stopped_on_errors);
  REQUIRE(result.records.size() == 1);
  CHECK(result.records[0].seq == 0);
}

TEST_CASE("execute_run: under the virtual clock each request is recorded at its virtual instant") {
  std::mutex mutex;
  std::map<uint64_t, engine::RequestClock> clocks;    // seq -> the clock its start() was given
  std::map<uint32_t, std::vector<uint64_t>> started;  // identity -> seqs in the order started
  PassFactory factory([](uint64_t) { return false; },
                      [&](const engine::RequestTicket& ticket) {
                        std::lock_guard lock(mutex);
                        clocks[ticket.seq] = ticket.clock;
                        started[ticket.identity].push_back(ticket.seq);
                      });
  config::LoadConfig load = load_of(300, 4, 2);
  load.identities = 7;
  load.rate = config::Rate{3, std::chrono::seconds(7)};  // an instant every 2333.33 ms
  load.virtual_clock = true;
  load.virtual_origin_ns = 1'700'000'000'000'000'000;
  load.clock_skews = {std::chrono::milliseconds(0), std::chrono::milliseconds(-250)};
  const engine::RunResult result = engine::execute_run(factory, load);

  CHECK(result.virtual_clock);
  CHECK(result.start_wall_ns == load.virtual_origin_ns);
  REQUIRE(result.records.size() == 300);
  for (const engine::RequestRecord& record : result.records) {
    const int64_t instant =
        static_cast<int64_t>(record.seq) * 7'000'000'000 / 3 / 1'000'000 * 1'000'000;  // whole ms
    CHECK(record.sent_ns == instant);
    CHECK(record.replied_ns == instant);
    CHECK(record.identity == record.seq % 7);
    const engine::RequestClock& clock = clocks.at(record.seq);
    CHECK(clock.virtual_unix_ns == load.virtual_origin_ns + instant);
    // The n-th request of an identity is on skew n mod 2.
    CHECK(clock.skew_ns == ((record.seq / 7) % 2 == 1 ? -250'000'000 : 0));
  }
  CHECK(result.duration_ns == 299LL * 7'000'000'000 / 3 / 1'000'000 * 1'000'000);
  for (const auto& [identity, seqs] : started)
    CHECK(std::is_sorted(seqs.begin(), seqs.end()));
}

TEST_CASE("execute_run: each request's identity is drawn once, given to the client and recorded") {
  std::mutex mutex;
  std::map<uint64_t, uint32_t> told;  // seq -> the identity its start() was given
  PassFactory factory([](uint64_t seq) { return seq >= 150; },
                      [&](const engine::RequestTicket& ticket) {
                        std::lock_guard lock(mutex);
                        told[ticket.seq] = ticket.identity;
                      });
  config::LoadConfig load = load_of(200, 4, 2);
  load.identities = 10;
  load.identity_dist = {config::IdentityShape::hot, 0.5};
  load.identity_seed = 42;
  load.stop_after_errors = 0;  // the first error stops the run: the rest are never sent
  const engine::RunResult result = engine::execute_run(factory, load);
  const engine::IdentityMap map(load.identity_dist, load.identities, load.identity_seed);
  REQUIRE(result.records.size() >= 150);
  int64_t hot = 0;
  for (const engine::RequestRecord& record : result.records) {
    CHECK(record.identity == map.of(record.seq));
    CHECK(told.at(record.seq) == record.identity);
    hot += record.identity == 0 ? 1 : 0;
  }
  CHECK(hot > 0);
  CHECK(hot < static_cast<int64_t>(result.records.size()));
}

TEST_CASE("execute_run: requests never sent are recorded for the identity they were drawn for") {
  // Connections that are refused: no request leaves, each is recorded as not sent.
  class Refused final : public engine::Client {
   public:
    Refused(engine::ClientListener& listener, int slot) : listener_(listener), slot_(slot) {}
    void connect() override { listener_.on_connected(slot_, false, "refused"); }
    void start(const engine::RequestTicket&) override {}
    void abort(ErrorKind) override {}
    bool alive() const override { return false; }

   private:
    engine::ClientListener& listener_;
    int slot_;
  };
  class RefusedFactory final : public engine::ClientFactory {
   public:
    std::unique_ptr<engine::Client> make(event_base*, engine::LoopShared*,
                                         engine::ClientListener& listener, int slot, int) override {
      return std::make_unique<Refused>(listener, slot);
    }
  } factory;
  config::LoadConfig load = load_of(50, 2, 1);
  load.identities = 5;
  load.identity_dist = {config::IdentityShape::zipf, 1.1};
  engine::LiveStats live;
  engine::RunHooks hooks;
  hooks.live = &live;
  const engine::RunResult result = engine::execute_run(factory, load, hooks);
  const engine::IdentityMap map(load.identity_dist, load.identities, load.identity_seed);
  REQUIRE(result.records.size() == 50);
  for (const engine::RequestRecord& record : result.records) {
    CHECK(record.error == ErrorKind::not_sent);
    CHECK(record.identity == map.of(record.seq));
  }
  // The live counts say what the report says: 50 errors, all not sent, none sent.
  const engine::LiveSnapshot counted = live.snapshot();
  CHECK(counted.total.sent == 0);
  CHECK(counted.total.decided[static_cast<size_t>(engine::Outcome::error)] == 50);
  CHECK(counted.errors[static_cast<size_t>(ErrorKind::not_sent)] == 50);
}

TEST_CASE("execute_run: with only_identity every request speaks for that identity") {
  std::mutex mutex;
  std::vector<uint32_t> told;
  PassFactory factory([](uint64_t) { return false; },
                      [&](const engine::RequestTicket& ticket) {
                        std::lock_guard lock(mutex);
                        told.push_back(ticket.identity);
                      });
  config::LoadConfig load = load_of(20, 3, 1);
  load.identities = 10;
  load.identity_dist = {config::IdentityShape::zipf, 2};
  load.first_seq = 1000;
  load.only_identity = 7;
  const engine::RunResult result = engine::execute_run(factory, load);
  REQUIRE(result.records.size() == 20);
  for (const engine::RequestRecord& record : result.records)
    CHECK(record.identity == 7);
  CHECK(told == std::vector<uint32_t>(20, 7));
}

TEST_CASE("execute_run: under the virtual clock the start line is a whole millisecond") {
  PassFactory factory([](uint64_t) { return false; });
  config::LoadConfig load = load_of(5, 2, 1);
  load.interval = std::chrono::minutes(1);
  load.virtual_clock = true;
  const engine::RunResult result = engine::execute_run(factory, load);
  CHECK(result.start_wall_ns % 1'000'000 == 0);
  CHECK(result.duration_ns == 4LL * 60'000'000'000);
}

TEST_CASE("execute_run: --stages are tallied per stage, requests never leave before due") {
  PassFactory factory([](uint64_t seq) { return seq % 10 == 0; });
  config::LoadConfig load = load_of(0, 8, 2);
  // Up to 2000/s over 100 ms (100 requests), then down to 0 over 100 ms (100 more).
  load.stages = {{std::chrono::milliseconds(100), 2000}, {std::chrono::milliseconds(100), 0}};
  load.requests = 200;
  SUBCASE("uniform") {}
  SUBCASE("poisson") {
    load.arrivals = config::Arrivals::poisson;
    load.schedule_seed = 11;
  }
  const engine::RunResult result = engine::execute_run(factory, load);
  REQUIRE(result.schedule != nullptr);
  REQUIRE(result.records.size() == 200);
  for (const engine::RequestRecord& record : result.records)
    CHECK(record.sent_ns >= result.schedule->due(record.seq).count());
  CHECK(result.lateness_ns.count() == 200);
  REQUIRE(result.stages.size() == 2);
  uint64_t planned = 0;
  for (size_t k = 0; k < 2; ++k) {
    const engine::StageTally& stage = result.stages[k];
    CAPTURE(k);
    CHECK(stage.planned == result.schedule->stage_planned(k));
    CHECK(stage.sent == stage.planned);
    CHECK(stage.denied == 0);
    CHECK(stage.allowed + stage.errors == stage.sent);
    CHECK(stage.latency_ns.count() == stage.allowed);
    CHECK(stage.lateness_ns.count() == stage.sent);
    // The errors are the requests numbered 0 mod 10 that were due in this stage.
    uint64_t errors = 0;
    for (uint64_t seq = 0; seq < 200; ++seq)
      errors += result.schedule->stage_of(seq) == static_cast<int>(k) && seq % 10 == 0 ? 1 : 0;
    CHECK(stage.errors == errors);
    planned += stage.planned;
  }
  CHECK(planned == 200);
}

TEST_CASE("execute_run: --stages on the virtual clock, each request at its planned instant") {
  PassFactory factory([](uint64_t) { return false; });
  config::LoadConfig load = load_of(0, 3, 1);
  load.identities = 3;
  load.stages = {{std::chrono::hours(1), 1}, {std::chrono::hours(1), 0}};  // 1800 + 1800
  load.requests = 3600;
  load.arrivals = config::Arrivals::poisson;
  load.virtual_clock = true;
  const engine::RunResult result = engine::execute_run(factory, load);
  REQUIRE(result.records.size() == 3600);
  for (const engine::RequestRecord& record : result.records)
    CHECK(record.sent_ns == result.schedule->virtual_ns(record.seq));
  CHECK(result.lateness_ns.count() == 0);
  REQUIRE(result.stages.size() == 2);
  CHECK(result.stages[0].sent + result.stages[1].sent == 3600);
  CHECK(result.stages[0].sent == result.stages[0].planned);
}
