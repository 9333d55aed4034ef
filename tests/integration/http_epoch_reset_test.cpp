// An endpoint that answers as Flask-Limiter does: a fixed window per identity opened by its
// first hit, X-RateLimit-Reset as the Unix second after the window's end, Date truncated to the
// second, Retry-After in whole seconds. Read against Date, the reset of a 2 s window reads 3 s:
// rlcheck judges the window a second either way and infers the 2 s the limiter keeps; a hint
// wrong by more than that second still fails.

#include <doctest/doctest.h>

#include <chrono>
#include <cmath>
#include <ctime>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "support/json_outcome.hpp"
#include "support/raw_http_server.hpp"
#include "support/run_binary.hpp"

using namespace rlcheck::testing;
using nlohmann::json;

namespace {

std::string http_date(int64_t unix_s) {
  const auto seconds = static_cast<time_t>(unix_s);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char text[64];
  std::strftime(text, sizeof text, "%a, %d %b %Y %H:%M:%S GMT", &utc);
  return text;
}

// A fixed window per identity (the `k` of the query), opened by its first hit, as the `limits`
// library keeps it under Flask-Limiter: `limit` hits per `window_s`. `hint_s`: the Retry-After
// it sends, from the reset and now; Flask-Limiter's own is int(reset - now).
class FlaskStyleLimiter {
 public:
  using Hint = int64_t (*)(int64_t reset_s, double now_s);
  FlaskStyleLimiter(int64_t limit, double window_s, Hint hint)
      : limit_(limit), window_s_(window_s), hint_(hint) {}

  RawAnswer answer(const std::string& request) {
    const size_t key_at = request.find("k=");
    const std::string key =
        key_at == std::string::npos
            ? ""
            : request.substr(key_at + 2, request.find(' ', key_at) - key_at - 2);
    const double now =
        std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
    std::lock_guard lock(mutex_);
    Window& window = windows_[key];
    if (window.expiry <= now)
      window = {now + window_s_, 0};
    ++window.hits;
    const bool allowed = window.hits <= limit_;
    const int64_t reset = static_cast<int64_t>(std::floor(window.expiry)) + 1;
    std::string head = fmt::format(
        "HTTP/1.1 {}\r\nDate: {}\r\nX-RateLimit-Limit: {}\r\nX-RateLimit-Remaining: {}\r\n"
        "X-RateLimit-Reset: {}\r\n",
        allowed ? "200 OK" : "429 Too Many Requests", http_date(static_cast<int64_t>(now)), limit_,
        std::max<int64_t>(0, limit_ - window.hits), reset);
    if (!allowed) {
      head += fmt::format("Retry-After: {}\r\n", hint_(reset, now));
      // int(reset - now) a whole second after the window's first hit is a second short of the
      // wait: a burst that straddles a second's start is told too little, truly.
      const double opened = window.expiry - window_s_;
      straddled_ = straddled_ || std::floor(now) != std::floor(opened);
    }
    return {head + "Content-Length: 2\r\n\r\nok"};
  }

  // Whether a denial came in a later second than its window's first hit.
  bool straddled() {
    std::lock_guard lock(mutex_);
    return straddled_;
  }

 private:
  struct Window {
    double expiry = 0;
    int64_t hits = 0;
  };
  int64_t limit_;
  double window_s_;
  Hint hint_;
  std::mutex mutex_;
  std::map<std::string, Window> windows_;
  bool straddled_ = false;
};

// One request at a time: each denial surely follows the admissions, so its wait is known.
json run_http(const std::string& url, int expected) {
  RunOptions options;
  options.limit = std::chrono::seconds(30);
  const ProcessOutcome outcome =
      run_rlcheck({"http", url, "--runs", "3", "-n", "8", "-p", "1", "--json"}, options);
  INFO("stdout: " << outcome.out);
  INFO("stderr: " << outcome.err);
  REQUIRE(outcome.exit_code == expected);
  return json::parse(outcome.out);
}

}  // namespace

TEST_CASE("Flask-style epoch resets: the 2 s window is inferred, not 3 s, and every run passes") {
  FlaskStyleLimiter limiter(5, 2.0, [](int64_t reset_s, double now_s) {
    return static_cast<int64_t>(static_cast<double>(reset_s) - now_s);
  });
  RawHttpServer server(
      [&limiter](const std::string& request, int) { return limiter.answer(request); });
  // A run whose burst straddles a second's start (rare: 8 requests take milliseconds) gets an
  // early hint from int(reset - now): then retry-after-accuracy rightly fails, whatever the
  // window is read as.
  RunOptions options;
  options.limit = std::chrono::seconds(30);
  const ProcessOutcome outcome = run_rlcheck(
      {"http", server.url("/?k={run}"), "--runs", "3", "-n", "8", "-p", "1", "--json"}, options);
  INFO("stdout: " << outcome.out);
  INFO("stderr: " << outcome.err);
  const bool straddled = limiter.straddled();
  INFO("a burst straddled a second's start: " << straddled);
  REQUIRE(outcome.exit_code == (straddled ? 1 : 0));
  const json report = json::parse(outcome.out);
  if (straddled) {
    CHECK(check_status(report, "retry-after-accuracy") == "fail");
    return;
  }
  CHECK(report["verdict"] == "pass");
  CHECK(report["params"]["limit"] == 5);
  CHECK(report["params"]["window_ms"] == 2000);
  CHECK(report["params"]["window_basis"] == "reset");
  CHECK(report["params"].value("window_readings_ms", json()) == json::array({2000, 3000}));
  REQUIRE(report["runs"].size() == 3);
  for (const auto& run : report["runs"]) {
    CHECK(run["allowed"] == 5);
    CHECK(run["denied"] == 3);
  }
  CHECK(check_status(report, "retry-after-accuracy") == "pass");
}

TEST_CASE("Flask-style epoch resets: an open-model run across windows passes under the 2 s") {
  // Admissions reopen 2 s after the first: read as a 3 s window, that was 10 within 3 s.
  FlaskStyleLimiter limiter(5, 2.0, [](int64_t reset_s, double now_s) {
    return static_cast<int64_t>(static_cast<double>(reset_s) - now_s);
  });
  RawHttpServer server(
      [&limiter](const std::string& request, int) { return limiter.answer(request); });
  RunOptions options;
  options.limit = std::chrono::seconds(30);
  // The promise this limiter keeps: fixed windows opened by the first hit. (As a sliding window
  // it keeps L in any 2 s span only while the requests come evenly: a late start bunches them.)
  const ProcessOutcome outcome =
      run_rlcheck({"http", server.url("/?k={run}"), "--rate", "8/s", "--duration", "3s",
                   "--contract", "fixed", "--anchor", "first-hit", "--json"},
                  options);
  INFO("stdout: " << outcome.out);
  REQUIRE(outcome.exit_code == 0);
  const json report = json::parse(outcome.out);
  CHECK(report["params"]["window_ms"] == 2000);
  CHECK(report["runs"][0]["allowed"] == 10);
  CHECK(check_status(report, "limit") == "pass");
  CHECK(check_status(report, "retry-after-accuracy") == "pass");
}

TEST_CASE("Flask-style epoch resets: a Retry-After wrong by more than a second still fails") {
  // "Retry now" while the window has two seconds to go: early under either reading.
  FlaskStyleLimiter limiter(5, 2.0, [](int64_t, double) { return int64_t{0}; });
  RawHttpServer server(
      [&limiter](const std::string& request, int) { return limiter.answer(request); });
  const json report = run_http(server.url("/?k={run}"), 1);
  CHECK(check_status(report, "retry-after-accuracy") == "fail");
  CHECK(report["params"]["window_ms"] == 3000);  // no reading passes: the reset as read
}
