#pragma once
// ACL users on the shared TestRedis, for tests that run rlcheck as a restricted user the way
// production Redis deployments do (redis://user:password@host:port).

#include <string>
#include <vector>

namespace rlcheck::testing {

// Exactly what `rlcheck redis --strategy lua` needs: the connection commands, SCRIPT LOAD and
// EVALSHA (EVAL: the NOSCRIPT fallback), PTTL for the TTL audit, DEL for the clean-up, and
// the commands sliding_window.lua calls (scripts run with the caller's permissions).
const std::vector<std::string>& sliding_window_user_rules();

// ACL SETUSER `name` reset on >`password` ~* `rules`...: created, or replaced when it exists.
// Throws std::runtime_error with Redis's reply when the server refuses it.
void create_acl_user(const std::string& name, const std::string& password,
                     const std::vector<std::string>& rules);

// Whether the shared TestRedis has a user `name` (ACL USERS).
bool acl_user_exists(const std::string& name);

// redis://name:password@127.0.0.1:PORT of the shared TestRedis.
std::string acl_user_url(const std::string& name, const std::string& password);

}  // namespace rlcheck::testing
