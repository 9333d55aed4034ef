#include "app/progress.hpp"

#include <cstdio>

#include <unistd.h>

#include <fmt/format.h>

namespace rlcheck::app {

ProgressLine::ProgressLine(const config::Config& config)
    : enabled_(isatty(STDERR_FILENO) && !config.output.json && !config.output.hook &&
               !config.output.quiet),
      total_(config.load.requests) {}

ProgressLine::~ProgressLine() {
  if (drawn_)
    std::fputs("\r\033[K", stderr);
}

engine::ProgressFn ProgressLine::for_run(std::string label) {
  if (!enabled_)
    return {};
  const auto start = std::chrono::steady_clock::now();
  return [this, label = std::move(label), start](uint64_t sent) {
    if (std::chrono::steady_clock::now() - start < std::chrono::seconds(1))
      return;
    std::fputs(fmt::format("\r\033[Krlcheck: {}: {}/{} requests sent", label, sent, total_).c_str(),
               stderr);
    drawn_ = true;
  };
}

}  // namespace rlcheck::app
