#include "targets/grpc/grpc_command.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "base/exit_code.hpp"
#include "cli/option_groups.hpp"
#include "config/duration.hpp"
#include "engine/placeholder_template.hpp"
#include "targets/grpc/grpc_calls.hpp"
#include "targets/grpc/grpc_config.hpp"

namespace rlcheck::grpc_target {
namespace {

constexpr std::string_view k_kind = "grpc";

// The grpc kind's options as typed, beside the shared RawOptions (--data, --between-runs,
// --reset-cmd, --no-require-retry-after and, from probe and compare, --method).
struct GrpcRaw {
  std::string address;                // the command's ADDRESS
  std::optional<std::string> method;  // the command's --method
  std::vector<std::string> protos;
  std::vector<std::string> import_paths;
  std::vector<std::string> metadata;
  std::string denied_code = "RESOURCE_EXHAUSTED";
  std::vector<std::string> denied_when;
  std::optional<std::string> hint_field;
  int64_t channels = 1;
};

GrpcRaw& own_raw(cli::RawOptions& raw) {
  std::shared_ptr<void>& slot = raw.kind_raw[std::string(k_kind)];
  if (!slot)
    slot = std::make_shared<GrpcRaw>();
  return *static_cast<GrpcRaw*>(slot.get());
}

GrpcRaw typed_raw(const cli::RawOptions& raw) {
  const auto found = raw.kind_raw.find(k_kind);
  return found == raw.kind_raw.end() ? GrpcRaw{}
                                     : *static_cast<const GrpcRaw*>(found->second.get());
}

template <typename T>
void add_once(CLI::App& command, const std::string& name, T& target, const std::string& help) {
  if (command.get_option_no_throw(name) == nullptr)
    command.add_option(name, target, help);
}

void add_call_options(CLI::App& command, cli::RawOptions& raw) {
  GrpcRaw& own = own_raw(raw);
  add_once(command, "--proto", own.protos,
           "gRPC: a .proto file that defines the method's messages, repeatable (default: asked "
           "of the service by server reflection)");
  add_once(
      command, "--import-path", own.import_paths,
      "gRPC: where --proto files' imports are found, repeatable (default: each file's folder)");
  add_once(command, "--metadata", own.metadata,
           "gRPC: 'key: value' sent with every call, repeatable; placeholders as in --data");
  add_once(command, "--denied-code", own.denied_code,
           "gRPC: the status a denial ends with, by name or number (default RESOURCE_EXHAUSTED)");
  add_once(command, "--denied-when", own.denied_when,
           "gRPC: FIELD=VALUE: an OK response whose field has the value is a denial (Envoy's rate "
           "limit service: overall_code=OVER_LIMIT), repeatable");
  if (command.get_option_no_throw("--hint-field") == nullptr) {
    cli::optional_option(&command, "--hint-field", own.hint_field,
                         "gRPC: the retry hint in an OK response, a Duration or seconds "
                         "(statuses.0.duration_until_reset)");
  }
  add_once(command, "--channels", own.channels,
           "gRPC: HTTP/2 connections per thread, each carrying many calls (default 1)");
}

void add_grpc_command_options(CLI::App& command, cli::RawOptions& raw) {
  GrpcRaw& own = own_raw(raw);
  command
      .add_option("ADDRESS", own.address,
                  "the service: HOST:PORT, grpc://HOST:PORT, or grpcs://HOST:PORT (TLS)")
      ->required();
  cli::optional_option(&command, "--method", own.method,
                       "the unary method to call: pkg.Service/Method");
  cli::optional_option(&command, "-d,--data", raw.data,
                       fmt::format("the request as JSON (proto3's mapping), or @FILE; "
                                   "placeholders {} (default {{}})",
                                   cli::k_placeholders));
  add_call_options(command, raw);
  cli::optional_option(&command, "--between-runs", raw.between_runs,
                       "pause between runs (e.g. one window)");
  command.add_option("--reset-cmd", raw.reset_cmd, "shell command run before each run");
  command.add_flag("--no-require-retry-after", raw.no_require_retry_after,
                   "a denial need not say when to retry (RetryInfo, retry-after metadata or "
                   "--hint-field)");
  cli::add_tls_options(&command, raw);
  cli::add_worker_options(&command, raw);
  cli::add_fault_options(&command, raw, true);
  cli::add_clock_options(&command, raw, false);
}

// The flag a target's address came from.
std::string_view address_flag(const cli::RawOptions& raw) {
  return raw.command == config::Command::probe     ? "URL"
         : raw.command == config::Command::compare ? "--url"
                                                   : "ADDRESS";
}

std::string checked_url(std::string_view flag, const std::string& typed) {
  const bool tls = typed.starts_with("grpcs://");
  const std::string address = address_of(typed);
  const size_t colon = address.rfind(':');
  const bool port = colon != std::string::npos && colon > 0 && colon + 1 < address.size() &&
                    address.find_first_not_of("0123456789", colon + 1) == std::string::npos;
  if (!port || address.find('/') != std::string::npos) {
    throw base::usage_error(fmt::format(
        "{}: '{}' is not HOST:PORT, grpc://HOST:PORT or grpcs://HOST:PORT", flag, typed));
  }
  return (tls ? "grpcs://" : "grpc://") + address;
}

// --tls-*: applies to grpcs:// services, verified always (gRPC's library verifies every
// server, so --insecure is refused).
void fill_grpc_tls(const cli::RawOptions& raw, const std::vector<std::string>& urls,
                   config::Config& config) {
  const char* flag = cli::first_tls_flag(raw);
  if (flag == nullptr)
    return;
  if (std::none_of(urls.begin(), urls.end(), uses_tls)) {
    throw base::usage_error(fmt::format("{}: {} is not TLS (grpcs://)", flag,
                                        urls.size() == 1 ? urls.front() : "no --url"));
  }
  if (raw.insecure) {
    throw base::usage_error(
        "--insecure: a gRPC service is always verified (gRPC's library has no way around it); "
        "give --tls-ca with the certificate that signed it, and --tls-sni for another name");
  }
  cli::fill_tls_files(raw, config);
}

std::string request_json(const cli::RawOptions& raw) {
  if (!raw.data)
    return "{}";
  if (!raw.data->starts_with("@"))
    return *raw.data;
  std::ifstream in(raw.data->substr(1), std::ios::binary);
  if (!in)
    throw base::usage_error(fmt::format("--data: cannot read {}", raw.data->substr(1)));
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

bool mentions_run(const std::string& text) {
  return text.find("{run}") != std::string::npos;
}

void fill_grpc(const cli::RawOptions& raw, config::Config& config) {
  const GrpcRaw own = typed_raw(raw);
  GrpcConfig grpc;
  const std::string_view flag = address_flag(raw);
  const std::vector<std::string> typed =
      raw.command == config::Command::probe     ? std::vector{raw.url}
      : raw.command == config::Command::compare ? raw.compare_urls
                                                : std::vector{own.address};
  for (const std::string& url : typed)
    grpc.urls.push_back(checked_url(flag, url));

  GrpcOptions& calls = grpc.calls;
  // probe and compare take http's --method (its default GET is no gRPC method).
  calls.method = own.method                                                     ? *own.method
                 : raw.command != config::Command::drive && raw.method != "GET" ? raw.method
                                                                                : "";
  if (calls.method.empty())
    throw base::usage_error("--method: a gRPC target needs the method to call: pkg.Service/Method");
  calls.proto_files = own.protos;
  calls.import_paths = own.import_paths;
  calls.data = request_json(raw);
  calls.metadata = own.metadata;
  calls.denied_code = own.denied_code;
  calls.denied_when = own.denied_when;
  calls.hint_field = own.hint_field.value_or("");
  calls.require_hint = !raw.no_require_retry_after;
  if (own.channels < 1 || own.channels > 1024)
    throw base::usage_error(fmt::format("--channels: must be 1 to 1024, got {}", own.channels));
  calls.channels = static_cast<int>(own.channels);
  calls.timeout = config.load.timeout;
  calls.placeholders.limit = config.checks.limit;
  calls.placeholders.window_ms = config::to_milliseconds(config.checks.window);
  calls.placeholders.group_size = config.load.group_size;
  calls.address = address_of(grpc.urls.front());
  calls.use_tls = uses_tls(grpc.urls.front());
  // The method, its types and the request are checked once, here: errors name the flag.
  // Without --proto the types come from the service (server reflection) before the test, and
  // what reads them is checked then.
  if (calls.proto_files.empty()) {
    if (auto checked = GrpcCalls::check_untyped(calls); !checked)
      throw base::usage_error(checked.error());
  } else if (auto checked = GrpcCalls::make(calls); !checked) {
    throw base::usage_error(checked.error());
  }

  if (raw.between_runs) {
    auto pause = config::parse_duration(*raw.between_runs);
    if (!pause)
      throw base::usage_error(fmt::format("--between-runs: {}", pause.error()));
    grpc.between_runs = *pause;
  }
  grpc.reset_cmd = raw.reset_cmd;
  bool fresh = grpc.between_runs.count() > 0 || !grpc.reset_cmd.empty() || mentions_run(calls.data);
  for (const std::string& entry : calls.metadata)
    fresh = fresh || mentions_run(entry);
  if (config.load.runs > 1 && !fresh) {
    throw base::usage_error(fmt::format(
        "--runs: {} runs need a fresh limiter state each: put {{run}} in --data or --metadata, "
        "or give --between-runs or --reset-cmd; else later runs only see the first run's "
        "exhausted window",
        config.load.runs));
  }
  fill_grpc_tls(raw, grpc.urls, config);
  calls.tls = config.tls;
  std::vector<std::string> told = calls.metadata;
  told.push_back(calls.data);
  config.kind_options = std::make_shared<const GrpcConfig>(std::move(grpc));

  cli::fill_faults(raw, true, config);
  cli::fill_workers(raw, config);
  cli::fill_find_max(raw, config);
  cli::fill_virtual_clock_told(raw, told, "in --data or --metadata", config);
  if (raw.command == config::Command::probe)
    cli::fill_probe(raw, config);
  cli::fill_clock(raw, true, config);
  cli::fill_audit(raw, false, config);
}

}  // namespace

cli::KindCommand grpc_command() {
  cli::KindCommand command;
  command.name = k_kind;
  command.summary =
      "drive a gRPC method (RESOURCE_EXHAUSTED, or a verdict in the response: Envoy's rate limit "
      "service)";
  command.schemes = {"grpc", "grpcs"};
  command.positional = "ADDRESS";
  command.noun = "service";
  command.add_options = add_grpc_command_options;
  command.add_url_options = add_call_options;
  command.fill = fill_grpc;
  return command;
}

const GrpcConfig& grpc_config(const config::Config& config) {
  return *static_cast<const GrpcConfig*>(config.kind_options.get());
}

std::string address_of(const std::string& url) {
  for (const std::string_view scheme : {"grpc://", "grpcs://"}) {
    if (url.starts_with(scheme))
      return url.substr(scheme.size());
  }
  return url;
}

bool uses_tls(const std::string& url) {
  return url.starts_with("grpcs://");
}

}  // namespace rlcheck::grpc_target
