#include <cstdlib>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "base/exit_code.hpp"
#include "cli/raw_options.hpp"
#include "config/strategy_name.hpp"
#include "http/status_set.hpp"

namespace rlcheck::cli {
namespace {

using base::usage_error;

void check_url(const char* what, const std::string& url) {
  if (!url.starts_with("http://") && !url.starts_with("https://")) {
    throw base::usage_error(fmt::format("{}: '{}' is not an http:// or https:// URL", what, url));
  }
}

bool mentions_run(const std::string& text) {
  return text.find("{run}") != std::string::npos;
}

std::string read_body(const std::string& data) {
  if (!data.starts_with('@'))
    return data;
  std::ifstream in(data.substr(1), std::ios::binary);
  if (!in)
    throw base::usage_error(fmt::format("--data: cannot read {}", data.substr(1)));
  std::stringstream body;
  body << in.rdbuf();
  return body.str();
}

}  // namespace

void fill_http(const RawOptions& raw, config::Config& config) {
  config::HttpConfig& http = config.http;
  if (raw.command == config::Command::drive || raw.command == config::Command::probe) {
    check_url("URL", raw.url);
    http.urls = {raw.url};
  } else {
    for (const std::string& url : raw.compare_urls)
      check_url("--url", url);
    http.urls = raw.compare_urls;
  }
  http.method = raw.method;
  if (http.method.empty() ||
      http.method.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZ") != std::string::npos) {
    throw base::usage_error(
        fmt::format("--method: '{}' is not a method such as GET or POST", raw.method));
  }
  for (const std::string& header : raw.headers) {
    const size_t colon = header.find(':');
    if (colon == std::string::npos || colon == 0) {
      throw base::usage_error(fmt::format("--header: '{}' is not 'Name: value'", header));
    }
  }
  http.headers = raw.headers;
  if (raw.data)
    http.body = read_body(*raw.data);

  auto allowed = http::StatusSet::parse(raw.allowed_status);
  if (!allowed)
    throw base::usage_error(fmt::format("--allowed-status: {}", allowed.error()));
  auto denied = http::StatusSet::parse(raw.denied_status);
  if (!denied)
    throw base::usage_error(fmt::format("--denied-status: {}", denied.error()));
  if (allowed->overlaps(*denied)) {
    throw base::usage_error("--denied-status: overlaps --allowed-status");
  }
  // The flag, else RLCHECK_HTTP_CLIENT (how the tests run every HTTP test on curl too).
  const char* env_client = std::getenv("RLCHECK_HTTP_CLIENT");
  if (raw.http_client || (env_client != nullptr && *env_client != '\0')) {
    const std::string value = raw.http_client ? *raw.http_client : std::string(env_client);
    const char* source = raw.http_client ? "--http-client" : "RLCHECK_HTTP_CLIENT";
    if (value == "native") {
      http.client = config::HttpClientChoice::native;
    } else if (value == "curl") {
      http.client = config::HttpClientChoice::curl;
    } else {
      throw base::usage_error(fmt::format("{}: '{}' is not native or curl", source, value));
    }
  }
  http.http2 = raw.http2;
  if (http.http2 && http.client == config::HttpClientChoice::native)
    throw base::usage_error("--http-client: native speaks HTTP/1.1 only; --http2 needs curl");
  http.allowed_status = raw.allowed_status;
  http.denied_status = raw.denied_status;
  if (raw.between_runs) {
    auto pause = config::parse_duration(*raw.between_runs);
    if (!pause)
      throw base::usage_error(fmt::format("--between-runs: {}", pause.error()));
    http.between_runs = *pause;
  }
  http.reset_cmd = raw.reset_cmd;
  http.require_retry_after = !raw.no_require_retry_after;
  if (raw.ratelimit_headers) {
    const std::string& forms = *raw.ratelimit_headers;
    if (forms != "auto" && forms != "ietf" && forms != "x" && forms != "llm") {
      throw base::usage_error(
          fmt::format("--ratelimit-headers: expected auto, ietf, x or llm, got '{}'", forms));
    }
    http.ratelimit_headers = forms;
  }

  // Later runs must not inherit the first run's exhausted window.
  bool fresh_identity = http.between_runs.count() > 0 || !http.reset_cmd.empty();
  for (const std::string& url : http.urls)
    fresh_identity = fresh_identity || mentions_run(url);
  for (const std::string& header : http.headers) {
    fresh_identity = fresh_identity || mentions_run(header);
  }
  if (http.body)
    fresh_identity = fresh_identity || mentions_run(*http.body);
  if (config.load.runs > 1 && !fresh_identity) {
    throw base::usage_error(fmt::format(
        "--runs: {} runs need a fresh limiter state each: put {{run}} in the URL, a header or "
        "the body (-H 'X-API-Key: ci-{{run}}'), or give --between-runs or --reset-cmd; else "
        "later runs only see the first run's exhausted window",
        config.load.runs));
  }
}

void fill_serve(const RawOptions& raw, config::Config& config) {
  const size_t colon = raw.listen.rfind(':');
  int port = 0;
  if (colon == std::string::npos || colon == 0 ||
      std::sscanf(raw.listen.c_str() + colon + 1, "%d", &port) != 1 || port < 0 || port > 65535) {
    throw base::usage_error(fmt::format("--listen: '{}' is not ADDR:PORT", raw.listen));
  }
  if (raw.fail_open && raw.fail_closed) {
    throw base::usage_error("--fail-open: cannot be combined with --fail-closed");
  }
  config.serve.listen = raw.listen;
  config.serve.identity_header = raw.identity_header;
  config.serve.cost_header = raw.cost_header;
  if (!raw.cost_header.empty() && config.redis.strategy != config::Strategy::script &&
      !config::strategy_takes_cost(config.redis.strategy)) {
    throw base::usage_error(fmt::format(
        "--cost-header: the {} strategy's places are requests; every other strategy takes a cost",
        config::strategy_name(config.redis.strategy)));
  }
  config.serve.fail_open = raw.fail_open;
}

}  // namespace rlcheck::cli
