// Bad input gets one clear line and the contract's exit code: never a crash or a hang.

#include <doctest/doctest.h>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "support/json_outcome.hpp"
#include "support/run_binary.hpp"
#include "support/test_redis.hpp"

using namespace rlcheck::testing;

TEST_CASE("bad flags and values exit 64 with one line naming the flag") {
  struct Case {
    std::vector<std::string> args;
    std::string flag;
  };
  const std::vector<Case> cases{
      {{"-n", "0"}, "--requests"},
      {{"-p", "-1"}, "--concurrency"},
      {{"--window", "0s"}, "--window"},
      {{"--window", "5parsecs"}, "--window"},
      {{"--strategy", "bogus"}, "--strategy"},
      {{"--script", "/no/such/limiter.lua"}, "--script"},
      {{"--timeout", "never"}, "--timeout"},
      {{"--redis", "http://localhost"}, "--redis"},
      {{"--bogus-flag"}, "--bogus-flag"},
      {{"-n"}, "--requests"},
      {{"--contract", "leaky"}, "--contract"},
      {{"--window", "1s", "--start-before-boundary", "2s"}, "--start-before-boundary"},
      {{"--tls-ca", "/no/such/ca.pem"}, "--tls-ca"},
      {{"--insecure"}, "--insecure"},
      {{"--pipeline", "0"}, "--pipeline"},
      {{"--pipeline", "1025"}, "--pipeline"},
      {{"--embedded-cluster", "3"}, "--embedded-cluster"},
      {{"--stages", "1s:10/s", "--rate", "10/s"}, "--stages"},
      {{"--stages", "1s:0/s"}, "--stages"},
      {{"--arrivals", "poisson"}, "--arrivals"},
  };
  for (const Case& c : cases) {
    std::vector<std::string> args{"redis", "--redis", TestRedis::shared().tcp_url()};
    args.insert(args.end(), c.args.begin(), c.args.end());
    const ProcessOutcome outcome = run_rlcheck(args);
    CAPTURE(c.flag);
    CAPTURE(outcome.err);
    CHECK(outcome.exit_code == 64);
    CHECK(outcome.out.empty());
    CHECK(lines_of(outcome.err).size() == 1);
    CHECK(outcome.err.find(c.flag) != std::string::npos);
  }
}

TEST_CASE("TLS and cluster flags exit 64 where they cannot apply, naming the flag") {
  struct Case {
    std::vector<std::string> args;
    std::string says;
  };
  const std::string existing = RLCHECK_SOURCE_DIR "/README.md";  // readable, not a certificate
  const std::vector<Case> cases{
      {{"redis", "--redis", TestRedis::shared().tcp_url(), "--tls-ca", existing},
       "--tls-ca: the --redis URL " + TestRedis::shared().tcp_url() + " is not TLS (rediss://)"},
      {{"redis", "--redis", TestRedis::shared().unix_url(), "--insecure"}, "--insecure"},
      {{"redis", "--tls-sni", "cache"}, "--tls-sni: applies to a TLS Redis"},
      {{"redis", "--redis", "rediss://127.0.0.1:1", "--tls-ca", "/no/such/ca.pem"},
       "--tls-ca: no such file: /no/such/ca.pem"},
      {{"redis", "--redis", "rediss://127.0.0.1:1", "--tls-cert", existing},
       "--tls-cert: needs --tls-key"},
      {{"redis", "--redis", "rediss://127.0.0.1:1", "--tls-key", existing},
       "--tls-key: needs --tls-cert"},
      {{"redis", "--embedded-cluster", "2", "--tls-ca", existing}, "--tls-ca"},
      {{"redis", "--embedded-cluster", "17"}, "--embedded-cluster: must be between 1 and 16"},
      {{"http", "http://127.0.0.1:1/", "--insecure"}, "--insecure: http://127.0.0.1:1/ is not TLS"},
      {{"http", "https://127.0.0.1:1/", "--tls-sni", "api"}, "--tls-sni: not supported for HTTP"},
      {{"compare", "--url", "https://127.0.0.1:1/?k={run}", "--pipeline", "4"}, "--pipeline"},
      {{"serve", "--redis", TestRedis::shared().tcp_url(), "--tls-ca", existing}, "--tls-ca"},
  };
  for (const Case& c : cases) {
    const ProcessOutcome outcome = run_rlcheck(c.args);
    CAPTURE(c.says);
    CAPTURE(outcome.err);
    CHECK(outcome.exit_code == 64);
    CHECK(outcome.out.empty());
    CHECK(lines_of(outcome.err).size() == 1);
    CHECK(outcome.err.find(c.says) != std::string::npos);
  }
}

TEST_CASE("an unreachable Redis exits 3 naming the address") {
  const ProcessOutcome outcome = run_rlcheck({"redis", "--redis", "redis://127.0.0.1:1"});
  CHECK(outcome.exit_code == 3);
  CHECK(lines_of(outcome.err).size() == 1);
  CHECK(outcome.err.find("redis://127.0.0.1:1") != std::string::npos);
  CHECK(outcome.err.find("refused") != std::string::npos);
}

TEST_CASE("REDIS_URL is used when --redis is absent, and named when unreachable") {
  RunOptions options;
  options.env["REDIS_URL"] = "redis://127.0.0.1:1/3";
  const ProcessOutcome outcome = run_rlcheck({"redis"}, options);
  CHECK(outcome.exit_code == 3);
  CHECK(outcome.err.find("redis://127.0.0.1:1/3") != std::string::npos);
}

TEST_CASE("a password in the URL is never printed") {
  const ProcessOutcome outcome =
      run_rlcheck({"redis", "--redis", "redis://ops:s3cret@127.0.0.1:1"});
  CHECK(outcome.exit_code == 3);
  CHECK(outcome.err.find("s3cret") == std::string::npos);
  CHECK(outcome.err.find("ops:***@127.0.0.1:1") != std::string::npos);
}

TEST_CASE("a server that accepts but never answers ends in exit 3 within the timeout") {
  const int listener = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
  REQUIRE(listen(listener, 64) == 0);
  socklen_t length = sizeof address;
  getsockname(listener, reinterpret_cast<sockaddr*>(&address), &length);
  const std::string url = "redis://127.0.0.1:" + std::to_string(ntohs(address.sin_port));

  RunOptions options;
  options.limit = std::chrono::seconds(20);
  const ProcessOutcome outcome =
      run_rlcheck({"redis", "--redis", url, "--timeout", "300ms"}, options);
  close(listener);
  CHECK_FALSE(outcome.timed_out);
  CHECK(outcome.exit_code == 3);
  CHECK(outcome.err.find(url) != std::string::npos);
}

TEST_CASE("a script that returns the wrong shape exits 3 naming the script and the reply") {
  const std::string script = fixture("returns_string.lua");
  const ProcessOutcome outcome =
      run_rlcheck({"redis", "--redis", TestRedis::shared().tcp_url(), "--script", script});
  CHECK(outcome.exit_code == 3);
  CHECK(outcome.err.find(script) != std::string::npos);
  CHECK(outcome.err.find("string \"allowed\"") != std::string::npos);
}

TEST_CASE("a script that raises an error exits 3 naming the script and the error") {
  const std::string script = fixture("raises_error.lua");
  const ProcessOutcome outcome =
      run_rlcheck({"redis", "--redis", TestRedis::shared().tcp_url(), "--script", script});
  CHECK(outcome.exit_code == 3);
  CHECK(outcome.err.find(script) != std::string::npos);
  CHECK(outcome.err.find("limiter exploded") != std::string::npos);
}

TEST_CASE("a script that does not compile exits 3 before any request") {
  const std::string script = fixture("syntax_error.lua");
  const ProcessOutcome outcome =
      run_rlcheck({"redis", "--redis", TestRedis::shared().tcp_url(), "--script", script});
  CHECK(outcome.exit_code == 3);
  CHECK(outcome.err.find(script) != std::string::npos);
  CHECK(outcome.err.find("did not load") != std::string::npos);
}

TEST_CASE("--max-errors tolerates errors up to the figure, beside decided requests") {
  const std::string redis = TestRedis::shared().tcp_url();
  // A third of the calls error, the rest are decided: tolerated, the verdict is the limiter's.
  const ProcessOutcome flaky =
      run_rlcheck({"redis", "--redis", redis, "--script", fixture("errors_every_third.lua"), "-n",
                   "30", "-r", "1", "--max-errors", "10", "-q"});
  INFO("flaky: " << flaky.err << flaky.out);
  CHECK(flaky.exit_code == 0);
  CHECK(run_rlcheck({"redis", "--redis", redis, "--script", fixture("errors_every_third.lua"), "-n",
                     "30", "-r", "1", "--max-errors", "9", "-q"})
            .exit_code == 3);
  // Every request errored: tolerated or not, nothing was tested.
  const ProcessOutcome all =
      run_rlcheck({"redis", "--redis", redis, "--script", fixture("raises_error.lua"), "-n", "20",
                   "--max-errors", "20", "-q"});
  CHECK(all.exit_code == 3);
  CHECK(all.err.find("no request was decided") != std::string::npos);
}
