#pragma once
// How the HTML report writes numbers and times, alike in its tables and its charts.

#include <cstdint>
#include <string>

#include "checks/admission_peak.hpp"

namespace rlcheck::report::html {

// 10, 10.5: a count or an allowance without noise digits.
std::string number_text(double value);

// An axis tick, short enough for the chart's margin: 500, 2.5, "10k", "1.5M".
std::string tick_text(double value);

// Three significant figures, in microseconds below a millisecond: a bin of a sub-millisecond
// run is "2.25 µs", not "0.0 ms".
std::string ms_text(double ms);

// The window as a duration ("1s", "500ms").
std::string window_text(int64_t window_ms);

// 1, 2 or 5 times a power of ten, cutting `range` into at most `parts` pieces.
double nice_step(double range, double parts);

// An axis or load label: "1.5s" when `seconds`, else "250ms".
std::string time_label(double ms, bool seconds);

// "12 admitted in 850 ms (allowed 10)".
std::string peak_text(const checks::AdmissionPeak& peak);

}  // namespace rlcheck::report::html
