#include "app/hook.hpp"

#include <chrono>

#include <poll.h>
#include <unistd.h>

#include <fmt/format.h>

#include "config/count_text.hpp"
#include "config/duration.hpp"

namespace rlcheck::app {

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

std::string reproduce_command(const std::vector<std::string>& command_line) {
  std::string command = "rlcheck";
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
  for (const report::Report& report : reports) {
    if (report.exit_code == 0)
      continue;
    const std::string limiter =
        report.target.script.empty() ? report.target.strategy : report.target.script;
    reason += fmt::format(
        "rlcheck: the rate limiter {} on {} {} (limit {} per "
        "{}, {} x {}, concurrency {}):\n",
        limiter, report.target.url,
        report.interrupted ? "was not fully tested: interrupted" : "broke its contract",
        report.params.limit,
        config::format_duration(std::chrono::milliseconds(report.params.window_ms)),
        config::counted(report.params.requests, "request"),
        config::counted(report.params.runs, "run"), report.params.concurrency);
    for (const auto& check : report.checks) {
      if (check.status == checks::Status::fail) {
        reason += fmt::format("  {}: {}\n", check.id, check.detail);
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
  reason += fmt::format("  reproduce: {}\n", reproduce_command(command_line));
  return reason;
}

}  // namespace rlcheck::app
