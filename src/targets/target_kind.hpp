#pragma once
// A kind of target rlcheck drives (a Redis limiter, an HTTP endpoint, ...): everything that
// differs between kinds, behind one table (targets/target_kinds.cpp). The command line, the
// commands, preflight and the reports ask a kind; none of them names one. A new kind is a folder
// under targets/ and a line in that table.

#include <functional>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "cli/kind_command.hpp"
#include "config/config.hpp"
#include "probe/probe_sender.hpp"
#include "runner/run_preflight.hpp"
#include "runner/shared_test.hpp"
#include "runner/target.hpp"

namespace rlcheck::targets {

// One target a command names, made when its turn comes (the next compared strategy finds Redis
// as the one before left it), with the configuration it runs under (a compared script's own).
struct PlannedTarget {
  std::function<std::unique_ptr<runner::Target>()> make;
  const config::Config* config = nullptr;
};

// The targets of a command line, in order, and what they hold in common while they run (a Redis
// session, compared scripts' configurations).
struct TargetPlan {
  std::vector<PlannedTarget> targets;
  std::shared_ptr<void> common;
  // The targets are variants of one limiter (compared strategies): never shared by many hosts.
  bool variants = false;
};

using runner::TargetLines;

// What the length of a test depends on besides its load, as --hook's budget counts it.
struct RunPacing {
  size_t targets = 1;                  // the targets the command line names (compare: each)
  config::Nanos between_runs{};        // --between-runs
  bool reset_before_each_run = false;  // --reset-cmd
};

struct TargetKind {
  cli::KindCommand command;  // name, options, what they fill, what the shared options ask
  // The targets the command line names: one, or each one compare names.
  TargetPlan (*plan)(const config::Config& config) = nullptr;
  // `rlcheck probe` on this kind: fresh identities, each request sent through the kind's Target.
  std::unique_ptr<probe::ProbeSender> (*probe_sender)(const config::Config& config) = nullptr;
  // Many hosts: what this worker's command line and environment already show the shared test
  // would be refused for (throws FatalError(usage)).
  void (*check_shared)(const config::Config& config, const runner::EnvLookup& env) = nullptr;
  // The lines naming the target in a shared test's fingerprint (every worker the same).
  TargetLines (*fingerprint)(const config::Config& config) = nullptr;
  // The targets, pauses and resets a test's length counts (nullptr: one target, neither).
  RunPacing (*pacing)(const config::Config& config) = nullptr;
  // With several --source-address, identity j sends from address j mod count (a limiter keyed
  // by client IP): a connection per address and identity; else each connection takes one.
  bool identity_per_source_address = false;
};

// Gives the command line the table's commands (cli::install_kinds): before the first command
// line is read (main, the tests' main, the fuzzers).
void install_kinds();

// Every kind, in the order the command line lists them; the first is what compare and probe
// drive when no URL names one.
std::span<const TargetKind> target_kinds();

// Adds `kind` to the end of the table while it lives (a test's kind of its own; the table's own
// kinds are its lines in target_kinds.cpp).
class KindRegistration {
 public:
  explicit KindRegistration(TargetKind kind);
  ~KindRegistration();
  KindRegistration(const KindRegistration&) = delete;
  KindRegistration& operator=(const KindRegistration&) = delete;

 private:
  std::string name_;
};

// The kind `config.kind` names (config is built from the command line, which names only kinds
// of this table).
const TargetKind& kind_of(const config::Config& config);

// Many hosts: what the test would be refused for only after every worker joined, and this
// worker's command line and environment (`env`) already show, so that it is said at once rather
// than after the others waited: throws FatalError(usage) with the message the test would give
// (rlcheck redis without --redis or REDIS_URL, a --script that cannot be read, a restart@ fault
// on $REDIS_URL; rlcheck http with a --http-client the URL cannot be served by). Nothing when
// the test runs alone.
void check_shared_test(const config::Config& config, const runner::EnvLookup& env);

// The load settings and target every worker of a shared test must share (runner::test_fingerprint
// with the kind's lines).
std::string test_fingerprint(const config::Config& config);

}  // namespace rlcheck::targets
