#pragma once
// An HTTP endpoint as the run loop sees it: its requests as the configuration describes them,
// --between-runs and --reset-cmd before each run, and the limit and window it is judged
// against as given, else as its responses advertised them (judging/advertised_params).

#include <memory>
#include <string>
#include <string_view>

#include "config/config.hpp"
#include "engine/client.hpp"
#include "http/http_requests.hpp"
#include "runner/target.hpp"

namespace rlcheck::targets {

// The requests of `url` as the configuration describes them (method, headers, body, status
// rules, placeholders); `seed` seeds {uuid}. Throws FatalError(usage) for a client choice
// the URL cannot have.
http::HttpRequests make_http_requests(const config::Config& config, const std::string& url,
                                      uint64_t seed);

class HttpEndpoint final : public runner::Target {
 public:
  HttpEndpoint(const config::Config& config, const std::string& url, uint64_t seed);

  void prepare_test() override {}
  std::string address() const override { return url_; }
  void describe(report::Report& report) const override;
  // --limiter-redis, reachable (throws FatalError naming the flag otherwise).
  faults::FaultedRedis faulted_redis() override;
  std::string run_label(int run, int runs) const override;
  std::string records_name() const override { return url_; }
  // The pause between runs, and (`leader`) the reset command.
  bool prepare_run(int run, bool leader) override;
  std::chrono::nanoseconds pause_before_run(int run) const override {
    return run > 1 ? config_.http.between_runs : std::chrono::nanoseconds(0);
  }
  runner::StateChoice run_state(int run) const override;
  bool fresh_state_per_run() const override { return fresh_states(); }
  // State `state` is the {run} placeholder.
  runner::RunClients clients(const runner::StateChoice& state,
                             const config::LoadConfig& load) override;
  bool judged_before_runs() const override { return false; }
  // --limit and --window as given, else as the responses advertised them, else the defaults
  // (the window's said once on stderr). A window read off a timestamp reset may be a second
  // either way: one configuration per reading, W-1 then W. Throws when the limit cannot be
  // known: usage when the endpoint decided requests without advertising one, cannot_test when
  // it only answered errors (no --limit would make that testable).
  std::vector<runner::Judging> judgings(const std::vector<engine::RunResult>& results,
                                        bool interrupted) override;
  std::chrono::milliseconds longest_retry_wait(
      const std::vector<engine::RunResult>& results) const override;

  // Whether every identity meets a limiter state of its own: {run} where the endpoint reads
  // it, or two or more --source-address.
  bool fresh_states() const;
  // What makes an identity fresh, as a report says it ("{run} in the header X-API-Key", "a
  // source address of its own"); "" when fresh_states() is false.
  std::string fresh_state_source() const;
  // Why the state a run meets may be an earlier test's (Judging::state_note).
  std::string state_note() const;
  // Where the request carries `placeholder` ("the URL", "the header X-API-Key", "the body"),
  // the first of them; "" when nowhere.
  std::string where_written(std::string_view placeholder) const;
  uint64_t seed() const { return seed_; }

 private:
  const config::Config& config_;
  std::string url_;
  uint64_t seed_;
  http::HttpRequests requests_;
  std::unique_ptr<engine::ClientFactory> factory_;
};

}  // namespace rlcheck::targets
