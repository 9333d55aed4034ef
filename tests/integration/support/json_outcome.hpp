#pragma once
// Helpers over rlcheck's JSON report in integration tests.

#include <string>

#include <nlohmann/json.hpp>

namespace rlcheck::testing {

// The status ("pass", "fail", "skip") of check `id` in a rlcheck.report/v1 document.
inline std::string check_status(const nlohmann::json& report, const std::string& id) {
  for (const auto& check : report.at("checks")) {
    if (check.at("id") == id)
      return check.at("status").get<std::string>();
  }
  return "absent";
}

inline std::string fixture(const std::string& name) {
  return std::string(RLCHECK_FIXTURES) + "/" + name;
}

}  // namespace rlcheck::testing
