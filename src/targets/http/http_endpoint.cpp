#include "targets/http/http_endpoint.hpp"

#include "targets/state_between_runs.hpp"

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <map>

#include <fmt/format.h>

#include "base/exit_code.hpp"
#include "engine/interrupt.hpp"
#include "engine/placeholder_template.hpp"
#include "http/client_choice.hpp"
#include "judging/advertised_params.hpp"
#include "judging/judgement.hpp"

namespace rlcheck::targets {
namespace {

engine::PlaceholderTemplate text_template(const std::string& text) {
  // Braces that name no placeholder stay text (JSON bodies); this cannot fail.
  return *engine::PlaceholderTemplate::parse(text, engine::PlaceholderTemplate::Unknown::keep);
}

}  // namespace

http::HttpRequests make_http_requests(const config::Config& config, const std::string& url,
                                      uint64_t seed) {
  const config::HttpConfig& options = config.http;
  http::HttpRequests requests;
  requests.method = options.method;
  requests.url = text_template(url);
  for (const std::string& header : options.headers)
    requests.headers.push_back(text_template(header));
  if (options.body)
    requests.body = text_template(*options.body);
  requests.url_text = url;
  requests.header_texts = options.headers;
  requests.body_text = options.body;
  auto choice = http::choose_http_client(options.client, url, options.http2, &std::getenv);
  if (!choice)
    throw base::usage_error(choice.error());
  requests.native = choice->native;
  requests.http2 = options.http2;
  requests.rules.allowed = *http::StatusSet::parse(options.allowed_status);
  requests.rules.denied = *http::StatusSet::parse(options.denied_status);
  requests.rules.require_retry_after = options.require_retry_after;
  requests.rules.header_forms = options.ratelimit_headers == "ietf"  ? http::HeaderForms::ietf
                                : options.ratelimit_headers == "x"   ? http::HeaderForms::x
                                : options.ratelimit_headers == "llm" ? http::HeaderForms::llm
                                                                     : http::HeaderForms::automatic;
  requests.timeout = config.load.timeout;
  requests.tls = config.tls;
  requests.concurrency = config.load.concurrency;
  requests.placeholders.limit = config.checks.limit;
  requests.placeholders.window_ms = config::to_milliseconds(config.checks.window);
  requests.placeholders.group_size = config.load.group_size;
  requests.source_addresses = config.load.source_addresses;
  requests.seed = seed;
  return requests;
}

namespace {

// Reason phrases of the statuses an endpoint that cannot be tested tends to answer.
constexpr std::pair<int, std::string_view> k_reason_phrases[] = {
    {200, "OK"},
    {204, "No Content"},
    {400, "Bad Request"},
    {401, "Unauthorized"},
    {403, "Forbidden"},
    {404, "Not Found"},
    {405, "Method Not Allowed"},
    {408, "Request Timeout"},
    {410, "Gone"},
    {429, "Too Many Requests"},
    {500, "Internal Server Error"},
    {501, "Not Implemented"},
    {502, "Bad Gateway"},
    {503, "Service Unavailable"},
    {504, "Gateway Timeout"},
};

std::string status_text(int status) {
  for (const auto& [code, reason] : k_reason_phrases) {
    if (code == status)
      return fmt::format("{} {}", status, reason);
  }
  return std::to_string(status);
}

// Which statuses came back: "404 Not Found" when one did, "404 Not Found x60, 503 Service
// Unavailable x40" when several; empty when no response came at all.
std::string statuses_seen(const std::vector<engine::RunResult>& results) {
  std::map<int, int64_t> counts;
  for (const auto& result : results) {
    for (const auto& record : result.records) {
      if (record.status != 0)
        ++counts[record.status];
    }
  }
  if (counts.size() == 1)
    return status_text(counts.begin()->first);
  std::string text;
  for (const auto& [status, count] : counts)
    text += fmt::format("{}{} x{}", text.empty() ? "" : ", ", status_text(status), count);
  return text;
}

bool any_decided(const std::vector<engine::RunResult>& results) {
  return std::any_of(results.begin(), results.end(), [](const engine::RunResult& result) {
    return std::any_of(
        result.records.begin(), result.records.end(),
        [](const engine::RequestRecord& r) { return r.outcome != engine::Outcome::error; });
  });
}

// The configuration the runs are judged against, and where its limit and window came from.
struct Judged {
  config::Config config;
  std::string limit_source = "flag";
  std::string window_source = "flag";
  bool window_from_reset = false;
  std::vector<int64_t> window_readings_s = {};  // judging::AdvertisedParams::window_readings_s
};

// --limit and --window as given, else as the responses advertised them, else the defaults
// (said so in the report and, for the window, on stderr). Throws when the limit cannot be
// known: usage when the endpoint decided requests without advertising one, cannot_test when
// it only answered errors (no --limit would make that testable).
// The set of several policies most responses advertised (IETF RateLimit-Policy), each as a
// sliding window of its quota: what the endpoint promises when no flag says otherwise.
std::vector<config::ContractSpec> advertised_parts(const std::vector<engine::RunResult>& results) {
  std::map<std::vector<std::pair<int64_t, int64_t>>, int64_t> sets;
  for (const engine::RunResult& result : results) {
    for (const auto& [policies, responses] : result.policy_sets)
      sets[policies] += responses;
  }
  const auto most = std::ranges::max_element(
      sets, [](const auto& a, const auto& b) { return a.second < b.second; });
  std::vector<config::ContractSpec> parts;
  if (most == sets.end())
    return parts;
  for (const auto& [quota, window_s] : most->first) {
    auto spec = config::parse_contract_spec(fmt::format("sliding:{}/{}s", quota, window_s));
    if (!spec || quota < 1)
      return {};
    spec->burst = spec->limit;
    spec->refill = config::Rate{*spec->limit, *spec->window};
    parts.push_back(std::move(*spec));
  }
  return parts;
}

Judged judged_config(const config::Config& config, const std::string& url,
                     const std::vector<engine::RunResult>& results, bool interrupted) {
  Judged judged{config};
  // Several policies advertised, and no flag naming the promise: each policy a part.
  const auto& given = config.checks;
  if (!given.limit_given && !given.window_given && !given.contract && given.parts.empty()) {
    if (std::vector<config::ContractSpec> parts = advertised_parts(results); parts.size() >= 2) {
      judged.config.checks.limit = *parts.front().limit;
      judged.config.checks.window = *parts.front().window;
      judged.config.checks.contract = "sliding";
      judged.config.checks.parts = std::move(parts);
      judged.limit_source = "advertised";
      judged.window_source = "advertised";
      return judged;
    }
  }
  const judging::AdvertisedParams advertised = judging::read_advertised_params(results);
  const std::string statuses = statuses_seen(results);
  // A bucket or a queue named whole by its flags needs no limit: its capacity is the limit.
  const auto& checks = config.checks;
  const bool bucket_named = (checks.contract == "token-bucket" || checks.contract == "gcra") &&
                            checks.burst && checks.refill;
  const bool queue_named = checks.contract == "queue" && checks.queue && checks.refill;
  if (!checks.limit_given && !advertised.limit && (bucket_named || queue_named)) {
    judged.config.checks.limit = bucket_named ? *checks.burst : *checks.queue + 1;
    judged.limit_source = "contract";
  } else if (!config.checks.limit_given) {
    // Without any response the errors check tells the story (exit 3), not the missing limit.
    if (!advertised.limit && !statuses.empty() && !interrupted) {
      if (!any_decided(results)) {
        throw base::cannot_test(
            fmt::format("{} answered {} to every request and advertised no limit: nothing to test",
                        url, statuses));
      }
      throw base::usage_error(fmt::format(
          "--limit: required: {} advertised no limit (RateLimit or X-RateLimit headers); it "
          "answered {}",
          url, statuses));
    }
    judged.config.checks.limit = advertised.limit.value_or(config.checks.limit);
    judged.limit_source = advertised.limit ? "advertised" : "default";
  }
  if (!config.checks.window_given) {
    if (advertised.window_s) {
      judged.config.checks.window = std::chrono::seconds(*advertised.window_s);
      judged.window_source = "advertised";
      judged.window_from_reset =
          advertised.window_basis == judging::AdvertisedParams::WindowBasis::reset;
      judged.window_readings_s = advertised.window_readings_s;
    } else {
      judged.window_source = "default";
    }
    // The verdict rests on a window nobody named: said once, whatever the output mode. Not
    // when nothing was decided: then there is no verdict on the limiter to qualify, nor for a
    // bucket or queue named whole (the window only bounds its hints), nor for a concurrency
    // cap, which has none.
    if (!advertised.window_s && any_decided(results) && !interrupted && !bucket_named &&
        !queue_named && checks.contract != "concurrency") {
      std::cerr << fmt::format(
          "rlcheck: warning: --window: not given and {} advertised none (RateLimit-Policy w=, "
          "or a reset); judged against the default {}\n",
          url, config::format_duration(config.checks.window));
    }
  }
  return judged;
}

// The configuration with the window the responses advertised when --window was not given: what
// bounds the --verify-retry-after wait before the report is judged.
config::Config window_judged(const config::Config& config,
                             const std::vector<engine::RunResult>& results) {
  config::Config judged = config;
  if (!config.checks.window_given) {
    if (const auto window_s = judging::read_advertised_params(results).window_s)
      judged.checks.window = std::chrono::seconds(*window_s);
  }
  return judged;
}

}  // namespace

HttpEndpoint::HttpEndpoint(const config::Config& config, const std::string& url, uint64_t seed)
    : config_(config), url_(url), seed_(seed), requests_(make_http_requests(config, url, seed)) {}

void HttpEndpoint::describe(report::Report& report) const {
  report.target.url = url_;
  report.target.method = config_.http.method;
  report::describe_endpoint(report.target);
  report.params.http_client = http::http_client_name(requests_.native);
  std::vector<std::string> told = config_.http.headers;
  told.push_back(url_);
  if (config_.http.body)
    told.push_back(*config_.http.body);
  report.params.clock_skew_read =
      engine::any_reads_clock(told, engine::PlaceholderTemplate::Unknown::keep);
}

faults::FaultedRedis HttpEndpoint::faulted_redis() {
  return limiter_redis_faulted(config_);
}

std::string HttpEndpoint::run_label(int run, int runs) const {
  return fmt::format("run {}/{}", run, runs);
}

bool HttpEndpoint::prepare_run(int run, bool leader) {
  return prepare_state(config_, config_.http.between_runs, config_.http.reset_cmd, run, leader);
}

runner::StateChoice HttpEndpoint::run_state(int run) const {
  return {run, seed_ + static_cast<uint64_t>(run), "", false};
}

runner::RunClients HttpEndpoint::clients(const runner::StateChoice& state,
                                         const config::LoadConfig& load) {
  requests_.placeholders.run = state.state;
  requests_.seed = state.seed;
  requests_.concurrency = load.concurrency;
  // The run's addresses: a probe gives each of its identities one of its own.
  requests_.source_addresses = load.source_addresses;
  factory_.reset();
  factory_ = http::make_http_client_factory(requests_);
  runner::RunClients clients;
  clients.factory = factory_.get();
  clients.load = load;
  return clients;  // the endpoint's keys are its own: a failover acts on the first master
}

std::string HttpEndpoint::where_written(std::string_view placeholder) const {
  const auto mentions = [&](const std::string& text) {
    return text.find(placeholder) != std::string::npos;
  };
  if (mentions(url_))
    return "the URL";
  for (const std::string& header : config_.http.headers) {
    if (mentions(header))
      return fmt::format("the header {}", header.substr(0, header.find(':')));
  }
  if (config_.http.body && mentions(*config_.http.body))
    return "the body";
  return "";
}

std::string HttpEndpoint::fresh_state_source() const {
  if (const std::string where = where_written("{run}"); !where.empty())
    return fmt::format("{{run}} in {}", where);
  if (config_.load.source_addresses.size() >= 2)
    return "a source address of its own";
  return "";
}

std::string HttpEndpoint::state_note() const {
  return earlier_state_note(!where_written("{run}").empty() || !where_written("{id}").empty());
}

bool HttpEndpoint::fresh_states() const {
  return !fresh_state_source().empty();
}

std::vector<runner::Judging> HttpEndpoint::judgings(const std::vector<engine::RunResult>& results,
                                                    bool interrupted) {
  const Judged judged = judged_config(config_, url_, results, interrupted);
  runner::Judging judging;
  judging.config = judged.config;
  judging.limit_source = judged.limit_source;
  judging.window_source = judged.window_source;
  judging.window_from_reset = judged.window_from_reset;
  for (const int64_t window_s : judged.window_readings_s)
    judging.window_readings_ms.push_back(window_s * 1000);
  judging.key_ttl_applies = false;
  judging.retry_hint_optional = !config_.http.require_retry_after;
  judging.reset_before_each_run = !config_.http.reset_cmd.empty();
  judging.state_note = state_note();
  // A policy advertised as q per w leaves its algorithm open; unless the user named the
  // promise, every reading of it is tried before the test fails.
  judging.policy_advertised = judged.limit_source == "advertised" &&
                              judged.window_source == "advertised" && !judged.window_from_reset &&
                              !config_.checks.burst && !config_.checks.refill &&
                              !config_.checks.contract;
  // A window read off a timestamp reset may be a second either way: each reading is judged in
  // turn until one passes (the later, the reset as read, reported on a tie): a check that
  // another reading passes is not failed for the second the headers cannot tell.
  if (judged.window_readings_s.empty())
    return {judging};
  std::vector<runner::Judging> readings;
  for (const int64_t window_s : judged.window_readings_s) {
    readings.push_back(judging);
    if (window_s > 0)
      readings.back().config.checks.window = std::chrono::seconds(window_s);
  }
  return readings;
}

std::chrono::milliseconds HttpEndpoint::longest_retry_wait(
    const std::vector<engine::RunResult>& results) const {
  return judging::longest_retry_wait(window_judged(config_, results));
}

}  // namespace rlcheck::targets
