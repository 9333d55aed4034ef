#include "config/fault_spec.hpp"

#include <array>
#include <utility>

#include <fmt/format.h>

namespace rlcheck::config {
namespace {

constexpr std::array<std::pair<FaultKind, const char*>, 6> k_kinds{{
    {FaultKind::pause, "pause"},
    {FaultKind::kill_clients, "kill-clients"},
    {FaultKind::flush_scripts, "flush-scripts"},
    {FaultKind::restart, "restart"},
    {FaultKind::failover, "failover"},
    {FaultKind::shell, "shell"},
}};

constexpr const char* k_forms =
    "pause@T+D, kill-clients@T, flush-scripts@T, restart@T, failover@T or shell@T:CMD";

std::expected<Nanos, std::string> offset_of(std::string_view spec, std::string_view text) {
  auto at = parse_duration(text);
  if (!at)
    return std::unexpected(fmt::format("'{}': the time {}", spec, at.error()));
  if (at->count() < 0)
    return std::unexpected(fmt::format("'{}': the time must not be negative", spec));
  return *at;
}

}  // namespace

const char* fault_kind_name(FaultKind kind) {
  for (const auto& [candidate, name] : k_kinds) {
    if (candidate == kind)
      return name;
  }
  return "unknown";
}

std::expected<FaultSpec, std::string> parse_fault(std::string_view spec) {
  const size_t at_sign = spec.find('@');
  if (at_sign == std::string_view::npos)
    return std::unexpected(fmt::format("'{}' is not a fault; expected {}", spec, k_forms));
  const std::string_view name = spec.substr(0, at_sign);
  std::string_view rest = spec.substr(at_sign + 1);

  FaultSpec fault;
  fault.text = std::string(spec);
  bool known = false;
  for (const auto& [kind, kind_name] : k_kinds) {
    if (name == kind_name) {
      fault.kind = kind;
      known = true;
    }
  }
  if (!known) {
    return std::unexpected(
        fmt::format("unknown fault '{}' in '{}'; expected {}", name, spec, k_forms));
  }

  if (fault.kind == FaultKind::shell) {
    const size_t colon = rest.find(':');
    if (colon == std::string_view::npos || colon + 1 == rest.size())
      return std::unexpected(fmt::format("'{}' needs a command: shell@T:CMD", spec));
    fault.command = std::string(rest.substr(colon + 1));
    rest = rest.substr(0, colon);
  }

  const size_t plus = rest.find('+');
  if (fault.kind == FaultKind::pause) {
    if (plus == std::string_view::npos)
      return std::unexpected(fmt::format("'{}' needs a duration: pause@T+D", spec));
    auto duration = parse_duration(rest.substr(plus + 1));
    if (!duration)
      return std::unexpected(fmt::format("'{}': the duration {}", spec, duration.error()));
    // CLIENT PAUSE counts whole milliseconds.
    if (*duration < std::chrono::milliseconds(1))
      return std::unexpected(fmt::format("'{}': the pause must last at least 1ms", spec));
    fault.duration = *duration;
    rest = rest.substr(0, plus);
  } else if (plus != std::string_view::npos) {
    return std::unexpected(fmt::format(
        "'{}': only pause takes a duration (+D); {} lasts until Redis recovers", spec, name));
  }

  auto at = offset_of(spec, rest);
  if (!at)
    return std::unexpected(at.error());
  fault.at = *at;
  return fault;
}

}  // namespace rlcheck::config
