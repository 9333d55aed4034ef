#include "faults/fault_schedule.hpp"

#include <algorithm>
#include <numeric>

#include "engine/interrupt.hpp"

namespace rlcheck::faults {
namespace {

using Clock = std::chrono::steady_clock;

int64_t nanos_between(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(to - from).count();
}

}  // namespace

FaultSchedule::FaultSchedule(std::vector<config::FaultSpec> faults, FaultApplier& applier,
                             std::string failover_key, engine::RunObserver* inner)
    : faults_(std::move(faults)),
      applier_(applier),
      failover_key_(std::move(failover_key)),
      inner_(inner),
      windows_(faults_.size()) {
  for (size_t i = 0; i < faults_.size(); ++i) {
    windows_[i].spec = faults_[i].text;
    windows_[i].error = k_run_ended_first;
  }
  if (!faults_.empty())
    thread_ = std::thread([this] { apply_when_due(); });
}

FaultSchedule::~FaultSchedule() {
  stop_and_join();
}

void FaultSchedule::on_record(const engine::RequestRecord& record) {
  if (inner_ != nullptr)
    inner_->on_record(record);
}

void FaultSchedule::on_start(Clock::time_point start) {
  if (inner_ != nullptr)
    inner_->on_start(start);
  {
    std::lock_guard lock(mutex_);
    start_ = start;
  }
  wake_.notify_all();
}

void FaultSchedule::apply_when_due() {
  std::vector<size_t> order(faults_.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [this](size_t a, size_t b) { return faults_[a].at < faults_[b].at; });
  for (size_t index : order) {
    const config::FaultSpec& fault = faults_[index];
    Clock::time_point start;
    {
      // Waits for the start line, then for the fault's offset; wakes for finish() at once,
      // and looks at Ctrl-C every engine::k_interrupt_poll.
      std::unique_lock lock(mutex_);
      while (!over_ && !engine::interrupted() && (!start_ || Clock::now() < *start_ + fault.at)) {
        const auto poll = Clock::now() + engine::k_interrupt_poll;
        wake_.wait_until(lock, start_ ? std::min(poll, *start_ + fault.at) : poll);
      }
      if (over_ || engine::interrupted())
        return;
      start = *start_;
    }
    checks::FaultWindow window;
    window.spec = fault.text;
    window.at_ns = nanos_between(start, Clock::now());
    const auto applied = applier_.apply(fault, failover_key_);
    const Clock::time_point returned = Clock::now();
    window.applied = applied.has_value();
    if (!applied)
      window.error = applied.error();
    const bool paused = fault.kind == config::FaultKind::pause && window.applied;
    window.until_ns =
        paused ? window.at_ns + fault.duration.count() : nanos_between(start, returned);
    window.held_from_ns =
        paused ? std::min(nanos_between(start, returned), window.until_ns) : window.at_ns;
    std::lock_guard lock(mutex_);
    windows_[index] = std::move(window);
  }
}

void FaultSchedule::stop_and_join() {
  {
    std::lock_guard lock(mutex_);
    over_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable())
    thread_.join();
}

std::vector<checks::FaultWindow> FaultSchedule::finish() {
  stop_and_join();
  return windows_;
}

}  // namespace rlcheck::faults
