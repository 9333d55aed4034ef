#include <charconv>
#include <cstdlib>

#include <fmt/format.h>

#include "base/exit_code.hpp"
#include "cli/raw_options.hpp"
#include "config/duration.hpp"
#include "redis/endpoint.hpp"

namespace rlcheck::cli {
namespace {

using base::usage_error;

constexpr int64_t k_most_workers = 1024;

// The flag, else the environment variable; `source` says which, for messages.
struct Value {
  std::optional<std::string> text;
  std::string source;
};

Value from(const std::optional<std::string>& flag, const char* flag_name, const char* env) {
  if (flag)
    return {flag, flag_name};
  if (const char* value = std::getenv(env); value != nullptr && *value != '\0')
    return {std::string(value), env};
  return {std::nullopt, flag_name};
}

std::optional<std::string> as_text(const std::optional<int64_t>& number) {
  return number ? std::optional<std::string>(std::to_string(*number)) : std::nullopt;
}

int64_t whole_number(const Value& value, int64_t lowest, int64_t highest) {
  int64_t number = 0;
  const std::string& text = *value.text;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), number);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || number < lowest ||
      number > highest) {
    throw base::usage_error(fmt::format("{}: expected a whole number from {} to {}, got '{}'",
                                        value.source, lowest, highest, text));
  }
  return number;
}

bool session_name_ok(const std::string& name) {
  if (name.empty() || name.size() > 100)
    return false;
  for (char c : name) {
    const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                       c == '-' || c == '_' || c == '.';
    if (!plain)
      return false;
  }
  return true;
}

}  // namespace

void fill_workers(const RawOptions& raw, config::Config& config) {
  if (config.command != config::Command::drive)
    return;
  const Value workers = from(as_text(raw.workers), "--workers", "RLCHECK_WORKERS");
  const Value coordinator = from(raw.coordinator, "--coordinator", "RLCHECK_COORDINATOR");
  const Value session = from(raw.session, "--session", "RLCHECK_SESSION");
  if (!workers.text && !coordinator.text && !session.text) {
    if (raw.worker_index || raw.join_timeout) {
      throw base::usage_error(fmt::format("{}: only with --workers, --coordinator and --session",
                                          raw.worker_index ? "--worker-index" : "--join-timeout"));
    }
    return;
  }
  // Kubernetes' Indexed Job gives each pod JOB_COMPLETION_INDEX; it counts only in a session.
  Value index = from(as_text(raw.worker_index), "--worker-index", "RLCHECK_WORKER_INDEX");
  if (!index.text)
    index = from(std::nullopt, "--worker-index", "JOB_COMPLETION_INDEX");
  const auto required = [](const Value& value, const char* env) {
    if (!value.text) {
      throw base::usage_error(
          fmt::format("{}: required to share a test among workers (or {})", value.source, env));
    }
  };
  required(workers, "RLCHECK_WORKERS");
  required(coordinator, "RLCHECK_COORDINATOR");
  required(session, "RLCHECK_SESSION");
  if (!index.text) {
    throw base::usage_error(
        "--worker-index: required to share a test among workers (or RLCHECK_WORKER_INDEX, or "
        "Kubernetes' JOB_COMPLETION_INDEX)");
  }

  config::WorkersConfig& shared = config.workers;
  shared.count = static_cast<int>(whole_number(workers, 1, k_most_workers));
  shared.index = static_cast<int>(whole_number(index, 0, shared.count - 1));
  if (auto endpoint = redis::parse_endpoint(*coordinator.text); !endpoint)
    throw base::usage_error(fmt::format("{}: {}", coordinator.source, endpoint.error()));
  shared.coordinator = *coordinator.text;
  if (!session_name_ok(*session.text)) {
    throw base::usage_error(
        fmt::format("{}: letters, digits, '-', '_' and '.' only, at most 100 of them; got '{}'",
                    session.source, *session.text));
  }
  shared.session = *session.text;
  if (raw.join_timeout) {
    auto timeout = config::parse_duration(*raw.join_timeout);
    if (!timeout)
      throw base::usage_error(fmt::format("--join-timeout: {}", timeout.error()));
    if (timeout->count() <= 0)
      throw base::usage_error("--join-timeout: must be more than 0");
    shared.join_timeout = *timeout;
  }
  if (config.load.concurrency < shared.count) {
    throw base::usage_error(
        fmt::format("--concurrency: {} is shared among --workers {}: at least one connection each",
                    config.load.concurrency, shared.count));
  }
  if (config.redis.embedded_cluster > 0) {
    throw base::usage_error(
        "--embedded-cluster: each worker would start its own; workers share one limiter: give "
        "--redis");
  }
}

}  // namespace rlcheck::cli
