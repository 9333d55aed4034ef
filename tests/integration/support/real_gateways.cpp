#include "support/real_gateways.hpp"

#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "support/json_outcome.hpp"
#include "support/run_binary.hpp"
#include "support/test_redis.hpp"

namespace rlcheck::testing {
namespace {

// nginx: 10 requests per second with a burst of 4, so 5 at once (B + 1) and then one each
// 100 ms; /two-stage/ (delay=3) lets 3 over the rate through at once and holds 5 more;
// /two-zones/ adds a second zone of 2/s with a burst of 9; /queued/ (no nodelay) holds up
// to 8 requests over the rate, one leaving each 100 ms. `return` runs before limit_req (rewrite
// phase) and would bypass it: every location serves a static file instead.
std::string nginx_conf(const std::string& prefix, int port) {
  std::ostringstream conf;
  conf << "worker_processes 1;\n"
       << "pid " << prefix << "/nginx.pid;\n"
       << "error_log " << prefix << "/error.log;\n"
       << "events { worker_connections 1024; }\n"
       << "http {\n"
       << "  access_log off;\n";
  for (const char* temp : {"client_body", "proxy", "fastcgi", "uwsgi", "scgi"})
    conf << "  " << temp << "_temp_path " << prefix << "/" << temp << ";\n";
  conf << "  limit_req_zone $http_x_client zone=by_header:1m rate=10r/s;\n"
       << "  limit_req_zone $http_x_client zone=by_header_slow:1m rate=2r/s;\n"
       << "  limit_req_zone $binary_remote_addr zone=by_address:1m rate=10r/s;\n"
       << "  server {\n"
       << "    listen 127.0.0.1:" << port << ";\n"
       << "    location /nodelay/ {\n"
       << "      limit_req zone=by_header burst=4 nodelay; limit_req_status 429;\n"
       << "      alias " << prefix << "/html/;\n"
       << "    }\n"
       << "    location /deny-503/ {\n"  // limit_req_status left at its default, 503
       << "      limit_req zone=by_header burst=4 nodelay;\n"
       << "      alias " << prefix << "/html/;\n"
       << "    }\n"
       << "    location /by-address/ {\n"
       << "      limit_req zone=by_address burst=4 nodelay; limit_req_status 429;\n"
       << "      alias " << prefix << "/html/;\n"
       << "    }\n"
       << "    location /two-zones/ {\n"  // two limits at once: 10/s burst 4, 2/s burst 9
       << "      limit_req zone=by_header burst=4 nodelay;\n"
       << "      limit_req zone=by_header_slow burst=9 nodelay; limit_req_status 429;\n"
       << "      alias " << prefix << "/html/;\n"
       << "    }\n"
       << "    location /queued/ {\n"  // without nodelay: requests over the rate wait
       << "      limit_req zone=by_header burst=8; limit_req_status 429;\n"
       << "      alias " << prefix << "/html/;\n"
       << "    }\n"
       << "    location /two-stage/ {\n"  // the first 3 over the rate at once, 5 more wait
       << "      limit_req zone=by_header burst=8 delay=3; limit_req_status 429;\n"
       << "      alias " << prefix << "/html/;\n"
       << "    }\n"
       << "  }\n"
       << "}\n";
  return conf.str();
}

// HAProxy: two stick tables behind one frontend. /every-request/ counts every request in
// http_req_rate(1s), denied ones too; /admissions/ counts in gpc0 only the requests its deny
// rule let through (gpc0_rate(1s)). Both allow 5 per second.
std::string haproxy_cfg(int port) {
  std::ostringstream cfg;
  cfg << "global\n"
      << "  maxconn 1024\n"
      << "defaults\n"
      << "  mode http\n"
      << "  timeout connect 2s\n"
      << "  timeout client 10s\n"
      << "  timeout server 10s\n"
      << "backend every_request_rate\n"
      << "  stick-table type string len 64 size 10k expire 30s store http_req_rate(1s)\n"
      << "backend admission_rate\n"
      << "  stick-table type string len 64 size 10k expire 30s store gpc0,gpc0_rate(1s)\n"
      << "frontend limited\n"
      << "  bind 127.0.0.1:" << port << "\n"
      << "  acl every_request path_beg /every-request/\n"
      << "  acl admissions path_beg /admissions/\n"
      << "  http-request track-sc0 req.hdr(X-Client) table every_request_rate if every_request\n"
      << "  http-request deny deny_status 429 if every_request { sc_http_req_rate(0) gt 5 }\n"
      << "  http-request track-sc1 req.hdr(X-Client) table admission_rate if admissions\n"
      << "  http-request deny deny_status 429 if admissions { sc_gpc0_rate(1) ge 5 }\n"
      << "  http-request sc-inc-gpc0(1) if admissions\n"
      << "  http-request return status 200 content-type text/plain string ok\n";
  return cfg.str();
}

// A pyenv python3 may come first on PATH: the Debian packages are the system python's.
constexpr const char* k_python = "/usr/bin/python3";

bool flask_limiter_installed() {
  if (!std::filesystem::exists(k_python))
    return false;
  return run_process({k_python, "-c", "import flask, flask_limiter, limits, redis"}).exit_code == 0;
}

constexpr const char* k_ruby = "/usr/bin/ruby";

bool rack_attack_installed() {
  if (!std::filesystem::exists(k_ruby))
    return false;
  return run_process({k_ruby, "-e", "require 'rack/attack'; require 'rack/handler/webrick'"})
             .exit_code == 0;
}

std::string express_slow_down_dir() {
  return fixture("express_slow_down");
}

bool express_slow_down_installed() {
  return find_program("node", {"/usr/bin/node"}).has_value() &&
         std::filesystem::exists(express_slow_down_dir() +
                                 "/node_modules/express-slow-down/package.json");
}

constexpr const char* k_php = "/usr/bin/php";
constexpr const char* k_symfony_rate_limiter =
    "/usr/share/php/Symfony/Component/RateLimiter/autoload.php";
constexpr const char* k_symfony_cache = "/usr/share/php/Symfony/Component/Cache/autoload.php";

bool symfony_installed() {
  return std::filesystem::exists(k_php) && std::filesystem::exists(k_symfony_rate_limiter) &&
         std::filesystem::exists(k_symfony_cache);
}

}  // namespace

void start_in_dir(Gateway& gateway, std::vector<std::string> command, int port) {
  const std::string dir = gateway.dir->path();
  gateway.server = std::make_unique<RealServer>(std::move(command), dir, dir + "/output.log", port);
}

std::vector<std::string> nginx_command(const std::string& binary, const std::string& prefix,
                                       const std::string& conf) {
  return {binary, "-p", prefix, "-c", conf, "-e", prefix + "/error.log", "-g", "daemon off;"};
}

std::vector<std::string> haproxy_command(const std::string& binary, const std::string& cfg) {
  return {binary, "-f", cfg, "-db"};
}

const Gateway& nginx() {
  static const Gateway gateway = [] {
    Gateway started;
    const auto binary = find_program("nginx", {"/usr/sbin/nginx"});
    if (!binary)
      return started;
    started.dir = std::make_unique<ScratchDir>("nginx");
    const std::string prefix = started.dir->path();
    // Started as root, nginx's workers run as nobody: they must read the file they serve,
    // whatever the umask.
    const std::string page = started.dir->write("html/index.html", "ok\n");
    const auto readable = std::filesystem::perms::others_read | std::filesystem::perms::others_exec;
    for (const std::string& path : {prefix, prefix + "/html"})
      std::filesystem::permissions(path, readable, std::filesystem::perm_options::add);
    std::filesystem::permissions(page, std::filesystem::perms::others_read,
                                 std::filesystem::perm_options::add);
    const int port = free_loopback_port();
    const std::string conf = started.dir->write("nginx.conf", nginx_conf(prefix, port));
    start_in_dir(started, nginx_command(*binary, prefix, conf), port);
    return started;
  }();
  return gateway;
}

const Gateway& haproxy() {
  static const Gateway gateway = [] {
    Gateway started;
    const auto binary = find_program("haproxy", {"/usr/sbin/haproxy"});
    if (!binary)
      return started;
    started.dir = std::make_unique<ScratchDir>("haproxy");
    const int port = free_loopback_port();
    const std::string cfg = started.dir->write("haproxy.cfg", haproxy_cfg(port));
    start_in_dir(started, haproxy_command(*binary, cfg), port);
    return started;
  }();
  return gateway;
}

std::string flask_limiter_redis_url() {
  return TestRedis::shared().tcp_url() + "/11";
}

const Gateway& flask_limiter_app() {
  static const Gateway app = [] {
    Gateway started;
    if (!flask_limiter_installed())
      return started;
    started.dir = std::make_unique<ScratchDir>("flask-limiter");
    const int port = free_loopback_port();
    start_in_dir(started,
                 std::vector<std::string>{k_python, fixture("flask_limiter_app.py"),
                                          std::to_string(port), flask_limiter_redis_url()},
                 port);
    return started;
  }();
  return app;
}

const Gateway& org_limits_app() {
  static const Gateway app = [] {
    Gateway started;
    started.dir = std::make_unique<ScratchDir>("org-limits");
    const int port = free_loopback_port();
    start_in_dir(
        started,
        std::vector<std::string>{k_python, fixture("org_limits_app.py"), std::to_string(port)},
        port);
    return started;
  }();
  return app;
}

const Gateway& llm_gateway_app() {
  static const Gateway app = [] {
    Gateway started;
    if (!flask_limiter_installed())  // the same system python with redis-py
      return started;
    started.dir = std::make_unique<ScratchDir>("llm-gateway");
    const int port = free_loopback_port();
    start_in_dir(
        started,
        std::vector<std::string>{k_python, fixture("llm_gateway_app.py"), std::to_string(port),
                                 TestRedis::shared().tcp_url() + "/12"},
        port);
    return started;
  }();
  return app;
}

const Gateway& rack_attack_app() {
  static const Gateway app = [] {
    Gateway started;
    if (!rack_attack_installed())
      return started;
    started.dir = std::make_unique<ScratchDir>("rack-attack");
    const int port = free_loopback_port();
    start_in_dir(
        started,
        std::vector<std::string>{k_ruby, fixture("rack_attack/server.rb"), std::to_string(port)},
        port);
    return started;
  }();
  return app;
}

const Gateway& express_slow_down_app() {
  static const Gateway app = [] {
    Gateway started;
    if (!express_slow_down_installed())
      return started;
    started.dir = std::make_unique<ScratchDir>("express-slow-down");
    const int port = free_loopback_port();
    start_in_dir(
        started,
        std::vector<std::string>{*find_program("node", {"/usr/bin/node"}),
                                 express_slow_down_dir() + "/server.js", std::to_string(port)},
        port);
    return started;
  }();
  return app;
}

const Gateway& symfony_limiter() {
  static const Gateway app = [] {
    Gateway started;
    if (!symfony_installed())
      return started;
    started.dir = std::make_unique<ScratchDir>("symfony-limiter");
    const int port = free_loopback_port();
    // PHP's server forks its workers after reading the environment: every one shares the
    // state directory.
    start_in_dir(started,
                 std::vector<std::string>{"/usr/bin/env", "PHP_CLI_SERVER_WORKERS=4",
                                          "RLCHECK_SYMFONY_STATE=" + started.dir->path(), k_php,
                                          "-S", "127.0.0.1:" + std::to_string(port),
                                          fixture("symfony_limiter/index.php")},
                 port);
    return started;
  }();
  return app;
}

bool skipped(const Gateway& gateway, const char* missing) {
  if (gateway.server)
    return false;
  // The test command installs every real part: in CI a missing one is a failure, not a skip.
  const char* ci = std::getenv("CI");
  if (ci != nullptr && *ci != '\0')
    FAIL_CHECK(std::string(missing) << " (CI is set: the test command should have installed it)");
  else
    MESSAGE(std::string(missing));
  return true;
}

}  // namespace rlcheck::testing
