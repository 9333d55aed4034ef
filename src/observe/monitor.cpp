#include "observe/monitor.hpp"

#include <cstdio>

#include <fmt/format.h>

#include "base/build_info.hpp"
#include "base/exit_code.hpp"
#include "engine/interrupt.hpp"

namespace rlcheck::observe {
namespace {

std::string metrics_url(config::ListenAddress address) {
  if (address.host.empty())
    address.host = "0.0.0.0";
  return fmt::format("http://{}/metrics", config::format_listen_address(address));
}

}  // namespace

Monitor::Monitor(const config::Config& config, bool serve)
    : config_(config), progress_(config, live_), warn_lag_(!config.output.hook) {
  if (warn_lag_) {
    if (auto warning = rate_ceiling_warning(config))
      fmt::print(stderr, "rlcheck: {}\n", *warning);
  }
  extras_.version = base::version();
  extras_.by_target = config.command == config::Command::compare;
  if (!serve || !config.observe.metrics_listen)
    return;
  const config::ListenAddress& address = *config.observe.metrics_listen;
  auto server = observe::MetricsServer::start(
      address, [this](observe::Format format) { return render(format); });
  if (!server) {
    throw base::cannot_test(fmt::format("--metrics-listen {}: cannot listen: {}",
                                        config::format_listen_address(address), server.error()));
  }
  server_ = std::move(*server);
  if (address.port == 0) {
    std::fputs(fmt::format("rlcheck: metrics at {}\n", metrics_url(server_->bound())).c_str(),
               stderr);
    std::fflush(stderr);
  }
}

Monitor::~Monitor() = default;

engine::RunHooks Monitor::begin_run(const std::string& target, int run, std::string label,
                                    const config::LoadConfig& load, engine::RunObserver* observer) {
  live_.begin_run(extras_.by_target ? target : std::string(), run);
  std::shared_ptr<const engine::Schedule> plan;
  {
    // The open model's planned rate, read off its schedule as the run goes (the arrivals do
    // not change it; uniform ones cost nothing to plan). On the virtual clock the plan is in
    // virtual time: no wall-clock rate to show.
    std::lock_guard lock(mutex_);
    offered_.reset();
    if (load.open_model() && !load.virtual_clock) {
      config::LoadConfig uniform = load;
      uniform.arrivals = config::Arrivals::uniform;
      plan = std::make_shared<const engine::Schedule>(engine::Schedule::make(uniform));
      offered_ = Offered{plan, std::chrono::steady_clock::now()};
    }
  }
  engine::RunHooks hooks{observer, progress_.for_run(std::move(label), load), &live_, nullptr, {}};
  if (plan && warn_lag_) {
    // The uniform plan: Poisson arrivals stray from it by about their square root, far inside
    // the 10 % and 1 s a warning needs.
    auto watch = std::make_shared<LagWatch>(LagWatch{
        ScheduleLag(plan, static_cast<uint64_t>(load.requests), load.share_count, load.share_index),
        run, static_cast<uint64_t>(load.concurrency), std::nullopt, false});
    hooks.tick = [this, watch] { watch_lag(*watch); };
  }
  return hooks;
}

void Monitor::watch_lag(LagWatch& watch) {
  if (watch.warned)
    return;
  const engine::LiveSnapshot snapshot = live_.snapshot();
  if (snapshot.runs.empty())
    return;
  const uint64_t sent = snapshot.runs.back().counts.sent;
  const auto now = std::chrono::steady_clock::now();
  // The start line is not told to the monitor: it is taken as the first tick that saw a request
  // sent, at most a tick late, which can only understate the lag.
  if (!watch.start) {
    if (sent == 0)
      return;
    watch.start = now;
  }
  const auto elapsed = std::chrono::duration_cast<std::chrono::nanoseconds>(now - *watch.start);
  const std::chrono::nanoseconds lag = watch.lag.lag(elapsed, sent);
  if (!behind_schedule(lag, elapsed))
    return;
  watch.warned = true;
  const LagSample sample{
      watch.run,          lag,        sent, watch.lag.due_by(elapsed), watch.lag.rate_due(sent),
      snapshot.in_flight, watch.slots};
  progress_.clear();  // the terminal's status line, redrawn at the next progress call
  fmt::print(stderr, "rlcheck: {}\n", lag_warning(sample));
  std::fflush(stderr);
}

void Monitor::end_run() {
  live_.end_run();
  progress_.clear();
  std::lock_guard lock(mutex_);
  offered_.reset();
}

void Monitor::judged(const std::string& target, const std::vector<checks::CheckResult>& checks,
                     checks::Verdict verdict) {
  std::lock_guard lock(mutex_);
  for (const checks::CheckResult& check : checks) {
    if (check.status != checks::Status::skip)
      extras_.checks.push_back({target, check.id, check.status == checks::Status::pass});
  }
  // checks::Verdict's order is the gauge's: pass, fail, error, interrupted.
  static_assert(static_cast<int>(checks::Verdict::fail) == 1 &&
                static_cast<int>(checks::Verdict::interrupted) == 3);
  extras_.verdicts.push_back({target, static_cast<int>(verdict)});
}

void Monitor::linger() {
  const config::Nanos linger = config_.observe.metrics_linger;
  if (server_ == nullptr || linger.count() <= 0 || engine::interrupted())
    return;
  std::fputs(fmt::format("rlcheck: serving metrics at {} for {} more\n",
                         metrics_url(server_->bound()), config::format_duration(linger))
                 .c_str(),
             stderr);
  std::fflush(stderr);
  engine::wait_until(std::chrono::steady_clock::now() + linger);
}

std::string Monitor::render(observe::Format format) const {
  const engine::LiveSnapshot snapshot = live_.snapshot();
  observe::Extras extras;
  {
    std::lock_guard lock(mutex_);
    extras = extras_;
    if (offered_) {
      const auto since = std::chrono::steady_clock::now() - offered_->start;
      extras.offered_rate = offered_->schedule->rate_at(
          std::chrono::duration_cast<std::chrono::nanoseconds>(since).count());
    }
  }
  return observe::render(snapshot, extras, format);
}

}  // namespace rlcheck::observe
