#include "runner/stream_run.hpp"

#include <chrono>
#include <utility>

namespace rlcheck::runner {
namespace {

// A record comes at most a timeout after its send, plus a worker's flush (every 20 ms) and the
// loop's own delays: a second beyond the timeout leaves every earlier send in.
int64_t horizon_ns(const config::LoadConfig& load) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(load.timeout).count() + 1'000'000'000;
}

}  // namespace

StreamRun::StreamRun(const checks::AuditParams& audit, const config::LoadConfig& load,
                     report::RecordsWriter* records, std::string target_name, int run,
                     const report::RunContext& context)
    : audit_(audit),
      records_(records),
      target_name_(std::move(target_name)),
      run_(run),
      context_(context),
      sequencer_(*this, horizon_ns(load)) {}

void StreamRun::begin(int64_t start_wall_ns, const engine::Schedule* schedule) {
  audit_.begin(start_wall_ns);
  context_.start_wall_ns = start_wall_ns;
  context_.schedule = schedule;
}

void StreamRun::consume(std::span<const engine::RequestRecord> records) {
  for (const engine::RequestRecord& record : records)
    audit_.add(record);
  if (records_ != nullptr)
    records_->write_run(target_name_, run_, records, context_);
}

}  // namespace rlcheck::runner
