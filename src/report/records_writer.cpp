#include "report/records_writer.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <iterator>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace rlcheck::report {
namespace {

// Lines are built with fmt into one buffer per batch: a nlohmann object per request would
// cost allocations by the million. Numbers need no escaping, and the two text fields that
// could hold anything (target, error_kind) are escaped below: JSON by nlohmann, CSV by quoting.
constexpr size_t k_flush_bytes = 1 << 16;

std::string json_text(std::string_view text) {
  return nlohmann::json(std::string(text)).dump();
}

// RFC 4180: a cell holding a comma, a quote or a line break is quoted, quotes doubled.
std::string csv_text(std::string_view text) {
  if (text.find_first_of(",\"\r\n") == std::string_view::npos)
    return std::string(text);
  std::string quoted = "\"";
  for (char c : text) {
    if (c == '"')
      quoted += '"';
    quoted += c;
  }
  return quoted + "\"";
}

const char* outcome_name(engine::Outcome outcome) {
  switch (outcome) {
    case engine::Outcome::allowed:
      return "allowed";
    case engine::Outcome::denied:
      return "denied";
    case engine::Outcome::error:
      return "error";
  }
  return "error";
}

// As the reports' error_kinds: a status neither allowed nor denied is status-NNN.
std::string error_kind_of(const engine::RequestRecord& record) {
  if (record.error == engine::ErrorKind::status)
    return fmt::format("status-{}", record.status);
  return engine::error_kind_name(record.error);
}

struct Fields {
  bool sent;  // false: no connection took it, it never left
  std::optional<uint16_t> status;
  std::optional<std::string> error_kind;
};

Fields fields_of(const engine::RequestRecord& record) {
  Fields fields;
  fields.sent = record.error != engine::ErrorKind::not_sent;
  if (record.status != 0)
    fields.status = record.status;
  if (record.outcome == engine::Outcome::error)
    fields.error_kind = error_kind_of(record);
  return fields;
}

// The offset of the clock that sent `record`; nullopt without --clock-skew.
std::optional<int64_t> skew_of(const std::vector<int64_t>& skews_ms,
                               const engine::RequestRecord& record) {
  if (skews_ms.empty())
    return std::nullopt;
  return skews_ms[std::min<size_t>(record.clock_skew, skews_ms.size() - 1)];
}

// The fields derived from the record and its run: due_us, wall_ms, worker.
struct Derived {
  std::optional<int64_t> due_us;
  std::optional<int64_t> wall_ms;
  uint64_t worker = 0;
};

class DeriveFields {
 public:
  explicit DeriveFields(const RunContext& context) : context_(context) {
    if (context.schedule != nullptr && context.schedule->paced())
      cursor_.emplace(*context.schedule);
  }

  Derived of(const engine::RequestRecord& record) {
    Derived derived;
    const bool sent = record.error != engine::ErrorKind::not_sent;
    const uint64_t index = record.seq - context_.first_seq;
    if (cursor_) {
      derived.due_us = context_.virtual_clock && sent ? record.sent_ns / 1000
                       : context_.virtual_clock       ? context_.schedule->virtual_ns(index) / 1000
                                                      : cursor_->due(index).count() / 1000;
    }
    if (sent) {
      constexpr int64_t k_ns_per_ms = 1'000'000;
      const int64_t wall_ns = context_.start_wall_ns + record.sent_ns;
      derived.wall_ms =
          wall_ns >= 0 ? wall_ns / k_ns_per_ms : (wall_ns - k_ns_per_ms + 1) / k_ns_per_ms;
    }
    derived.worker = context_.share_count > 1 ? index % context_.share_count : 0;
    return derived;
  }

 private:
  const RunContext& context_;
  std::optional<engine::Schedule::Cursor> cursor_;
};

void append_json(fmt::memory_buffer& out, const std::string& target_json, int run,
                 const engine::RequestRecord& record, std::optional<int64_t> skew_ms,
                 const Derived& derived) {
  const Fields fields = fields_of(record);
  auto it = std::back_inserter(out);
  fmt::format_to(it, "{{");
  if (!target_json.empty())
    fmt::format_to(it, "\"target\":{},", target_json);
  fmt::format_to(it, "\"run\":{},\"seq\":{},\"identity\":{}", run, record.seq, record.identity);
  if (fields.sent) {
    fmt::format_to(it, ",\"send_us\":{},\"reply_us\":{}", record.sent_ns / 1000,
                   record.replied_ns / 1000);
  }
  fmt::format_to(it, ",\"outcome\":\"{}\"", outcome_name(record.outcome));
  if (fields.status)
    fmt::format_to(it, ",\"status\":{}", *fields.status);
  if (fields.error_kind)
    fmt::format_to(it, ",\"error_kind\":{}", json_text(*fields.error_kind));
  if (record.retry_ms)
    fmt::format_to(it, ",\"retry_ms\":{}", *record.retry_ms);
  if (record.cost != 1)
    fmt::format_to(it, ",\"cost\":{}", record.cost);
  if (skew_ms)
    fmt::format_to(it, ",\"skew_ms\":{}", *skew_ms);
  if (derived.due_us)
    fmt::format_to(it, ",\"due_us\":{}", *derived.due_us);
  if (derived.wall_ms)
    fmt::format_to(it, ",\"wall_ms\":{}", *derived.wall_ms);
  fmt::format_to(it, ",\"worker\":{}}}\n", derived.worker);
}

void append_csv(fmt::memory_buffer& out, const std::string& target_csv, bool with_target, int run,
                const engine::RequestRecord& record, bool with_cost, std::optional<int64_t> skew_ms,
                const Derived& derived) {
  const Fields fields = fields_of(record);
  auto it = std::back_inserter(out);
  if (with_target)
    fmt::format_to(it, "{},", target_csv);
  fmt::format_to(it, "{},{},{},", run, record.seq, record.identity);
  if (fields.sent)
    fmt::format_to(it, "{},{},", record.sent_ns / 1000, record.replied_ns / 1000);
  else
    fmt::format_to(it, ",,");
  fmt::format_to(it, "{},", outcome_name(record.outcome));
  if (fields.status)
    fmt::format_to(it, "{}", *fields.status);
  fmt::format_to(it, ",");
  if (fields.error_kind)
    fmt::format_to(it, "{}", csv_text(*fields.error_kind));
  fmt::format_to(it, ",");
  if (record.retry_ms)
    fmt::format_to(it, "{}", *record.retry_ms);
  if (with_cost)
    fmt::format_to(it, ",{}", record.cost);
  if (skew_ms)
    fmt::format_to(it, ",{}", *skew_ms);
  fmt::format_to(it, ",");
  if (derived.due_us)
    fmt::format_to(it, "{}", *derived.due_us);
  fmt::format_to(it, ",");
  if (derived.wall_ms)
    fmt::format_to(it, "{}", *derived.wall_ms);
  fmt::format_to(it, ",{}\n", derived.worker);
}

}  // namespace

RecordsWriter::Format RecordsWriter::format_for(std::string_view path) {
  constexpr std::string_view k_csv = ".csv";
  if (path.size() < k_csv.size())
    return Format::jsonl;
  const std::string_view tail = path.substr(path.size() - k_csv.size());
  const bool csv = std::equal(tail.begin(), tail.end(), k_csv.begin(), [](char a, char b) {
    return std::tolower(static_cast<unsigned char>(a)) == b;
  });
  return csv ? Format::csv : Format::jsonl;
}

RecordsWriter::RecordsWriter(std::ostream& out, Format format, bool with_target,
                             std::vector<int64_t> skews_ms, bool with_cost)
    : out_(&out),
      format_(format),
      with_target_(with_target),
      skews_ms_(std::move(skews_ms)),
      with_cost_(with_cost) {
  if (format_ == Format::csv) {
    *out_ << (with_target_ ? "target," : "")
          << "run,seq,identity,send_us,reply_us,outcome,status,error_kind,retry_ms"
          << (with_cost_ ? ",cost" : "") << (skews_ms_.empty() ? "" : ",skew_ms")
          << ",due_us,wall_ms,worker\n";
  }
}

std::expected<std::unique_ptr<RecordsWriter>, std::string> RecordsWriter::open_file(
    const std::string& path, bool with_target, std::vector<int64_t> skews_ms, bool with_cost) {
  auto file = StagedFile::create(path);
  if (!file)
    return std::unexpected(file.error());
  auto writer = std::make_unique<RecordsWriter>((*file)->stream(), format_for(path), with_target,
                                                std::move(skews_ms), with_cost);
  writer->file_ = std::move(*file);
  return writer;
}

void RecordsWriter::write_run(std::string_view target, int run, engine::RecordView records,
                              const RunContext& context) {
  DeriveFields derive(context);
  const std::string target_text = !with_target_            ? std::string()
                                  : format_ == Format::csv ? csv_text(target)
                                                           : json_text(target);
  fmt::memory_buffer buffer;
  for (const engine::RequestRecord& record : records) {
    const std::optional<int64_t> skew_ms = skew_of(skews_ms_, record);
    const Derived derived = derive.of(record);
    if (format_ == Format::csv)
      append_csv(buffer, target_text, with_target_, run, record, with_cost_, skew_ms, derived);
    else
      append_json(buffer, target_text, run, record, skew_ms, derived);
    if (buffer.size() >= k_flush_bytes) {
      out_->write(buffer.data(), static_cast<std::streamsize>(buffer.size()));
      buffer.clear();
    }
  }
  out_->write(buffer.data(), static_cast<std::streamsize>(buffer.size()));
}

bool RecordsWriter::finish() {
  out_->flush();
  if (!file_)
    return !out_->fail();
  const bool committed = file_->commit().has_value();
  file_.reset();
  return committed;
}

}  // namespace rlcheck::report
