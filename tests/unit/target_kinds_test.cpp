// The table of target kinds: every kind named once, its command, options and URL schemes built
// from the table; and a kind registered only in this test (a fake, no sockets) driven through
// the command line, the commands and the one run loop, with nothing else told of it.

#include <doctest/doctest.h>

#include <algorithm>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "app/check_runner.hpp"
#include "cli/command_line.hpp"
#include "cli/kind_command.hpp"
#include "cli/option_groups.hpp"
#include "cli/raw_options.hpp"
#include "report/json_report.hpp"
#include "shared/fake_target.hpp"
#include "targets/target_kind.hpp"

using namespace rlcheck;

namespace {

cli::ParsedCommandLine parse(std::vector<std::string> args) {
  args.insert(args.begin(), "rlcheck");
  std::vector<const char*> argv;
  for (const std::string& arg : args)
    argv.push_back(arg.c_str());
  return cli::parse_command_line(static_cast<int>(argv.size()), argv.data());
}

bool has_option(std::string_view command, const std::string& name) {
  const std::vector<std::string> names = cli::option_names(command);
  return std::find(names.begin(), names.end(), name) != names.end();
}

// The fake kind's own option, as typed.
struct FakeRaw {
  std::string limiter = "fake://limiter";
};

FakeRaw& fake_raw(cli::RawOptions& raw) {
  std::shared_ptr<void>& slot = raw.kind_raw["fake"];
  if (!slot)
    slot = std::make_shared<FakeRaw>();
  return *static_cast<FakeRaw*>(slot.get());
}

// What the fake's command line filled, which only the fake reads.
struct FakeConfig {
  std::string limiter;
};

// A kind of target as a fourth kind would be written: a command with an option of its own, a
// fill, and a plan whose target is the run loop's fake.
targets::TargetKind fake_kind() {
  targets::TargetKind kind;
  kind.command.name = "fake";
  kind.command.summary = "drive the test's fake limiter";
  kind.command.schemes = {"fake"};
  kind.command.add_options = [](CLI::App& command, cli::RawOptions& raw) {
    command.add_option("--limiter", fake_raw(raw).limiter, "which fake limiter");
  };
  kind.command.fill = [](const cli::RawOptions& raw, config::Config& config) {
    const auto found = raw.kind_raw.find("fake");
    FakeConfig fake;
    fake.limiter = found == raw.kind_raw.end()
                       ? FakeRaw{}.limiter
                       : static_cast<const FakeRaw*>(found->second.get())->limiter;
    config.kind_options = std::make_shared<const FakeConfig>(fake);
  };
  kind.plan = [](const config::Config& config) {
    targets::TargetPlan plan;
    plan.targets.push_back({[&config] {
                              auto target =
                                  std::make_unique<test::FakeTarget>(config, test::Behaviour{});
                              return std::unique_ptr<runner::Target>(std::move(target));
                            },
                            &config});
    return plan;
  };
  kind.check_shared = [](const config::Config&, const runner::EnvLookup&) {};
  kind.fingerprint = [](const config::Config& config) {
    return targets::TargetLines{
        {"limiter", static_cast<const FakeConfig*>(config.kind_options.get())->limiter}};
  };
  return kind;
}

}  // namespace

TEST_CASE("target kinds: each named once, each a command with its options, URLs by scheme") {
  std::set<std::string_view> names;
  for (const targets::TargetKind& kind : targets::target_kinds()) {
    CHECK(names.insert(kind.command.name).second);
    CHECK(static_cast<bool>(kind.plan));
    CHECK(static_cast<bool>(kind.probe_sender));
    CHECK(static_cast<bool>(kind.command.fill));
    // Its command exists, with the load options every kind takes.
    CHECK(has_option(kind.command.name, "requests"));
  }
  CHECK(names == std::set<std::string_view>{"redis", "http", "grpc"});
  REQUIRE(cli::kind_command_for_url("https://example.com/") != nullptr);
  CHECK(cli::kind_command_for_url("https://example.com/")->name == "http");
  REQUIRE(cli::kind_command_for_url("grpc://127.0.0.1:50051") != nullptr);
  CHECK(cli::kind_command_for_url("grpc://127.0.0.1:50051")->name == "grpc");
  CHECK(cli::kind_command_for_url("ftp://example.com/") == nullptr);
  CHECK(cli::known_schemes() == "http://, https://, grpc://, grpcs://");
  // A command line names its kind; the first kind is what names none drives.
  CHECK(parse({"http", "http://127.0.0.1:8080/"}).config.kind == "http");
  CHECK(parse({"redis"}).config.kind == "redis");
  CHECK(parse({"compare"}).config.kind == "redis");
}

TEST_CASE(
    "target kinds: a kind registered only here is a command, probe and compare take its "
    "URLs, and the loop runs its target") {
  CHECK_FALSE(has_option("fake", "limiter"));
  const targets::KindRegistration registered(fake_kind());
  CHECK(has_option("fake", "limiter"));
  CHECK(has_option("fake", "requests"));
  REQUIRE(cli::kind_command_for_url("fake://one") != nullptr);

  const cli::ParsedCommandLine parsed =
      parse({"fake", "--limiter", "fake://two", "-n", "12", "-p", "3", "-r", "2", "-l", "5", "-q"});
  const config::Config& config = parsed.config;
  CHECK(config.command == config::Command::drive);
  CHECK(config.kind == "fake");
  CHECK(static_cast<const FakeConfig*>(config.kind_options.get())->limiter == "fake://two");
  CHECK(targets::test_fingerprint(config).starts_with("command=fake\nlimiter=fake://two\n"));

  const std::vector<report::Report> reports =
      app::run_checks(config, nullptr, nullptr, nullptr, nullptr);
  REQUIRE(reports.size() == 1);
  const report::Report& report = reports.front();
  CHECK(report.mode == "fake");
  REQUIRE(report.runs.size() == 2);
  for (const checks::RunStats& run : report.runs) {
    CHECK(run.allowed == 5);
    CHECK(run.denied == 7);
  }
  CHECK(report.verdict == checks::Verdict::pass);
  CHECK(report::to_json(report).at("mode") == "fake");
}

TEST_CASE("target kinds: a registration ends with its scope") {
  {
    const targets::KindRegistration registered(fake_kind());
    CHECK(targets::target_kinds().size() == 4);
  }
  CHECK(targets::target_kinds().size() == 3);
  CHECK(cli::kind_commands().size() == 3);
  CHECK_FALSE(has_option("fake", "limiter"));
}
