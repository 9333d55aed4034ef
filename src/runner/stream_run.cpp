#include "runner/stream_run.hpp"

#include <utility>

namespace rlcheck::runner {
StreamRun::StreamRun(const checks::AuditParams& audit, report::RecordsWriter* records,
                     std::string target_name, int run, const report::RunContext& context)
    : audit_(audit),
      records_(records),
      target_name_(std::move(target_name)),
      run_(run),
      context_(context),
      sequencer_(*this) {}

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
