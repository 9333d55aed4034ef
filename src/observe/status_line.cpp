#include "observe/status_line.hpp"

#include <fmt/format.h>

namespace rlcheck::observe {

using namespace std::chrono_literals;

bool StatusSchedule::due(std::chrono::nanoseconds elapsed) {
  if (elapsed < next_)
    return false;
  while (next_ <= elapsed)
    next_ += every_;
  return true;
}

std::optional<StatusSchedule> status_schedule(std::optional<std::chrono::nanoseconds> interval,
                                              std::optional<std::chrono::nanoseconds> span) {
  if (interval) {
    if (interval->count() <= 0)
      return std::nullopt;
    return StatusSchedule(*interval, *interval);
  }
  if (!span)
    return StatusSchedule(30s, 10s);
  if (*span > 30s)
    return StatusSchedule(10s, 10s);
  return std::nullopt;
}

std::string format_elapsed(std::chrono::nanoseconds elapsed) {
  const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(elapsed).count();
  if (seconds >= 3600)
    return fmt::format("{}h{:02}m", seconds / 3600, seconds % 3600 / 60);
  if (seconds >= 60)
    return fmt::format("{}m{:02}s", seconds / 60, seconds % 60);
  return fmt::format("{}s", seconds);
}

std::string format_span(std::chrono::nanoseconds span) {
  const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(span).count();
  const auto hours = seconds / 3600;
  const auto minutes = seconds % 3600 / 60;
  if (hours > 0)
    return minutes == 0 ? fmt::format("{}h", hours) : fmt::format("{}h{:02}m", hours, minutes);
  if (minutes > 0) {
    return seconds % 60 == 0 ? fmt::format("{}m", minutes)
                             : fmt::format("{}m{:02}s", minutes, seconds % 60);
  }
  return fmt::format("{}s", seconds);
}

std::string format_latency(int64_t ns) {
  if (ns < 1'000'000)
    return fmt::format("{}us", ns / 1000);
  if (ns < 10'000'000)
    return fmt::format("{:.1f}ms", static_cast<double>(ns) / 1e6);
  if (ns < 1'000'000'000)
    return fmt::format("{}ms", ns / 1'000'000);
  return fmt::format("{:.1f}s", static_cast<double>(ns) / 1e9);
}

std::string format_status(const StatusLine& line) {
  const std::string p99 = line.p99_ns ? format_latency(*line.p99_ns) : "-";
  std::string time = format_elapsed(line.elapsed);
  if (line.span)
    time += "/" + format_span(*line.span);
  if (line.virtual_clock)
    time = "virtual " + time;
  if (line.stages > 0)
    time = fmt::format("stage {}/{}, {}", line.stage, line.stages, time);
  return fmt::format(
      "rlcheck: {}: {}/{} sent, {} allowed, {} denied, {} errors, {:.0f}/s, p99 {} (last 1s), {}",
      line.label, line.sent, line.planned, line.allowed, line.denied, line.errors,
      line.rate.value_or(0.0), p99, time);
}

}  // namespace rlcheck::observe
