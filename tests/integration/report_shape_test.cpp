// The JSON reports of a Redis run and an HTTP run keep their shape across changes of how
// targets are made (tests/fixtures/report_shape, written from reports of the same command lines
// before the kinds moved behind one table): every key path (arrays as []) and every check's
// status, one a line. Times and ports differ between runs; what a report says and where does
// not.

#include <doctest/doctest.h>

#include <unistd.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/json_outcome.hpp"
#include "support/serve_process.hpp"
#include "support/test_redis.hpp"

using namespace rlcheck::testing;
using nlohmann::json;

namespace {

void collect_paths(const json& node, const std::string& at, std::set<std::string>& paths) {
  if (node.is_object()) {
    for (const auto& [key, value] : node.items()) {
      const std::string path = at.empty() ? key : at + "." + key;
      paths.insert(path);
      collect_paths(value, path, paths);
    }
  } else if (node.is_array()) {
    for (const json& element : node)
      collect_paths(element, at + "[]", paths);
  }
}

// The key paths, sorted, then "check ID STATUS" for each check, sorted.
std::string shape_of(const json& report) {
  std::set<std::string> paths;
  collect_paths(report, "", paths);
  std::set<std::string> checks;
  for (const json& check : report.at("checks")) {
    checks.insert("check " + check.at("id").get<std::string>() + " " +
                  check.at("status").get<std::string>());
  }
  std::string text;
  for (const std::string& path : paths)
    text += path + "\n";
  for (const std::string& check : checks)
    text += check + "\n";
  return text;
}

std::string shape_fixture(const std::string& name) {
  std::ifstream in(std::string(RLCHECK_FIXTURES) + "/report_shape/" + name, std::ios::binary);
  REQUIRE(in);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

TEST_CASE("report shape: a Redis run's JSON report says what it said, where it said it") {
  // The private redis-server, as the fixture's report was made with.
  const json report = json_report({"redis", "--redis", "embedded", "--strategy", "lua", "-n", "60",
                                   "-p", "4", "--runs", "2", "--seed", "7", "--json"},
                                  0);
  CHECK(shape_of(report) == shape_fixture("redis.txt"));
}

TEST_CASE("report shape: an HTTP run's JSON report says what it said, where it said it") {
  ServeProcess serve({"--listen", "127.0.0.1:0", "--redis", TestRedis::shared().tcp_url() + "/13",
                      "-l", "10", "-w", "60s", "--identity-header", "X-Id"});
  const json report =
      json_report({"http", serve.url(), "-H", "X-Id: shape-" + std::to_string(getpid()) + "-{run}",
                   "-n", "40", "-p", "4", "--runs", "2", "--seed", "7", "--json"},
                  0);
  CHECK(shape_of(report) == shape_fixture("http.txt"));
}
