#pragma once
// Concurrency caps in front of a backend that takes its time, each started once per test
// process on a free loopback port and stopped when it ends: tests/fixtures/slow_backend.py
// (every request held k_backend_hold_ms; /lets-three/ a cap of 3 where 2 is meant), nginx-light's
// limit_conn 2 per X-Client (limit_conn_status 429) proxying to it, and HAProxy 2.6 denying with
// 429 when sc_conn_cur(0) of the X-Client is above 2.

#include "support/real_gateways.hpp"

namespace rlcheck::testing {

inline constexpr int k_backend_hold_ms = 400;

const Gateway& slow_backend();
// Both proxy /capped/... to the backend's /slow/; null servers when not installed.
const Gateway& nginx_limit_conn();
const Gateway& haproxy_conn_cur();

}  // namespace rlcheck::testing
