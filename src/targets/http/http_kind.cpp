#include "targets/http/http_kind.hpp"

#include <random>

#include <fmt/format.h>

#include "base/exit_code.hpp"
#include "cli/option_groups.hpp"
#include "http/client_choice.hpp"
#include "targets/http/http_endpoint.hpp"
#include "targets/http/http_probe_sender.hpp"

namespace rlcheck::targets {
namespace {

void add_http_command_options(CLI::App& command, cli::RawOptions& raw) {
  command
      .add_option("URL", raw.url, fmt::format("the endpoint; placeholders {}", cli::k_placeholders))
      ->required();
  cli::add_worker_options(&command, raw);
  cli::add_http_options(&command, raw);
  cli::add_tls_options(&command, raw);
  cli::add_fault_options(&command, raw, true);
  cli::add_clock_options(&command, raw, false);
}

TargetPlan plan_http(const config::Config& config) {
  TargetPlan plan;
  for (const std::string& url : config.http.urls) {
    plan.targets.push_back({[&config, url] {
                              const uint64_t seed =
                                  config.seed ? *config.seed : std::random_device{}();
                              return std::make_unique<HttpEndpoint>(config, url, seed);
                            },
                            &config});
  }
  return plan;
}

void check_shared_http(const config::Config& config, const runner::EnvLookup& env) {
  for (const std::string& url : config.http.urls) {
    auto choice = http::choose_http_client(config.http.client, url, config.http.http2, env);
    if (!choice)
      throw base::usage_error(choice.error());
  }
}

TargetLines http_lines(const config::Config& config) {
  return {{"url", config.http.urls.empty() ? "" : config.http.urls.front()}};
}

RunPacing http_pacing(const config::Config& config) {
  return {std::max<size_t>(config.http.urls.size(), 1), config.http.between_runs,
          !config.http.reset_cmd.empty()};
}

}  // namespace

TargetKind http_kind() {
  TargetKind kind;
  kind.command.name = "http";
  kind.command.summary = "drive an HTTP endpoint";
  kind.command.schemes = {"http", "https"};
  kind.command.positional = "URL";
  kind.command.noun = "endpoint";
  kind.command.limits_from_replies = true;
  kind.command.add_options = add_http_command_options;
  kind.command.fill = cli::fill_http_kind;
  kind.plan = plan_http;
  kind.probe_sender = make_http_probe_sender;
  kind.check_shared = check_shared_http;
  kind.fingerprint = http_lines;
  kind.pacing = http_pacing;
  kind.identity_per_source_address = true;
  return kind;
}

}  // namespace rlcheck::targets
