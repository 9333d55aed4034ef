#pragma once
// The gateways teams run, as Debian ships them, started once per test process on a free
// loopback port with a config written to a scratch directory, and stopped when it ends:
// nginx-light's limit_req (10 requests/s: /nodelay/ burst=4 nodelay status 429, /deny-503/
// the same with nginx's default 503, /by-address/ keyed by $binary_remote_addr, /queued/
// burst=8 without nodelay, /two-stage/ burst=8 delay=3) and HAProxy 2.6's stick tables (5 per
// second: /every-request/ counts every request in http_req_rate, denied ones too; /admissions/
// counts only the admitted in gpc0_rate). Each test case speaks for clients of its own (X-Client
// values, source addresses), so cases sharing a server stay independent.

#include <memory>
#include <string>
#include <vector>

#include "support/real_server.hpp"

namespace rlcheck::testing {

// A server with the scratch directory it runs from; null when not installed.
struct Gateway {
  std::unique_ptr<ScratchDir> dir;
  std::unique_ptr<RealServer> server;
};

// Starts `command` from the gateway's scratch directory (its output in output.log there),
// serving `port`.
void start_in_dir(Gateway& gateway, std::vector<std::string> command, int port);
// nginx in the foreground, its prefix and error log in `prefix`; HAProxy in the foreground.
std::vector<std::string> nginx_command(const std::string& binary, const std::string& prefix,
                                       const std::string& conf);
std::vector<std::string> haproxy_command(const std::string& binary, const std::string& cfg);

const Gateway& nginx();
const Gateway& haproxy();
// Flask-Limiter 3.3 in tests/fixtures/flask_limiter_app.py (werkzeug's threaded server; every
// route 5 per 2 seconds per X-Client: /<strategy>/ memory storage, /<strategy>-redis/ Redis
// storage at flask_limiter_redis_url(), for moving-window, fixed-window and
// fixed-window-elastic-expiry), run with /usr/bin/python3.
const Gateway& flask_limiter_app();
// tests/fixtures/org_limits_app.py: 5 per 2 s per X-User inside 8 per 2 s per X-Org, /correct/
// and /shadowing/ (the organisation's limit never checked); /two-policies/ (per X-User 5 per 2 s
// and 8 per 6 s, advertised as IETF policies) and /two-policies-ignored/ (the second advertised,
// never kept); the standard library's server.
const Gateway& org_limits_app();
// tests/fixtures/llm_gateway_app.py: per X-Api-Key 10 requests and 40 tokens (X-Tokens) per
// 2 s, per X-Org 60 tokens per 2 s, OpenAI-style x-ratelimit-* headers, state in database 12
// of the shared test redis-server: /correct/, /tokens-by-one/, /shadows-org/,
// /remaining-requests/ (its remaining-tokens header counts requests).
const Gateway& llm_gateway_app();
// rack-attack 6.6's Allow2Ban in tests/fixtures/rack_attack/server.rb, served by WEBrick: per
// X-Client on /allow2ban/, the 3rd request in a fixed 2-second window of the clock bans for 3 s
// (429 with Retry-After); run with /usr/bin/ruby.
const Gateway& rack_attack_app();
// express-slow-down 3.0 (express 5, express-rate-limit's memory store) in
// tests/fixtures/express_slow_down/server.js, run with node: per X-Client on /slow-down/, past 3
// requests in a 3 s window opened by the first, the k-th is answered (k - 3) x 100 ms late, up
// to 1 s; on /slow-steps/, past 2, (k - 2) x 250 ms up to 1 s. Its node_modules come from
// scripts/install-deps.sh (npm ci).
const Gateway& express_slow_down_app();

// Symfony's RateLimiter 5.4 token bucket in tests/fixtures/symfony_limiter/index.php (burst 10,
// 5 tokens at each 1 s tick per X-Client), served by `php -S` with 4 workers sharing a
// filesystem cache and a flock lock in its scratch directory.
const Gateway& symfony_limiter();
// Database 11 of the shared test redis-server.
std::string flask_limiter_redis_url();

// True (after one MESSAGE line naming the package) when `gateway` is not installed.
bool skipped(const Gateway& gateway, const char* missing);

constexpr const char* k_nginx_missing =
    "nginx not installed (apt-get install nginx-light): skipped";
constexpr const char* k_haproxy_missing =
    "haproxy not installed (apt-get install haproxy): skipped";
constexpr const char* k_symfony_missing =
    "Symfony's RateLimiter not installed (apt-get install php-cli php-symfony-rate-limiter "
    "php-symfony-cache php-symfony-lock): skipped";
constexpr const char* k_flask_limiter_missing =
    "Flask-Limiter not installed (apt-get install python3-flask-limiter python3-redis): skipped";

constexpr const char* k_express_slow_down_missing =
    "express-slow-down not installed (scripts/install-deps.sh: node, and npm ci in "
    "tests/fixtures/express_slow_down): skipped";

constexpr const char* k_rack_attack_missing =
    "rack-attack not installed (apt-get install ruby-rack-attack ruby-webrick): skipped";

}  // namespace rlcheck::testing
