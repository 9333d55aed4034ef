#include "coord/fingerprint.hpp"

#include <map>
#include <sstream>

#include <fmt/format.h>

namespace rlcheck::coord {
namespace {

std::map<std::string, std::string> settings_of(const std::string& fingerprint) {
  std::map<std::string, std::string> settings;
  std::istringstream lines(fingerprint);
  std::string line;
  while (std::getline(lines, line)) {
    const auto equals = line.find('=');
    settings[line.substr(0, equals)] = equals == std::string::npos ? "" : line.substr(equals + 1);
  }
  return settings;
}

}  // namespace

std::optional<std::string> first_difference(const std::string& theirs, const std::string& ours) {
  const auto their_settings = settings_of(theirs);
  const auto our_settings = settings_of(ours);
  for (const auto& [name, value] : our_settings) {
    const auto there = their_settings.find(name);
    const std::string their_value = there == their_settings.end() ? "(unset)" : there->second;
    if (their_value != value)
      return fmt::format("{}={} there, {}={} here", name, their_value, name, value);
  }
  for (const auto& [name, value] : their_settings) {
    if (!our_settings.contains(name))
      return fmt::format("{}={} there, unset here", name, value);
  }
  return std::nullopt;
}

}  // namespace rlcheck::coord
