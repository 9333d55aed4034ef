#pragma once
// Scenario files: the options of `rlcheck redis` / `http` / `compare` as JSON keys (their long
// names, with - or _), plus a name and what is expected:
//   {"name": "seed: lua holds at 200 x 50", "mode": "redis", "strategy": "lua",
//    "requests": 200, "concurrency": 50, "limit": 10, "window": "60s", "expect": "pass"}

#include <expected>
#include <optional>
#include <string>
#include <vector>

namespace rlcheck::suite {

struct Scenario {
  std::string file;
  std::string name;
  bool expect_pass = true;        // "expect": "pass" (default) or "fail"
  std::vector<std::string> argv;  // the equivalent command line, "rlcheck" first
  // "serve": {...}: the options of an `rlcheck serve` to start for this scenario; {serve} in
  // the command line stands for its URL.
  std::optional<std::vector<std::string>> serve_args;
};

// Reads one file. Errors name the file and the key, one line per problem, every problem of the
// file: "scenarios/x.json: unknown key 'reqests'; did you mean 'requests'?". Paths in it
// (script, data @file, report files...) are resolved against the file's folder.
std::expected<Scenario, std::string> load_scenario(const std::string& path);

// The files to run: each file as given, each folder's *.json in name order.
std::expected<std::vector<std::string>, std::string> scenario_files(
    const std::vector<std::string>& paths);

}  // namespace rlcheck::suite
