#pragma once
// The Redis of one invocation (rlcheck redis, compare, probe --redis): connected once, with
// the id its fresh keys live under, and the commands rlcheck sends on its own connection.

#include <expected>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/config.hpp"
#include "provision/connect_target.hpp"
#include "redis/reply.hpp"
#include "redis/strategy.hpp"
#include "redis/sync_client.hpp"

namespace rlcheck::targets {

// The Redis of this invocation and the id its fresh keys live under (rlcheck:<id>:...).
struct RedisSession {
  provision::ConnectedTarget target;
  std::string instance_id;
  uint64_t seed = 0;
};

// Connects as connect_target says; throws FatalError(cannot_test) naming what was tried.
RedisSession open_redis_session(const config::Config& config);

// Loads the script of a Lua strategy (or --script) into the server's cache; nullopt for
// strategies made of plain commands. Throws FatalError: usage for an unreadable --script,
// cannot_test for a script the server refuses.
std::optional<redis::LoadedScript> load_limiter_script(redis::SyncClient& control,
                                                       const config::Config& config,
                                                       config::Strategy strategy);
// Loads the script file `path` (given as `flag`) into the server's cache; throws as above.
redis::LoadedScript load_script_file(redis::SyncClient& control, const std::string& path,
                                     const char* flag);

// One command on the session's control connection. A call that fails on I/O is made once more
// on a fresh connection (the server restarted, or CLIENT KILL dropped the connection); the
// error is the reconnection's when that fails too.
std::expected<redis::ReplyPtr, std::string> control_call(RedisSession& session,
                                                         const std::vector<std::string_view>& argv,
                                                         config::Nanos timeout);

}  // namespace rlcheck::targets
