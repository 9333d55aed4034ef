// `rlcheck grpc` end to end, the third kind of target, against real gRPC servers on loopback
// built from Debian's Go packages (tests/fixtures/grpc): Envoy's rate limit service API over the
// test's Redis (counting atomically, or GET-then-INCR with a gap that lets concurrent calls
// through), and a service behind go-grpc-middleware's rate-limit interceptor on an x/time/rate
// token bucket. The same command line, checks, compare, probe and faults as the other kinds.

#include <doctest/doctest.h>

#include <unistd.h>

#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/go_servers.hpp"
#include "support/json_outcome.hpp"
#include "support/run_binary.hpp"
#include "support/test_redis.hpp"
#include "support/test_tls.hpp"

using namespace rlcheck::testing;
using nlohmann::json;

namespace {

// Envoy's RateLimitService/ShouldRateLimit, its verdict in the response, its hint the first
// descriptor's duration_until_reset.
std::vector<std::string> rls_flags(const std::string& user) {
  return {"--method",
          "envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit",
          "--proto",
          k_grpc_protos + "/envoy/service/ratelimit/v3/rls.proto",
          "--import-path",
          k_grpc_protos,
          "--data",
          R"({"domain": "edge", "descriptors": [{"entries": [{"key": "user", "value": ")" + user +
              R"("}]}]})",
          "--denied-when",
          "overall_code=OVER_LIMIT",
          "--hint-field",
          "statuses.0.duration_until_reset"};
}

std::vector<std::string> echo_flags() {
  return {"--method", "rlcheck.fixture.Echo/Say", "--proto", k_grpc_protos + "/echo.proto",
          "--data",   R"({"text": "hello {id}"})"};
}

std::vector<std::string> joined(std::vector<std::string> head,
                                const std::vector<std::string>& tail) {
  head.insert(head.end(), tail.begin(), tail.end());
  return head;
}

// An Envoy rate limit service of this test's own over the shared Redis: 10 per 60 s per user.
GoServer rls_server(const std::string& name, std::vector<std::string> flags = {}) {
  std::vector<std::string> all{
      "-redis",  "127.0.0.1:" + std::to_string(TestRedis::shared().port()),
      "-limit",  "10",
      "-window", "60s",
      "-prefix", "rlcheck-grpc-kind-" + std::to_string(getpid()) + "-" + name + "|"};
  all.insert(all.end(), flags.begin(), flags.end());
  return GoServer("rls_redis_server", all);
}

// A user of its own per run and per invocation of the test.
std::string user(const std::string& name) {
  return name + "-" + std::to_string(getpid()) + "-{run}";
}

}  // namespace

TEST_CASE(
    "grpc kind: Envoy's rate limit service counting atomically passes; GET-then-INCR fails "
    "limit, a race") {
  GoServer correct = rls_server("correct");
  // The naive one waits 5 ms between its GET and its INCRBY: 30 calls at once all read a count
  // below the limit.
  GoServer naive = rls_server("naive", {"-mode", "naive", "-naive-gap", "5ms"});
  const std::vector<std::string> load{"-n", "30", "-p",  "30",         "-r",    "2",     "-l",
                                      "10", "-w", "60s", "--contract", "fixed", "--json"};

  const json kept = json_report(
      joined(joined({"grpc", "grpc://" + correct.address()}, rls_flags(user("correct"))), load), 0);
  INFO(checks_of(kept));
  CHECK(kept["mode"] == "grpc");
  CHECK(kept["target"]["url"] == "grpc://" + correct.address());
  CHECK(kept["target"]["method"] == "envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit");
  for (const json& run : kept["runs"]) {
    CHECK(run["allowed"] == 10);
    CHECK(run["denied"] == 20);
  }
  CHECK(check_status(kept, "limit") == "pass");
  CHECK(check_status(kept, "retry-after-present") == "pass");
  CHECK(check_status(kept, "retry-after-accuracy") == "pass");

  const json raced =
      json_report(joined(joined({"grpc", naive.address()}, rls_flags(user("naive"))), load), 1);
  INFO(checks_of(raced));
  CHECK(check_status(raced, "limit") == "fail");
  CHECK(raced["runs"][0]["allowed"].get<int>() > 10);
  // Asked again one call at a time, the naive service keeps its limit: the excess is a race.
  CHECK(check_detail(raced, "limit").find("check-then-act race") != std::string::npos);
}

TEST_CASE(
    "grpc kind: a token bucket behind go-grpc-middleware passes its contract; a misread "
    "burst fails") {
  // Services of 10/s and burst 5, each met fresh: one per reading, and one whose types are
  // asked of it by server reflection.
  GoServer kept_bucket("token_bucket_server", {"-rate", "10", "-burst", "5"});
  GoServer misread_bucket("token_bucket_server", {"-rate", "10", "-burst", "5"});
  GoServer reflecting_bucket("token_bucket_server", {"-rate", "10", "-burst", "5", "-reflection"});
  const std::vector<std::string> load{"-n",           "20",       "-p",     "20",
                                      "-r",           "1",        "--json", "--contract",
                                      "token-bucket", "--refill", "10/s"};
  const json kept = json_report(
      joined(joined(joined({"grpc", kept_bucket.address()}, echo_flags()), load), {"--burst", "5"}),
      0);
  INFO(checks_of(kept));
  CHECK(kept["runs"][0]["allowed"] == 5);
  CHECK(check_status(kept, "contract") == "pass");
  CHECK(check_status(kept, "retry-after-present") == "pass");

  const json misread =
      json_report(joined(joined(joined({"grpc", misread_bucket.address()}, echo_flags()), load),
                         {"--burst", "3"}),
                  1);
  INFO(checks_of(misread));
  CHECK(check_status(misread, "contract") == "fail");

  // Without --proto: the same calls, the same verdicts.
  const json reflected = json_report(
      joined({"grpc", reflecting_bucket.address(), "--method", "rlcheck.fixture.Echo/Say", "--data",
              R"({"text": "hello {id}"})", "--burst", "5"},
             load),
      0);
  INFO(checks_of(reflected));
  CHECK(reflected["runs"][0]["allowed"] == kept["runs"][0]["allowed"]);
  CHECK(reflected["runs"][0]["denied"] == kept["runs"][0]["denied"]);
  REQUIRE(reflected["checks"].size() == kept["checks"].size());
  for (size_t i = 0; i < kept["checks"].size(); ++i) {
    CHECK(reflected["checks"][i]["id"] == kept["checks"][i]["id"]);
    CHECK(reflected["checks"][i]["status"] == kept["checks"][i]["status"]);
  }
}

TEST_CASE(
    "grpc kind: two worker threads, a completion queue each, count every call once; the race "
    "still shows" *
    doctest::test_suite("threads")) {
  GoServer correct = rls_server("threads-correct");
  // A gap of 50 ms: the calls of both threads, however slowly a sanitized build sends them,
  // read the count before the first write.
  GoServer naive = rls_server("threads-naive", {"-mode", "naive", "-naive-gap", "50ms"});
  const std::vector<std::string> load{"-n", "40", "-p", "40",  "--threads",  "2",     "-r",    "2",
                                      "-l", "10", "-w", "60s", "--contract", "fixed", "--json"};
  const json kept = json_report(
      joined(joined({"grpc", correct.address()}, rls_flags(user("threads-correct"))), load), 0);
  INFO(checks_of(kept));
  REQUIRE(kept["runs"].size() == 2);
  for (const json& run : kept["runs"]) {
    CHECK(run["allowed"] == 10);
    CHECK(run["denied"] == 30);
    CHECK(run["errors"] == 0);
  }
  const json raced = json_report(
      joined(joined({"grpc", naive.address()}, rls_flags(user("threads-naive"))), load), 1);
  INFO(checks_of(raced));
  CHECK(check_status(raced, "limit") == "fail");
}

TEST_CASE("grpc kind: --metadata reaches the service: a bucket per value, one per run") {
  // A token every 5 s: a run that met the last run's bucket would find at most one.
  GoServer bucket("token_bucket_server",
                  {"-rate", "0.2", "-burst", "5", "-bucket-per", "x-user", "-reflection"});
  const json report =
      json_report({"grpc", bucket.address(), "--method", "rlcheck.fixture.Echo/Say", "--metadata",
                   "X-User: user-{run}", "-n", "20", "-p", "20", "-r", "2", "--json", "--contract",
                   "token-bucket", "--burst", "5", "--refill", "1/5s"},
                  0);
  INFO(checks_of(report));
  REQUIRE(report["runs"].size() == 2);
  for (const json& run : report["runs"]) {
    CHECK(run["allowed"] == 5);
    CHECK(run["denied"] == 15);
  }
  CHECK(check_status(report, "contract") == "pass");
}

TEST_CASE(
    "grpc kind: probe finds the token bucket and the fixed window, flags that pass pasted "
    "back") {
  // Its types asked of it by server reflection: probe prepares its target as a test does.
  GoServer bucket("token_bucket_server", {"-rate", "10", "-burst", "5", "-reflection"});
  const json found =
      json_report({"probe", "grpc://" + bucket.address(), "--json", "--max-time", "20s", "--method",
                   "rlcheck.fixture.Echo/Say", "--data", R"({"text": "hello {id}"})"},
                  0);
  CHECK(found["mode"] == "grpc");
  CHECK(found["algorithm"] == "token-bucket");
  CHECK(found["burst"] == 5);
  const std::string flags = found["flags"].get<std::string>();
  CHECK(flags.find("--contract token-bucket --burst 5") != std::string::npos);
  // Pasted back on a fresh service of the same shape.
  GoServer again("token_bucket_server", {"-rate", "10", "-burst", "5"});
  std::vector<std::string> pasted =
      joined({"grpc", again.address(), "-n", "20", "-p", "20", "-r", "1", "--json"}, echo_flags());
  append_words(pasted, flags);
  const json replayed = json_report(pasted, 0);
  CHECK(check_status(replayed, "contract") == "pass");

  // A fixed window of 5 per second on the clock.
  GoServer window = rls_server("probed", {"-limit", "5", "-window", "1s"});
  const json fixed =
      json_report(joined({"probe", "grpc://" + window.address(), "--json", "--max-time", "30s"},
                         rls_flags(user("probe"))),
                  0);
  CHECK(fixed["algorithm"] == "fixed");
  CHECK(fixed["limit"] == 5);
}

TEST_CASE("grpc kind: compare over two services side by side, each judged") {
  GoServer correct = rls_server("compare-correct");
  GoServer naive = rls_server("compare-naive", {"-mode", "naive", "-naive-gap", "5ms"});
  const json both =
      json_report(joined({"compare", "--url", "grpc://" + correct.address(), "--url",
                          "grpc://" + naive.address(), "-n", "30", "-p", "30", "-r", "1", "-l",
                          "10", "-w", "60s", "--contract", "fixed", "--json"},
                         rls_flags(user("compare"))),
                  1);
  REQUIRE(both["reports"].size() == 2);
  CHECK(both["reports"][0]["verdict"] == "pass");
  CHECK(both["reports"][1]["verdict"] == "fail");
  CHECK(check_status(both["reports"][1], "limit") == "fail");

  // Without --proto, each service is asked for its own types.
  GoServer bucket("token_bucket_server", {"-rate", "10", "-burst", "5", "-reflection"});
  GoServer window = rls_server("compare-reflected", {"-reflection"});
  const ProcessOutcome other = run_rlcheck({"compare", "--url", "grpc://" + bucket.address(),
                                            "--url", "grpc://" + window.address(), "--method",
                                            "rlcheck.fixture.Echo/Say", "-r", "1", "-n", "5"});
  INFO(other.err);
  CHECK(other.exit_code == 64);  // the rate limit service has no such method
  CHECK(other.err.find("--method: " + window.address()) != std::string::npos);
}

TEST_CASE("grpc kind: a fault on the service's Redis during a run is applied and measured") {
  GoServer service = rls_server("fault", {"-limit", "100000"});
  const json report = json_report(joined({"grpc",
                                          service.address(),
                                          "--rate",
                                          "200/s",
                                          "--duration",
                                          "600ms",
                                          "-r",
                                          "1",
                                          "--identities",
                                          "4",
                                          "-l",
                                          "100000",
                                          "-w",
                                          "60s",
                                          "--fault",
                                          "kill-clients@200ms",
                                          "--limiter-redis",
                                          TestRedis::shared().tcp_url(),
                                          "--max-errors",
                                          "1000",
                                          "--json"},
                                         rls_flags(user("fault") + "-{id}")),
                                  0);
  const json& faults = report["runs"][0]["faults"];
  REQUIRE(faults.size() == 1);
  CHECK_FALSE(faults[0].contains("applied"));  // present, false, only when it failed
  CHECK(faults[0]["spec"] == "kill-clients@200ms");
  CHECK(check_status(report, "recovery") == "pass");
}

TEST_CASE("grpc kind: grpcs:// verified against --tls-ca, as the other kinds' TLS") {
  const TlsFiles& files = shared_tls_files();
  GoServer bucket("token_bucket_server", {"-rate", "10", "-burst", "5", "-tls-cert",
                                          files.server_cert, "-tls-key", files.server_key});
  const json kept =
      json_report(joined({"grpc", "grpcs://" + bucket.address(), "--tls-ca", files.ca_cert, "-n",
                          "20", "-p", "20", "-r", "1", "--json", "--contract", "token-bucket",
                          "--burst", "5", "--refill", "10/s"},
                         echo_flags()),
                  0);
  INFO(checks_of(kept));
  CHECK(kept["target"]["url"] == "grpcs://" + bucket.address());
  CHECK(kept["runs"][0]["allowed"] == 5);
  CHECK(check_status(kept, "contract") == "pass");

  // Without --proto, server reflection is asked over the same TLS.
  GoServer reflecting("token_bucket_server",
                      {"-rate", "10", "-burst", "5", "-tls-cert", files.server_cert, "-tls-key",
                       files.server_key, "-reflection"});
  const json reflected =
      json_report({"grpc", "grpcs://" + reflecting.address(), "--tls-ca", files.ca_cert, "--method",
                   "rlcheck.fixture.Echo/Say", "-n", "20", "-p", "20", "-r", "1", "--json",
                   "--contract", "token-bucket", "--burst", "5", "--refill", "10/s"},
                  0);
  INFO(checks_of(reflected));
  CHECK(reflected["runs"][0]["allowed"] == 5);
  CHECK(check_status(reflected, "contract") == "pass");
  const ProcessOutcome unverified =
      run_rlcheck({"grpc", "grpcs://" + reflecting.address(), "--tls-ca", files.unknown_ca_cert,
                   "--method", "rlcheck.fixture.Echo/Say", "-r", "1"});
  INFO(unverified.err);
  CHECK(unverified.exit_code == 3);
  CHECK(unverified.err.find("TLS") != std::string::npos);
}

TEST_CASE(
    "grpc kind: what the command line cannot take is one line naming the flag, exit 64; an "
    "unreachable service exit 3") {
  GoServer bucket("token_bucket_server", {"-rate", "10", "-burst", "5"});
  const auto refused = [](const std::vector<std::string>& args, const std::string& flag) {
    const ProcessOutcome outcome = run_rlcheck(args);
    INFO(outcome.err);
    CHECK(outcome.exit_code == 64);
    CHECK(outcome.err.find(flag) != std::string::npos);
  };
  refused({"grpc", bucket.address(), "--proto", k_grpc_protos + "/echo.proto"}, "--method");
  refused({"grpc", bucket.address(), "--method", "rlcheck.fixture.Echo/Shout", "--proto",
           k_grpc_protos + "/echo.proto"},
          "--method");
  refused(joined({"grpc", bucket.address()},
                 {"--method", "rlcheck.fixture.Echo/Say", "--proto", k_grpc_protos + "/echo.proto",
                  "--data", R"({"txet": 1})"}),
          "--data");
  refused(joined({"grpc", bucket.address(), "-r", "1", "--tls-ca", k_grpc_protos + "/echo.proto"},
                 echo_flags()),
          "--tls-ca");
  refused(joined({"grpc", "localhost"}, echo_flags()), "ADDRESS");

  // Without --proto, what the service's reflection describes is held to the same rules.
  GoServer reflecting("token_bucket_server", {"-reflection"});
  refused({"grpc", reflecting.address(), "-r", "1", "--method", "rlcheck.fixture.Echo/Shout"},
          "--method");
  refused({"grpc", reflecting.address(), "-r", "1", "--method", "rlcheck.fixture.Mirror/Say"},
          "--method");
  refused({"grpc", reflecting.address(), "-r", "1", "--method", "rlcheck.fixture.Echo/Say",
           "--data", R"({"txet": 1})"},
          "--data");
  // A service without server reflection cannot be tested without --proto: exit 3, saying so.
  const ProcessOutcome no_reflection =
      run_rlcheck({"grpc", bucket.address(), "-r", "1", "--method", "rlcheck.fixture.Echo/Say"});
  INFO(no_reflection.err);
  CHECK(no_reflection.exit_code == 3);
  CHECK(no_reflection.err.find("server reflection") != std::string::npos);
  CHECK(no_reflection.err.find("--proto") != std::string::npos);

  const std::string nowhere = "127.0.0.1:" + std::to_string(free_loopback_port());
  const ProcessOutcome unreachable =
      run_rlcheck(joined({"grpc", nowhere, "-n", "5", "-r", "1", "--timeout", "1s"}, echo_flags()));
  INFO(unreachable.err);
  CHECK(unreachable.exit_code == 3);
  const ProcessOutcome unasked = run_rlcheck(
      {"grpc", nowhere, "--method", "rlcheck.fixture.Echo/Say", "-r", "1", "--timeout", "1s"});
  INFO(unasked.err);
  CHECK(unasked.exit_code == 3);
  CHECK(unasked.err.find(nowhere) != std::string::npos);
}

TEST_CASE("grpc kind: a scenario file takes the kind's name as its mode") {
  GoServer bucket("token_bucket_server", {"-rate", "10", "-burst", "5"});
  ScratchDir dir("rlcheck-grpc-scenario");
  const json scenario = {{"name", "grpc bucket"},
                         {"mode", "grpc"},
                         {"url", "grpc://" + bucket.address()},
                         {"method", "rlcheck.fixture.Echo/Say"},
                         {"proto", k_grpc_protos + "/echo.proto"},
                         {"data", R"({"text": "{id}"})"},
                         {"requests", 20},
                         {"concurrency", 20},
                         {"runs", 1},
                         {"contract", "token-bucket"},
                         {"burst", 5},
                         {"refill", "10/s"}};
  const std::string path = dir.path() + "/bucket.json";
  std::ofstream(path) << scenario.dump();
  const ProcessOutcome outcome = run_rlcheck({"run", path});
  INFO(outcome.out << outcome.err);
  CHECK(outcome.exit_code == 0);
  CHECK(outcome.out.find("1 of 1 scenarios behaved as expected") != std::string::npos);
}
