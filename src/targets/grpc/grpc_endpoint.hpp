#pragma once
// A gRPC service as the run loop sees it: its calls as the configuration describes them (the
// method's types from --proto, else asked of the service by server reflection before the
// test), the pause and reset command before each run, and the limit and window as given (a service
// advertises none the run could read).

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "config/config.hpp"
#include "runner/target.hpp"
#include "targets/grpc/grpc_calls.hpp"
#include "targets/grpc/grpc_config.hpp"

namespace rlcheck::grpc_target {

class GrpcEndpoint final : public runner::Target {
 public:
  GrpcEndpoint(const config::Config& config, std::string url, uint64_t seed);

  // The calls, made once: the method's types from --proto, else asked of the service by server
  // reflection.
  void prepare_test() override;
  std::string address() const override { return url_; }
  void describe(report::Report& report) const override;
  faults::FaultedRedis faulted_redis() override;
  std::string run_label(int run, int runs) const override;
  std::string records_name() const override { return url_; }
  bool prepare_run(int run, bool leader) override;
  std::chrono::nanoseconds pause_before_run(int run) const override {
    return run > 1 ? grpc_.between_runs : std::chrono::nanoseconds(0);
  }
  runner::StateChoice run_state(int run) const override;
  bool fresh_state_per_run() const override { return !where_written("{run}").empty(); }
  // State `state` is the {run} placeholder.
  runner::RunClients clients(const runner::StateChoice& state,
                             const config::LoadConfig& load) override;
  bool judged_before_runs() const override { return true; }
  std::vector<runner::Judging> judgings(const std::vector<engine::RunResult>& results,
                                        bool interrupted) override;
  std::chrono::milliseconds longest_retry_wait(
      const std::vector<engine::RunResult>& results) const override;

  // Where the calls carry `placeholder` ("--data", "the metadata x-user"); "" when nowhere.
  std::string where_written(std::string_view placeholder) const;
  uint64_t seed() const { return seed_; }

 private:
  // The files that describe the method's types, asked of the service by server reflection.
  std::vector<std::string> described_files(const GrpcOptions& options) const;

  const config::Config& config_;
  const GrpcConfig& grpc_;
  std::string url_;
  uint64_t seed_;
  std::shared_ptr<const GrpcCalls> calls_;  // made by prepare_test; each run's from it
  std::unique_ptr<engine::ClientFactory> factory_;
};

}  // namespace rlcheck::grpc_target
