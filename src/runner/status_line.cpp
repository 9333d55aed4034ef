#include "runner/status_line.hpp"

#include <fmt/format.h>

namespace rlcheck::runner {

bool StatusSchedule::due(std::chrono::nanoseconds elapsed) {
  if (elapsed < next_)
    return false;
  while (next_ <= elapsed)
    next_ += every_;
  return true;
}

std::string format_status(const std::string& label, const StatusCounts& counts,
                          std::chrono::nanoseconds elapsed) {
  const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(elapsed).count();
  const double rate = elapsed.count() > 0 ? static_cast<double>(counts.done) * 1e9 /
                                                static_cast<double>(elapsed.count())
                                          : 0.0;
  const std::string clock = seconds >= 3600 ? fmt::format("{}h{:02}m{:02}s", seconds / 3600,
                                                          seconds % 3600 / 60, seconds % 60)
                                            : fmt::format("{}m{:02}s", seconds / 60, seconds % 60);
  return fmt::format(
      "rlcheck: {}: {} requests done ({} allowed, {} denied, {} errors), {:.0f}/s, {} elapsed",
      label, counts.done, counts.allowed, counts.denied, counts.errors, rate, clock);
}

}  // namespace rlcheck::runner
