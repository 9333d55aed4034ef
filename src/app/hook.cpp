#include "app/hook.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <functional>

#include <poll.h>
#include <unistd.h>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "base/exit_code.hpp"
#include "config/count_text.hpp"
#include "config/duration.hpp"
#include "report/human_report.hpp"

namespace rlcheck::app {

HookInput parse_hook_input(const std::string& text) {
  HookInput input;
  const auto json = nlohmann::json::parse(text, nullptr, false);
  if (!json.is_object())
    return input;
  if (auto active = json.find("stop_hook_active"); active != json.end() && active->is_boolean())
    input.stop_hook_active = active->get<bool>();
  if (auto session = json.find("session_id"); session != json.end() && session->is_string())
    input.session_id = session->get<std::string>();
  return input;
}

BlockCounter::BlockCounter(const HookInput& input, const std::string& command,
                           std::filesystem::path dir) {
  if (!input.session_id.empty()) {
    // One file per session and command line, named by a hash: a session id is not a file name.
    const size_t key = std::hash<std::string>{}(input.session_id + '\n' + command);
    file_ = std::move(dir) / fmt::format("rlcheck-hook-{:016x}.blocks", key);
  }
  if (!input.stop_hook_active) {
    cleared();
    return;
  }
  before_ = 1;
  if (std::ifstream in(file_); !file_.empty() && in) {
    int64_t kept = 0;
    if (in >> kept && kept > 0)
      before_ = kept;
  }
}

std::filesystem::path BlockCounter::default_dir() {
  std::error_code error;
  if (const char* runtime = std::getenv("XDG_RUNTIME_DIR");
      runtime != nullptr && *runtime != '\0' && std::filesystem::is_directory(runtime, error)) {
    return runtime;
  }
  const std::filesystem::path temp = std::filesystem::temp_directory_path(error);
  return error ? std::filesystem::path("/tmp") : temp;
}

void BlockCounter::blocked() {
  if (file_.empty())
    return;
  // Written whole, then renamed: a count half written is never read.
  const std::filesystem::path partial = file_.string() + fmt::format(".{}", ::getpid());
  std::ofstream(partial) << before_ + 1 << "\n";
  std::error_code error;
  std::filesystem::rename(partial, file_, error);
  if (error)
    std::filesystem::remove(partial, error);
}

void BlockCounter::cleared() {
  std::error_code error;
  if (!file_.empty())
    std::filesystem::remove(file_, error);
}

int cap_blocks(std::optional<int64_t> max_blocks, BlockCounter& counter, int exit_code,
               std::string& err) {
  if (!max_blocks)
    return exit_code;
  if (exit_code != static_cast<int>(base::ExitCode::hook_blocked)) {
    counter.cleared();
    return exit_code;
  }
  if (counter.before() < *max_blocks) {
    counter.blocked();
    return exit_code;
  }
  counter.cleared();
  err = fmt::format(
            "rlcheck: not blocking this stop: {} consecutive {} already (--hook-max-blocks {}); "
            "the check still fails:\n",
            counter.before(), counter.before() == 1 ? "block" : "blocks", *max_blocks) +
        err;
  return static_cast<int>(base::ExitCode::ok);
}

std::string shell_quote(const std::string& arg) {
  if (!arg.empty() && arg.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                            "0123456789-_./:=,@%+") == std::string::npos) {
    return arg;
  }
  std::string quoted = "'";
  for (char c : arg) {
    if (c == '\'') {
      quoted += "'\\''";
    } else {
      quoted.push_back(c);
    }
  }
  return quoted + "'";
}

std::string read_hook_input(int wait_ms) {
  if (isatty(STDIN_FILENO))
    return {};
  std::string input;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(wait_ms);
  char buffer[4096];
  while (true) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                          deadline - std::chrono::steady_clock::now())
                          .count();
    if (left <= 0)
      break;
    pollfd fd{STDIN_FILENO, POLLIN, 0};
    const int ready = poll(&fd, 1, static_cast<int>(left));
    if (ready <= 0 || (fd.revents & (POLLIN | POLLHUP)) == 0)
      break;
    const ssize_t got = read(STDIN_FILENO, buffer, sizeof buffer);
    if (got <= 0)
      break;  // EOF, or stdin closed or absent
    input.append(buffer, static_cast<size_t>(got));
    if (input.size() > (1 << 20))
      break;  // the hook JSON is small; stop reading garbage
  }
  return input;
}

std::string hook_program(const char* path_env, const std::filesystem::path& self,
                         const std::string& name) {
  if (self.empty())
    return "";
  std::error_code error;
  const std::string path = path_env ? path_env : "";
  for (size_t start = 0; start <= path.size();) {
    size_t end = path.find(':', start);
    if (end == std::string::npos)
      end = path.size();
    // An empty entry is the current directory, as the shell reads it.
    const std::filesystem::path directory = end == start ? "." : path.substr(start, end - start);
    const std::filesystem::path candidate = directory / name;
    if (::access(candidate.c_str(), X_OK) == 0) {
      // The first match is what the shell runs; it must be this program, not another copy.
      return std::filesystem::equivalent(candidate, self, error) ? name : self.string();
    }
    start = end + 1;
  }
  return self.string();
}

std::string pasteable_program(const std::string& argv0, const char* path_env,
                              const std::filesystem::path& self) {
  if (argv0.find('/') != std::string::npos) {
    std::error_code error;
    const std::filesystem::path absolute = std::filesystem::absolute(argv0, error);
    return error ? argv0 : absolute.lexically_normal().string();
  }
  const std::string name = argv0.empty() ? "rlcheck" : argv0;
  const std::string found = hook_program(path_env, self, name);
  return found.empty() ? name : found;
}

std::string this_program(const std::string& argv0) {
  std::error_code error;
  return pasteable_program(argv0, std::getenv("PATH"),
                           std::filesystem::read_symlink("/proc/self/exe", error));
}

std::string reproduce_command(const std::vector<std::string>& command_line) {
  std::string command =
      command_line.empty() || command_line[0].empty() ? "rlcheck" : shell_quote(command_line[0]);
  for (size_t i = 1; i < command_line.size(); ++i) {
    if (command_line[i] == "--hook")
      continue;
    command.append(" ").append(shell_quote(command_line[i]));
  }
  return command;
}

std::string hook_reason(const std::vector<report::Report>& reports,
                        const std::vector<std::string>& command_line) {
  std::string reason;
  std::vector<std::string> failed;  // the checks that failed, each once: their pages
  for (const report::Report& report : reports) {
    if (report.exit_code == 0)
      continue;
    // An endpoint is its URL; a limiter named otherwise (a script, a strategy) is on its URL.
    const std::string limiter = report.target.name == report.target.url
                                    ? report.target.url
                                    : report.target.name + " on " + report.target.url;
    const char* outcome = report.interrupted ? "was not fully tested: interrupted"
                          : report.verdict == checks::Verdict::error ? "could not be judged"
                                                                     : "broke its contract";
    reason += fmt::format("rlcheck: the rate limiter {} {} ({}, {} x {}, concurrency {}):\n",
                          limiter, outcome, report::contract_text(report),
                          config::counted(report.params.requests, "request"),
                          config::counted(report.params.runs, "run"), report.params.concurrency);
    for (const auto& check : report.checks) {
      if (check.status == checks::Status::fail) {
        reason += fmt::format("  {}: {}\n", check.id, check.detail);
        if (std::find(failed.begin(), failed.end(), check.id) == failed.end())
          failed.push_back(check.id);
      }
    }
    if (report.contract_fit) {
      reason +=
          fmt::format("  what it did fits {} (judge it by that promise if it is the one meant)\n",
                      report.contract_fit->flags);
    }
    if (report.interrupted)
      reason += "  interrupted before the runs ended\n";
  }
  if (!failed.empty()) {
    reason += fmt::format("  why it matters and what to fix: rlcheck explain ID ({})\n",
                          fmt::join(failed, ", "));
  }
  reason += fmt::format("  reproduce: {}\n", reproduce_command(command_line));
  return reason;
}

}  // namespace rlcheck::app
