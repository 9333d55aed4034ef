#include "targets/target_kind.hpp"

#include <vector>

#include "targets/grpc/grpc_kind.hpp"
#include "targets/http/http_kind.hpp"
#include "targets/redis/redis_kind.hpp"

namespace rlcheck::targets {

namespace {

std::vector<TargetKind>& table() {
  // The table: a line per kind.
  static std::vector<TargetKind> kinds = {
      redis_kind(),
      http_kind(),
      grpc_kind(),
  };
  return kinds;
}

// Bumped by every change of the table (a test's registration).
int table_version = 0;

// The command line's view of the table, made again after it changed.
std::vector<cli::KindCommand>& commands() {
  static std::vector<cli::KindCommand> commands;
  static int made_at = -1;
  if (made_at != table_version) {
    commands.clear();
    for (const TargetKind& kind : table())
      commands.push_back(kind.command);
    made_at = table_version;
  }
  return commands;
}

}  // namespace

void install_kinds() {
  cli::install_kinds([] { return std::span<const cli::KindCommand>(commands()); });
}

std::span<const TargetKind> target_kinds() {
  return table();
}

KindRegistration::KindRegistration(TargetKind kind) : name_(kind.command.name) {
  table().push_back(std::move(kind));
  ++table_version;
}

KindRegistration::~KindRegistration() {
  std::erase_if(table(), [this](const TargetKind& kind) { return kind.command.name == name_; });
  ++table_version;
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
