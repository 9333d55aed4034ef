#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

#include "suite/scenario.hpp"
#include "suite/scenario_server.hpp"

using rlcheck::suite::load_scenario;

namespace {

// A folder of scenario files, removed when the test ends.
struct TempFolder {
  std::filesystem::path path;
  TempFolder() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "rlcheck-scenario-XXXXXX").string();
    path = mkdtemp(pattern.data());
  }
  ~TempFolder() { std::filesystem::remove_all(path); }
  std::string write(const std::string& name, const std::string& text) const {
    std::ofstream(path / name) << text;
    return (path / name).string();
  }
};

bool has(const std::vector<std::string>& argv, const std::string& word) {
  return std::find(argv.begin(), argv.end(), word) != argv.end();
}

}  // namespace

TEST_CASE("every bad key of a file is named, one line each, with the closest key") {
  TempFolder folder;
  const std::string file = folder.write(
      "typos.json",
      R"({"name": "typos", "reqests": 200, "concurency": 5, "stratgey": "lua", "zzz": 1})");
  const auto scenario = load_scenario(file);
  REQUIRE_FALSE(scenario.has_value());
  const std::string& error = scenario.error();
  CHECK(std::count(error.begin(), error.end(), '\n') == 3);
  CHECK(error.find(file + ": unknown key 'reqests'; did you mean 'requests'?") !=
        std::string::npos);
  CHECK(error.find(file + ": unknown key 'concurency'; did you mean 'concurrency'?") !=
        std::string::npos);
  CHECK(error.find(file + ": unknown key 'stratgey'; did you mean 'strategy'?") !=
        std::string::npos);
  const bool far_named = error.find(file + ": unknown key 'zzz'\n") != std::string::npos ||
                         error.ends_with(file + ": unknown key 'zzz'");
  CHECK(far_named);
}

TEST_CASE("name, mode and expect of another type than a string are named, not a crash") {
  TempFolder folder;
  const std::string numbers =
      folder.write("numbers.json", R"({"name": 7, "strategy": "lua", "expect": 200})");
  const auto scenario = load_scenario(numbers);
  REQUIRE_FALSE(scenario.has_value());
  CHECK(scenario.error().find("key 'name' needs a string") != std::string::npos);
  CHECK(scenario.error().find("key 'expect' needs a string: pass or fail") != std::string::npos);

  const std::string mode = folder.write("mode.json", R"({"mode": ["http"]})");
  REQUIRE_FALSE(load_scenario(mode).has_value());
  CHECK(load_scenario(mode).error().find("key 'mode' needs a string") != std::string::npos);
}

TEST_CASE("serve keys and scenario keys are suggested too") {
  TempFolder folder;
  const std::string file = folder.write(
      "serve.json",
      R"({"mode": "http", "url": "{serve}/", "descripton": "x", "serve": {"strategi": "lua"}})");
  const auto scenario = load_scenario(file);
  REQUIRE_FALSE(scenario.has_value());
  CHECK(scenario.error().find("'descripton'; did you mean 'description'?") != std::string::npos);
  CHECK(scenario.error().find("'serve.strategi'; did you mean 'serve.strategy'?") !=
        std::string::npos);
}

TEST_CASE("paths in a scenario are relative to the scenario's folder") {
  TempFolder folder;
  // Loading only builds the command line; the files need not exist for that.
  const std::string good =
      folder.write("good.json", R"({"mode": "redis", "script": "lib/limiter.lua", "runs": 1})");
  const auto scenario = load_scenario(good);
  REQUIRE(scenario.has_value());
  CHECK(has(scenario->argv, (folder.path / "lib/limiter.lua").string()));

  const std::string absolute =
      folder.write("absolute.json", R"({"mode": "redis", "script": "/opt/limiter.lua"})");
  CHECK(has(load_scenario(absolute)->argv, "/opt/limiter.lua"));

  const std::string http = folder.write(
      "http.json",
      R"({"mode": "http", "url": "http://h/", "data": "@body.json", "serve": {"script": "s.lua"}})");
  const auto web = load_scenario(http);
  REQUIRE(web.has_value());
  CHECK(has(web->argv, std::string("@").append((folder.path / "body.json").string())));
  REQUIRE(web->serve_args.has_value());
  CHECK(has(*web->serve_args, (folder.path / "s.lua").string()));

  const std::string inline_body =
      folder.write("inline.json", R"({"mode": "http", "url": "http://h/", "data": "a=b"})");
  CHECK(has(load_scenario(inline_body)->argv, "a=b"));
}

TEST_CASE("reply and script-keys are scenario keys, as their flags") {
  TempFolder folder;
  const std::string file = folder.write(
      "library.json",
      R"({"mode": "redis", "script": "cell.lua", "reply": "cell", "script-keys": 2, "runs": 1})");
  const auto scenario = load_scenario(file);
  REQUIRE(scenario.has_value());
  const auto& argv = scenario->argv;
  const auto reply = std::find(argv.begin(), argv.end(), "--reply");
  REQUIRE(reply != argv.end());
  CHECK(*(reply + 1) == "cell");
  const auto keys = std::find(argv.begin(), argv.end(), "--script-keys");
  REQUIRE(keys != argv.end());
  CHECK(*(keys + 1) == "2");
}

TEST_CASE("hint-resolution is a scenario key, as its flag") {
  TempFolder folder;
  const std::string file = folder.write(
      "hints.json",
      R"({"mode": "redis", "script": "rate.lua", "reply": "rate", "hint-resolution": "1s"})");
  const auto scenario = load_scenario(file);
  REQUIRE(scenario.has_value());
  const auto& argv = scenario->argv;
  const auto flag = std::find(argv.begin(), argv.end(), "--hint-resolution");
  REQUIRE(flag != argv.end());
  CHECK(*(flag + 1) == "1s");
}

TEST_CASE("TLS, cluster and pipeline keys are scenario keys; certificate paths are relative") {
  TempFolder folder;
  const std::string file = folder.write("production.json", R"({
    "mode": "redis", "redis": "rediss://cache.example:6380", "tls-ca": "certs/ca.pem",
    "tls-cert": "/etc/ssl/client.pem", "tls_key": "certs/client.key", "tls-sni": "cache",
    "insecure": false, "cluster": true, "pipeline": 4, "runs": 1})");
  const auto scenario = load_scenario(file);
  REQUIRE(scenario.has_value());
  const auto& argv = scenario->argv;
  auto value_of = [&argv](const std::string& flag) {
    const auto found = std::find(argv.begin(), argv.end(), flag);
    REQUIRE(found != argv.end());
    REQUIRE(found + 1 != argv.end());
    return *(found + 1);
  };
  CHECK(value_of("--tls-ca") == (folder.path / "certs/ca.pem").string());
  CHECK(value_of("--tls-cert") == "/etc/ssl/client.pem");
  CHECK(value_of("--tls-key") == (folder.path / "certs/client.key").string());
  CHECK(value_of("--tls-sni") == "cache");
  CHECK(value_of("--pipeline") == "4");
  CHECK(has(argv, "--cluster"));
  CHECK_FALSE(has(argv, "--insecure"));

  const std::string http = folder.write(
      "http.json", R"({"mode": "http", "url": "https://h/", "tls-ca": "ca.pem", "insecure": true,
                       "serve": {"tls-ca": "serve-ca.pem", "embedded-cluster": 3}})");
  const auto web = load_scenario(http);
  REQUIRE(web.has_value());
  CHECK(has(web->argv, (folder.path / "ca.pem").string()));
  CHECK(has(web->argv, "--insecure"));
  REQUIRE(web->serve_args.has_value());
  CHECK(has(*web->serve_args, (folder.path / "serve-ca.pem").string()));
  CHECK(has(*web->serve_args, "--embedded-cluster"));

  // --pipeline is not an http option: named as an unknown key.
  const std::string piped =
      folder.write("piped.json", R"({"mode": "http", "url": "https://h/", "pipeline": 4})");
  const auto refused = load_scenario(piped);
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().find("pipeline") != std::string::npos);
}

TEST_CASE("with_serve_url fills {serve} and {serve-redis}, every occurrence") {
  using rlcheck::suite::with_serve_url;
  CHECK(with_serve_url("{serve}/api?b={serve}", "http://127.0.0.1:8") ==
        "http://127.0.0.1:8/api?b=http://127.0.0.1:8");
  CHECK(with_serve_url("{serve-redis}", "http://127.0.0.1:8", "unix:///tmp/r.sock") ==
        "unix:///tmp/r.sock");
  CHECK(with_serve_url("--limiter-redis={serve-redis} {serve}", "http://h:1", "redis://r:2/2") ==
        "--limiter-redis=redis://r:2/2 http://h:1");
}
