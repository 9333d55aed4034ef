#include "targets/target_kind.hpp"

#include <vector>

#include "targets/grpc/grpc_kind.hpp"
#include "targets/http/http_kind.hpp"
#include "targets/redis/redis_kind.hpp"

namespace rlcheck::targets {

std::span<const TargetKind> target_kinds() {
  // The table: a line per kind.
  static const std::vector<TargetKind> kinds = {
      redis_kind(),
      http_kind(),
      grpc_kind(),
  };
  return kinds;
}

const TargetKind& kind_of(const config::Config& config) {
  for (const TargetKind& kind : target_kinds()) {
    if (kind.command.name == config.kind)
      return kind;
  }
  return target_kinds().front();
}

void check_shared_test(const config::Config& config, const runner::EnvLookup& env) {
  if (config.workers.distributed())
    kind_of(config).check_shared(config, env);
}

std::string test_fingerprint(const config::Config& config) {
  return runner::test_fingerprint(config, kind_of(config).fingerprint(config));
}

}  // namespace rlcheck::targets

namespace rlcheck::cli {

std::span<const KindCommand> kind_commands() {
  static const std::vector<KindCommand> commands = [] {
    std::vector<KindCommand> out;
    for (const targets::TargetKind& kind : targets::target_kinds())
      out.push_back(kind.command);
    return out;
  }();
  return commands;
}

}  // namespace rlcheck::cli
