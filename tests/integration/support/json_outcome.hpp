#pragma once
// Helpers over rlcheck's JSON report in integration tests.

#include <string>
#include <vector>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "process/child_process.hpp"
#include "support/run_binary.hpp"

namespace rlcheck::testing {

// Runs rlcheck with `args` (one of which asks for --json), requires exit code `expected_exit`
// (showing stdout and stderr when it differs) and returns the JSON it printed.
inline nlohmann::json json_report(const std::vector<std::string>& args, int expected_exit) {
  const ProcessOutcome outcome = run_rlcheck(args);
  INFO("stderr: " << outcome.err);
  INFO("stdout: " << outcome.out);
  REQUIRE(outcome.exit_code == expected_exit);
  return nlohmann::json::parse(outcome.out);
}

// The status ("pass", "fail", "skip") of check `id` in a rlcheck.report/v1 document.
inline std::string check_status(const nlohmann::json& report, const std::string& id) {
  for (const auto& check : report.at("checks")) {
    if (check.at("id") == id)
      return check.at("status").get<std::string>();
  }
  return "absent";
}

// Check `id` of a rlcheck.report/v1 document whole; null when the report has no such check.
inline nlohmann::json check_json(const nlohmann::json& report, const std::string& id) {
  for (const auto& check : report.at("checks")) {
    if (check.at("id") == id)
      return check;
  }
  return nullptr;
}

// The detail of check `id`, empty when the report has no such check.
inline std::string check_detail(const nlohmann::json& report, const std::string& id) {
  for (const auto& check : report.at("checks")) {
    if (check.at("id") == id)
      return check.at("detail").get<std::string>();
  }
  return "";
}

// The checks of a report, one line each, for the messages of failed CHECKs.
inline std::string checks_of(const nlohmann::json& report) {
  std::string text = report["target"].dump() + "\n";
  for (const auto& check : report["checks"]) {
    if (check["status"] != "skip")
      text += check["id"].get<std::string>() + " " + check["status"].get<std::string>() + ": " +
              check["detail"].get<std::string>() + "\n";
  }
  return text;
}

inline std::string fixture(const std::string& name) {
  return std::string(RLCHECK_FIXTURES) + "/" + name;
}

// xmllint --schema: the JUnit file parses and has the shape CI systems read.
inline bool valid_junit(const std::string& file) {
  auto xmllint = process::find_on_path("xmllint");
  REQUIRE(xmllint.has_value());
  const ProcessOutcome outcome =
      run_process({*xmllint, "--noout", "--schema", fixture("junit.xsd"), file});
  INFO(outcome.err);
  return outcome.exit_code == 0;
}

}  // namespace rlcheck::testing
