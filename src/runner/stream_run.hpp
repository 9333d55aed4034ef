#pragma once
// --audit stream: one run's records, put in send order as they come (engine::Sequencer), audited
// (checks::StreamAudit) and written to --records, then dropped.

#include <cstdint>
#include <span>
#include <string>

#include "checks/stream_audit.hpp"
#include "engine/record_stream.hpp"
#include "report/records_writer.hpp"

namespace rlcheck::runner {

class StreamRun final : public engine::RecordConsumer {
 public:
  // `records`: --records (null: none); `context` its fields' (start and schedule come with
  // the run).
  StreamRun(const checks::AuditParams& audit, report::RecordsWriter* records,
            std::string target_name, int run, const report::RunContext& context);

  engine::RecordSink& sink() { return sequencer_; }
  void begin(int64_t start_wall_ns, const engine::Schedule* schedule) override;
  void consume(std::span<const engine::RequestRecord> records) override;

  // After the run: the audit, to summarize it with.
  checks::StreamAudit take_audit() { return std::move(audit_); }

 private:
  checks::StreamAudit audit_;
  report::RecordsWriter* records_;
  std::string target_name_;
  int run_;
  report::RunContext context_;
  engine::Sequencer sequencer_;
};

}  // namespace rlcheck::runner
