#include "app/hook_config.hpp"

#include <algorithm>
#include <fstream>
#include <iostream>

#include <fmt/format.h>

#include "app/exit_code.hpp"
#include "app/hook.hpp"

namespace rlcheck::app {

nlohmann::json hook_settings(const std::vector<std::string>& rlcheck_args,
                             const std::optional<nlohmann::json>& existing) {
  std::vector<std::string> command_line{"rlcheck"};
  command_line.insert(command_line.end(), rlcheck_args.begin(), rlcheck_args.end());
  std::string command = reproduce_command(command_line);  // quoted, without --hook
  command += " --hook";
  const nlohmann::json hook = {{"type", "command"}, {"command", command}};

  nlohmann::json settings = existing.value_or(nlohmann::json::object());
  nlohmann::json& stop = settings["hooks"]["Stop"];
  if (!stop.is_array())
    stop = nlohmann::json::array();
  for (const auto& group : stop) {
    if (group.contains("hooks") && group["hooks"].is_array() &&
        std::find(group["hooks"].begin(), group["hooks"].end(), hook) != group["hooks"].end()) {
      return settings;  // already there
    }
  }
  stop.push_back({{"hooks", nlohmann::json::array({hook})}});
  return settings;
}

int run_hook_config(const std::vector<std::string>& rlcheck_args,
                    const std::optional<std::string>& merge_path) {
  if (rlcheck_args.empty() ||
      (rlcheck_args.front() != "redis" && rlcheck_args.front() != "http" &&
       rlcheck_args.front() != "run" && rlcheck_args.front() != "compare")) {
    throw usage_error(
        "hook-config: give the check after --, e.g. rlcheck hook-config -- redis --strategy lua");
  }
  std::optional<nlohmann::json> existing;
  if (merge_path) {
    std::ifstream in(*merge_path);
    if (!in)
      throw usage_error(fmt::format("--merge: cannot read {}", *merge_path));
    existing = nlohmann::json::parse(in, nullptr, false);
    if (existing->is_discarded() || !existing->is_object()) {
      throw usage_error(fmt::format("--merge: {} is not a JSON object", *merge_path));
    }
  }
  std::cout << hook_settings(rlcheck_args, existing).dump(2) << "\n";
  return static_cast<int>(ExitCode::ok);
}

}  // namespace rlcheck::app
