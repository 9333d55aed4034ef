#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <unistd.h>

#include "app/hook.hpp"
#include "shared/report_description.hpp"

using rlcheck::app::hook_reason;
using rlcheck::app::reproduce_command;
using rlcheck::checks::Status;
using rlcheck::checks::Verdict;
using rlcheck::report::Report;

namespace {

bool mentions(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

Report failed_report() {
  Report report;
  report.target.url = "redis://127.0.0.1:6379";
  rlcheck::test::describe(report);
  report.target.strategy = "naive";
  rlcheck::test::describe(report);
  report.params.limit = 10;
  report.params.window_ms = 60'000;
  report.params.requests = 200;
  report.params.runs = 4;
  report.params.concurrency = 50;
  report.checks = {{"limit", Status::fail, "4 of 4 runs over the limit"},
                   {"exact", Status::skip, "without --exact"},
                   {"key-ttl", Status::pass, "every limiter key had a TTL"},
                   {"retry-after-present", Status::fail, "3 of 190 denials carried no hint"}};
  report.verdict = Verdict::fail;
  report.exit_code = 1;
  return report;
}

}  // namespace

TEST_CASE("reproduce_command drops --hook and starts with the program as given") {
  const std::vector<std::string> argv{"/usr/local/bin/rlcheck", "redis", "--hook", "-s", "naive"};
  CHECK(reproduce_command(argv) == "/usr/local/bin/rlcheck redis -s naive");
  CHECK(reproduce_command({"/opt/my tools/rlcheck", "redis"}) == "'/opt/my tools/rlcheck' redis");
}

TEST_CASE("pasteable_program names the program so that a pasted line runs it") {
  namespace fs = std::filesystem;
  using rlcheck::app::pasteable_program;
  const fs::path root = fs::temp_directory_path() / fmt::format("rlcheck-paste-{}", ::getpid());
  fs::create_directories(root / "bin");
  const fs::path self = root / "bin" / "rlcheck";
  std::ofstream(self) << "#!/bin/sh\n";
  fs::permissions(self, fs::perms::owner_all);
  const std::string bin = (root / "bin").string();
  // A path, absolute or relative, is made absolute: it runs from any directory.
  CHECK(pasteable_program(self.string(), nullptr, self) == self.string());
  CHECK(pasteable_program("./build/rlcheck", nullptr, self) ==
        (fs::current_path() / "build" / "rlcheck").string());
  // A bare name stays bare where PATH finds this program by it, else this program's path.
  CHECK(pasteable_program("rlcheck", bin.c_str(), self) == "rlcheck");
  CHECK(pasteable_program("rlcheck", "/nonexistent", self) == self.string());
  CHECK(pasteable_program("rlcheck", nullptr, "") == "rlcheck");
  fs::remove_all(root);
}

TEST_CASE("reproduce_command leaves plain arguments bare") {
  const std::vector<std::string> argv{"rlcheck", "redis", "--redis=redis://u@h:1/2",
                                      "-w",      "1.5s",  "--refill",
                                      "5/s",     "--key", "a_b,c%d+e"};
  CHECK(reproduce_command(argv) ==
        "rlcheck redis --redis=redis://u@h:1/2 -w 1.5s --refill 5/s --key a_b,c%d+e");
}

TEST_CASE("reproduce_command quotes spaces, quotes, shell characters and empty arguments") {
  CHECK(reproduce_command({"rlcheck", "--key", "my key"}) == "rlcheck --key 'my key'");
  CHECK(reproduce_command({"rlcheck", "--key", "it's"}) == "rlcheck --key 'it'\\''s'");
  CHECK(reproduce_command({"rlcheck", "--arg", "{uuid}"}) == "rlcheck --arg '{uuid}'");
  CHECK(reproduce_command({"rlcheck", "--key", "$HOME;rm"}) == "rlcheck --key '$HOME;rm'");
  CHECK(reproduce_command({"rlcheck", "--key", "\"q\""}) == "rlcheck --key '\"q\"'");
  CHECK(reproduce_command({"rlcheck", "--key", ""}) == "rlcheck --key ''");
  CHECK(reproduce_command({"rlcheck"}) == "rlcheck");
}

TEST_CASE("hook_reason lists the failed checks, not the others, and how to reproduce") {
  const std::vector<std::string> argv{"rlcheck", "redis", "--hook", "-s", "naive"};
  const std::string reason = hook_reason({failed_report()}, argv);
  CHECK(mentions(reason, "naive"));
  CHECK(mentions(reason, "redis://127.0.0.1:6379"));
  CHECK(mentions(reason, "limit: 4 of 4 runs over the limit"));
  CHECK(mentions(reason, "retry-after-present: 3 of 190 denials carried no hint"));
  CHECK_FALSE(mentions(reason, "key-ttl"));
  CHECK_FALSE(mentions(reason, "without --exact"));
  CHECK(mentions(reason, "reproduce: rlcheck redis -s naive\n"));
  CHECK(mentions(reason, "what to fix: rlcheck explain ID (limit, retry-after-present)\n"));
  CHECK_FALSE(mentions(reason, "--hook"));
}

TEST_CASE("hook_reason skips reports that passed and names a script by its path") {
  Report passed = failed_report();
  passed.target.strategy = "sliding-window";
  rlcheck::test::describe(passed);
  passed.exit_code = 0;
  passed.checks = {{"limit", Status::pass, "max allowed 10 <= limit 10"}};
  Report scripted = failed_report();
  scripted.target.strategy = "script";
  rlcheck::test::describe(scripted);
  scripted.target.script = "limits/mine.lua";
  rlcheck::test::describe(scripted);
  scripted.interrupted = true;
  const std::string reason = hook_reason({passed, scripted}, {"rlcheck", "compare"});
  CHECK_FALSE(mentions(reason, "sliding-window"));
  CHECK_FALSE(mentions(reason, "max allowed 10"));
  CHECK(mentions(reason, "limits/mine.lua"));
  CHECK(mentions(reason, "interrupted"));
  CHECK(mentions(reason, "reproduce: rlcheck compare"));
}

TEST_CASE("parse_hook_input reads stop_hook_active and session_id, and tolerates anything") {
  using rlcheck::app::parse_hook_input;
  const auto input = parse_hook_input(R"({"session_id":"abc","stop_hook_active":true})");
  CHECK(input.stop_hook_active);
  CHECK(input.session_id == "abc");
  for (const char* text : {"", "not json {{{", "[]", R"({"stop_hook_active":"yes"})"}) {
    CHECK_FALSE(parse_hook_input(text).stop_hook_active);
    CHECK(parse_hook_input(text).session_id.empty());
  }
}

TEST_CASE("cap_blocks counts consecutive blocks of a session and lets the stop go at the cap") {
  namespace fs = std::filesystem;
  using rlcheck::app::BlockCounter;
  using rlcheck::app::cap_blocks;
  using rlcheck::app::HookInput;
  const fs::path dir = fs::temp_directory_path() / fmt::format("rlcheck-blocks-{}", ::getpid());
  fs::create_directories(dir);
  const std::string command = "rlcheck redis --strategy naive";
  const auto stop = [&](bool active, int exit_code, std::string& err) {
    BlockCounter counter(HookInput{active, "session-1"}, command, dir);
    return cap_blocks(2, counter, exit_code, err);
  };
  std::string err = "limit: 4 of 4 runs over the limit\n";
  CHECK(stop(false, 2, err) == 2);  // the first stop of a chain
  CHECK(stop(true, 2, err) == 2);   // the second consecutive block
  CHECK(err == "limit: 4 of 4 runs over the limit\n");
  CHECK(stop(true, 2, err) == 0);  // two came before: the stop goes
  CHECK(mentions(err, "not blocking this stop: 2 consecutive blocks already"));
  CHECK(mentions(err, "--hook-max-blocks 2"));
  CHECK(mentions(err, "limit: 4 of 4 runs over the limit"));
  // The chain ended: the next one counts from the start again.
  std::string again = "failed\n";
  CHECK(stop(false, 2, again) == 2);
  // A pass in between ends a chain too.
  CHECK(stop(true, 0, again) == 0);
  CHECK(stop(true, 2, again) == 2);  // the file is gone: stop_hook_active counts as one block
  // Without a cap, every failure blocks.
  BlockCounter uncapped(HookInput{true, "session-1"}, command, dir);
  std::string plain = "failed\n";
  CHECK(cap_blocks(std::nullopt, uncapped, 2, plain) == 2);
  CHECK(plain == "failed\n");
  fs::remove_all(dir);
}

TEST_CASE("without a session id, stop_hook_active alone counts as one block") {
  using rlcheck::app::BlockCounter;
  using rlcheck::app::cap_blocks;
  using rlcheck::app::HookInput;
  BlockCounter active(HookInput{true, ""}, "rlcheck redis", "/nonexistent");
  CHECK(active.before() == 1);
  std::string err = "failed\n";
  CHECK(cap_blocks(1, active, 2, err) == 0);
  BlockCounter first(HookInput{false, ""}, "rlcheck redis", "/nonexistent");
  std::string err2 = "failed\n";
  CHECK(cap_blocks(1, first, 2, err2) == 2);
}
