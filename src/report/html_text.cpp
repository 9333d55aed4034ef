#include "report/html_text.hpp"

#include <chrono>
#include <cmath>

#include <fmt/format.h>

#include "config/duration.hpp"

namespace rlcheck::report::html {

std::string number_text(double value) {
  if (std::abs(value - std::round(value)) < 1e-6)
    return fmt::format("{}", static_cast<int64_t>(std::llround(value)));
  return fmt::format("{:.1f}", value);
}

std::string tick_text(double value) {
  if (std::abs(value) >= 1e6)
    return number_text(value / 1e6) + "M";
  if (std::abs(value) >= 1e4)
    return number_text(value / 1e3) + "k";
  return number_text(value);
}

std::string ms_text(double ms) {
  if (ms >= 10)
    return fmt::format("{:.0f} ms", ms);
  if (ms >= 1 || ms <= 0)
    return fmt::format("{:.3g} ms", ms);
  return fmt::format("{:.3g} µs", ms * 1000);
}

std::string window_text(int64_t window_ms) {
  return config::format_duration(std::chrono::milliseconds(window_ms));
}

double nice_step(double range, double parts) {
  if (!(range > 0))
    return 1;
  const double rough = range / parts;
  const double power = std::pow(10.0, std::floor(std::log10(rough)));
  for (double factor : {1.0, 2.0, 5.0}) {
    if (factor * power >= rough * (1 - 1e-9))
      return factor * power;
  }
  return 10 * power;
}

std::string time_label(double ms, bool seconds) {
  ms += 0.0;  // no "-0"
  return seconds ? fmt::format("{:g}s", ms / 1000.0) : fmt::format("{:g}ms", ms);
}

std::string peak_text(const checks::AdmissionPeak& peak) {
  return fmt::format("{} admitted in {} (allowed {})", peak.count,
                     ms_text(static_cast<double>(peak.length_ns) / 1e6),
                     number_text(peak.allowance));
}

}  // namespace rlcheck::report::html
