#pragma once
// --find-max in the reports: the JSON find_max object and the human table of its steps.

#include <string>

#include <nlohmann/json.hpp>

#include "report/report.hpp"

namespace rlcheck::report {

nlohmann::json find_max_json(const FindMax& search);

// Why a search that ended on the sender's own limit ended: "all 20 connections busy for the
// whole step: raise -p" when the pool was the limit, else "rlcheck could not send faster here".
std::string send_limit_text(const FindMax& search);

// "find-max p99<10ms: max 800/s" and a row per step.
std::string find_max_lines(const FindMax& search);

}  // namespace rlcheck::report
