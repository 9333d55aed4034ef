// Concurrency caps as teams run them, in front of a backend of ours that holds every request
// 400 ms (support/concurrency_gateways): nginx-light's limit_conn 2, HAProxy's sc_conn_cur, and
// a cap of ours that lets 3 through where 2 is meant; and `rlcheck serve --strategy concurrency`
// holding each admission as long. One client sends 20 requests a second for
// 3 s, so about 8 would be in progress at once without a cap; the floor is measured (the
// fastest admission less a denial's latency), or stated with --hold. Only verdicts and the
// counts behind them are asserted. Where nginx or HAProxy is missing, its cases say so in one
// line and pass.

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/concurrency_gateways.hpp"
#include "support/json_outcome.hpp"
#include "support/run_binary.hpp"
#include "support/serve_process.hpp"
#include "support/side_by_side.hpp"
#include "support/test_redis.hpp"

using namespace rlcheck::testing;
using nlohmann::json;

namespace {

// `rlcheck http <server><path> --json` for one client of its own, at 20/s for 3 s.
std::vector<std::string> capped_run(const Gateway& gateway, const std::string& path,
                                    const std::string& client, const std::string& flags) {
  std::vector<std::string> args{"http",
                                gateway.server->base_url() + path,
                                "--json",
                                "-H",
                                "X-Client:" + client,
                                "--rate",
                                "20/s",
                                "--duration",
                                "3s",
                                "--concurrency",
                                "16",
                                "--no-require-retry-after"};
  for (std::string& word : words_of(flags))
    args.push_back(std::move(word));
  return args;
}

const json& concurrency_of(const json& report) {
  return report["runs"][0]["contract"]["concurrency"];
}

}  // namespace

TEST_CASE("nginx limit_conn 2: passes concurrency:2, and judged as concurrency:1 fails") {
  const Gateway& server = nginx_limit_conn();
  if (skipped(server, k_nginx_missing))
    return;
  const std::vector<json> reports =
      run_side_by_side({capped_run(server, "/capped/", "conc-nginx-2", "--contract concurrency:2"),
                        capped_run(server, "/capped/", "conc-nginx-1", "--contract concurrency:1")},
                       {0, 1});
  const json& two = reports[0];
  INFO(checks_of(two));
  CHECK(check_status(two, "limit") == "pass");
  CHECK(check_status(two, "contract") == "pass");
  CHECK(check_status(two, "utilisation") == "pass");
  CHECK(two["runs"][0]["denied"].get<int>() > 0);
  CHECK(two["runs"][0]["errors"] == 0);
  CHECK(concurrency_of(two)["hold_source"] == "measured");
  CHECK(concurrency_of(two)["most_in_flight_surely"].get<int>() <= 2);
  const json& one = reports[1];
  INFO(checks_of(one));
  CHECK(check_status(one, "limit") == "fail");
  CHECK(check_status(one, "contract") == "fail");
  CHECK(concurrency_of(one)["most_in_flight_surely"].get<int>() == 2);
}

TEST_CASE("a cap that lets 3 through where 2 is meant fails, with a measured or a stated hold") {
  const Gateway& server = slow_backend();
  const std::vector<json> reports = run_side_by_side(
      {capped_run(server, "/lets-three/", "conc-three-measured", "--contract concurrency:2"),
       capped_run(server, "/lets-three/", "conc-three-stated",
                  "--contract concurrency:2 --hold 400ms")},
      {1, 1});
  for (const json& report : reports) {
    INFO(checks_of(report));
    CHECK(check_status(report, "limit") == "fail");
    CHECK(check_status(report, "contract") == "fail");
    CHECK(check_status(report, "utilisation") == "pass");
    CHECK(concurrency_of(report)["most_in_flight_surely"].get<int>() == 3);
  }
  CHECK(concurrency_of(reports[1])["hold_source"] == "flag");
}

TEST_CASE("HAProxy deny if sc_conn_cur(0) gt 2: passes concurrency:2") {
  const Gateway& server = haproxy_conn_cur();
  if (skipped(server, k_haproxy_missing))
    return;
  const json report = run_side_by_side(
      {capped_run(server, "/capped/", "conc-haproxy", "--contract concurrency:2")}, {0})[0];
  INFO(checks_of(report));
  CHECK(check_status(report, "limit") == "pass");
  CHECK(check_status(report, "contract") == "pass");
  CHECK(check_status(report, "utilisation") == "pass");
  CHECK(report["runs"][0]["denied"].get<int>() > 0);
  CHECK(concurrency_of(report)["most_in_flight_surely"].get<int>() <= 2);
}

TEST_CASE("serve --strategy concurrency: a Redis semaphore holding each 400 ms passes its cap") {
  // Database 12 keeps serve's keys apart from the other integration tests.
  std::vector<std::string> args{"--redis", TestRedis::shared().tcp_url() + "/12", "--listen",
                                "127.0.0.1:0"};
  append_words(args, "--identity-header X-Client --strategy concurrency --limit 2 --hold 400ms");
  ServeProcess serve(args);
  // Its hints name the earliest holder's release, at most the 400 ms hold on: Retry-After 1
  // (whole seconds, rounded up), within a bound of the hold's second.
  const auto run = [&](const std::string& client, const std::string& contract) {
    std::vector<std::string> http{"http", serve.url(), "--json", "-H", "X-Client:" + client};
    append_words(http,
                 "--rate 20/s --duration 3s --concurrency 16 --max-retry-after 1s "
                 "--contract " +
                     contract);
    return http;
  };
  const json two = json_report(run("conc-serve-2", "concurrency:2"), 0);
  INFO(checks_of(two));
  CHECK(check_status(two, "limit") == "pass");
  CHECK(check_status(two, "contract") == "pass");
  CHECK(check_status(two, "utilisation") == "pass");
  CHECK(two["runs"][0]["denied"].get<int>() > 0);
  // Released once answered, places are taken again: far more than 2 admitted over 3 s.
  CHECK(two["runs"][0]["allowed"].get<int>() >= 8);
  CHECK(concurrency_of(two)["most_in_flight_surely"].get<int>() <= 2);
  CHECK(check_status(two, "retry-after-bound") == "pass");
  CHECK(two["runs"][0]["retry_after_s"]["max"].get<double>() <= 1.0);
  // The same server judged as a cap of 1 fails: 2 were surely in progress at once.
  const json one = json_report(run("conc-serve-1", "concurrency:1"), 1);
  INFO(checks_of(one));
  CHECK(check_status(one, "contract") == "fail");
}
