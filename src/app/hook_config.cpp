#include "app/hook_config.hpp"

#include "cli/kind_command.hpp"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string_view>

#include <unistd.h>

#include <fmt/format.h>

#include "app/hook.hpp"
#include "app/hook_budget.hpp"
#include "app/suite_command.hpp"
#include "base/exit_code.hpp"
#include "cli/command_line.hpp"

namespace rlcheck::app {
namespace {

// The hook runs `rlcheck ARGS --hook` at every stop: a command line that cannot parse there
// would block every stop with exit 64, so it is refused here with the message it would give.
// Returns the hook's timeout in seconds (hook_budget); a check of unknown length is refused.
int64_t check_wrapped_command(const std::vector<std::string>& rlcheck_args) {
  std::vector<std::string> args{"rlcheck"};
  args.insert(args.end(), rlcheck_args.begin(), rlcheck_args.end());
  if (std::find(args.begin(), args.end(), "--hook") == args.end())
    args.push_back("--hook");
  std::vector<const char*> argv;
  for (const std::string& arg : args)
    argv.push_back(arg.c_str());
  const cli::ParsedCommandLine parsed =
      cli::parse_command_line(static_cast<int>(argv.size()), argv.data());
  if (parsed.immediate_output) {
    throw base::usage_error(
        "hook-config: the command after -- prints help or a version, not a check");
  }
  // The scenario files, as `rlcheck run` reads them first.
  const auto timeout = parsed.config.command == config::Command::run
                           ? hook_timeout_s(check_suite(parsed.config))
                           : hook_timeout_s(parsed.config);
  if (!timeout)
    throw base::usage_error(fmt::format("hook-config: {}", timeout.error()));
  return *timeout;
}

}  // namespace

nlohmann::ordered_json hook_settings(const std::vector<std::string>& rlcheck_args,
                                     const std::optional<nlohmann::ordered_json>& existing,
                                     const std::string& program, std::optional<int64_t> timeout_s) {
  std::vector<std::string> command_line{program};
  command_line.insert(command_line.end(), rlcheck_args.begin(), rlcheck_args.end());
  const std::string command = reproduce_command(command_line) + " --hook";  // quoted
  nlohmann::ordered_json hook = {{"type", "command"}, {"command", command}};
  if (timeout_s)
    hook["timeout"] = *timeout_s;

  nlohmann::ordered_json settings = existing.value_or(nlohmann::ordered_json::object());
  nlohmann::ordered_json& stop = settings["hooks"]["Stop"];
  if (!stop.is_array())
    stop = nlohmann::ordered_json::array();
  for (auto& group : stop) {
    if (!group.contains("hooks") || !group["hooks"].is_array())
      continue;
    for (auto& entry : group["hooks"]) {
      if (entry.is_object() && entry.value("command", "") == command) {
        entry = hook;  // already there: with this timeout now
        return settings;
      }
    }
  }
  stop.push_back({{"hooks", nlohmann::ordered_json::array({hook})}});
  return settings;
}

JsonIndent indent_of(const std::string& text) {
  // The first line that starts with white space after a line break tells the unit.
  for (size_t at = text.find('\n'); at != std::string::npos; at = text.find('\n', at + 1)) {
    const size_t start = at + 1;
    const size_t end = text.find_first_not_of(" \t", start);
    if (end == std::string::npos || end == start || text[end] == '\n' || text[end] == '\r')
      continue;
    const char character = text[start];
    const size_t width = text.find_first_not_of(character, start) - start;
    return {static_cast<int>(std::min<size_t>(width, 8)), character};
  }
  // No indented line: a document on one line stays on one line.
  const size_t last = text.find_last_not_of(" \t\r\n");
  const bool one_line = last == std::string::npos || text.find('\n') > last;
  return {one_line ? -1 : 2, ' '};
}

int run_hook_config(const std::vector<std::string>& rlcheck_args,
                    const std::optional<std::string>& merge_path) {
  if (rlcheck_args.empty() ||
      (cli::kind_command_named(rlcheck_args.front()) == nullptr && rlcheck_args.front() != "run" &&
       rlcheck_args.front() != "compare")) {
    throw base::usage_error(
        "hook-config: give the check after --, e.g. rlcheck hook-config -- redis --strategy lua");
  }
  const int64_t timeout_s = check_wrapped_command(rlcheck_args);
  std::optional<nlohmann::ordered_json> existing;
  JsonIndent indent;
  if (merge_path) {
    std::ifstream in(*merge_path);
    if (!in)
      throw base::usage_error(fmt::format("--merge: cannot read {}", *merge_path));
    std::stringstream text;
    text << in.rdbuf();
    existing = nlohmann::ordered_json::parse(text.str(), nullptr, false);
    if (existing->is_discarded() || !existing->is_object()) {
      throw base::usage_error(fmt::format("--merge: {} is not a JSON object", *merge_path));
    }
    indent = indent_of(text.str());
  }
  std::error_code error;
  const std::string program =
      hook_program(std::getenv("PATH"), std::filesystem::read_symlink("/proc/self/exe", error));
  if (program.empty()) {
    throw base::usage_error(
        "hook-config: rlcheck is not on PATH and its own path cannot be read: put rlcheck on "
        "PATH (a bare `rlcheck` the hook's shell cannot find exits 127, which does not block)");
  }
  if (program != "rlcheck") {
    std::cerr << fmt::format(
        "hook-config: `rlcheck` on PATH is not this program (or not there): the command starts "
        "with this one's path, {}\n",
        program);
  }
  std::cout << hook_settings(rlcheck_args, existing, program, timeout_s)
                   .dump(indent.width, indent.character)
            << "\n";
  return static_cast<int>(base::ExitCode::ok);
}

}  // namespace rlcheck::app
