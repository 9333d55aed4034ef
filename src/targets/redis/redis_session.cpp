#include "targets/redis/redis_session.hpp"

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>

#include <fmt/format.h>

#include "base/exit_code.hpp"
#include "redis/builtin_scripts.hpp"
#include "runner/run_preflight.hpp"

namespace rlcheck::targets {
namespace {

using config::Strategy;

// A hash every build computes alike (std::hash need not): the session's key prefix.
uint32_t fnv1a32(std::string_view text) {
  uint32_t hash = 2166136261U;
  for (char c : text) {
    hash ^= static_cast<uint8_t>(c);
    hash *= 16777619U;
  }
  return hash;
}

}  // namespace

namespace {

// Loads `script` (its name and source set) into the server's cache: its sha.
void load_into_cache(redis::SyncClient& control, redis::LoadedScript& script) {
  auto reply = control.call({"SCRIPT", "LOAD", script.source});
  if (!reply)
    throw base::cannot_test(reply.error());
  if ((*reply)->type != REDIS_REPLY_STRING) {
    throw base::cannot_test(fmt::format("script {} did not load: {}", script.name,
                                        redis::describe_reply(reply->get())));
  }
  script.sha.assign((*reply)->str, (*reply)->len);
}

}  // namespace

redis::LoadedScript load_script_file(redis::SyncClient& control, const std::string& path,
                                     const char* flag) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw base::usage_error(fmt::format("{}: cannot read {}", flag, path));
  std::stringstream body;
  body << in.rdbuf();
  redis::LoadedScript script;
  script.name = path;
  script.source = body.str();
  load_into_cache(control, script);
  return script;
}

std::optional<redis::LoadedScript> load_limiter_script(redis::SyncClient& control,
                                                       const config::Config& config,
                                                       Strategy strategy) {
  if (strategy == Strategy::script)
    return load_script_file(control, config.redis.script_path, "--script");
  redis::LoadedScript script;
  {
    const redis::BuiltinScript builtin = redis::builtin_script(strategy);
    if (builtin.source.empty())
      return std::nullopt;
    script.name = std::string(builtin.file_name);
    script.source = std::string(builtin.source);
  }
  load_into_cache(control, script);
  return script;
}

std::expected<redis::ReplyPtr, std::string> control_call(RedisSession& session,
                                                         const std::vector<std::string_view>& argv,
                                                         config::Nanos timeout) {
  auto reply = session.target.control->call(argv);
  if (reply)
    return reply;
  const bool cluster = session.target.control->slot_map().has_value();
  auto fresh = redis::SyncClient::connect(session.target.endpoint, timeout);
  if (!fresh)
    return std::unexpected(fresh.error());
  if (cluster) {
    if (auto slots = fresh->discover_cluster(); !slots)
      return std::unexpected(slots.error());
  }
  session.target.control.emplace(std::move(*fresh));
  return session.target.control->call(argv);
}

RedisSession open_redis_session(const config::Config& config) {
  provision::TargetChoice choice;
  choice.url = config.redis.url;
  if (const char* env = std::getenv("REDIS_URL"); env != nullptr && *env != '\0') {
    choice.env_url = env;
  }
  choice.timeout = config.load.timeout;
  choice.tls = config.tls;
  choice.require_cluster = config.redis.require_cluster;
  choice.embedded_cluster = config.redis.embedded_cluster;
  // A failover needs a replica to take over: the private cluster gets one per master.
  for (const config::FaultSpec& fault : config.faults.faults) {
    if (fault.kind == config::FaultKind::failover)
      choice.embedded_replicas = 1;
  }
  const bool say = !config.output.hook && !config.output.quiet;
  auto target = provision::connect_target(choice, [say](const std::string& line) {
    if (say)
      std::cerr << "rlcheck: " << line << "\n";
  });
  if (!target)
    throw base::cannot_test(target.error());

  RedisSession session;
  session.target = std::move(*target);
  if (config.workers.distributed() && session.target.embedded) {
    throw base::usage_error(std::string(runner::k_private_redis_per_worker));  // as preflight says
  }
  session.seed =
      config.seed ? *config.seed
                  : std::random_device{}() ^ (static_cast<uint64_t>(std::random_device{}()) << 32);
  std::mt19937_64 rng(session.seed);
  session.instance_id = fmt::format("{:08x}", rng() & 0xffffffffULL);
  // Many hosts: every worker's requests count against the same keys, named by the session.
  if (config.workers.distributed())
    session.instance_id = fmt::format("{:08x}", fnv1a32(config.workers.session));
  return session;
}

}  // namespace rlcheck::targets
