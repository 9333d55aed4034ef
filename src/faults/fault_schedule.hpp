#pragma once
// The faults of one run, timed on the run's clock: a side thread waits from the start line
// (RunObserver::on_start) until each fault's offset and applies it through a FaultApplier;
// after the run, finish() says what happened to each as a checks::FaultWindow.

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "checks/fault_window.hpp"
#include "config/fault_spec.hpp"
#include "engine/run.hpp"
#include "faults/fault_applier.hpp"

namespace rlcheck::faults {

// FaultWindow::error of a fault whose offset the run did not reach.
inline constexpr const char* k_run_ended_first = "the run ended first";

// Tried and failed (refused, or the command failed): the test did not do what was asked.
inline bool failed_to_apply(const checks::FaultWindow& window) {
  return !window.applied && window.error != k_run_ended_first;
}

// Pass it to engine::execute_run as the observer; it forwards every record to `inner` (may be
// null). `applier` and `inner` must outlive it. The faults are applied in the order of their
// offsets, one after the other: a fault due while another is still being applied follows it.
class FaultSchedule final : public engine::RunObserver {
 public:
  FaultSchedule(std::vector<config::FaultSpec> faults, FaultApplier& applier,
                std::string failover_key, engine::RunObserver* inner);
  ~FaultSchedule() override;
  FaultSchedule(const FaultSchedule&) = delete;
  FaultSchedule& operator=(const FaultSchedule&) = delete;

  void on_record(const engine::RequestRecord& record) override;
  void on_start(std::chrono::steady_clock::time_point start) override;

  // Call once the run is over: waits for a fault being applied, applies no more, and returns
  // one window per fault in the order given. A fault not reached: applied false, error "the
  // run ended first". Offsets count from the start line (RequestRecord::sent_ns's clock).
  std::vector<checks::FaultWindow> finish();

 private:
  void apply_when_due();
  void stop_and_join();

  std::vector<config::FaultSpec> faults_;
  FaultApplier& applier_;
  std::string failover_key_;
  engine::RunObserver* inner_;

  std::mutex mutex_;
  std::condition_variable wake_;
  std::optional<std::chrono::steady_clock::time_point> start_;  // set by on_start
  bool over_ = false;                                           // set by finish
  std::vector<checks::FaultWindow> windows_;  // by index into faults_; written by the thread
  std::thread thread_;
};

}  // namespace rlcheck::faults
