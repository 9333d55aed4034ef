// --metrics-listen and --metrics-linger against the tools that read metrics: `promtool check
// metrics` (Prometheus text 0.0.4, lint included) on a scrape taken while a run goes, and a
// real Prometheus (OpenMetrics, as it negotiates) scraping rlcheck once a second, whose
// queries must give the report's counts and the checks' statuses. Ctrl-C ends the linger
// without changing the exit code. scripts/install-deps.sh installs Prometheus (the Debian
// package ships prometheus and promtool); without it these tests fail and say so.

#include <doctest/doctest.h>

#include <atomic>
#include <csignal>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <curl/curl.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include "support/loopback_listener.hpp"
#include "support/real_server.hpp"
#include "support/run_binary.hpp"
#include "support/test_redis.hpp"

using namespace rlcheck::testing;
using nlohmann::json;

namespace {

struct HttpReply {
  long status = 0;  // 0: no answer
  std::string body;
};

size_t append_body(char* data, size_t size, size_t count, void* out) {
  static_cast<std::string*>(out)->append(data, size * count);
  return size * count;
}

HttpReply http_get(const std::string& url, const std::string& accept = "") {
  HttpReply reply;
  CURL* curl = curl_easy_init();
  curl_slist* headers = nullptr;
  if (!accept.empty())
    headers = curl_slist_append(headers, ("Accept: " + accept).c_str());
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, &append_body);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &reply.body);
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, 2000L);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  if (curl_easy_perform(curl) == CURLE_OK)
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &reply.status);
  curl_slist_free_all(headers);
  curl_easy_cleanup(curl);
  return reply;
}

std::string prometheus_program(const std::string& name) {
  const auto found = find_program(name, {"/usr/bin/" + name});
  if (!found) {
    FAIL(name << " is not installed: scripts/install-deps.sh installs it (Debian package "
                 "prometheus)");
  }
  return *found;
}

// Calls `step` every 50 ms until it returns true or `stop` is set; false when stopped.
template <typename Step>
bool poll_until(const std::atomic<bool>& stop, Step step) {
  while (!stop.load()) {
    if (step())
      return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

// Scrapes `url` until the check statuses show (the test was judged), hands that scrape to
// `judged`, then Ctrl-Cs `pid` to end its linger.
template <typename Judged>
void scrape_until_judged(const std::atomic<bool>& stop, const std::string& url, pid_t pid,
                         Judged judged) {
  poll_until(stop, [&] {
    const HttpReply reply = http_get(url);
    if (reply.body.find("rlcheck_check_status") == std::string::npos)
      return false;
    judged(reply.body);
    kill(pid, SIGINT);
    return true;
  });
}

std::vector<std::string> rlcheck_args(int port, const std::string& flags) {
  std::vector<std::string> args{"redis",  "--redis",          TestRedis::shared().tcp_url(),
                                "--json", "--metrics-listen", "127.0.0.1:" + std::to_string(port)};
  append_words(args, flags);
  return args;
}

// A real Prometheus scraping rlcheck's endpoint at 127.0.0.1:`port` once a second.
class ScrapingPrometheus {
 public:
  explicit ScrapingPrometheus(int port)
      : scratch_("rlcheck-prometheus"),
        port_(free_loopback_port()),
        server_({prometheus_program("prometheus"), "--config.file=" + config_file(port),
                 "--storage.tsdb.path=" + scratch_.path() + "/data",
                 "--web.listen-address=127.0.0.1:" + std::to_string(port_)},
                scratch_.path(), scratch_.path() + "/prometheus.log", port_,
                std::chrono::seconds(30)) {
    std::atomic<bool> never{false};
    const auto ready_by = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    poll_until(never, [&] {
      return http_get(server_.base_url() + "/-/ready").status == 200 ||
             std::chrono::steady_clock::now() > ready_by;
    });
    REQUIRE_MESSAGE(http_get(server_.base_url() + "/-/ready").status == 200, server_.log());
  }

  // The result of an instant query; empty until Prometheus answers.
  json query(const std::string& promql) const {
    char* escaped = curl_easy_escape(nullptr, promql.c_str(), static_cast<int>(promql.size()));
    const HttpReply reply = http_get(server_.base_url() + "/api/v1/query?query=" + escaped);
    curl_free(escaped);
    return reply.status == 200 ? json::parse(reply.body).at("data").at("result") : json::array();
  }
  json targets() const {
    return json::parse(http_get(server_.base_url() + "/api/v1/targets").body);
  }
  std::string log() const { return server_.log(); }

 private:
  std::string config_file(int port) {
    return scratch_.write("prometheus.yml",
                          "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
                          "scrape_configs:\n  - job_name: rlcheck\n    static_configs:\n"
                          "      - targets: ['127.0.0.1:" +
                              std::to_string(port) + "']\n");
  }

  ScratchDir scratch_;
  int port_;
  RealServer server_;
};

// A query's series as label `label`'s value -> the sample's value.
std::map<std::string, std::string> values_by(const json& result, const std::string& label) {
  std::map<std::string, std::string> values;
  for (const json& series : result)
    values[series.at("metric").value(label, "")] = series.at("value").at(1).get<std::string>();
  return values;
}

// The runs' total of `field` ("allowed", "denied", "errors") in a JSON report.
int64_t report_total(const json& report, const std::string& field) {
  int64_t total = 0;
  for (const json& run : report.at("runs"))
    total += run.at(field).get<int64_t>();
  return total;
}

// `promtool check metrics` accepts `text` without a word on stderr (nor on stdout where
// `quiet`: no lint remark either).
void check_with_promtool(const std::string& promtool, const std::string& text, bool quiet) {
  RunOptions check;
  check.stdin_mode = StdinMode::text;
  check.stdin_text = text;
  const ProcessOutcome checked = run_process({promtool, "check", "metrics"}, check);
  INFO("promtool: " << checked.out << checked.err);
  CHECK(checked.exit_code == 0);
  if (quiet)
    CHECK(checked.out.empty());
  CHECK(checked.err.empty());
}

}  // namespace

TEST_CASE("metrics: a scrape mid-run passes promtool; Ctrl-C ends the linger, exit 0" *
          doctest::test_suite("threads")) {
  const std::string promtool = prometheus_program("promtool");
  const int port = free_loopback_port();
  const std::string url = "http://127.0.0.1:" + std::to_string(port) + "/metrics";
  std::atomic<bool> done{false};
  std::mutex mutex;
  std::string mid_run;  // a scrape while run 1 was under way
  std::string judged;   // a scrape after the test was judged
  std::string openmetrics;
  std::string not_found_status;
  std::thread scraper;
  RunOptions options;
  options.on_started = [&](pid_t pid) {
    scraper = std::thread([&, pid] {
      poll_until(done, [&] {
        const HttpReply reply = http_get(url);
        if (reply.status == 200 && reply.body.find("rlcheck_run 1\n") != std::string::npos &&
            reply.body.find("rlcheck_requests_total{outcome=\"denied\",run=\"1\"} 0\n") ==
                std::string::npos) {
          std::lock_guard lock(mutex);
          mid_run = reply.body;
          return true;
        }
        return false;
      });
      scrape_until_judged(done, url, pid, [&](const std::string& body) {
        std::lock_guard lock(mutex);
        judged = body;
        openmetrics = http_get(url, "application/openmetrics-text; version=1.0.0").body;
        not_found_status =
            std::to_string(http_get("http://127.0.0.1:" + std::to_string(port) + "/").status);
      });
    });
  };
  const ProcessOutcome outcome = run_rlcheck(
      rlcheck_args(port, "--rate 200/s --duration 3s -r 1 --metrics-linger 20s"), options);
  done = true;
  if (scraper.joinable())
    scraper.join();
  INFO("stderr: " << outcome.err);
  CHECK(outcome.exit_code == 0);  // lua passes; Ctrl-C during the linger changes nothing
  // The scraper sends Ctrl-C as soon as the check statuses show, which may come before the
  // linger began (and said so on stderr): either way the exit code stands.
  const json report = json::parse(outcome.out);
  CHECK(report.at("verdict") == "pass");

  REQUIRE_MESSAGE(!mid_run.empty(), "no scrape while the run went");
  CHECK(mid_run.find("\nrlcheck_in_flight ") != std::string::npos);
  check_with_promtool(promtool, mid_run, true);

  REQUIRE_MESSAGE(!judged.empty(), "no scrape after the test was judged");
  CHECK(judged.find("rlcheck_check_status{check=\"limit\"} 1\n") != std::string::npos);
  CHECK(judged.find("rlcheck_verdict 0\n") != std::string::npos);
  CHECK(judged.find("rlcheck_errors_total{kind=\"timeout\",run=\"1\"} 0\n") != std::string::npos);
  CHECK(judged.find("rlcheck_requests_total{outcome=\"allowed\",run=\"1\"} " +
                    std::to_string(report_total(report, "allowed")) + "\n") != std::string::npos);
  CHECK(openmetrics.ends_with("# EOF\n"));
  CHECK(openmetrics.find("# TYPE rlcheck_requests counter\n") != std::string::npos);
  CHECK(not_found_status == "404");
}

TEST_CASE("metrics: a real Prometheus scrapes the report's counts and the checks' statuses") {
  const int port = free_loopback_port();
  const ScrapingPrometheus server(port);
  const auto query = [&](const std::string& promql) { return server.query(promql); };
  std::atomic<bool> done{false};
  json sums;
  json targets;
  json errors;
  std::string limit_status;
  std::string verdict;
  std::thread watcher;
  RunOptions options;
  options.on_started = [&](pid_t pid) {
    watcher = std::thread([&, pid] {
      // Once a scrape after judging is stored, the counters in it are final: the linger is
      // ended there.
      poll_until(done, [&] {
        try {
          const json status = query("rlcheck_check_status{check=\"limit\"}");
          if (status.empty())
            return false;
          sums = query("sum by (outcome) (rlcheck_requests_total)");
          limit_status = status.at(0).at("value").at(1).get<std::string>();
          verdict = query("rlcheck_verdict").at(0).at("value").at(1).get<std::string>();
          errors = query("rlcheck_errors_total{run=\"1\"}");
          targets = server.targets();
        } catch (const json::exception&) {
          return false;  // an answer not yet whole: asked again
        }
        kill(pid, SIGINT);
        return true;
      });
    });
  };
  const ProcessOutcome outcome = run_rlcheck(
      rlcheck_args(port, "--rate 200/s --duration 2s -r 1 --metrics-linger 20s"), options);
  done = true;
  if (watcher.joinable())
    watcher.join();
  INFO("stderr: " << outcome.err);
  INFO("prometheus: " << server.log());
  CHECK(outcome.exit_code == 0);
  const json report = json::parse(outcome.out);
  REQUIRE_MESSAGE(!limit_status.empty(), "Prometheus never stored the checks' statuses");
  CHECK(limit_status == "1");
  std::map<std::string, std::string> by_outcome;
  for (const json& series : sums) {
    by_outcome[series.at("metric").value("outcome", "")] =
        series.at("value").at(1).get<std::string>();
  }
  CHECK(by_outcome["allowed"] == std::to_string(report_total(report, "allowed")));
  CHECK(by_outcome["denied"] == std::to_string(report_total(report, "denied")));
  CHECK(by_outcome["error"] == std::to_string(report_total(report, "errors")));
  CHECK(verdict == "0");                                 // pass
  CHECK(values_by(errors, "kind").contains("timeout"));  // every kind, by run
  const json& active = targets.at("data").at("activeTargets");
  REQUIRE(active.size() == 1);
  CHECK(active.at(0).at("health") == "up");
  CHECK(active.at(0).at("lastError") == "");
}

TEST_CASE("metrics: a port in use is exit 3 before the run, naming the address and why") {
  const LoopbackListener holder = listen_on_loopback("the port's holder", false);
  const std::string taken = "127.0.0.1:" + std::to_string(holder.port);
  const ProcessOutcome outcome = run_rlcheck(rlcheck_args(holder.port, "-n 50 -r 1"));
  close(holder.fd);
  close(holder.wake_pipe[0]);
  close(holder.wake_pipe[1]);
  INFO("stderr: " << outcome.err);
  CHECK(outcome.exit_code == 3);
  CHECK(outcome.err ==
        "rlcheck: --metrics-listen " + taken + ": cannot listen: Address already in use\n");
  CHECK(outcome.out.empty());  // no run, no report
}

TEST_CASE("metrics: --verify-retry-after's retry joins the last run's live counts" *
          doctest::test_suite("threads")) {
  const int port = free_loopback_port();
  const std::string url = "http://127.0.0.1:" + std::to_string(port) + "/metrics";
  std::atomic<bool> done{false};
  std::string judged;  // a scrape after the test was judged (the retry was answered before)
  std::thread scraper;
  RunOptions options;
  options.on_started = [&](pid_t pid) {
    scraper = std::thread([&, pid] {
      scrape_until_judged(done, url, pid, [&](const std::string& body) { judged = body; });
    });
  };
  const ProcessOutcome outcome = run_rlcheck(
      rlcheck_args(port, "-l 5 -w 1s -n 20 -p 5 -r 1 --verify-retry-after --metrics-linger 20s"),
      options);
  done = true;
  if (scraper.joinable())
    scraper.join();
  INFO("stderr: " << outcome.err);
  CHECK(outcome.exit_code == 0);
  const json report = json::parse(outcome.out);
  REQUIRE(report.contains("retry_verification"));
  const bool retry_allowed = report["retry_verification"]["allowed"].get<bool>();
  CHECK(retry_allowed);  // the Lua limiter's hint is honest
  REQUIRE_MESSAGE(!judged.empty(), "no scrape after the test was judged");
  INFO(judged);
  // The run's 20 requests and the retry: 21 sent, the retry among the admissions.
  CHECK(judged.find("rlcheck_requests_total{outcome=\"allowed\",run=\"1\"} " +
                    std::to_string(report_total(report, "allowed") + 1) + "\n") !=
        std::string::npos);
  CHECK(judged.find("rlcheck_requests_total{outcome=\"denied\",run=\"1\"} " +
                    std::to_string(report_total(report, "denied")) + "\n") != std::string::npos);
}

// compare: the targets one after the other into the same metrics, every series labelled with
// its target, errors with their run, and each target's verdict once judged; promtool reads
// the scrape, and a real Prometheus stores them apart.
TEST_CASE("metrics: compare labels every series with its target and sets each verdict" *
          doctest::test_suite("threads")) {
  const std::string promtool = prometheus_program("promtool");
  const int port = free_loopback_port();
  const std::string url = "http://127.0.0.1:" + std::to_string(port) + "/metrics";
  const ScrapingPrometheus server(port);
  std::atomic<bool> done{false};
  std::string judged;  // a scrape once both targets were judged
  json verdicts, errors, latency;
  std::thread watcher;
  RunOptions options;
  options.on_started = [&](pid_t pid) {
    watcher = std::thread([&, pid] {
      poll_until(done, [&] {
        try {
          verdicts = server.query("rlcheck_verdict");
          if (verdicts.size() < 2)
            return false;
          errors = server.query("count by (target, run) (rlcheck_errors_total)");
          latency = server.query("rlcheck_latency_seconds_count");
        } catch (const json::exception&) {
          return false;  // an answer not yet whole: asked again
        }
        judged = http_get(url).body;
        kill(pid, SIGINT);
        return true;
      });
    });
  };
  const ProcessOutcome outcome =
      run_rlcheck({"compare", "--redis", TestRedis::shared().tcp_url(), "--strategies", "naive,lua",
                   "-r", "1", "--json", "--metrics-listen", "127.0.0.1:" + std::to_string(port),
                   "--metrics-linger", "30s"},
                  options);
  done = true;
  if (watcher.joinable())
    watcher.join();
  INFO("stderr: " << outcome.err);
  INFO("prometheus: " << server.log());
  CHECK(outcome.exit_code == 1);  // naive over-admits
  REQUIRE_MESSAGE(!judged.empty(), "Prometheus never stored both verdicts");
  INFO(judged);

  check_with_promtool(promtool, judged, false);

  size_t samples = 0;
  for (size_t start = 0, end; start < judged.size(); start = end + 1) {
    end = judged.find('\n', start);
    const std::string line = judged.substr(start, end - start);
    if (line.empty() || line.starts_with("#"))
      continue;
    ++samples;
    CAPTURE(line);
    CHECK(line.find("target=\"") != std::string::npos);
  }
  CHECK(samples > 80);  // every family, for both targets
  CHECK(judged.find("rlcheck_verdict{target=\"naive\"} 1\n") != std::string::npos);
  CHECK(judged.find("rlcheck_verdict{target=\"sliding-window\"} 0\n") != std::string::npos);
  CHECK(judged.find("rlcheck_errors_total{kind=\"timeout\",run=\"1\",target=\"naive\"} 0\n") !=
        std::string::npos);
  CHECK(judged.find("rlcheck_latency_seconds_count{target=\"naive\"} 200\n") != std::string::npos);
  CHECK(judged.find("rlcheck_in_flight{target=\"naive\"} 0\n") != std::string::npos);

  const auto by_target = values_by(verdicts, "target");
  CHECK(by_target.at("naive") == "1");
  CHECK(by_target.at("sliding-window") == "0");
  CHECK(values_by(errors, "target").size() == 2);
  const auto counts = values_by(latency, "target");
  CHECK(counts.at("naive") == "200");  // 200 requests each, all decided
  CHECK(counts.at("sliding-window") == "200");
}
