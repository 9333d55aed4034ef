#include "support/concurrency_gateways.hpp"

#include <sstream>
#include <string>
#include <vector>

#include "support/json_outcome.hpp"

namespace rlcheck::testing {
namespace {

constexpr const char* k_system_python = "/usr/bin/python3";

// limit_conn counts a request from when its header was read until nginx finalises it, after
// the upstream's reply was sent on.
std::string limit_conn_conf(const std::string& prefix, int port, int backend_port) {
  std::ostringstream conf;
  conf << "worker_processes 1;\n"
       << "pid " << prefix << "/nginx.pid;\n"
       << "error_log " << prefix << "/error.log;\n"
       << "events { worker_connections 1024; }\n"
       << "http {\n"
       << "  access_log off;\n";
  for (const char* temp : {"client_body", "proxy", "fastcgi", "uwsgi", "scgi"})
    conf << "  " << temp << "_temp_path " << prefix << "/" << temp << ";\n";
  conf << "  limit_conn_zone $http_x_client zone=per_client:1m;\n"
       << "  server {\n"
       << "    listen 127.0.0.1:" << port << ";\n"
       << "    location /capped/ {\n"
       << "      limit_conn per_client 2; limit_conn_status 429;\n"
       << "      proxy_pass http://127.0.0.1:" << backend_port << "/slow/;\n"
       << "    }\n"
       << "  }\n"
       << "}\n";
  return conf.str();
}

// One thread, so that a denied request's tracking ends before the next request is judged.
std::string conn_cur_cfg(int port, int backend_port) {
  std::ostringstream cfg;
  cfg << "global\n"
      << "  maxconn 1024\n"
      << "  nbthread 1\n"
      << "defaults\n"
      << "  mode http\n"
      << "  timeout connect 2s\n"
      << "  timeout client 10s\n"
      << "  timeout server 10s\n"
      << "backend slow\n"
      << "  http-request set-path /slow/\n"
      << "  server slow 127.0.0.1:" << backend_port << "\n"
      << "frontend capped\n"
      << "  bind 127.0.0.1:" << port << "\n"
      << "  stick-table type string len 64 size 10k expire 30s store conn_cur\n"
      << "  http-request track-sc0 req.hdr(X-Client)\n"
      << "  http-request deny deny_status 429 if { sc_conn_cur(0) gt 2 }\n"
      << "  default_backend slow\n";
  return cfg.str();
}

}  // namespace

const Gateway& slow_backend() {
  static const Gateway backend = [] {
    Gateway started;
    started.dir = std::make_unique<ScratchDir>("slow-backend");
    const int port = free_loopback_port();
    start_in_dir(started,
                 std::vector<std::string>{k_system_python, fixture("slow_backend.py"),
                                          std::to_string(port), std::to_string(k_backend_hold_ms)},
                 port);
    return started;
  }();
  return backend;
}

const Gateway& nginx_limit_conn() {
  static const Gateway gateway = [] {
    Gateway started;
    const auto binary = find_program("nginx", {"/usr/sbin/nginx"});
    if (!binary)
      return started;
    const int backend_port = slow_backend().server->port();
    started.dir = std::make_unique<ScratchDir>("nginx-limit-conn");
    const std::string prefix = started.dir->path();
    const int port = free_loopback_port();
    const std::string conf =
        started.dir->write("nginx.conf", limit_conn_conf(prefix, port, backend_port));
    start_in_dir(started, nginx_command(*binary, prefix, conf), port);
    return started;
  }();
  return gateway;
}

const Gateway& haproxy_conn_cur() {
  static const Gateway gateway = [] {
    Gateway started;
    const auto binary = find_program("haproxy", {"/usr/sbin/haproxy"});
    if (!binary)
      return started;
    const int backend_port = slow_backend().server->port();
    started.dir = std::make_unique<ScratchDir>("haproxy-conn-cur");
    const int port = free_loopback_port();
    const std::string cfg = started.dir->write("haproxy.cfg", conn_cur_cfg(port, backend_port));
    start_in_dir(started, haproxy_command(*binary, cfg), port);
    return started;
  }();
  return gateway;
}

}  // namespace rlcheck::testing
