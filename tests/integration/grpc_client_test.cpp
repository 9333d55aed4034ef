// The gRPC client driven by the engine (engine::execute_run) against real gRPC servers on
// loopback, built from Debian's Go packages (tests/fixtures/grpc): a service behind
// go-grpc-middleware's rate-limit interceptor on an x/time/rate token bucket, and Envoy's rate
// limit service API over the test's Redis, counting correctly or with GET-then-INCR; and the
// method's types asked of those servers by gRPC's server reflection.

#include <doctest/doctest.h>

#include <unistd.h>
#include <filesystem>
#include <string>
#include <vector>

#include "engine/run.hpp"
#include "support/go_servers.hpp"
#include "support/test_redis.hpp"
#include "support/test_tls.hpp"
#include "targets/grpc/grpc_calls.hpp"
#include "targets/grpc/grpc_client.hpp"
#include "targets/grpc/server_reflection.hpp"

using namespace rlcheck;
using engine::Outcome;
using grpc_target::GrpcOptions;
using grpc_target::ReflectionFailure;
using testing::free_loopback_port;
using testing::GoServer;
using testing::TestRedis;

namespace {

const std::string& k_protos = testing::k_grpc_protos;

GrpcOptions echo_options(const std::string& address) {
  GrpcOptions options;
  options.address = address;
  options.method = "rlcheck.fixture.Echo/Say";
  options.proto_files = {k_protos + "/echo.proto"};
  options.data = R"({"text": "hello {id}", "seq": {seq}})";
  return options;
}

GrpcOptions rls_options(const std::string& address) {
  GrpcOptions options;
  options.address = address;
  options.method = "envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit";
  options.proto_files = {k_protos + "/envoy/service/ratelimit/v3/rls.proto"};
  options.import_paths = {k_protos};
  options.data =
      R"({"domain": "edge", "descriptors": [{"entries": [{"key": "user", "value": "u{id}"}]}]})";
  options.denied_when = {"overall_code=OVER_LIMIT"};
  options.hint_field = "statuses.0.duration_until_reset";
  return options;
}

// `requests` calls at once (one each from `requests` clients over `threads` loops), as a burst.
engine::RunResult burst(const GrpcOptions& options, int requests, int threads = 1,
                        std::chrono::milliseconds timeout = std::chrono::seconds(5)) {
  auto target = grpc_target::GrpcCalls::make(options);
  if (!target)
    FAIL(target.error());
  auto factory = grpc_target::make_grpc_client_factory(*target);
  config::LoadConfig load;
  load.requests = requests;
  load.concurrency = requests;
  load.threads = threads;
  load.timeout = timeout;
  return engine::execute_run(*factory, load);
}

int64_t count(const engine::RunResult& result, Outcome outcome) {
  int64_t n = 0;
  for (const engine::RequestRecord& record : result.records)
    n += record.outcome == outcome ? 1 : 0;
  return n;
}

std::string first_error(const engine::RunResult& result) {
  return result.error_samples.empty() ? std::string() : result.error_samples.begin()->second;
}

// A key prefix of this test process's own in the shared Redis.
std::string key_prefix(const std::string& name) {
  return "rlcheck-grpc-" + std::to_string(getpid()) + "-" + name + "|";
}

}  // namespace

TEST_CASE("grpc: a token bucket of burst 5 admits exactly 5 of 20 calls at once") {
  // A token per 3.3 s: none comes back while the burst lasts.
  GoServer server("token_bucket_server", {"-rate", "0.3", "-burst", "5"});
  const engine::RunResult result = burst(echo_options(server.address()), 20);
  REQUIRE(result.records.size() == 20);
  CHECK_MESSAGE(count(result, Outcome::error) == 0, first_error(result), server.log());
  CHECK(count(result, Outcome::allowed) == 5);
  CHECK(count(result, Outcome::denied) == 15);
  // Every denial says when the next token comes, from its google.rpc.RetryInfo, to the ms (a
  // Duration of whole seconds is read as counting whole seconds only).
  for (const engine::RequestRecord& record : result.records) {
    if (record.outcome != Outcome::denied)
      continue;
    CHECK(record.hint_expected);
    REQUIRE(record.retry_ms.has_value());
    CHECK(*record.retry_ms > 0);
    CHECK(*record.retry_ms <= 3'334);
    CHECK(record.hint_resolution_ms == (*record.retry_ms % 1000 == 0 ? 1000 : 1));
  }
}

TEST_CASE("grpc: the hint from retry-after metadata, in whole seconds") {
  GoServer server("token_bucket_server",
                  {"-rate", "0.3", "-burst", "2", "-retry-info=false", "-retry-after-metadata"});
  const engine::RunResult result = burst(echo_options(server.address()), 6);
  REQUIRE(result.records.size() == 6);
  CHECK_MESSAGE(count(result, Outcome::error) == 0, first_error(result), server.log());
  CHECK(count(result, Outcome::allowed) == 2);
  for (const engine::RequestRecord& record : result.records) {
    if (record.outcome != Outcome::denied)
      continue;
    // The next token in at most 3.34 s: 4 s, rounded up to the second.
    CHECK(record.retry_ms == 4000);
    CHECK(record.hint_resolution_ms == 1000);
  }
}

TEST_CASE("grpc: Envoy's rate limit service, counting atomically, admits exactly its limit") {
  GoServer server("rls_redis_server",
                  {"-redis", "127.0.0.1:" + std::to_string(TestRedis::shared().port()), "-limit",
                   "10", "-window", "1h", "-anchor", "first-hit", "-mode", "correct", "-prefix",
                   key_prefix("correct")});
  const engine::RunResult result = burst(rls_options(server.address()), 50);
  REQUIRE(result.records.size() == 50);
  CHECK_MESSAGE(count(result, Outcome::error) == 0, first_error(result), server.log());
  CHECK(count(result, Outcome::allowed) == 10);
  CHECK(count(result, Outcome::denied) == 40);
  // Denied: OK with overall_code OVER_LIMIT; the hint is the window's time left.
  for (const engine::RequestRecord& record : result.records) {
    if (record.outcome != Outcome::denied)
      continue;
    REQUIRE(record.retry_ms.has_value());
    CHECK(*record.retry_ms > 3'500'000);
    CHECK(*record.retry_ms <= 3'600'000);
  }
}

TEST_CASE("grpc: two worker loops, each with its own completion queue and channel") {
  GoServer server("rls_redis_server",
                  {"-redis", "127.0.0.1:" + std::to_string(TestRedis::shared().port()), "-limit",
                   "10", "-window", "1h", "-anchor", "first-hit", "-mode", "correct", "-prefix",
                   key_prefix("two-loops")});
  const engine::RunResult result = burst(rls_options(server.address()), 60, 2);
  REQUIRE(result.records.size() == 60);
  CHECK(result.clients_ready == 60);
  CHECK_MESSAGE(count(result, Outcome::error) == 0, first_error(result), server.log());
  CHECK(count(result, Outcome::allowed) == 10);
  CHECK(count(result, Outcome::denied) == 50);
}

TEST_CASE("grpc: calls with no reply within the timeout are given up, and the run ends") {
  // The naive server holds each call 5 s between its read and its count.
  GoServer server("rls_redis_server",
                  {"-redis", "127.0.0.1:" + std::to_string(TestRedis::shared().port()), "-limit",
                   "10", "-window", "1h", "-anchor", "first-hit", "-mode", "naive", "-naive-gap",
                   "5s", "-prefix", key_prefix("timeout")});
  const auto started = std::chrono::steady_clock::now();
  const engine::RunResult result =
      burst(rls_options(server.address()), 5, 1, std::chrono::milliseconds(300));
  REQUIRE(result.records.size() == 5);
  for (const engine::RequestRecord& record : result.records) {
    CHECK(record.outcome == Outcome::error);
    CHECK(record.error == engine::ErrorKind::timeout);
  }
  // The calls given up were cancelled: the run did not wait for their replies.
  CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(5));
}

TEST_CASE("grpc: Envoy's rate limit service reading before it counts admits over its limit") {
  // GET, compare, then INCRBY: calls that all read before any of them counted are all
  // admitted. The server pauses 200 ms between the read and the count, so 50 calls sent at
  // once all read a count of 0.
  GoServer server("rls_redis_server",
                  {"-redis", "127.0.0.1:" + std::to_string(TestRedis::shared().port()), "-limit",
                   "10", "-window", "1h", "-anchor", "first-hit", "-mode", "naive", "-naive-gap",
                   "200ms", "-prefix", key_prefix("naive")});
  const engine::RunResult result = burst(rls_options(server.address()), 50);
  REQUIRE(result.records.size() == 50);
  CHECK_MESSAGE(count(result, Outcome::error) == 0, first_error(result), server.log());
  CHECK(count(result, Outcome::allowed) > 10);
}

TEST_CASE("grpc: over TLS (grpcs://), the server verified against --tls-ca") {
  const testing::TlsFiles& files = testing::shared_tls_files();
  GoServer server("token_bucket_server", {"-rate", "0.3", "-burst", "5", "-tls-cert",
                                          files.server_cert, "-tls-key", files.server_key});
  GrpcOptions options = echo_options(server.address());
  options.use_tls = true;
  options.tls.ca_file = files.ca_cert;
  const engine::RunResult result = burst(options, 20);
  REQUIRE(result.records.size() == 20);
  CHECK_MESSAGE(count(result, Outcome::error) == 0, first_error(result), server.log());
  CHECK(count(result, Outcome::allowed) == 5);
  CHECK(count(result, Outcome::denied) == 15);

  // A CA that did not sign the server's certificate: no connection, and the error says TLS.
  options.tls.ca_file = files.unknown_ca_cert;
  const engine::RunResult refused = burst(options, 2);
  CHECK(refused.clients_ready == 0);
  CHECK_MESSAGE(refused.connect_error.find("TLS") != std::string::npos, refused.connect_error);
  CHECK(count(refused, Outcome::allowed) + count(refused, Outcome::denied) == 0);
}

TEST_CASE("grpc: nothing listening: no client connects, and the error says where it tried") {
  const std::string address = "127.0.0.1:" + std::to_string(free_loopback_port());
  const engine::RunResult result = burst(echo_options(address), 3);
  CHECK(result.clients_ready == 0);
  CHECK_MESSAGE(result.connect_error.find(address) != std::string::npos, result.connect_error);
  CHECK(count(result, Outcome::allowed) == 0);
}

TEST_CASE("grpc: the hint as a number of seconds in an OK reply that says it denies") {
  GoServer server("token_bucket_server", {"-rate", "0.3", "-burst", "2", "-deny-in-reply"});
  GrpcOptions options = echo_options(server.address());
  options.denied_when = {"denied=true"};
  options.hint_field = "retry_after_s";
  const engine::RunResult result = burst(options, 6);
  REQUIRE(result.records.size() == 6);
  CHECK_MESSAGE(count(result, Outcome::error) == 0, first_error(result), server.log());
  CHECK(count(result, Outcome::allowed) == 2);
  CHECK(count(result, Outcome::denied) == 4);
  for (const engine::RequestRecord& record : result.records) {
    if (record.outcome != Outcome::denied)
      continue;
    // The next token in at most 3.34 s: 4 s, rounded up to the second, told in whole seconds.
    CHECK(record.retry_ms == 4000);
    CHECK(record.hint_resolution_ms == 1000);
  }
}

TEST_CASE("grpc: the method's types asked of the service by server reflection, imports too") {
  GoServer server("rls_redis_server",
                  {"-redis", "127.0.0.1:" + std::to_string(TestRedis::shared().port()), "-limit",
                   "10", "-window", "1h", "-anchor", "first-hit", "-mode", "correct", "-prefix",
                   key_prefix("reflected"), "-reflection"});
  GrpcOptions options = rls_options(server.address());
  options.proto_files.clear();
  options.import_paths.clear();
  const auto described = grpc_target::describe_service(
      options, {}, "envoy.service.ratelimit.v3.RateLimitService", std::chrono::seconds(5));
  REQUIRE_MESSAGE(described.has_value(), described.error().message);
  // rls.proto and the file it imports (Duration's is built in, described or not).
  CHECK(described->size() >= 2);
  options.described_files = *described;
  const engine::RunResult result = burst(options, 50);
  REQUIRE(result.records.size() == 50);
  CHECK_MESSAGE(count(result, Outcome::error) == 0, first_error(result), server.log());
  CHECK(count(result, Outcome::allowed) == 10);
  CHECK(count(result, Outcome::denied) == 40);
  for (const engine::RequestRecord& record : result.records) {
    if (record.outcome == Outcome::denied)
      CHECK(record.retry_ms > 3'500'000);
  }

  const auto unknown = grpc_target::describe_service(
      options, {}, "envoy.service.ratelimit.v3.RateLimiter", std::chrono::seconds(5));
  REQUIRE_FALSE(unknown.has_value());
  CHECK(unknown.error().kind == ReflectionFailure::Kind::unknown_service);
  CHECK_MESSAGE(unknown.error().message.starts_with("--method: "), unknown.error().message);
}

TEST_CASE("grpc: server reflection over TLS; a service without it, and nothing listening") {
  const testing::TlsFiles& files = testing::shared_tls_files();
  GoServer secure("token_bucket_server",
                  {"-tls-cert", files.server_cert, "-tls-key", files.server_key, "-reflection"});
  GrpcOptions options = echo_options(secure.address());
  options.use_tls = true;
  options.tls.ca_file = files.ca_cert;
  auto pem = grpc_target::GrpcCalls::read_tls_pem(options);
  REQUIRE(pem.has_value());
  const auto described =
      grpc_target::describe_service(options, *pem, "rlcheck.fixture.Echo", std::chrono::seconds(5));
  REQUIRE_MESSAGE(described.has_value(), described.error().message);
  CHECK(described->size() == 1);  // echo.proto imports nothing

  GoServer plain("token_bucket_server", {});
  const auto not_offered = grpc_target::describe_service(
      echo_options(plain.address()), {}, "rlcheck.fixture.Echo", std::chrono::seconds(5));
  REQUIRE_FALSE(not_offered.has_value());
  CHECK(not_offered.error().kind == ReflectionFailure::Kind::not_offered);
  CHECK_MESSAGE(not_offered.error().message.find("--proto") != std::string::npos,
                not_offered.error().message);

  const std::string nowhere = "127.0.0.1:" + std::to_string(free_loopback_port());
  const auto started = std::chrono::steady_clock::now();
  const auto unreachable = grpc_target::describe_service(
      echo_options(nowhere), {}, "rlcheck.fixture.Echo", std::chrono::seconds(5));
  REQUIRE_FALSE(unreachable.has_value());
  CHECK(unreachable.error().kind == ReflectionFailure::Kind::unreachable);
  CHECK_MESSAGE(unreachable.error().message.find(nowhere) != std::string::npos,
                unreachable.error().message);
  // A refused connection is told at once, not at the deadline.
  CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(5));
}
