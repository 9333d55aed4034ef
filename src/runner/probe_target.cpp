#include "runner/probe_target.hpp"

#include <algorithm>
#include <random>

#include <fmt/format.h>

#include "base/exit_code.hpp"
#include "engine/request_clock.hpp"
#include "runner/http_target.hpp"
#include "runner/redis_target.hpp"

namespace rlcheck::runner {

ProbeTarget::ProbeTarget(const config::Config& config) : load_(config.load) {
  if (load_.virtual_clock)
    virtual_origin_ns_ = engine::next_whole_ms(engine::wall_now_ns());
}

std::vector<checks::ProbeRequest> ProbeTarget::send(int identity, int64_t count,
                                                    Clock::time_point not_before,
                                                    Clock::time_point deadline, bool at_once) {
  config::LoadConfig load = load_;
  // Every request of this send ends by the deadline, whatever the limiter does with it.
  const auto real_start = load.virtual_clock ? Clock::now() : std::max(Clock::now(), not_before);
  const auto share = (deadline - real_start) / (at_once ? 1 : std::max<int64_t>(1, count));
  const bool capped = share < load.timeout;
  if (capped)
    load.timeout = std::max<config::Nanos>(std::chrono::milliseconds(1),
                                           std::chrono::duration_cast<config::Nanos>(share));
  load.requests = count;
  load.concurrency = at_once ? static_cast<int>(count) : 1;
  load.threads = 1;
  load.runs = 1;
  load.not_before = not_before;
  if (load.virtual_clock) {
    // Virtual: the first request at `not_before`'s instant on the timeline (never before one
    // already used), the others a virtual ms apart; `at_once`, all at the same instant.
    constexpr int64_t k_ms = 1'000'000;
    const int64_t wanted =
        std::chrono::duration_cast<std::chrono::nanoseconds>(not_before - origin_).count();
    const int64_t first = std::max((wanted + k_ms - 1) / k_ms * k_ms, virtual_cursor_ns_);
    load.virtual_origin_ns = virtual_origin_ns_ + first;
    load.rate.reset();
    load.stages.clear();
    load.arrivals = config::Arrivals::uniform;
    load.interval = at_once ? config::Nanos{0} : config::Nanos{k_ms};
    load.not_before = {};
    virtual_cursor_ns_ = first + (at_once ? 1 : std::max<int64_t>(1, count)) * k_ms;
  }
  // Request numbers run on across sends: a sliding log's members ({seq}) never collide.
  load.first_seq = static_cast<uint64_t>(requests_sent_);
  engine::RunResult result = run(identity, load);
  if (result.clients_ready == 0 && !result.interrupted)
    throw base::cannot_test(
        fmt::format("no connection to {}: {}", describe(), result.connect_error));
  const int64_t offset =
      load.virtual_clock
          ? result.start_wall_ns - virtual_origin_ns_
          : std::chrono::duration_cast<std::chrono::nanoseconds>(result.start - origin_).count();
  std::vector<checks::ProbeRequest> requests;
  last_error_.clear();
  budget_ran_out_ = false;
  for (const engine::RequestRecord& record : result.records) {
    if (record.outcome == engine::Outcome::error && last_error_.empty()) {
      budget_ran_out_ = capped && record.error == engine::ErrorKind::timeout;
      const auto sample = result.error_samples.find(record.error);
      last_error_ = fmt::format(
          "{}{}",
          record.status != 0 ? fmt::format("status-{}", record.status)
                             : engine::error_kind_name(record.error),
          sample != result.error_samples.end() ? fmt::format(" ({})", sample->second) : "");
    }
    requests.push_back({offset + (record.sent_ns + record.replied_ns) / 2, record.outcome,
                        record.retry_ms, record.replied_ns - record.sent_ns});
  }
  requests_sent_ += count;
  interrupted_ = interrupted_ || result.interrupted;
  results_.push_back(std::move(result));
  name_denial_status();
  return requests;
}

void ProbeTarget::name_denial_status() {
  uint16_t status = 0;
  bool admitted = false;
  for (const engine::RunResult& result : results_) {
    for (const engine::RequestRecord& record : result.records) {
      admitted = admitted || record.outcome == engine::Outcome::allowed;
      if (status == 0 && record.outcome == engine::Outcome::error && record.status != 0)
        status = record.status;
    }
  }
  // nginx denies with 503 by default: after admissions, a 503 or a 4xx reads as a denial.
  if (last_error_.empty() || !admitted || !(status == 503 || (status >= 400 && status < 500)))
    return;
  last_error_ += fmt::format(
      "; status {} after admissions looks like a denial: if it is, pass --denied-status {}", status,
      status);
}

int64_t ProbeTarget::now_ns() const {
  if (load_.virtual_clock)
    return virtual_cursor_ns_;
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - origin_).count();
}

engine::RunResult ProbeTarget::run(int identity, const config::LoadConfig& load) {
  const StateChoice state = state_of(identity);
  config::LoadConfig each = load;
  // A limiter keyed by the client address: every identity from an address of its own.
  const std::vector<std::string>& addresses = load_.source_addresses;
  if (!addresses.empty())
    each.source_addresses = {addresses[static_cast<size_t>(identity - 1) % addresses.size()]};
  const RunClients clients = target().clients(state, each);
  engine::RunResult result = engine::execute_run(*clients.factory, clients.load);
  sent(state, result.records);
  return result;
}

namespace {

uint64_t probe_seed(const config::Config& config) {
  return config.seed
             ? *config.seed
             : std::random_device{}() ^ (static_cast<uint64_t>(std::random_device{}()) << 32);
}

class HttpProbeTarget final : public ProbeTarget {
 public:
  explicit HttpProbeTarget(const config::Config& config)
      : ProbeTarget(config), endpoint_(config, config.http.urls.front(), probe_seed(config)) {
    // Large and random, so that a second probe of the same server meets fresh identities too.
    first_run_ = 1'000'000 + static_cast<int>(endpoint_.seed() % 1'000'000'000);
    addresses_ = static_cast<int>(config.load.source_addresses.size());
  }
  std::string describe() const override { return endpoint_.address(); }
  bool fresh_identities() const override { return endpoint_.fresh_states(); }
  std::string fresh_identity_source() const override { return endpoint_.fresh_state_source(); }
  std::string where_written(std::string_view placeholder) const override {
    return endpoint_.where_written(placeholder);
  }
  int distinct_identities() const override {
    if (addresses_ >= 2)
      return addresses_;
    return ProbeTarget::distinct_identities();
  }

 protected:
  StateChoice state_of(int identity) const override {
    return {first_run_ + identity, endpoint_.seed(), "", true};
  }
  Target& target() override { return endpoint_; }

 private:
  HttpEndpoint endpoint_;
  int first_run_ = 1;
  int addresses_ = 0;  // --source-address: identities cycle through them
};

class RedisProbeTarget final : public ProbeTarget {
 public:
  explicit RedisProbeTarget(const config::Config& config)
      : ProbeTarget(config),
        session_(open_redis_session(config)),
        limiter_(session_, config, config.redis.strategy) {
    limiter_.prepare_test();
  }
  // Only the keys this probe created, whatever happened.
  ~RedisProbeTarget() override { (void)limiter_.delete_keys(keys_); }
  std::string describe() const override {
    return fmt::format("{} on {}", limiter_.records_name(), limiter_.address());
  }
  std::string fresh_identity_source() const override { return "a key of its own"; }

 protected:
  // Identity i is a fresh key under rlcheck:<id>:probe:.
  StateChoice state_of(int identity) const override {
    return {identity,
            session_.seed + static_cast<uint64_t>(identity) * 7919 +
                static_cast<uint64_t>(requests_sent()),
            "probe", true};
  }
  void sent(const StateChoice& state, engine::RecordView records) override {
    for (std::string& key : limiter_.keys_touched(state, records)) {
      if (std::find(keys_.begin(), keys_.end(), key) == keys_.end())
        keys_.push_back(std::move(key));
    }
  }
  Target& target() override { return limiter_; }

 private:
  RedisSession session_;
  RedisTarget limiter_;
  std::vector<std::string> keys_;
};

}  // namespace

std::unique_ptr<ProbeTarget> make_http_probe_target(const config::Config& config) {
  return std::make_unique<HttpProbeTarget>(config);
}

std::unique_ptr<ProbeTarget> make_redis_probe_target(const config::Config& config) {
  return std::make_unique<RedisProbeTarget>(config);
}

}  // namespace rlcheck::runner
