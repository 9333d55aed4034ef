#pragma once
// The machine-readable reports: rlcheck.report/v1 and rlcheck.compare/v1.

#include <vector>

#include <nlohmann/json.hpp>

#include "report/report.hpp"

namespace rlcheck::report {

nlohmann::json to_json(const Report& report);
// `verdict` is the worst of the reports' (interrupted, error, fail, pass).
nlohmann::json compare_to_json(const std::vector<Report>& reports, int exit_code);

}  // namespace rlcheck::report
