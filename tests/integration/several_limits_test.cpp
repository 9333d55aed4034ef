// Several limits at once and weighted costs, against real parts on loopback: nginx with two
// limit_req zones on one location, Flask-Limiter 3.3's "5/second;20/minute" and cost= (memory
// and Redis storage), a plan's per-user limit inside a per-organisation one
// (tests/fixtures/org_limits_app.py), an LLM gateway's requests and tokens
// (tests/fixtures/llm_gateway_app.py, database 12), and the built-in strategies with costs
// (database 13 of the shared test redis-server). Each is passed as the composite it is, and
// fails when judged as one of its parts alone, or for the bug its variant has. Each case speaks
// for clients of its own; only verdicts and check statuses are asserted.

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/json_outcome.hpp"
#include "support/real_gateways.hpp"
#include "support/run_binary.hpp"
#include "support/serve_process.hpp"
#include "support/side_by_side.hpp"
#include "support/test_redis.hpp"

using namespace rlcheck::testing;
using nlohmann::json;

namespace {

// `rlcheck http <url> --json <flags>`.
std::vector<std::string> http_args_to(const std::string& url, const std::string& flags) {
  std::vector<std::string> args{"http", url, "--json"};
  for (std::string& word : words_of(flags))
    args.push_back(std::move(word));
  return args;
}

// The same against one of the gateways, at `path`.
std::vector<std::string> http_args(const Gateway& gateway, const std::string& path,
                                   const std::string& flags) {
  return http_args_to(gateway.server->base_url() + path, flags);
}

// One contract, in units: it held, and no denial came while it had room.
void check_held_in_units(const json& report) {
  INFO(checks_of(report));
  CHECK(check_status(report, "limit") == "pass");
  CHECK(check_status(report, "contract") == "pass");
  CHECK(check_status(report, "utilisation") == "pass");
  CHECK(report["verdict"] == "pass");
}

// Both parts held, and no denial came while both had room.
void check_composite_held(const json& report) {
  INFO(checks_of(report));
  CHECK(check_status(report, "limit") == "pass");
  CHECK(check_status(report, "contract") == "pass");
  CHECK(check_status(report, "utilisation") == "pass");
  CHECK(report["runs"][0]["contracts"].size() >= 2);
  CHECK(report["params"]["contracts"].size() == report["runs"][0]["contracts"].size());
}

void check_part_alone_fails(const json& report) {
  INFO(checks_of(report));
  CHECK(check_status(report, "limit") == "pass");
  CHECK(check_status(report, "utilisation") == "fail");
  CHECK(check_detail(report, "utilisation").find("had room") != std::string::npos);
}

}  // namespace

TEST_CASE("real nginx with two limit_req zones on one location passes as two token buckets") {
  const Gateway& server = nginx();
  if (skipped(server, k_nginx_missing))
    return;
  // 20/s for 3 s against 10/s burst 4 and 2/s burst 9 (buckets of 5 and 10): the first
  // bucket decides the first half second, the second the rest. nginx commits a request to a
  // zone only once every zone admitted it (ngx_http_limit_req_handler): nothing is consumed
  // by a denial, the strict reading. --exact: each client is fresh.
  const std::string load = "--rate 20/s --duration 3s --no-require-retry-after --exact --contract ";
  const std::string both = "token-bucket:5,10/s --contract token-bucket:10,2/s";
  const std::vector<json> reports = run_side_by_side(
      {http_args(server, "/two-zones/", "-H X-Client:zones-both-{id} " + load + both),
       http_args(server, "/two-zones/",
                 "-H X-Client:zones-fast-{id} " + load + "token-bucket:5,10/s"),
       http_args(server, "/two-zones/",
                 "-H X-Client:zones-slow-{id} " + load + "token-bucket:10,2/s")},
      {0, 1, 1});
  check_composite_held(reports[0]);
  check_part_alone_fails(reports[1]);
  check_part_alone_fails(reports[2]);
}

TEST_CASE("real Flask-Limiter \"5/second;20/minute\" passes as two sliding windows") {
  const Gateway& app = flask_limiter_app();
  if (skipped(app, k_flask_limiter_missing))
    return;
  // 10/s for 5 s: each second admits 5 until the minute's 20 are gone (after 4 s). Judged as
  // 5 per second alone, the denials of the fifth second had room; as 20 per minute alone, the
  // denials of the first second did.
  const auto args = [&](const std::string& path, const std::string& client,
                        const std::string& contracts) {
    return http_args(
        app, path,
        "-H X-Client:" + client + "-{id} --rate 10/s --duration 5s --exact " + contracts);
  };
  const std::string both = "--contract sliding:5/1s --contract sliding:20/1m";
  const std::vector<json> reports = run_side_by_side(
      {args("/multi/", "multi-both", both), args("/multi-redis/", "multi-redis-both", both),
       args("/multi/", "multi-second", "--contract sliding:5/1s"),
       args("/multi/", "multi-minute", "--contract sliding:20/1m")},
      {k_any_verdict, k_any_verdict, 1, 1});
  check_composite_held(reports[0]);
  check_composite_held(reports[1]);
  check_part_alone_fails(reports[2]);
  check_part_alone_fails(reports[3]);
}

TEST_CASE("a per-user limit inside a per-organisation one: the shadowed organisation fails") {
  const Gateway& app = org_limits_app();
  // Four users in two organisations of two (--group-size 2, {group}), 10/s each for 3 s,
  // against 5 per 2 s per user and 8 per 2 s per organisation.
  const std::string load =
      "--identities 4 --group-size 2 --rate 40/s --duration 3s --exact "
      "--contract sliding:5/2s --contract group:sliding:8/2s";
  const auto args = [&](const std::string& path, const std::string& test) {
    return http_args(app, path,
                     "-H X-User:" + test + "-u{id} -H X-Org:" + test + "-o{group} " + load);
  };
  const std::vector<json> reports = run_side_by_side(
      {args("/correct/", "correct"), args("/shadowing/", "shadowing"),
       http_args(app, "/correct/",
                 "-H X-User:alone-u{id} -H X-Org:alone-o{group} --identities 4 --group-size 2 "
                 "--rate 40/s --duration 3s --exact --contract sliding:5/2s")},
      {0, 1, 1});
  check_composite_held(reports[0]);
  CHECK(reports[0]["params"]["group_size"] == 2);

  const json& shadowing = reports[1];
  INFO(checks_of(shadowing));
  CHECK(check_status(shadowing, "limit") == "fail");
  CHECK(check_status(shadowing, "contract") == "fail");
  CHECK(check_detail(shadowing, "contract").starts_with("group:sliding:8/2s:"));
  const json& parts = shadowing["runs"][0]["contracts"];
  CHECK(parts[0]["status"] == "pass");
  CHECK(parts[1]["status"] == "fail");
  CHECK(parts[1].contains("group"));

  // The organisation's denials, judged by the user's limit alone, came with room.
  check_part_alone_fails(reports[2]);
}

TEST_CASE(
    "real Flask-Limiter cost=: a limit in units holds under --cost-dist; one that ignores "
    "the cost fails in units") {
  const Gateway& app = flask_limiter_app();
  if (skipped(app, k_flask_limiter_missing))
    return;
  // 20 units per 2 s, each request costing its X-Cost header ({cost}), at 20 requests a second
  // of 1, 3 or 5 units (2 on average: twice what the limit lets through).
  const auto args = [&](const std::string& path, const std::string& client) {
    return http_args(app, path,
                     "-H X-Client:" + client +
                         "-{id} -H X-Cost:{cost} --cost-dist 1:60,3:30,5:10 "
                         "--rate 20/s --duration 4s --exact --seed 3 --contract sliding:20/2s");
  };
  const std::vector<json> reports =
      run_side_by_side({args("/cost/", "cost"), args("/cost-redis/", "cost-redis"),
                        args("/cost/ignored", "cost-ignored")},
                       {k_any_verdict, k_any_verdict, 1});
  for (size_t i = 0; i < 2; ++i) {
    const json& report = reports[i];
    INFO(checks_of(report));
    CHECK(check_status(report, "limit") == "pass");
    CHECK(check_status(report, "contract") == "pass");
    CHECK(check_status(report, "utilisation") == "pass");
    CHECK(report["params"]["cost"] == "1:60,3:30,5:10");
    // More units were admitted than requests: the audit counted units.
    CHECK(report["runs"][0]["units"]["allowed"].get<int>() >
          report["runs"][0]["allowed"].get<int>());
  }
  const json& ignored = reports[2];
  INFO(checks_of(ignored));
  CHECK(check_status(ignored, "limit") == "fail");
  CHECK(check_status(ignored, "contract") == "fail");
  CHECK(check_detail(ignored, "contract").find("units admitted") != std::string::npos);
}

TEST_CASE("an LLM gateway's requests and tokens per window, per key inside per organisation") {
  const Gateway& app = llm_gateway_app();
  if (skipped(app, k_flask_limiter_missing))
    return;
  // Four keys in two organisations, 10 requests a second each, asking for 1, 10 or 30 tokens
  // (16 on average: a key's 40 tokens last a few requests). --seed fixes each request's cost.
  const std::string load =
      "--identities 4 --group-size 2 --rate 40/s --duration 3s --exact --seed 5 "
      "--cost-dist 1:20,10:40,30:40 --contract requests:sliding:10/2s --contract sliding:40/2s "
      "--contract group:sliding:60/2s";
  const auto args = [&](const std::string& path, const std::string& test) {
    return http_args(app, path,
                     "-H X-Api-Key:" + test + "-k{id} -H X-Org:" + test +
                         "-o{group} -H X-Tokens:{cost} " + load);
  };
  const std::vector<json> reports = run_side_by_side(
      {args("/correct/", "llm-correct"), args("/tokens-by-one/", "llm-by-one"),
       args("/shadows-org/", "llm-shadows"), args("/remaining-requests/", "llm-remaining")},
      {0, 1, 1, 1});
  const json& correct = reports[0];
  {
    INFO(checks_of(correct));
    CHECK(correct["runs"][0]["contracts"].size() == 3);
    // Its x-ratelimit-remaining-tokens agrees with the tokens admitted.
    CHECK(check_status(correct, "remaining") == "pass");
  }
  check_composite_held(correct);

  // Counting a request as one token lets 10 requests of up to 30 tokens through: the tokens
  // part fails, in units.
  const json& by_one = reports[1];
  INFO(checks_of(by_one));
  CHECK(check_detail(by_one, "contract").starts_with("sliding:40/2s:"));
  CHECK(by_one["runs"][0]["contracts"][0]["status"] == "pass");
  CHECK(by_one["runs"][0]["contracts"][1]["status"] == "fail");

  // A key with tokens left is admitted whatever its organisation used: the group part fails.
  const json& shadows = reports[2];
  INFO(checks_of(shadows));
  CHECK(check_detail(shadows, "contract").starts_with("group:sliding:60/2s:"));
  CHECK(shadows["runs"][0]["contracts"][1]["status"] == "pass");
  CHECK(shadows["runs"][0]["contracts"][2]["status"] == "fail");

  // Deciding right but counting requests in its remaining-tokens header: remaining fails, and
  // nothing else does.
  const json& remaining = reports[3];
  INFO(checks_of(remaining));
  CHECK(check_status(remaining, "remaining") == "fail");
  CHECK(check_status(remaining, "limit") == "pass");
  CHECK(check_status(remaining, "contract") == "pass");
  CHECK(check_status(remaining, "utilisation") == "pass");
}

TEST_CASE("the built-in strategies take a cost: naive still races, the atomic ones hold in units") {
  // 20 units per 2 s, requests of 1, 3 or 5 units, 50 at once: the compare of the seed
  // article, counted in units, with every built-in strategy that takes a cost (each judged by
  // its own contract: the counters as fixed windows, the sliding-window counter as one).
  const std::vector<json> reports = run_side_by_side({{"compare",
                                                       "--redis",
                                                       TestRedis::shared().tcp_url() + "/13",
                                                       "--strategies",
                                                       "naive,lua,token-bucket,gcra,incr-"
                                                       "expire,fixed-window,fixed-first-hit,"
                                                       "sliding-counter",
                                                       "--cost-dist",
                                                       "1:60,3:30,5:10",
                                                       "--limit",
                                                       "20",
                                                       "-w",
                                                       "2s",
                                                       "--burst",
                                                       "20",
                                                       "--refill",
                                                       "10/s",
                                                       "-n",
                                                       "200",
                                                       "-p",
                                                       "50",
                                                       "-r",
                                                       "2",
                                                       "--json"}},
                                                     {1});
  const json& compared = reports[0];
  REQUIRE(compared["reports"].size() == 8);
  for (const json& report : compared["reports"]) {
    const std::string strategy = report["target"]["strategy"];
    INFO(strategy, checks_of(report));
    CHECK(report["params"]["cost"] == "1:60,3:30,5:10");
    if (strategy == "naive") {
      CHECK(check_status(report, "limit") == "fail");
      CHECK(check_detail(report, "limit").find("units") != std::string::npos);
    } else {
      CHECK(report["verdict"] == "pass");
    }
  }
}

TEST_CASE("rlcheck serve --cost-header: the sliding window it serves holds in units") {
  ServeProcess serve({"--redis", TestRedis::shared().tcp_url() + "/13", "--listen", "127.0.0.1:0",
                      "--strategy", "lua", "--limit", "20", "--window", "2s", "--identity-header",
                      "X-Client", "--cost-header", "X-Cost"});
  const std::vector<json> reports = run_side_by_side(
      {http_args_to(serve.url(),
                    "-H X-Client:served-{id} -H X-Cost:{cost} --cost-dist "
                    "1:60,3:30,5:10 --rate 20/s --duration 3s --exact --contract "
                    "sliding:20/2s"),
       // Told nothing of the costs, the server counts one unit a request: in units, over.
       http_args_to(serve.url(),
                    "-H X-Client:unpriced-{id} --cost-dist 1:60,3:30,5:10 --rate "
                    "20/s --duration 3s --exact --contract sliding:20/2s")},
      {0, 1});
  check_held_in_units(reports[0]);
  INFO(checks_of(reports[1]));
  CHECK(check_status(reports[1], "limit") == "fail");
}

TEST_CASE(
    "real Flask-Limiter counts a denied request in the limits checked before: "
    "--consume-on-deny checked") {
  const Gateway& app = flask_limiter_app();
  if (skipped(app, k_flask_limiter_missing))
    return;
  // "5 per second;10 per 4 seconds". Flask-Limiter (extension.py, __evaluate_limits) sorts a
  // route's limits by window, shortest first, and hit()s each in turn until one refuses: a
  // request the 4-second limit denies has already taken a place in the per-second one.
  // The load: 10/s for 2 s (the first two seconds' five admissions fill the 4-second limit),
  // a pause, then 10/s again from 3.6 s: those requests fill the per-second limit while the
  // 4-second one denies them, so from 4.1 s, when the 4-second limit has room again, the
  // per-second one is full of denials although it admitted only one in the last second.
  const std::string load =
      "--stages 10ms:10/s,2s:10/s,10ms:0/s,1.5s:0/s,10ms:10/s,1.5s:10/s --exact "
      "--contract sliding:5/1s --contract sliding:10/4s ";
  const std::vector<json> reports = run_side_by_side(
      {http_args(app, "/consume/", "-H X-Client:consume-strict-{id} " + load),
       http_args(app, "/consume/",
                 "-H X-Client:consume-checked-{id} " + load + "--consume-on-deny checked")},
      {1, k_any_verdict});
  // Read strictly (a denial counts nowhere), those denials came while both limits had room.
  const json& strict = reports[0];
  {
    INFO(checks_of(strict));
    CHECK(check_status(strict, "limit") == "pass");
    CHECK(check_status(strict, "utilisation") == "fail");
    CHECK(check_detail(strict, "utilisation").find("had room") != std::string::npos);
    // ... and the fit, the runs replayed reading it as Flask-Limiter counts, names the flag.
    CHECK(check_detail(strict, "utilisation").find("fit --consume-on-deny checked") !=
          std::string::npos);
    REQUIRE(strict.contains("contract_fit"));
    CHECK(strict["contract_fit"]["consume_on_deny"] == "checked");
    CHECK(strict["contract_fit"]["flags"] == "--consume-on-deny checked");
    CHECK(strict["contract_fit"]["clears"].dump().find("utilisation") != std::string::npos);
  }
  // Read as Flask-Limiter counts, nothing is wrong with its decisions.
  const json& checked = reports[1];
  INFO(checks_of(checked));
  CHECK(checked["params"]["consume_on_deny"] == "checked");
  CHECK(check_status(checked, "limit") == "pass");
  CHECK(check_status(checked, "contract") == "pass");
  CHECK(check_status(checked, "utilisation") == "pass");
}

TEST_CASE("several IETF policies advertised, no flags: each policy is a part") {
  const Gateway& app = org_limits_app();
  // 10/s for 4 s against 5 per 2 s and 8 per 6 s, told nothing: RateLimit-Policy names both.
  const std::string load = "--rate 10/s --duration 4s --exact";
  const std::vector<json> reports = run_side_by_side(
      {http_args(app, "/two-policies/", "-H X-User:policies-{id} " + load),
       http_args(app, "/two-policies-ignored/", "-H X-User:policies-ignored-{id} " + load)},
      {0, 1});
  const json& kept = reports[0];
  {
    INFO(checks_of(kept));
    CHECK(kept["params"]["contracts"] == json::array({"sliding:5/2s", "sliding:8/6s"}));
    CHECK(kept["params"]["sources"]["limit"] == "advertised");
  }
  check_held_in_units(kept);
  // Advertised, never kept: the 6-second policy fails on its own part.
  const json& ignored = reports[1];
  INFO(checks_of(ignored));
  CHECK(check_status(ignored, "contract") == "fail");
  CHECK(check_detail(ignored, "contract").starts_with("sliding:8/6s:"));
}
