#include "probe/probe_sender.hpp"

#include <algorithm>
#include <random>

#include <fmt/format.h>

#include "base/exit_code.hpp"
#include "engine/request_clock.hpp"

namespace rlcheck::probe {

ProbeSender::ProbeSender(const config::Config& config) : load_(config.load) {
  if (load_.virtual_clock)
    virtual_origin_ns_ = engine::next_whole_ms(engine::wall_now_ns());
}

std::vector<checks::ProbeRequest> ProbeSender::send(int identity, int64_t count,
                                                    Clock::time_point not_before,
                                                    Clock::time_point deadline, bool at_once) {
  config::LoadConfig load = config::one_at_a_time(load_, count);
  if (at_once)
    load.concurrency = static_cast<int>(count);
  // Every request of this send ends by the deadline, whatever the limiter does with it.
  const auto real_start = load.virtual_clock ? Clock::now() : std::max(Clock::now(), not_before);
  const auto share = (deadline - real_start) / (at_once ? 1 : std::max<int64_t>(1, count));
  const bool capped = share < load.timeout;
  if (capped)
    load.timeout = std::max<config::Nanos>(std::chrono::milliseconds(1),
                                           std::chrono::duration_cast<config::Nanos>(share));
  load.not_before = not_before;
  if (load.virtual_clock) {
    // Virtual: the first request at `not_before`'s instant on the timeline (never before one
    // already used), the others a virtual ms apart; `at_once`, all at the same instant.
    constexpr int64_t k_ms = 1'000'000;
    const int64_t wanted =
        std::chrono::duration_cast<std::chrono::nanoseconds>(not_before - origin_).count();
    const int64_t first = std::max((wanted + k_ms - 1) / k_ms * k_ms, virtual_cursor_ns_);
    load.virtual_origin_ns = virtual_origin_ns_ + first;
    load.rate.reset();
    load.stages.clear();
    load.arrivals = config::Arrivals::uniform;
    load.interval = at_once ? config::Nanos{0} : config::Nanos{k_ms};
    load.not_before = {};
    virtual_cursor_ns_ = first + (at_once ? 1 : std::max<int64_t>(1, count)) * k_ms;
  }
  // Request numbers run on across sends: a sliding log's members ({seq}) never collide.
  load.first_seq = static_cast<uint64_t>(requests_sent_);
  engine::RunResult result = run(identity, load);
  if (result.clients_ready == 0 && !result.interrupted)
    throw base::cannot_test(
        fmt::format("no connection to {}: {}", describe(), result.connect_error));
  const int64_t offset =
      load.virtual_clock
          ? result.start_wall_ns - virtual_origin_ns_
          : std::chrono::duration_cast<std::chrono::nanoseconds>(result.start - origin_).count();
  std::vector<checks::ProbeRequest> requests;
  last_error_.clear();
  budget_ran_out_ = false;
  for (const engine::RequestRecord& record : result.records) {
    if (record.outcome == engine::Outcome::error && last_error_.empty()) {
      budget_ran_out_ = capped && record.error == engine::ErrorKind::timeout;
      const auto sample = result.error_samples.find(record.error);
      last_error_ = fmt::format(
          "{}{}",
          record.status != 0 ? fmt::format("status-{}", record.status)
                             : engine::error_kind_name(record.error),
          sample != result.error_samples.end() ? fmt::format(" ({})", sample->second) : "");
    }
    requests.push_back({offset + (record.sent_ns + record.replied_ns) / 2, record.outcome,
                        record.retry_ms, record.replied_ns - record.sent_ns});
  }
  requests_sent_ += count;
  interrupted_ = interrupted_ || result.interrupted;
  results_.push_back(std::move(result));
  name_denial_status();
  return requests;
}

void ProbeSender::name_denial_status() {
  uint16_t status = 0;
  bool admitted = false;
  for (const engine::RunResult& result : results_) {
    for (const engine::RequestRecord& record : result.records) {
      admitted = admitted || record.outcome == engine::Outcome::allowed;
      if (status == 0 && record.outcome == engine::Outcome::error && record.status != 0)
        status = record.status;
    }
  }
  // nginx denies with 503 by default: after admissions, a 503 or a 4xx reads as a denial.
  if (last_error_.empty() || !admitted || !(status == 503 || (status >= 400 && status < 500)))
    return;
  last_error_ += fmt::format(
      "; status {} after admissions looks like a denial: if it is, pass --denied-status {}", status,
      status);
}

int64_t ProbeSender::now_ns() const {
  if (load_.virtual_clock)
    return virtual_cursor_ns_;
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - origin_).count();
}

engine::RunResult ProbeSender::run(int identity, const config::LoadConfig& load) {
  const runner::StateChoice state = state_of(identity);
  config::LoadConfig each = load;
  // A limiter keyed by the client address: every identity from an address of its own.
  const std::vector<std::string>& addresses = load_.source_addresses;
  if (!addresses.empty())
    each.source_addresses = {addresses[static_cast<size_t>(identity - 1) % addresses.size()]};
  engine::RunResult result = runner::run_once(target(), state, each);
  sent(state, result.records);
  return result;
}

uint64_t probe_seed(const config::Config& config) {
  return config.seed
             ? *config.seed
             : std::random_device{}() ^ (static_cast<uint64_t>(std::random_device{}()) << 32);
}

}  // namespace rlcheck::probe
