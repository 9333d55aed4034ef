#include "runner/monitor.hpp"

#include <cstdio>

#include <fmt/format.h>

#include "base/build_info.hpp"
#include "base/exit_code.hpp"
#include "engine/interrupt.hpp"

namespace rlcheck::runner {
namespace {

std::string metrics_url(config::ListenAddress address) {
  if (address.host.empty())
    address.host = "0.0.0.0";
  return fmt::format("http://{}/metrics", config::format_listen_address(address));
}

}  // namespace

Monitor::Monitor(const config::Config& config, bool serve)
    : config_(config), progress_(config, live_) {
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
  {
    // The open model's planned rate, read off its schedule as the run goes (the arrivals do
    // not change it; uniform ones cost nothing to plan). On the virtual clock the plan is in
    // virtual time: no wall-clock rate to show.
    std::lock_guard lock(mutex_);
    offered_.reset();
    if (load.open_model() && !load.virtual_clock) {
      config::LoadConfig uniform = load;
      uniform.arrivals = config::Arrivals::uniform;
      offered_ = Offered{std::make_shared<const engine::Schedule>(engine::Schedule::make(uniform)),
                         std::chrono::steady_clock::now()};
    }
  }
  return {observer, progress_.for_run(std::move(label), load), &live_, nullptr, {}};
}

void Monitor::end_run() {
  live_.end_run();
  progress_.clear();
  std::lock_guard lock(mutex_);
  offered_.reset();
}

void Monitor::judged(const std::string& target, const std::vector<checks::CheckResult>& checks) {
  std::lock_guard lock(mutex_);
  for (const checks::CheckResult& check : checks) {
    if (check.status != checks::Status::skip)
      extras_.checks.push_back({target, check.id, check.status == checks::Status::pass});
  }
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

}  // namespace rlcheck::runner
