#include "targets/grpc/grpc_endpoint.hpp"

#include <fmt/format.h>

#include "base/exit_code.hpp"
#include "judging/judgement.hpp"
#include "targets/grpc/grpc_calls.hpp"
#include "targets/grpc/grpc_client.hpp"
#include "targets/grpc/server_reflection.hpp"
#include "targets/state_between_runs.hpp"

namespace rlcheck::grpc_target {

GrpcEndpoint::GrpcEndpoint(const config::Config& config, std::string url, uint64_t seed)
    : config_(config), grpc_(grpc_config(config)), url_(std::move(url)), seed_(seed) {}

void GrpcEndpoint::describe(report::Report& report) const {
  report::Target& target = report.target;
  target.url = url_;
  target.method = grpc_.calls.method;
  target.name = url_;
  target.limiter = grpc_.calls.method;
  target.rows = {{"method", grpc_.calls.method}};
  target.clock = "the service's own clock";
  target.noun = "service";
  std::vector<std::string> told = grpc_.calls.metadata;
  told.push_back(grpc_.calls.data);
  report.params.clock_skew_read =
      engine::any_reads_clock(told, engine::PlaceholderTemplate::Unknown::keep);
}

void GrpcEndpoint::prepare_test() {
  if (calls_ != nullptr)
    return;
  GrpcOptions options = grpc_.calls;
  options.address = address_of(url_);
  options.use_tls = uses_tls(url_);
  if (options.proto_files.empty())
    options.described_files = described_files(options);
  // The method and the options that read its types, checked against them (with --proto, when
  // the command line was read too).
  auto made = GrpcCalls::make(options);
  if (!made)
    throw base::usage_error(made.error());
  calls_ = std::move(*made);
}

std::vector<std::string> GrpcEndpoint::described_files(const GrpcOptions& options) const {
  const auto method = GrpcCalls::split_method(options.method);
  auto pem = GrpcCalls::read_tls_pem(options);
  if (!method || !pem)  // checked when the command line was read
    throw base::usage_error(method ? pem.error() : "--method: not pkg.Service/Method");
  auto described = describe_service(options, *pem, method->first, options.timeout);
  if (!described) {
    const ReflectionFailure& failure = described.error();
    if (failure.kind == ReflectionFailure::Kind::unknown_service)
      throw base::usage_error(failure.message);
    throw base::cannot_test(failure.message);
  }
  return std::move(*described);
}

faults::FaultedRedis GrpcEndpoint::faulted_redis() {
  return targets::limiter_redis_faulted(config_);
}

std::string GrpcEndpoint::run_label(int run, int runs) const {
  return fmt::format("run {}/{}", run, runs);
}

bool GrpcEndpoint::prepare_run(int run, bool leader) {
  return targets::prepare_state(config_, grpc_.between_runs, grpc_.reset_cmd, run, leader);
}

runner::StateChoice GrpcEndpoint::run_state(int run) const {
  return {run, seed_ + static_cast<uint64_t>(run), "", false};
}

runner::RunClients GrpcEndpoint::clients(const runner::StateChoice& state,
                                         const config::LoadConfig& load) {
  prepare_test();  // the loop and probe have; made once
  factory_.reset();
  factory_ = make_grpc_client_factory(calls_->for_run(state.state, state.seed, load.timeout));
  runner::RunClients clients;
  clients.factory = factory_.get();
  clients.load = load;
  return clients;
}

std::string GrpcEndpoint::where_written(std::string_view placeholder) const {
  if (grpc_.calls.data.find(placeholder) != std::string::npos)
    return "--data";
  for (const std::string& entry : grpc_.calls.metadata) {
    if (entry.find(placeholder) != std::string::npos)
      return fmt::format("the metadata {}", entry.substr(0, entry.find(':')));
  }
  return "";
}

std::vector<runner::Judging> GrpcEndpoint::judgings(const std::vector<engine::RunResult>&, bool) {
  runner::Judging judging;
  judging.config = config_;
  judging.key_ttl_applies = false;
  judging.retry_hint_optional = !grpc_.calls.require_hint;
  judging.reset_before_each_run = !grpc_.reset_cmd.empty();
  judging.state_note = targets::earlier_state_note(!where_written("{run}").empty() ||
                                                   !where_written("{id}").empty());
  return {judging};
}

std::chrono::milliseconds GrpcEndpoint::longest_retry_wait(
    const std::vector<engine::RunResult>&) const {
  return judging::longest_retry_wait(config_);
}

}  // namespace rlcheck::grpc_target
