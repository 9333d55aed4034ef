#include "app/scenario_server.hpp"

#include <chrono>
#include <filesystem>

#include <poll.h>
#include <unistd.h>

#include <fmt/format.h>

namespace rlcheck::app {
namespace {

constexpr auto k_start_limit = std::chrono::seconds(10);
constexpr std::string_view k_listening_on = "listening on ";
constexpr std::string_view k_listening = "listening on http://";

}  // namespace

std::expected<std::unique_ptr<ScenarioServer>, std::string> ScenarioServer::start(
    const std::vector<std::string>& serve_args) {
  std::error_code error;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
  if (error)
    return std::unexpected("cannot find the rlcheck binary to start serve");
  std::vector<std::string> argv{self.string(), "serve", "--listen", "127.0.0.1:0"};
  argv.insert(argv.end(), serve_args.begin(), serve_args.end());
  auto child = process::ChildProcess::spawn(argv, process::ChildProcess::Stderr::pipe);
  if (!child)
    return std::unexpected(child.error());

  // Ready when serve says where it listens; its stderr is the only signal, and a deadline.
  std::string printed;
  const auto deadline = std::chrono::steady_clock::now() + k_start_limit;
  while (true) {
    const size_t at = printed.find(k_listening);
    const size_t slash =
        at == std::string::npos ? std::string::npos : printed.find('/', at + k_listening.size());
    if (slash != std::string::npos) {
      return std::unique_ptr<ScenarioServer>(new ScenarioServer(
          std::move(*child),
          printed.substr(at + k_listening_on.size(), slash - at - k_listening_on.size())));
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                          deadline - std::chrono::steady_clock::now())
                          .count();
    pollfd fd{child->stderr_fd(), POLLIN, 0};
    if (left <= 0 || poll(&fd, 1, static_cast<int>(left)) <= 0) {
      return std::unexpected(fmt::format("rlcheck serve did not start within {}s: {}",
                                         k_start_limit.count(), printed));
    }
    char buffer[1024];
    const ssize_t got = read(child->stderr_fd(), buffer, sizeof buffer);
    if (got <= 0)
      return std::unexpected(fmt::format("rlcheck serve exited: {}", printed));
    printed.append(buffer, static_cast<size_t>(got));
  }
}

std::string with_serve_url(std::string text, const std::string& url) {
  constexpr std::string_view k_placeholder = "{serve}";
  for (size_t at = text.find(k_placeholder); at != std::string::npos;
       at = text.find(k_placeholder, at + url.size())) {
    text.replace(at, k_placeholder.size(), url);
  }
  return text;
}

}  // namespace rlcheck::app
