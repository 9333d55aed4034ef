#include "suite/scenario_server.hpp"

#include <chrono>
#include <cstdlib>
#include <filesystem>

#include <poll.h>
#include <unistd.h>

#include <fmt/format.h>

namespace rlcheck::suite {
namespace {

constexpr auto k_start_limit = std::chrono::seconds(10);
constexpr std::string_view k_listening_on = "listening on ";
constexpr std::string_view k_listening = "listening on http://";

// The Redis serve decides with: the --redis it was given, else $REDIS_URL (which it read
// too), else the one its "listening on" line names: "..., redis unix:///tmp/x.sock, fail-...".
std::string redis_of(const std::vector<std::string>& serve_args, const std::string& line) {
  for (size_t i = 0; i + 1 < serve_args.size(); ++i) {
    if (serve_args[i] == "--redis")
      return serve_args[i + 1];
  }
  if (const char* env = std::getenv("REDIS_URL"); env != nullptr && *env != '\0')
    return env;
  constexpr std::string_view k_redis = ", redis ";
  const size_t at = line.find(k_redis);
  if (at == std::string::npos)
    return "";
  const size_t from = at + k_redis.size();
  const size_t end = line.find_first_of(",)", from);
  return line.substr(from, end == std::string::npos ? std::string::npos : end - from);
}

void replace_all(std::string& text, std::string_view placeholder, const std::string& value) {
  for (size_t at = text.find(placeholder); at != std::string::npos;
       at = text.find(placeholder, at + value.size())) {
    text.replace(at, placeholder.size(), value);
  }
}

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
    const size_t line_end = printed.find('\n', at == std::string::npos ? 0 : at);
    if (slash != std::string::npos && line_end != std::string::npos) {
      return std::unique_ptr<ScenarioServer>(new ScenarioServer(
          std::move(*child),
          printed.substr(at + k_listening_on.size(), slash - at - k_listening_on.size()),
          redis_of(serve_args, printed.substr(at, line_end - at))));
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

std::string with_serve_url(std::string text, const std::string& url, const std::string& redis_url) {
  replace_all(text, "{serve-redis}", redis_url);
  replace_all(text, "{serve}", url);
  return text;
}

}  // namespace rlcheck::suite
