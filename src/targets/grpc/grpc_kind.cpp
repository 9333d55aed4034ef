#include "targets/grpc/grpc_kind.hpp"

#include <random>

#include "targets/grpc/grpc_command.hpp"
#include "targets/grpc/grpc_config.hpp"
#include "targets/grpc/grpc_endpoint.hpp"

namespace rlcheck::targets {
namespace {

using grpc_target::GrpcEndpoint;

TargetPlan plan_grpc(const config::Config& config) {
  TargetPlan plan;
  for (const std::string& url : grpc_target::grpc_config(config).urls) {
    plan.targets.push_back({[&config, url] {
                              const uint64_t seed =
                                  config.seed ? *config.seed : std::random_device{}();
                              return std::make_unique<GrpcEndpoint>(config, url, seed);
                            },
                            &config});
  }
  return plan;
}

// `rlcheck probe grpc://HOST:PORT`: identity i is the {run} placeholder, a number drawn per
// probe plus i.
class GrpcProbeSender final : public probe::ProbeSender {
 public:
  explicit GrpcProbeSender(const config::Config& config)
      : ProbeSender(config),
        endpoint_(config, grpc_target::grpc_config(config).urls.front(),
                  probe::probe_seed(config)) {
    // Large and random, so that a second probe of the same service meets fresh identities too.
    first_run_ = 1'000'000 + static_cast<int>(endpoint_.seed() % 1'000'000'000);
    endpoint_.prepare_test();
  }
  std::string describe() const override { return endpoint_.address(); }
  bool fresh_identities() const override { return !where_written("{run}").empty(); }
  std::string fresh_identity_source() const override {
    const std::string where = where_written("{run}");
    return where.empty() ? "" : "{run} in " + where;
  }
  std::string where_written(std::string_view placeholder) const override {
    return endpoint_.where_written(placeholder);
  }

 protected:
  runner::StateChoice state_of(int identity) const override {
    return {first_run_ + identity, endpoint_.seed(), "", true};
  }
  runner::Target& target() override { return endpoint_; }

 private:
  GrpcEndpoint endpoint_;
  int first_run_ = 1;
};

std::unique_ptr<probe::ProbeSender> grpc_probe_sender(const config::Config& config) {
  return std::make_unique<GrpcProbeSender>(config);
}

void check_shared_grpc(const config::Config&, const runner::EnvLookup&) {}

TargetLines grpc_lines(const config::Config& config) {
  const grpc_target::GrpcConfig& grpc = grpc_target::grpc_config(config);
  return {{"url", grpc.urls.front()}, {"method", grpc.calls.method}, {"data", grpc.calls.data}};
}

RunPacing grpc_pacing(const config::Config& config) {
  const grpc_target::GrpcConfig& grpc = grpc_target::grpc_config(config);
  return {std::max<size_t>(grpc.urls.size(), 1), grpc.between_runs, !grpc.reset_cmd.empty()};
}

}  // namespace

TargetKind grpc_kind() {
  TargetKind kind;
  kind.command = grpc_target::grpc_command();
  kind.plan = plan_grpc;
  kind.probe_sender = grpc_probe_sender;
  kind.check_shared = check_shared_grpc;
  kind.fingerprint = grpc_lines;
  kind.pacing = grpc_pacing;
  return kind;
}

}  // namespace rlcheck::targets
