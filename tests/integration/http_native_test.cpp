// The native HTTP/1.1 client against servers that answer in every way HTTP allows: chunked and
// run-to-the-close bodies, Connection: close, a close between requests, interim responses; and
// in ways it does not: oversized headers, garbage, a body that never ends. Also which client
// ran (params.http_client) and how it is chosen. (Every "http*" test runs on both clients.)

#include <doctest/doctest.h>

#include <chrono>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/raw_http_server.hpp"
#include "support/run_binary.hpp"

using namespace rlcheck::testing;
using nlohmann::json;

namespace {

struct NativeRun {
  ProcessOutcome outcome;
  json report;
};

NativeRun run_native(const std::string& url, std::vector<std::string> extra,
                     const std::map<std::string, std::string>& env = {}) {
  std::vector<std::string> args{"http", url, "--runs", "1", "--limit", "1000", "--json"};
  args.insert(args.end(), extra.begin(), extra.end());
  RunOptions options;
  options.limit = std::chrono::seconds(30);
  options.env = env;
  NativeRun run;
  run.outcome = run_rlcheck(args, options);
  run.report = json::parse(run.outcome.out, nullptr, false);
  INFO("stdout: " << run.outcome.out);
  INFO("stderr: " << run.outcome.err);
  REQUIRE_FALSE(run.report.is_discarded());
  return run;
}

const std::string k_ok = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}";
const std::string k_chunked =
    "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nRateLimit-Limit: 7\r\n\r\n"
    "3\r\nabc\r\n5;ext=1\r\nde\r\nf\r\n0\r\nTrailer: x\r\n\r\n";

int64_t allowed(const NativeRun& run) {
  return run.report["runs"][0]["allowed"].get<int64_t>();
}

}  // namespace

TEST_CASE("native http: chunked bodies on kept-alive connections, one connection per -p") {
  RawHttpServer server([](const std::string&, int) { return RawAnswer{k_chunked}; });
  const NativeRun run =
      run_native(server.url(), {"-n", "40", "-p", "2", "--http-client", "native"});
  CHECK(run.report["params"]["http_client"] == "native");
  CHECK(allowed(run) == 40);
  CHECK(server.requests().size() == 40);
  CHECK(server.connections() <= 2);
}

TEST_CASE("native http: Connection: close and a close after the answer mean a new connection") {
  SUBCASE("Connection: close") {
    RawHttpServer server([](const std::string&, int) {
      return RawAnswer{"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n", true};
    });
    const NativeRun run = run_native(server.url(), {"-n", "10", "-p", "1"});
    CHECK(allowed(run) == 10);
    CHECK(server.connections() == 10);
  }
  SUBCASE("a body that runs to the close") {
    RawHttpServer server([](const std::string&, int) {
      return RawAnswer{"HTTP/1.1 200 OK\r\n\r\nall of it", true};
    });
    const NativeRun run = run_native(server.url(), {"-n", "10", "-p", "1"});
    CHECK(allowed(run) == 10);
    CHECK(server.connections() == 10);
  }
  SUBCASE("the server closes a kept-alive connection after its second answer, unannounced") {
    RawHttpServer server([](const std::string&, int index) { return RawAnswer{k_ok, index == 1}; });
    const NativeRun run = run_native(server.url(), {"-n", "20", "-p", "1"});
    CHECK(allowed(run) == 20);
    CHECK(run.report["runs"][0]["errors"] == 0);
    CHECK(server.connections() == 10);
  }
}

TEST_CASE("native http: a 100 Continue before the answer is skipped; HEAD has no body") {
  RawHttpServer server([](const std::string& request, int) {
    if (request.starts_with("HEAD "))
      return RawAnswer{"HTTP/1.1 429 Too Many\r\nRetry-After: 3\r\nContent-Length: 99\r\n\r\n"};
    return RawAnswer{"HTTP/1.1 100 Continue\r\n\r\n" + k_ok};
  });
  CHECK(allowed(run_native(server.url(), {"-n", "6", "-p", "2"})) == 6);
  const NativeRun head = run_native(server.url(), {"-n", "6", "-p", "2", "-X", "HEAD"});
  CHECK(head.report["runs"][0]["denied"] == 6);
  CHECK(head.report["runs"][0]["errors"] == 0);
}

TEST_CASE("native http: garbage, oversized headers and an endless body are errors, bounded") {
  SUBCASE("not HTTP") {
    RawHttpServer server([](const std::string&, int) { return RawAnswer{"SSH-2.0-x\r\n\r\n"}; });
    const NativeRun run = run_native(server.url(), {"-n", "4", "-p", "2"});
    CHECK(run.outcome.exit_code == 3);
    CHECK(run.report["runs"][0]["error_kinds"].contains("protocol"));
  }
  SUBCASE("headers over the cap") {
    // 320 KB in four lines of 80 KB: each line within curl's 100 KB, the whole over its 300 KB.
    std::string huge = "HTTP/1.1 200 OK\r\n";
    for (int i = 0; i < 4; ++i)
      huge += "X-Big-" + std::to_string(i) + ": " + std::string(80 * 1024, 'a') + "\r\n";
    huge += "Content-Length: 0\r\n\r\n";
    RawHttpServer server([&](const std::string&, int) { return RawAnswer{huge}; });
    const NativeRun run = run_native(server.url(), {"-n", "2", "-p", "1"});
    CHECK(run.outcome.exit_code == 3);
    // The first error stops the run (--max-errors 0): one request sent, one error.
    CHECK(run.report["runs"][0]["error_kinds"]["too-large"] == 1);
  }
  SUBCASE("a body that never ends is a timeout") {
    RawHttpServer server([](const std::string&, int) {
      return RawAnswer{"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly this"};
    });
    const NativeRun run = run_native(server.url(), {"-n", "2", "-p", "2", "--timeout", "300ms"});
    CHECK(run.outcome.exit_code == 3);
    CHECK(run.report["runs"][0]["error_kinds"]["timeout"] == 2);
  }
}

TEST_CASE("native http: the request is serialised once, placeholders expanded per request") {
  RawHttpServer server([](const std::string&, int) { return RawAnswer{k_ok}; });
  const NativeRun run = run_native(server.url("/q?seq={seq}"),
                                   {"-n", "3", "-p", "1", "-X", "POST", "-H", "X-Seq: {seq}", "-H",
                                    "Accept:", "-d", R"({"seq": {seq}, "keep": {braces}})"});
  CHECK(allowed(run) == 3);
  const std::vector<std::string> requests = server.requests();
  REQUIRE(requests.size() == 3);
  for (int seq = 0; seq < 3; ++seq) {
    const std::string& request = requests[static_cast<size_t>(seq)];
    const std::string body = R"({"seq": )" + std::to_string(seq) + R"(, "keep": {braces}})";
    INFO(request);
    CHECK(request.starts_with("POST /q?seq=" + std::to_string(seq) + " HTTP/1.1\r\n"));
    CHECK(request.find("\r\nX-Seq: " + std::to_string(seq) + "\r\n") != std::string::npos);
    CHECK(request.find("\r\nContent-Length: " + std::to_string(body.size()) + "\r\n") !=
          std::string::npos);
    CHECK(request.find("\r\nAccept:") == std::string::npos);  // "Accept:" removed the default
    CHECK(request.ends_with("\r\n\r\n" + body));
  }
}

TEST_CASE("native http: --http-client and RLCHECK_HTTP_CLIENT choose; a proxy means curl") {
  RawHttpServer server([](const std::string&, int) { return RawAnswer{k_ok}; });
  const std::vector<std::string> small{"-n", "2", "-p", "1"};
  CHECK(run_native(server.url(), small, {{"RLCHECK_HTTP_CLIENT", "curl"}})
            .report["params"]["http_client"] == "curl");
  CHECK(run_native(server.url(), {"-n", "2", "--http-client", "native"},
                   {{"RLCHECK_HTTP_CLIENT", "curl"}})
            .report["params"]["http_client"] == "native");
  // A proxy that does not exist: curl is chosen, and 127.0.0.1 bypasses it by NO_PROXY.
  const NativeRun proxied = run_native(
      server.url(), small, {{"http_proxy", "http://127.0.0.1:9"}, {"NO_PROXY", "127.0.0.1"}});
  CHECK(proxied.report["params"]["http_client"] == "curl");
  CHECK(allowed(proxied) == 2);

  const ProcessOutcome bad = run_rlcheck({"http", server.url(), "--http-client", "fast"});
  CHECK(bad.exit_code == 64);
  CHECK(bad.err.find("--http-client") != std::string::npos);
  const ProcessOutcome http2 =
      run_rlcheck({"http", server.url(), "--http-client", "native", "--http2"});
  CHECK(http2.exit_code == 64);
}
