#include "observe/progress.hpp"

#include <algorithm>
#include <cstdio>
#include <optional>
#include <vector>

#include <unistd.h>

#include "engine/schedule.hpp"
#include "observe/live_window.hpp"
#include "observe/status_line.hpp"

namespace rlcheck::observe {
namespace {

using Clock = std::chrono::steady_clock;

// What one run's callback keeps between calls.
struct RunWatch {
  std::string label;
  Clock::time_point start = Clock::now();
  std::optional<std::chrono::nanoseconds> span;
  std::vector<int64_t> stage_ends_ns;  // --stages: where each ends, from the start line
  bool virtual_clock = false;
  LiveWindow window;
  std::optional<StatusSchedule> schedule;
};

}  // namespace

ProgressLine::ProgressLine(const config::Config& config, const engine::LiveStats& live)
    : live_(live),
      enabled_(isatty(STDERR_FILENO) && !config.output.json && !config.output.hook &&
               !config.output.quiet),
      status_lines_(!isatty(STDERR_FILENO) && !config.output.hook),
      interval_(config.observe.progress_interval),
      total_(config.load.requests) {}

ProgressLine::~ProgressLine() {
  clear();
}

void ProgressLine::clear() {
  if (drawn_)
    std::fputs("\r\033[K", stderr);
  drawn_ = false;
}

engine::ProgressFn ProgressLine::for_run(std::string label, const config::LoadConfig& load) {
  auto watch = std::make_shared<RunWatch>();
  watch->label = std::move(label);
  // How long the run is planned to last (on the virtual clock, in virtual time): known when a
  // schedule paces its requests (--rate, --interval, --stages), not in the closed model. The
  // span does not depend on the arrivals; uniform ones cost nothing to plan.
  if (load.open_model() || load.interval.count() != 0) {
    config::LoadConfig uniform = load;
    uniform.arrivals = config::Arrivals::uniform;
    const engine::Schedule schedule = engine::Schedule::make(uniform);
    watch->span = std::chrono::nanoseconds(schedule.span_ns());
    for (size_t k = 0; k < schedule.stage_count(); ++k)
      watch->stage_ends_ns.push_back(schedule.stage_to_ns(k));
  }
  watch->virtual_clock = load.virtual_clock;
  if (status_lines_) {
    // The virtual clock's span is not wall time: such a run's lines follow the closed model's.
    watch->schedule = status_schedule(interval_, load.virtual_clock ? std::nullopt : watch->span);
    if (!watch->schedule)
      return {};
  } else if (!enabled_) {
    return {};
  }
  return [this, watch](const engine::RunProgress& progress) {
    const auto elapsed = Clock::now() - watch->start;
    const engine::LiveSnapshot snapshot = live_.snapshot();
    watch->window.push({elapsed, snapshot.total.done(), snapshot.latency});
    StatusLine line;
    line.label = watch->label;
    line.sent = progress.sent;
    line.planned = total_;
    line.allowed = progress.allowed;
    line.denied = progress.denied;
    line.errors = progress.errors;
    line.rate = watch->window.rate();
    line.p99_ns = watch->window.percentile_ns(99);
    line.elapsed = watch->virtual_clock ? std::chrono::nanoseconds(snapshot.virtual_ns) : elapsed;
    line.span = watch->span;
    line.virtual_clock = watch->virtual_clock;
    if (!watch->stage_ends_ns.empty()) {
      const auto& ends = watch->stage_ends_ns;
      const auto under_way = std::upper_bound(ends.begin(), ends.end(), line.elapsed.count());
      line.stages = ends.size();
      line.stage = std::min<size_t>(ends.size(), static_cast<size_t>(under_way - ends.begin()) + 1);
    }
    if (watch->schedule) {
      if (watch->schedule->due(elapsed)) {
        std::fputs((format_status(line) + "\n").c_str(), stderr);
        std::fflush(stderr);
      }
      return;
    }
    if (elapsed < std::chrono::seconds(1))
      return;
    std::fputs(("\r\033[K" + format_status(line)).c_str(), stderr);
    drawn_ = true;
  };
}

}  // namespace rlcheck::observe
