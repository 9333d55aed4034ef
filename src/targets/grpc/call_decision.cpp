#include "targets/grpc/call_decision.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "http/retry_after.hpp"
#include "targets/grpc/retry_info.hpp"
#include "targets/grpc/status_codes.hpp"

namespace rlcheck::grpc_target {
namespace {

constexpr int k_ok = 0;
constexpr int k_deadline_exceeded = 4;
constexpr int k_unavailable = 14;

// The first words of a status message for a report: at most this many bytes.
constexpr size_t k_message_cut = 160;

std::string status_text(const CallEnd& end) {
  std::string text = status_code_name(end.code);
  if (!end.message.empty()) {
    text += ": ";
    text += end.message.substr(0, k_message_cut);
  }
  return text;
}

// The hint of a denial that ended with a status: RetryInfo first (exact), else retry-after.
void read_status_hint(const CallEnd& end, int64_t now_unix_s, engine::Decision& decision) {
  if (!end.details.empty()) {
    auto delay = retry_delay_of_status(end.details);
    if (!delay) {
      decision.hint_invalid = true;
      decision.hint_note = delay.error();
    } else if (*delay) {
      decision.retry_ms = (*delay)->ms;
      decision.hint_resolution_ms = (*delay)->whole_seconds ? 1000 : 1;
      return;
    }
  }
  if (end.retry_after) {
    auto retry_after = http::parse_retry_after(*end.retry_after, now_unix_s);
    if (retry_after) {
      decision.retry_ms = retry_after->seconds * 1000;
      decision.retry_from_date = retry_after->form == http::RetryAfter::Form::http_date;
      decision.hint_resolution_ms = 1000;
      decision.hint_invalid = false;
      decision.hint_note.clear();
    } else if (!decision.hint_invalid) {
      decision.hint_invalid = true;
      decision.hint_note = fmt::format("retry-after metadata: {}", retry_after.error());
    }
  }
}

}  // namespace

engine::ErrorKind error_kind_of_status(int code) {
  switch (code) {
    case k_deadline_exceeded:
      return engine::ErrorKind::timeout;
    case k_unavailable:
      return engine::ErrorKind::connection_lost;
    default:
      return engine::ErrorKind::server_error;
  }
}

engine::Decision decide_call(const CallEnd& end, const DecisionRules& rules, int64_t now_unix_s) {
  engine::Decision decision;
  if (end.code == rules.denied_code) {
    decision.outcome = engine::Outcome::denied;
    decision.hint_expected = rules.require_hint;
    read_status_hint(end, now_unix_s, decision);
    return decision;
  }
  if (end.code != k_ok) {
    decision.outcome = engine::Outcome::error;
    decision.error = error_kind_of_status(end.code);
    decision.error_message = status_text(end);
    return decision;
  }
  if (end.response_unreadable) {
    decision.outcome = engine::Outcome::error;
    decision.error = engine::ErrorKind::bad_reply;
    decision.error_message = "the response does not parse as the method's output type";
    return decision;
  }
  decision.outcome = engine::Outcome::allowed;
  if (end.response == nullptr)
    return decision;
  for (const FieldMatch& match : rules.denied_when) {
    if (match.matches(*end.response)) {
      decision.outcome = engine::Outcome::denied;
      break;
    }
  }
  if (decision.outcome != engine::Outcome::denied)
    return decision;
  decision.hint_expected = rules.require_hint;
  // The field first: Envoy's rate limit service answers OK with the time to the window's
  // reset; a retry-after may still ride in the metadata.
  if (rules.hint_field) {
    bool whole_seconds = false;
    if (const std::optional<int64_t> wait =
            rules.hint_field->read_wait_ms(*end.response, &whole_seconds)) {
      decision.retry_ms = std::max<int64_t>(0, *wait);
      decision.hint_resolution_ms = whole_seconds ? 1000 : 1;
      return decision;
    }
  }
  read_status_hint(end, now_unix_s, decision);
  return decision;
}

}  // namespace rlcheck::grpc_target
