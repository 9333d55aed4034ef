#include "runner/progress.hpp"

#include <cstdio>

#include <unistd.h>

#include <fmt/format.h>

#include "runner/status_line.hpp"

namespace rlcheck::runner {

ProgressLine::ProgressLine(const config::Config& config)
    : enabled_(isatty(STDERR_FILENO) && !config.output.json && !config.output.hook &&
               !config.output.quiet),
      status_lines_(!isatty(STDERR_FILENO) && !config.output.hook),
      total_(config.load.requests) {}

ProgressLine::~ProgressLine() {
  if (drawn_)
    std::fputs("\r\033[K", stderr);
}

engine::ProgressFn ProgressLine::for_run(std::string label) {
  const auto start = std::chrono::steady_clock::now();
  if (status_lines_) {
    return [label = std::move(label), start,
            schedule = StatusSchedule()](const engine::RunProgress& progress) mutable {
      const auto elapsed = std::chrono::steady_clock::now() - start;
      if (!schedule.due(elapsed))
        return;
      const StatusCounts counts{progress.done(), progress.allowed, progress.denied,
                                progress.errors};
      std::fputs((format_status(label, counts, elapsed) + "\n").c_str(), stderr);
      std::fflush(stderr);
    };
  }
  if (!enabled_)
    return {};
  return [this, label = std::move(label), start](const engine::RunProgress& progress) {
    if (std::chrono::steady_clock::now() - start < std::chrono::seconds(1))
      return;
    std::fputs(fmt::format("\r\033[Krlcheck: {}: {}/{} requests sent", label, progress.sent, total_)
                   .c_str(),
               stderr);
    drawn_ = true;
  };
}

}  // namespace rlcheck::runner
