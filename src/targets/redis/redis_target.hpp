#pragma once
// A Redis limiter as the run loop sees it: a built-in strategy or --script on the session's
// Redis, a fresh key per run (or --key, cleared by --reset), its keys' TTLs read after each
// run and the keys rlcheck named deleted.

#include <memory>
#include <optional>
#include <string>

#include "config/config.hpp"
#include "judging/contract_choice.hpp"
#include "redis/async_client.hpp"
#include "redis/strategy.hpp"
#include "runner/target.hpp"
#include "targets/redis/redis_session.hpp"

namespace rlcheck::targets {

class RedisTarget final : public runner::Target {
 public:
  // `time_source`: where a built-in strategy reads now (client: the name gets "@client").
  RedisTarget(RedisSession& session, const config::Config& config, config::Strategy strategy,
              config::TimeSource time_source = config::TimeSource::redis);

  void prepare_test() override;
  std::string address() const override;
  void describe(report::Report& report) const override;
  faults::FaultedRedis faulted_redis() override;
  std::string run_label(int run, int runs) const override;
  std::string records_name() const override;
  bool prepare_run(int run, bool leader) override;
  std::optional<engine::ClockReading> read_limiter_clock() override;
  runner::RunClients clients(const runner::StateChoice& state,
                             const config::LoadConfig& load) override;
  runner::StateChoice run_state(int run) const override;
  bool fresh_state_per_run() const override { return !config_.redis.key; }
  runner::StateAudit audit_state(int run, engine::RecordView records) override;
  void clean_up(int run, const runner::StateAudit& audit,
                const std::vector<engine::RequestRecord>& retried,
                std::vector<std::string>& left) override;
  bool judged_before_runs() const override { return true; }
  std::vector<runner::Judging> judgings(const std::vector<engine::RunResult>& results,
                                        bool interrupted) override;
  std::chrono::milliseconds longest_retry_wait(
      const std::vector<engine::RunResult>& results) const override;

  // The keys a state's requests wrote (a probe deletes them at its end).
  std::vector<std::string> keys_touched(const runner::StateChoice& state,
                                        engine::RecordView records);
  // DEL of each key; those that could not be deleted (from the first that failed).
  std::vector<std::string> delete_keys(const std::vector<std::string>& keys);

 private:
  redis::StrategyParams params_of(const runner::StateChoice& state) const;

  RedisSession& session_;
  const config::Config& config_;
  config::Strategy strategy_;
  config::TimeSource time_source_;
  std::string name_;
  judging::ContractChoice bucket_;  // the burst and refill a bucket strategy is given
  std::optional<redis::LoadedScript> script_;
  // --release-script: loaded with the script; its strategy made per run like the limiter's.
  std::optional<redis::LoadedScript> release_script_;
  std::unique_ptr<redis::Strategy> release_;
  report::ReleaseCounts releases_;  // over every run
  // The clients of the current run: its limiter, what they connect to, the factory.
  std::unique_ptr<redis::Strategy> limiter_;
  std::unique_ptr<redis::RunTarget> run_target_;
  std::unique_ptr<redis::AsyncClientFactory> factory_;
};

}  // namespace rlcheck::targets
