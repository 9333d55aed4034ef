#pragma once
// Several rlcheck processes at once, for tests whose runs each wait out windows of their own
// against one server: side by side they take as long as the longest.

#include <future>
#include <sstream>
#include <string>
#include <vector>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "support/run_binary.hpp"

namespace rlcheck::testing {

// An expected exit code of run_side_by_side: pass or fail, a verdict either way.
constexpr int k_any_verdict = -1;

// `flags` split at whitespace (no quoting: a word holds no space).
inline std::vector<std::string> words_of(const std::string& flags) {
  std::vector<std::string> words;
  std::istringstream in(flags);
  for (std::string word; in >> word;)
    words.push_back(word);
  return words;
}

// Runs rlcheck once per argument list (each with --json among them), all at once; requires
// each one's exit code to be `expected`'s (k_any_verdict: 0 or 1, a verdict either way) and
// returns each one's JSON report.
inline std::vector<nlohmann::json> run_side_by_side(
    const std::vector<std::vector<std::string>>& runs, const std::vector<int>& expected) {
  std::vector<std::future<ProcessOutcome>> pending;
  for (const auto& args : runs)
    pending.push_back(std::async(std::launch::async, [args] { return run_rlcheck(args); }));
  std::vector<nlohmann::json> reports;
  for (size_t i = 0; i < runs.size(); ++i) {
    const ProcessOutcome outcome = pending[i].get();
    std::string command = "rlcheck";
    for (const std::string& arg : runs[i])
      command += " " + arg;
    INFO(command);
    INFO("stderr: " << outcome.err);
    INFO("stdout: " << outcome.out);
    if (expected[i] == k_any_verdict)
      REQUIRE((outcome.exit_code == 0 || outcome.exit_code == 1));
    else
      REQUIRE(outcome.exit_code == expected[i]);
    reports.push_back(nlohmann::json::parse(outcome.out));
  }
  return reports;
}

}  // namespace rlcheck::testing
