#include "app/probe_target.hpp"

#include <random>

#include <fmt/format.h>

#include "app/contract_choice.hpp"
#include "app/exit_code.hpp"
#include "app/http_check.hpp"
#include "app/redis_check.hpp"
#include "config/strategy_name.hpp"
#include "http/client_choice.hpp"
#include "http/http_client.hpp"
#include "redis/async_client.hpp"
#include "redis/strategy.hpp"

namespace rlcheck::app {

std::vector<checks::ProbeRequest> ProbeTarget::send(int identity, int64_t count,
                                                    Clock::time_point not_before,
                                                    Clock::time_point deadline) {
  config::LoadConfig load = load_;
  // Every request of this send ends by the deadline, whatever the limiter does with it.
  const auto share = (deadline - std::max(Clock::now(), not_before)) / std::max<int64_t>(1, count);
  const bool capped = share < load.timeout;
  if (capped)
    load.timeout = std::max<config::Nanos>(std::chrono::milliseconds(1),
                                           std::chrono::duration_cast<config::Nanos>(share));
  load.requests = count;
  load.concurrency = 1;
  load.threads = 1;
  load.runs = 1;
  load.not_before = not_before;
  // Request numbers run on across sends: a sliding log's members ({seq}) never collide.
  load.first_seq = static_cast<uint64_t>(requests_sent_);
  engine::RunResult result = run(identity, load);
  if (result.clients_ready == 0 && !result.interrupted)
    throw cannot_test(fmt::format("no connection to {}: {}", describe(), result.connect_error));
  const int64_t offset =
      std::chrono::duration_cast<std::chrono::nanoseconds>(result.start - origin_).count();
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
  return requests;
}

int64_t ProbeTarget::now_ns() const {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - origin_).count();
}

namespace {

uint64_t probe_seed(const config::Config& config) {
  return config.seed
             ? *config.seed
             : std::random_device{}() ^ (static_cast<uint64_t>(std::random_device{}()) << 32);
}

bool mentions_run(const std::string& text) {
  return text.find("{run}") != std::string::npos;
}

class HttpProbeTarget final : public ProbeTarget {
 public:
  explicit HttpProbeTarget(const config::Config& config)
      : url_(config.http.urls.front()),
        target_(make_http_target(config, url_, probe_seed(config))),
        addresses_(config.load.source_addresses) {
    load_ = config.load;
    // Large and random, so that a second probe of the same server meets fresh identities too.
    first_run_ = 1'000'000 + static_cast<int>(target_.seed % 1'000'000'000);
    fresh_ = mentions_run(url_) || addresses_.size() >= 2;
    for (const std::string& header : config.http.headers)
      fresh_ = fresh_ || mentions_run(header);
    if (config.http.body)
      fresh_ = fresh_ || mentions_run(*config.http.body);
  }
  std::string describe() const override { return url_; }
  bool fresh_identities() const override { return fresh_; }

 protected:
  engine::RunResult run(int identity, const config::LoadConfig& load) override {
    target_.placeholders.run = first_run_ + identity;
    target_.concurrency = 1;
    config::LoadConfig each = load;
    // A limiter keyed by the client address: every identity from an address of its own.
    if (!addresses_.empty())
      each.source_addresses = {addresses_[static_cast<size_t>(identity - 1) % addresses_.size()]};
    return engine::execute_run(*http::make_http_client_factory(target_), each);
  }

 private:
  std::string url_;
  http::HttpTarget target_;
  std::vector<std::string> addresses_;
  int first_run_ = 1;
  bool fresh_ = true;
};

class RedisProbeTarget final : public ProbeTarget {
 public:
  explicit RedisProbeTarget(const config::Config& config)
      : session_(open_redis_session(config)), strategy_(config.redis.strategy) {
    load_ = config.load;
    script_ = load_limiter_script(*session_.target.control, config, strategy_);
    const ContractChoice contract = choose_contract(config, strategy_, config.checks.limit);
    params_.kind = strategy_;
    params_.limit = config.checks.limit;
    params_.window_ms = config::to_milliseconds(config.checks.window);
    params_.burst = contract.burst;
    params_.refill = contract.refill;
    params_.instance_id = session_.instance_id;
    params_.script = script_ ? &*script_ : nullptr;
    params_.arg_templates = config.redis.script_args;
    params_.reply = config.redis.reply;
    params_.script_keys = config.redis.script_keys;
    name_ = strategy_ == config::Strategy::script ? config.redis.script_path
                                                  : std::string(config::strategy_name(strategy_));
  }
  // Only the keys this probe created, whatever happened.
  ~RedisProbeTarget() override {
    for (const std::string& key : keys_)
      (void)session_.target.control->call({"DEL", key});
  }
  std::string describe() const override {
    return fmt::format("{} on {}", name_, session_.target.endpoint.display());
  }

 protected:
  engine::RunResult run(int identity, const config::LoadConfig& load) override {
    redis::StrategyParams params = params_;
    params.key = fmt::format("rlcheck:{}:probe:{}", session_.instance_id, identity);
    params.run = identity;
    const auto limiter = redis::make_strategy(params);
    redis::RunTarget target;
    target.endpoint = session_.target.endpoint;
    target.slots = session_.target.control->slot_map();
    target.connect_timeout = load.timeout;
    target.strategy = limiter.get();
    target.seed = session_.seed + static_cast<uint64_t>(identity) * 7919 +
                  static_cast<uint64_t>(requests_sent());
    redis::AsyncClientFactory factory(target);
    engine::RunResult result = engine::execute_run(factory, load);
    for (std::string& key : limiter->keys_touched(result.records)) {
      if (std::find(keys_.begin(), keys_.end(), key) == keys_.end())
        keys_.push_back(std::move(key));
    }
    return result;
  }

 private:
  RedisSession session_;
  config::Strategy strategy_;
  std::optional<redis::LoadedScript> script_;
  redis::StrategyParams params_;
  std::string name_;
  std::vector<std::string> keys_;
};

}  // namespace

std::unique_ptr<ProbeTarget> make_http_probe_target(const config::Config& config) {
  return std::make_unique<HttpProbeTarget>(config);
}

std::unique_ptr<ProbeTarget> make_redis_probe_target(const config::Config& config) {
  return std::make_unique<RedisProbeTarget>(config);
}

}  // namespace rlcheck::app
